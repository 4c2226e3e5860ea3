"""Checkpoints: where a run stands, saved as it trains, so that it can resume exactly.

A checkpoint holds the map, the iterations done, the position in the data
(a row index in memory; the reader's own state when the rows stream) and any
partial sums of an unfinished epoch, beside what the run measured so far (its
QE/TE history and training time). Resuming rebuilds the seeded problem of the
same configuration with the saved map in place of the initial one and trains
the remaining iterations: every implementation draws its schedules and sample
order from the seed by iteration number, so the resumed run ends at the map an
uninterrupted one reaches, bit for bit on the CPU.

The files are Orbax's (``orbax.checkpoint.CheckpointManager``): one numbered
folder per checkpoint with two items, ``state`` (the arrays, saved exactly by
TensorStore) and ``meta`` (JSON: the configuration, the data's files, the
position, the reader's state). Orbax writes each checkpoint under a temporary
name and renames it when complete, and lists only complete ones, so a
checkpoint is never read half-written; it removes the previous checkpoint
only after the new one is in place. Orbax holds the reader's state as JSON,
which is why no format of our own is needed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import hashlib
import json
import logging
import os
import re
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from som_studio.config import ConfigError, RunConfig
from som_studio.i18n import _

__all__ = [
    "FORMAT",
    "CheckpointError",
    "Checkpoints",
    "Saved",
    "config_differences",
    "data_files",
    "foreign",
    "read_latest",
    "resume_from",
]

#: What ``meta["format"]`` says in every checkpoint this module writes.
FORMAT = "som-studio checkpoint"
VERSION = 1
# The items of one checkpoint.
_ITEMS = ("state", "meta")
# Orbax's marker of a checkpoint still being written (or left by a run that died while writing one).
_TMP = ".orbax-checkpoint-tmp"

DEFAULT_EVERY_S = 60.0


class CheckpointError(RuntimeError):
    """A checkpoint could not be written or read; the message names the folder and the cause."""


@dataclass(frozen=True)
class Saved:
    """One complete checkpoint as read back.

    ``arrays`` holds ``map`` (height, width, features) and whatever partial
    sums the trainer saved; ``meta`` the JSON item (:func:`meta_for`).
    """

    folder: Path
    step: int
    arrays: dict[str, np.ndarray]
    meta: dict[str, Any]

    @property
    def map(self) -> np.ndarray:
        return self.arrays["map"]

    @property
    def iteration(self) -> int:
        """Iterations (epochs or steps) done when it was saved."""
        return int(self.meta["iteration"])

    @property
    def config(self) -> RunConfig:
        return RunConfig.from_dict(self.meta["config"])


def _orbax() -> Any:
    """Orbax, imported on first use (seconds of imports that runs without checkpoints never pay)."""
    try:
        import orbax.checkpoint as ocp
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise CheckpointError(
            _("checkpoints need orbax-checkpoint ({why}); install it with {command}").format(
                why=exc, command="pip install orbax-checkpoint"
            )
        ) from None
    return ocp


def _manager(folder: Path, *, create: bool) -> Any:
    ocp = _orbax()
    options = ocp.CheckpointManagerOptions(
        max_to_keep=1,  # the previous one goes only once the next is complete
        enable_async_checkpointing=False,  # the session saves between chunks, with nothing else running
        create=create,
    )
    return ocp.CheckpointManager(folder.absolute(), options=options, item_names=_ITEMS)


@contextlib.contextmanager
def _quiet_orbax() -> Iterator[None]:
    """Orbax's threads log a failed write with its traceback; the session reports it in a sentence instead."""
    log = logging.getLogger("absl")
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        log.setLevel(level)


def _why(exc: BaseException) -> str:
    """The cause of a failed write in a few words: the operating system's, when there is one.

    TensorStore reports an operating system's error inside its own text (``[os_error_code='28']``).
    """
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = str(exc)
    code = re.search(r"os_error_code='?(\d+)", text)
    if code:
        return os.strerror(int(code.group(1)))
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return first[:300]


class Checkpoints:
    """The checkpoints one run writes into ``folder``, every ``every_s`` seconds of its time.

    Thread: the session's (the one that trains). A save replaces the previous
    checkpoint only once complete; a save that fails (a full disk) removes what
    it had written, keeps the previous checkpoint and raises
    :class:`CheckpointError`.
    """

    def __init__(self, folder: str | os.PathLike[str], every_s: float = DEFAULT_EVERY_S, at_end: bool = True) -> None:
        self.folder = Path(folder)
        self.every_s = float(every_s)
        #: Save when the run ends as well as when it stops (the app keeps a finished run as its .somrun instead).
        self.at_end = at_end
        self._mgr: Any = None
        self._last = time.monotonic()
        self._step: int | None = None
        #: Seconds spent writing checkpoints so far.
        self.spent_s = 0.0
        #: Iterations done at the last checkpoint written (``None``: none yet).
        self.iteration: int | None = None
        #: Whether the last checkpoint was written inside an iteration (a streamed epoch's partial sums).
        self.within = False
        self._importing: threading.Thread | None = None

    def due(self) -> bool:
        """Whether ``every_s`` seconds have passed since the last save (or since the run began)."""
        return time.monotonic() - self._last >= self.every_s

    def start(self) -> None:
        """Create the folder: a run refuses a folder it cannot write before it trains.

        Orbax itself (a second or more of imports) is imported on a thread of its own from here, or from
        :meth:`start_imports` as the run begins to read its data, and :meth:`ready` waits for it before the
        run's memory is measured and its programs are built: its imports add JAX options to every
        program's cache key, so a program compiled before they end would compile again in the first timed
        chunk. No chunk shares the interpreter with the imports.
        """
        self.start_imports()
        refuse_foreign(self.folder)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            for left in self.folder.glob(f"*{_TMP}*"):  # what a run killed while writing left: never read
                shutil.rmtree(left, ignore_errors=True)
            probe = self.folder / f".write-test-{os.getpid()}"
            probe.touch()
            probe.unlink()
        except OSError as exc:
            raise CheckpointError(
                _("{folder}: cannot write checkpoints there ({why})").format(folder=self.folder, why=_why(exc))
            ) from None
        self._last = time.monotonic()

    def start_imports(self) -> None:
        """Begin importing Orbax on a thread of its own (once): a session does as it starts reading its data."""

        def load() -> None:
            with contextlib.suppress(Exception):  # not installed: the first save says so, in its words
                _orbax()

        if self._importing is None:
            self._importing = threading.Thread(target=load, name="som-orbax-import", daemon=True)
            self._importing.start()

    def ready(self) -> None:
        """Wait for the imports :meth:`start` began (before anything of the run is compiled)."""
        if self._importing is not None:
            self._importing.join()

    def _open(self) -> None:
        if self._mgr is not None:
            return
        try:
            self._mgr = _manager(self.folder, create=True)
            self._step = self._mgr.latest_step()
        except (OSError, ValueError) as exc:
            raise CheckpointError(
                _("{folder}: cannot write checkpoints there ({why})").format(folder=self.folder, why=_why(exc))
            ) from None

    def save(self, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        """Write one checkpoint: ``arrays`` (``map`` and partial sums) and ``meta`` (JSON)."""
        self._open()
        ocp = _orbax()
        t0 = time.perf_counter()
        step = (self._step if self._step is not None else -1) + 1
        try:
            with _quiet_orbax():
                self._mgr.save(
                    step,
                    args=ocp.args.Composite(
                        state=ocp.args.StandardSave({k: np.asarray(v) for k, v in arrays.items()}),
                        meta=ocp.args.JsonSave(json.loads(json.dumps(meta))),
                    ),
                    force=True,
                )
                self._mgr.wait_until_finished()
        except Exception as exc:
            for left in glob.glob(str(self.folder / f"{step}{_TMP}*")):  # what this save wrote so far
                shutil.rmtree(left, ignore_errors=True)
            kept = (
                _("the checkpoint at iteration {n:,} is kept").format(n=self.iteration)
                if self.iteration is not None
                else _("the folder's earlier checkpoint is kept")
            )
            raise CheckpointError(
                _("{folder}: could not write a checkpoint ({why}); {kept}").format(
                    folder=self.folder, why=_why(exc), kept=kept
                )
            ) from None
        finally:
            self.spent_s += time.perf_counter() - t0
        self._step = step
        self.iteration = int(meta["iteration"])
        self._last = time.monotonic()

    def discard(self) -> None:
        """Remove the folder and its checkpoints (a run that ended has nothing left to resume)."""
        self.close()
        shutil.rmtree(self.folder, ignore_errors=True)
        self.iteration = None

    def close(self) -> None:
        if self._mgr is not None:
            self._mgr.close()
            self._mgr = None


def foreign(folder: str | os.PathLike[str]) -> list[str]:
    """What ``folder`` holds that is no checkpoint a run wrote there, by name (none when it does not exist).

    A checkpoint is a numbered folder holding Orbax's metadata, or one still being written. Orbax keeps one
    and removes every other numbered folder as it writes the next, so a folder of the user's named
    ``2024`` would be deleted with its files: runs refuse such a folder before they train.
    """
    p = Path(folder)
    if not p.is_dir():
        return []
    out = []
    for entry in sorted(p.iterdir()):
        name = entry.name
        ours = entry.is_dir() and (_TMP in name or (name.isdigit() and (entry / "_CHECKPOINT_METADATA").exists()))
        if not (ours or name.startswith(".write-test-")):
            out.append(name + ("/" if entry.is_dir() else ""))
    return out


def refuse_foreign(folder: str | os.PathLike[str]) -> None:
    """Raise :class:`CheckpointError` when ``folder`` holds anything but checkpoints (:func:`foreign`)."""
    found = foreign(folder)
    if found:
        shown = ", ".join(found[:5]) + (", ..." if len(found) > 5 else "")
        raise CheckpointError(
            _(
                "{folder}: holds {names}, not checkpoints; checkpoints are kept in a folder of their own (an empty "
                "or new one), whose older checkpoints they replace"
            ).format(folder=folder, names=shown)
        )


def read_latest(folder: str | os.PathLike[str]) -> Saved:
    """The latest complete checkpoint in ``folder``; :class:`CheckpointError` when there is none."""
    path = Path(folder)
    if path.exists() and not path.is_dir():
        raise CheckpointError(_("{path}: a file, not a folder of checkpoints").format(path=path))
    if not path.is_dir():
        raise CheckpointError(_("{folder}: no such folder").format(folder=path))
    try:
        mgr = _manager(path, create=False)
    except (OSError, ValueError) as exc:
        raise CheckpointError(
            _("{folder}: not a folder of checkpoints ({why})").format(folder=path, why=_why(exc))
        ) from None
    try:
        step = mgr.latest_step()
        if step is None:
            raise CheckpointError(_("{folder}: holds no complete checkpoint").format(folder=path))
        ocp = _orbax()
        try:
            got = mgr.restore(
                step, args=ocp.args.Composite(state=ocp.args.StandardRestore(), meta=ocp.args.JsonRestore())
            )
        except Exception as exc:
            raise CheckpointError(
                _("{folder}: checkpoint {step} cannot be read ({why})").format(folder=path, step=step, why=_why(exc))
            ) from None
    finally:
        mgr.close()
    meta = dict(got.meta or {})
    if meta.get("format") != FORMAT or "iteration" not in meta or "config" not in meta:
        raise CheckpointError(_("{folder}: not a SOM Studio checkpoint").format(folder=path))
    if int(meta.get("version", 0)) > VERSION:
        raise CheckpointError(
            _("{folder}: written by a newer SOM Studio (checkpoint version {version})").format(
                folder=path, version=meta.get("version")
            )
        )
    arrays = {str(k): np.asarray(v) for k, v in dict(got.state).items()}
    return Saved(path, int(step), arrays, meta)


def unfinished(folder: str | os.PathLike[str]) -> Saved | None:
    """The checkpoint of an unfinished run in ``folder`` (its hours of training), or ``None``: none there, none
    complete, or a finished run's (nothing to go on from). A run started afresh there would replace it."""
    path = Path(folder)
    if not path.is_dir() or not any(step.name.isdigit() for step in path.iterdir()):
        return None
    try:
        saved = read_latest(path)
        total = saved.config.iterations
    except (CheckpointError, ConfigError, KeyError, TypeError, ValueError):
        return None
    return saved if saved.iteration < total else None


def data_files(config: RunConfig) -> list[list[Any]]:
    """The data's files as ``[name, bytes, modified (ns)]``: what a resumed run checks is unchanged.

    ``--data`` may be one file, a folder (its files) or a glob; random colours have none.
    """
    path = config.data.path
    if path is None:
        return []
    p = Path(path)
    if p.is_dir():
        files = sorted(q for q in p.iterdir() if q.is_file())
    elif p.exists():
        files = [p]
    else:
        files = sorted(Path(q) for q in glob.glob(path) if Path(q).is_file())
    out: list[list[Any]] = []
    for f in files:
        st = f.stat()
        out.append([str(f.resolve()), int(st.st_size), int(st.st_mtime_ns)])  # wherever the run is resumed from
    return out


def table_stamp(data: np.ndarray) -> list[Any]:
    """``[rows, columns, digest]`` of data given in memory (a data frame or an array, from Python), which has
    no file to stamp: what a resumed run checks is the same table. The digest is of its values as trained."""
    a = np.ascontiguousarray(data)
    digest = hashlib.blake2b(str(a.dtype).encode(), digest_size=16)
    digest.update(a)
    return [int(a.shape[0]), int(a.shape[1]) if a.ndim > 1 else 1, digest.hexdigest()]


def same_table(saved: Saved, folder: str | os.PathLike[str], data: np.ndarray) -> None:
    """Refuse (:class:`~som_studio.config.ConfigError`, naming ``data``) to resume from ``saved`` with data given
    in memory that is not the table its run trained on (a checkpoint written before tables were stamped: not
    checked)."""
    then = saved.meta.get("table")
    if not then:
        return
    now = table_stamp(data)
    if now[:2] != list(then[:2]):
        raise ConfigError(
            "data",
            _(
                "differs from the checkpoint in {folder} ({there} there, {here} here); resume with the data it was "
                "trained on"
            ).format(
                folder=Path(folder),
                there=_("{rows:,} rows x {columns:,} columns").format(rows=then[0], columns=then[1]),
                here=_("{rows:,} rows x {columns:,} columns").format(rows=now[0], columns=now[1]),
            ),
        )
    if now[2] != then[2]:
        raise ConfigError(
            "data",
            _(
                "holds other values than the data the checkpoint in {folder} was trained on (the same {rows:,} rows x "
                "{columns:,} columns); resume with that data"
            ).format(folder=Path(folder), rows=now[0], columns=now[1]),
        )


def meta_for(
    config: RunConfig,
    iteration: int,
    *,
    history: list[dict[str, float]],
    trained_s: float,
    files: list[list[Any]],
    position: dict[str, Any] | None = None,
    reader: Any = None,
    table: list[Any] | None = None,
) -> dict[str, Any]:
    """A checkpoint's JSON item: enough to check a resume's options and to carry the run on."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "config": config.to_dict(),
        "data_at": None if config.data.path is None else str(Path(config.data.path).resolve()),
        "files": files,
        "table": table,
        "iteration": int(iteration),
        "iterations": int(config.iterations),
        "position": position or {"iteration": int(iteration), "row": 0},
        "reader": reader,
        "history": history,
        "trained_s": float(trained_s),
        "saved_at": time.time(),
    }


# What a resumed run may change: how it reports and saves, not what it trains.
_FREE = ("cpu_devices",)


def config_differences(saved: RunConfig, now: RunConfig) -> list[tuple[str, str, str]]:
    """The settings in which ``now`` differs from the checkpoint's run: ``(field, there, here)``.

    ``field`` is the configuration's field name (``grid``, ``data``, ``epochs``…), as a
    refusal names it; the values are as a run's record writes them.
    """
    a, b = saved.to_dict(), now.to_dict()
    out: list[tuple[str, str, str]] = []
    for key in dict.fromkeys([*a, *b]):
        if key in _FREE or a.get(key) == b.get(key):
            continue
        if key in _SCHEDULES:  # each end of the schedule by its own name, as the flags set them
            ends = _SCHEDULES[key]
            da, db = a.get(key) or {}, b.get(key) or {}
            out += [
                (field, _number(da.get(end)), _number(db.get(end))) for end, field in ends if da.get(end) != db.get(end)
            ]
            continue
        field = key
        if key == "data":
            da, db = a.get(key) or {}, b.get(key) or {}
            moved = da.get("path") != db.get("path") or da.get("source") != db.get("source")
            if moved or da.get("samples") != db.get("samples"):
                # In the words a user gave them: the data's path, or its source and rows; not the spec's JSON.
                said = [(d.get("path") or d.get("source")) if moved else d.get("samples") for d in (da, db)]
                out.append(("data" if moved else "samples", _text(said[0]), _text(said[1])))
                continue
        out.append((field, _text(a.get(key)), _text(b.get(key))))
    return out


# A schedule's ends, as a record writes them, and the names the settings give them.
_SCHEDULES = {
    "sigma": (("start", "sigma_start"), ("end", "sigma_end")),
    "learning_rate": (("start", "lr_start"), ("end", "lr_end")),
}


def _number(value: Any) -> str:
    """A schedule's end as a user gives it: ``0.75``, or ``2.5,2`` for a radius per axis."""
    if isinstance(value, list):
        return _number(value[0]) if len(set(value)) == 1 else ",".join(_number(v) for v in value)
    return _text(value) if not isinstance(value, float) else f"{value:g}"


def _text(value: Any) -> str:
    if value is None:
        return _("not given")
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return f"{value[0]}x{value[1]}"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def resume_from(folder: str | os.PathLike[str], config: RunConfig) -> Saved:
    """The latest checkpoint in ``folder``, checked against the run about to resume from it.

    Refused (:class:`~som_studio.config.ConfigError`, naming the setting) when
    the SOM, the data or the batch settings differ from the checkpoint's run,
    or (naming ``data``) when a data file changed since; :class:`CheckpointError`
    when there is no complete checkpoint.
    """
    saved = read_latest(folder)
    where = Path(folder)
    compared, at, path = config, saved.meta.get("data_at"), config.data.path
    if at and path is not None and path != saved.config.data.path and str(Path(path).resolve()) == at:
        # The same files named from another folder (a job resumed from elsewhere): compared as the same data.
        compared = config.replace(data=dataclasses.replace(config.data, path=saved.config.data.path))
    for field, there, here in config_differences(saved.config, compared):
        raise ConfigError(
            field,
            _("differs from the checkpoint in {folder} ({there} there, {here} here); resume with its settings").format(
                folder=where, there=there, here=here
            ),
        )
    # Absolute names (an older checkpoint's relative ones are taken from the folder the run is resumed in).
    then = {str(Path(f[0]).resolve()): f for f in saved.meta.get("files") or []}
    for name, size, mtime in data_files(config):
        old = then.pop(name, None)
        if old is None:
            raise ConfigError(
                "data",
                _("{file} is new since the checkpoint in {folder} was written").format(file=name, folder=where),
            )
        if int(old[1]) != size or int(old[2]) != mtime:
            raise ConfigError(
                "data",
                _("{file} changed since the checkpoint in {folder} was written").format(file=name, folder=where),
            )
    if then:
        raise ConfigError(
            "data",
            _("{file} is gone since the checkpoint in {folder} was written").format(
                file=next(iter(then)), folder=where
            ),
        )
    return saved
