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
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from som_studio.config import SETTINGS, Control
from som_studio.core.data import json_fields, model_file
from som_studio.core.data.json_fields import FLAG, LIST, NULL, NUMBER, OBJECT, TEXT, WHOLE, FieldError
from som_studio.core.impls import memory
from som_studio.i18n import _
from som_studio.session.record import RunRecord
from som_studio.storage.archive import ArchiveError, RunArchive
from som_studio.storage.writers import png_bytes, write_atomic

FORMAT = "som-studio-run"
VERSION = 2  # 2: the model arrays of core/data/model_file.py (docs/somrun-format.md)
SUFFIX = ".somrun"


class HistoryError(ValueError):
    """A run file cannot be read; the message names the file and why."""


@dataclass
class StoredRun:
    """A finished run as the history keeps it and a report shows it.

    ``final_image`` is the final map's (H, W, 3) uint8 picture and ``frames`` the kept
    ``(iteration, image)`` pairs for the animation; ``iterations`` the iterations the run was to
    do; ``final_map`` the raw final map (H, W, D) in the trained space, when the run got that far
    (the report's map views of a run on a data file are drawn from it and the record's model).
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

    @property
    def has_views(self) -> bool:
        """Whether a report shows this run's map views: a finished run on a data file (it has a model)."""
        data = self.record.config.get("data")
        on_file = isinstance(data, dict) and bool(data.get("path"))
        return on_file and self.final_map is not None and getattr(self.record, "model", None) is not None

    @property
    def planned(self) -> int:
        """The iterations the run was to do (a cancelled run did fewer)."""
        if self.iterations:
            return self.iterations
        cfg = self.record.config
        return int(cfg.get("steps") or cfg.get("epochs") or self.record.iterations_done or 0)

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
        """Read a ``.somrun`` file; raises :class:`HistoryError` naming the file and what is wrong.

        Every array's header is checked before any array is loaded (:class:`RunArchive`), and
        the run's description is checked field by field. The whole file is read, frames
        included, whoever asks: the same file gets the same verdict in the app and the CLI.
        """
        p = Path(path)
        try:
            return cls._read(p)
        except HistoryError:
            raise
        except ArchiveError as exc:
            raise HistoryError(str(exc)) from None
        except model_file.ModelFileError as exc:
            raise HistoryError(f"{p}: {exc}") from None
        except FieldError as exc:
            raise HistoryError(_damaged(p, _("its description: {problem}").format(problem=exc))) from None
        except FileNotFoundError:
            raise HistoryError(_("{path}: no such file").format(path=p)) from None
        except IsADirectoryError:
            raise HistoryError(_("{path}: is a folder, not a SOM Studio run file").format(path=p)) from None
        except PermissionError as exc:
            raise HistoryError(_("{path}: cannot read ({why})").format(path=p, why=exc.strerror or exc)) from None
        except _ZIP_ERRORS as exc:
            raise HistoryError(
                _("{path}: damaged or truncated SOM Studio run file ({why})").format(path=p, why=exc or _("ends early"))
            ) from None
        except (OSError, ValueError, KeyError, TypeError, OverflowError) as exc:
            raise HistoryError(_damaged(p, f"{type(exc).__name__}: {exc}")) from None

    @classmethod
    def _read(cls, p: Path) -> StoredRun:
        check_archive(p)
        with zipfile.ZipFile(p) as zf:
            z = RunArchive(zf, p)
            if "meta" not in z:
                raise HistoryError(_("{path}: not a SOM Studio run file (no run description in it)").format(path=p))
            meta = json_fields.loads(bytes(z["meta"]))
            if not isinstance(meta, dict) or meta.get("format") != FORMAT:
                raise HistoryError(_("{path}: not a SOM Studio run file").format(path=p))
            version = json_fields.field(meta, "version", (WHOLE,)) or 0
            if version > VERSION:
                raise HistoryError(
                    _(
                        "{path}: written by a newer SOM Studio (format {version}; this one reads up to "
                        "{reads}); update to open it"
                    ).format(path=p, version=version, reads=VERSION)
                )
            final_map = z.get("final_map")
            record = RunRecord.from_dict(_checked_record(meta, z))
            record.model = model_file.read_model(z)
            _check_model(record, final_map, p)
            kept = _frames(z, p)
            return cls(
                record=record,
                name=json_fields.field(meta, "name", (TEXT, NULL)) or "",
                id=json_fields.field(meta, "id", (TEXT, NULL)) or uuid.uuid4().hex[:12],
                created=json_fields.field(meta, "created", (TEXT, NULL)) or "",
                iterations=_at_least(meta, "iterations", 0) or 0,
                final_map=final_map,
                final_image=z.get("final_image"),
                frames=kept,
            )


# Zip-level damage: a bad or truncated archive, an entry compressed or encrypted in a way zipfile cannot read.
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error, NotImplementedError, RuntimeError)
_NUMBER, _WHOLE_OR_NULL, _NUMBER_OR_NULL = (NUMBER,), (WHOLE, NULL), (NUMBER, NULL)


def _config_fields() -> dict[str, tuple[str, ...]]:
    """The kinds of JSON value each setting's key of a stored config may hold, from the declarations.

    Settings kept together (the radii under ``sigma``, the data under ``data``) are an object. A
    null stands for a setting left unset (its default is ``None`` or none at all), or for a choice that does not
    set the problem and that the record writes resolved (``init``, ``scaling``): both read back as
    their default, as :meth:`RunConfig.from_dict` reads them.
    """
    keys = Counter(s.record_key for s in SETTINGS)
    out: dict[str, tuple[str, ...]] = {}
    for s in SETTINGS:
        key = s.record_key
        if keys[key] > 1 or key != s.name:
            out[key] = (OBJECT,)
            continue
        if len(s.targets) > 1 or s.control == Control.COLUMNS:
            kinds: tuple[str, ...] = (LIST,)
        elif s.control == Control.CHECK:
            kinds = (FLAG,)
        elif s.control == Control.COUNT or (isinstance(s.default, int) and s.choices is None):
            kinds = (WHOLE,)
        elif s.control == Control.NUMBER:
            kinds = (NUMBER,)
        else:
            kinds = (TEXT,)
        unset = s.default in (None, ()) or (s.choices is not None and not s.per_iteration)
        out[key] = (*kinds, NULL) if unset else kinds
    return out


# The typed fields of a record (what RunRecord.from_dict converts), by section.
_RECORD_FIELDS: dict[str, dict[str, tuple[str, ...]]] = {
    "": {
        "impl": (TEXT,),
        "kind": (TEXT,),
        "status": (TEXT,),
        "message": (TEXT,),
        "layout": (TEXT,),
        "config": (OBJECT,),
        "env": (OBJECT,),
        "extra": (OBJECT,),
        "samples": _WHOLE_OR_NULL,
        "timings": (OBJECT,),
        "quality": (OBJECT,),
        "memory": (OBJECT,),
    },
    "timings": {
        "compile_s": _NUMBER_OR_NULL,
        "total_s": _NUMBER_OR_NULL,
        "compiles": _WHOLE_OR_NULL,
        "warmup_compiles": _WHOLE_OR_NULL,
    },
    "quality": {"qe": _NUMBER_OR_NULL, "te": _NUMBER_OR_NULL, "label_purity": _NUMBER_OR_NULL},
    "memory": {"estimate_bytes": _WHOLE_OR_NULL, "peak_bytes": _WHOLE_OR_NULL},
    # The settings readers use from a stored config, as their declarations say (the rest is shown as it is).
    "config": _config_fields(),
}


def _checked_record(meta: dict[str, Any], z: RunArchive) -> dict[str, Any]:
    """The run's record from its description, every typed field checked (:class:`FieldError` names one that is not).

    A record that does not say its implementation takes its config's; one that does not say its kind has none.
    """
    record = json_fields.field(meta, "record", (OBJECT,), required=True)
    for section, fields in _RECORD_FIELDS.items():
        doc = record if not section else record.get(section) or {}
        where = "record" if not section else f"record.{section}"
        for key, kinds in fields.items():
            json_fields.field(doc, key, kinds, where)
    timings, quality = record.get("timings") or {}, record.get("quality") or {}
    for i, chunk in enumerate(json_fields.items(timings, "chunks", (OBJECT,), "record.timings")):
        where = f"record.timings.chunks[{i}]"
        for key, kinds in (("first", (WHOLE,)), ("count", (WHOLE,)), ("seconds", _NUMBER)):
            json_fields.field(chunk, key, kinds, where, required=True)
    for i, point in enumerate(json_fields.items(quality, "history", (OBJECT,), "record.quality")):
        for key in ("qe", "te"):
            json_fields.field(point, key, _NUMBER_OR_NULL, f"record.quality.history[{i}]")
    config = record.get("config") or {}
    json_fields.items(config, "feature_names", (TEXT,), "record.config")
    json_fields.items(config, "ignore", (TEXT,), "record.config")
    grid = json_fields.items(config, "grid", (WHOLE,), "record.config")
    head = z.headers.get("final_map")
    if "grid" in config and head is not None and grid != [head.shape[1], head.shape[0]]:
        raise FieldError(
            _("record.config.grid is {grid}, but the map is {width}x{height}").format(
                grid=grid, width=head.shape[1], height=head.shape[0]
            )
        )
    out = dict(record)
    if "impl" not in out:
        out["impl"] = json_fields.field(config, "impl", (TEXT,), "record.config", required=True)
    out.setdefault("kind", "")
    return out


def _check_model(record: RunRecord, final_map: np.ndarray | None, p: Path) -> None:
    """Refuse a model whose features disagree with the map's, or names from the config that do."""
    if final_map is None:
        return
    d = final_map.shape[2]
    model = record.model
    if model is not None:
        counts = {len(model.feature_names), model.scaling.offset.shape[0]}
        if counts != {d}:
            raise HistoryError(
                _damaged(p, _("its model has {n} features, its map {d}").format(n=len(model.feature_names), d=d))
            )
        with np.errstate(over="ignore", invalid="ignore"):
            finite = bool(np.isfinite(model.scaling.invert(final_map)).all())
        if not finite:
            raise HistoryError(_damaged(p, _("its map in the data's units is not finite: the scaling overflows")))
        return
    names = record.config.get("feature_names")
    if names and len(names) != d:
        raise HistoryError(
            _damaged(p, _("record.config.feature_names names {n} features, its map has {d}").format(n=len(names), d=d))
        )


def _at_least(doc: dict[str, Any], key: str, least: int) -> int | None:
    value: int | None = json_fields.field(doc, key, (WHOLE, NULL))
    if value is not None and value < least:
        raise FieldError(_("{field} is {value}; expected at least {least}").format(field=key, value=value, least=least))
    return value


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


def _damaged(p: Path, why: str) -> str:
    return _("{path}: damaged SOM Studio run file ({why})").format(path=p, why=why)


def _is_text(head: bytes) -> bool:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _frames(z: RunArchive, p: Path) -> list[tuple[int, np.ndarray]]:
    """The frames stored in an opened run file (PNG each), with their iterations."""
    its = z["frame_iterations"].tolist() if "frame_iterations" in z else []
    if not its and "frames_png" not in z:
        return []
    if "frames_png" not in z or "frames_png_sizes" not in z:
        raise HistoryError(_damaged(p, _("its frames are listed but not stored, or stored but not listed")))
    from PIL import Image

    data = z["frames_png"].tobytes()
    sizes = z["frames_png_sizes"].tolist()
    if len(sizes) != len(its) or sum(sizes) != len(data):
        raise HistoryError(_damaged(p, _("its frames' sizes do not add up to the pictures stored")))
    budget = memory.host_available()
    out, start = [], 0
    for i, (it, size) in enumerate(zip(its, sizes)):
        try:
            with Image.open(io.BytesIO(data[start : start + size])) as im:
                budget -= im.width * im.height * 3
                if budget < 0:
                    raise HistoryError(
                        _("{path}: cannot open: its frames would need more memory than is available").format(path=p)
                    )
                out.append((int(it), np.asarray(im.convert("RGB"))))
        except HistoryError:
            raise
        except Exception as exc:  # Pillow reports a bad picture in many ways (OSError, SyntaxError, ValueError...)
            raise HistoryError(
                _damaged(p, _("frame {n} is not a readable PNG picture ({why})").format(n=i + 1, why=exc))
            ) from None
        start += size
    return out


def _jsonable(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")
