"""Writing files safely: refuse to overwrite, write atomically, say what went wrong; PNG bytes.

Every file SOM Studio writes goes through :func:`write_atomic`: a temporary
file in the target folder, flushed and synced, then renamed over the target.
A full disk or an unwritable folder leaves no partial file behind.
"""

from __future__ import annotations

import io
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from som_studio.i18n import _


class OutputError(OSError):
    """A file cannot be written; the message names the file and why."""


def _exists(p: Path) -> str:
    return _("{path}: exists; use {flag} to overwrite it").format(path=p, flag="--force")


def _cannot_write(p: Path, exc: OSError) -> str:
    return _("{path}: cannot write ({why})").format(path=p, why=exc.strerror or exc)


def check_writable(path: str | os.PathLike[str], force: bool = False) -> Path:
    """Check up front that ``path`` can be written (and may be overwritten)."""
    p = Path(path)
    if p.is_dir():
        raise OutputError(_("{path}: is a folder; give a file name").format(path=p))
    if p.exists() and not force:
        raise OutputError(_exists(p))
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise OutputError(_("{path}: folder {folder} does not exist").format(path=p, folder=parent))
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(_("{path}: folder {folder} is not writable").format(path=p, folder=parent))
    return p


def write_atomic(path: str | os.PathLike[str], content: bytes | str, force: bool = False) -> Path:
    """Write ``content`` to ``path`` atomically; refuse an existing file unless ``force``."""
    p = check_writable(path, force)
    data = content.encode("utf-8") if isinstance(content, str) else content
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".part", dir=p.parent)
    except OSError as exc:  # the folder refused a new file after all (read-only mount, /proc, quota)
        raise OutputError(_cannot_write(p, exc)) from None
    try:
        # mkstemp makes the file private (0600); give it the mode a plain open() would.
        os.fchmod(fd, file_mode(p))
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        publish(tmp, p, force)
    except BaseException as exc:  # Ctrl-C included: never leave the temporary file behind
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and not isinstance(exc, OutputError):
            raise OutputError(_cannot_write(p, exc)) from None
        raise
    return p


def publish(tmp: str | os.PathLike[str], p: Path, force: bool) -> None:
    """Move the finished file ``tmp`` to ``p``; without ``force`` never over a file, even one that appeared
    since ``p`` was checked: a hard link is made only where no file is, so of two commands writing one output at
    once the second is refused (a check before a rename let both write, the second's replacing the first's).
    ``tmp`` is gone afterwards unless this raises."""
    if force:
        os.replace(tmp, p)
        return
    try:
        os.link(tmp, p)
    except FileExistsError:
        raise OutputError(_exists(p)) from None
    except OSError:  # a file system without hard links: the check and the rename, a moment apart
        if p.exists():
            raise OutputError(_exists(p)) from None
        os.replace(tmp, p)
        return
    os.unlink(tmp)


def file_mode(p: Path) -> int:
    """An existing file's mode, else 0666 less the umask (what ``open(p, "w")`` would give)."""
    try:
        return p.stat().st_mode & 0o7777
    except OSError:
        pass
    try:  # read the umask without changing it (os.umask would, for every thread)
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o644


def json_text(doc: Any) -> str:
    """``doc`` as indented JSON text ending in a newline; NaN and infinities (not JSON) become ``null``."""
    return json.dumps(_finite(doc), indent=2, allow_nan=False, default=_jsonable) + "\n"


def write_json(path: str | os.PathLike[str], doc: Any, force: bool = False) -> Path:
    """``doc`` as indented JSON (:func:`json_text`), written atomically."""
    return write_atomic(path, json_text(doc), force)


def _finite(o: Any) -> Any:
    """``o`` with every non-finite float replaced by ``None``."""
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_finite(v) for v in o]
    return o


def _jsonable(o: Any) -> Any:
    import numpy as np

    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def png_bytes(image: np.ndarray, fast: bool = False) -> bytes:
    """PNG of an (H, W, 3) uint8 image (Pillow).

    ``fast``: light compression, ~20x quicker than the smallest file and ~25 % larger
    (for the many frames a run keeps; measured on 240x135 maps).
    """
    from PIL import Image

    buf = io.BytesIO()
    options = {"compress_level": 3} if fast else {"optimize": True}
    Image.fromarray(np.ascontiguousarray(image), "RGB").save(buf, format="PNG", **options)
    return buf.getvalue()
