"""A run kept for later: one ``.somrun`` file per run.

A stored run is one ``.somrun`` file: a NumPy ``.npz`` archive (zip) holding
the run's record as JSON (the schema of ``bench --json``), its name, its final
map (raw and as a picture) and the frames it kept for the animation (PNG
each). No pickle is involved in reading one, so a file from elsewhere cannot
run code. The format and its keys are a contract: files written by earlier
versions open unchanged.

A :class:`StoredRun` is the same record whether it was just trained (built by
:class:`~som_studio.storage.recorder.RunRecorder` from the live events) or
opened from a file; :func:`~som_studio.storage.replay.replay` gives back the
events the live view consumed. Qt-free.
"""

from __future__ import annotations

import datetime as _dt
import io
import json
import os
import uuid
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from som_studio.core import model_file
from som_studio.i18n import _
from som_studio.report.tables import png_bytes
from som_studio.report.writers import write_atomic
from som_studio.session.record import RunRecord

if TYPE_CHECKING:
    from som_studio.report.content import ReportRun

FORMAT = "som-studio-run"
VERSION = 2  # 2: the model arrays of core/model_file.py (docs/somrun-format.md)
SUFFIX = ".somrun"


class HistoryError(ValueError):
    """A run file cannot be read; the message names the file and why."""


@dataclass
class StoredRun:
    """A finished run as the history keeps it.

    ``final_image`` and ``frames`` are (H, W, 3) uint8 pictures; ``final_map``
    the raw final map (H, W, D), when the run got that far.
    """

    record: RunRecord
    name: str = ""
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    created: str = field(default_factory=lambda: _dt.datetime.now(_dt.UTC).isoformat(timespec="microseconds"))
    iterations: int = 0
    final_map: np.ndarray | None = None
    final_image: np.ndarray | None = None
    frames: list[tuple[int, np.ndarray]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.name:
            self.name = self.record.impl

    @classmethod
    def from_capture(cls, capture: Any) -> StoredRun:
        """From a finished :class:`~som_studio.storage.recorder.RunRecorder` (or anything with its attributes)."""
        if capture.record is None:
            raise ValueError(_("the run has not finished: nothing to store"))
        return cls(
            record=capture.record,
            name=capture.name or capture.record.impl,
            iterations=capture.iterations,
            final_map=capture.final_map,
            final_image=capture.final_image,
            frames=list(capture.frames),
        )

    def report_run(self) -> ReportRun:
        """This run as a comparison shows it."""
        from som_studio.report.content import ReportRun

        return ReportRun(self.name, self.record, self.final_image, tuple(self.frames), self.iterations, self.final_map)

    # -- one file ------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        meta = {
            "format": FORMAT,
            "version": VERSION,
            "id": self.id,
            "name": self.name,
            "created": self.created,
            "iterations": self.iterations,
            "record": self.record.to_dict(),
        }
        arrays: dict[str, np.ndarray] = {
            "meta": np.frombuffer(json.dumps(meta, allow_nan=False, default=_jsonable).encode("utf-8"), dtype=np.uint8),
            "frame_iterations": np.array([it for it, _ in self.frames], dtype=np.int64),
        }
        if self.final_map is not None:
            arrays["final_map"] = np.asarray(self.final_map)
        if self.final_image is not None:
            arrays["final_image"] = np.asarray(self.final_image, dtype=np.uint8)
        arrays.update(model_file.model_arrays(self.record.model))
        if self.frames:
            # PNG per frame, lossless: 40 % of zlib on raw pixels for these smooth pictures, ~6 ms a frame.
            pngs = [png_bytes(np.asarray(img, dtype=np.uint8), fast=True) for _, img in self.frames]
            arrays["frames_png"] = np.frombuffer(b"".join(pngs), dtype=np.uint8)
            arrays["frames_png_sizes"] = np.array([len(b) for b in pngs], dtype=np.int64)
        buf = io.BytesIO()
        np.savez_compressed(buf, **arrays)  # type: ignore[arg-type]
        return buf.getvalue()

    def save(self, path: str | os.PathLike[str], force: bool = False) -> Path:
        """Write this run to ``path`` atomically (refused if it exists, unless ``force``)."""
        return write_atomic(path, self.to_bytes(), force=force)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> StoredRun:
        """Read a ``.somrun`` file; raises :class:`HistoryError` naming what is wrong."""
        p = Path(path)
        try:
            check_archive(p)
            with np.load(p, allow_pickle=False) as z:
                if "meta" not in z.files:
                    raise HistoryError(_("{path}: not a SOM Studio run file (no run description in it)").format(path=p))
                meta = json.loads(bytes(z["meta"]).decode("utf-8"))
                if meta.get("format") != FORMAT:
                    raise HistoryError(_("{path}: not a SOM Studio run file").format(path=p))
                if int(meta.get("version", 0)) > VERSION:
                    raise HistoryError(
                        _("{path}: written by a newer SOM Studio (format {version}); update to open it").format(
                            path=p, version=meta["version"]
                        )
                    )
                its = z["frame_iterations"].tolist() if "frame_iterations" in z.files else []
                frames = list(zip(its, _frames(z)))
                record = RunRecord.from_dict(meta["record"])
                record.model = model_file.read_model(z)
                return cls(
                    record=record,
                    name=str(meta.get("name") or ""),
                    id=str(meta.get("id") or uuid.uuid4().hex[:12]),
                    created=str(meta.get("created") or ""),
                    iterations=int(meta.get("iterations") or 0),
                    final_map=z["final_map"] if "final_map" in z.files else None,
                    final_image=z["final_image"] if "final_image" in z.files else None,
                    frames=[(int(it), img) for it, img in frames],
                )
        except HistoryError:
            raise
        except model_file.ModelFileError as exc:
            raise HistoryError(f"{p}: {exc}") from None
        except FileNotFoundError:
            raise HistoryError(_("{path}: no such file").format(path=p)) from None
        except IsADirectoryError:
            raise HistoryError(_("{path}: is a folder, not a SOM Studio run file").format(path=p)) from None
        except PermissionError as exc:
            raise HistoryError(_("{path}: cannot read ({why})").format(path=p, why=exc.strerror or exc)) from None
        except (zipfile.BadZipFile, EOFError, zlib.error) as exc:
            raise HistoryError(
                _("{path}: damaged or truncated SOM Studio run file ({why})").format(path=p, why=exc or _("ends early"))
            ) from None
        except ValueError as exc:
            if "pickle" in str(exc):  # NumPy's advice to unpickle is never ours to give: a run file holds no objects
                raise HistoryError(
                    _(
                        "{path}: not a SOM Studio run file: it holds Python objects, which SOM Studio never loads"
                    ).format(path=p)
                ) from None
            raise HistoryError(_damaged(p, exc)) from None
        except (OSError, KeyError, TypeError, json.JSONDecodeError) as exc:
            raise HistoryError(_damaged(p, exc)) from None


_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a zip's first entry, or an empty zip


def check_archive(p: Path) -> None:
    """Refuse, naming why, a file that is not even the zip archive a ``.somrun`` is."""
    with open(p, "rb") as f:
        head = f.read(64)
    if head.startswith(_ZIP_MAGIC):
        return
    if not head:
        raise HistoryError(_("{path}: not a SOM Studio run file: the file is empty").format(path=p))
    if head.startswith(b"\x93NUMPY"):
        why = _("it is a single NumPy array (.npy), not a run")
    elif b"\x00" not in head and _is_text(head):
        why = _("it is a text file (starting {start!r})").format(
            start=head.decode("utf-8", "replace").splitlines()[0][:40]
        )
    else:
        why = _("its first bytes are not those of a zip archive")
    raise HistoryError(
        _("{path}: not a SOM Studio run file: {why}; a .somrun is a zip archive of NumPy arrays").format(
            path=p, why=why
        )
    )


def _damaged(p: Path, exc: Exception) -> str:
    return _("{path}: damaged SOM Studio run file ({why})").format(path=p, why=f"{type(exc).__name__}: {exc}")


def _is_text(head: bytes) -> bool:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _frames(z: Any) -> list[np.ndarray]:
    """The frames stored in an opened run file (PNG each)."""
    if "frames_png" not in z.files:
        return []
    from PIL import Image

    data = z["frames_png"].tobytes()
    out, start = [], 0
    for size in z["frames_png_sizes"].tolist():
        with Image.open(io.BytesIO(data[start : start + size])) as im:
            out.append(np.asarray(im.convert("RGB")))
        start += size
    return out


def _jsonable(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")
