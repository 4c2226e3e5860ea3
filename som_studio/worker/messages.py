"""The messages between the app and its worker process: typed, versioned, one encode and one decode.

Every message is a frozen dataclass. On the pipe it travels as
``(PROTOCOL_VERSION, name, fields...)`` (pickled by
:mod:`multiprocessing`); :func:`decode` refuses another version or an
unknown name with :class:`ProtocolError`, so an app and a worker of different
releases say so rather than misread each other.

worker -> app: :class:`EventMessage` (a session event, ``EpochProgress`` included; a ``Snapshot`` is sent
as a :class:`FrameMessage` rendered in the worker, the latest only; ``ChunkTimed`` events go together
in a :class:`ChunksMessage` a few times a second, each as the session timed it),
:class:`FinalMap` (the last map, raw, just before ``Finished``/``Failed``),
:class:`WorkerError` (the worker failed outside the session) and
:class:`Info` (a probe's answer).

app -> worker: :class:`Cancel`, :class:`Pause`, :class:`Resume`,
:class:`SetView`, :class:`FrameInterval`. End of file on the control pipe (the app died) cancels.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

PROTOCOL_VERSION = 6
"""1: the first; 2: the ``Started`` event inside an :class:`EventMessage` carries the data's feature
names and scaling (a live run's planes are named, its colour bars in the file's units); 3: a sweep's
``CombinationTrained`` events; 4: a streamed epoch's ``EpochProgress`` events; 5: timed chunks
together (:class:`ChunksMessage`), and the app says how often it draws frames (:class:`FrameInterval`);
6: ``Started`` says the iteration a resumed run starts at."""


class ProtocolError(ValueError):
    """A message this side cannot read (another version, or not a message)."""


@dataclass(frozen=True)
class EventMessage:
    """A session event (:mod:`som_studio.session.events`) other than ``Snapshot``."""

    event: Any


@dataclass(frozen=True)
class ChunksMessage:
    """``ChunkTimed`` events in the order the session yielded them, sent together (each one as timed)."""

    chunks: tuple[Any, ...]


@dataclass(frozen=True)
class FrameMessage:
    """A picture of the map, rendered in the worker for the view asked (``frames.MapFrame``)."""

    frame: Any


@dataclass(frozen=True)
class FinalMap:
    """The run's last map, raw (H, W, D), so the app can show it in any view afterwards."""

    map: Any


@dataclass(frozen=True)
class WorkerError:
    """The worker failed outside the session: the traceback's text."""

    text: str


@dataclass(frozen=True)
class Info:
    """A short-lived worker's answer: devices (``session.env.describe``) or the doctor's report."""

    info: dict[str, Any]


@dataclass(frozen=True)
class Cancel:
    """Stop the run between chunks (its final quality pass is skipped)."""


@dataclass(frozen=True)
class Pause:
    """Hold the run between chunks."""


@dataclass(frozen=True)
class Resume:
    """Go on after :class:`Pause`."""


@dataclass(frozen=True)
class SetView:
    """Render the next frames as this view (``frames.ViewChoice``'s mode and component)."""

    mode: str
    component: int = 0


@dataclass(frozen=True)
class FrameInterval:
    """Send frames at most every ``seconds`` (the app draws them no more often; hidden, less often still)."""

    seconds: float


Message = (
    EventMessage
    | ChunksMessage
    | FrameMessage
    | FinalMap
    | WorkerError
    | Info
    | Cancel
    | Pause
    | Resume
    | SetView
    | FrameInterval
)
_BY_NAME: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        EventMessage,
        ChunksMessage,
        FrameMessage,
        FinalMap,
        WorkerError,
        Info,
        Cancel,
        Pause,
        Resume,
        SetView,
        FrameInterval,
    )
}


def encode(msg: Message) -> tuple[Any, ...]:
    """What goes on the pipe for ``msg``."""
    name = type(msg).__name__
    if _BY_NAME.get(name) is not type(msg):
        raise ProtocolError(f"not a worker message: {msg!r}")
    return (PROTOCOL_VERSION, name, *(getattr(msg, f.name) for f in dataclasses.fields(msg)))


def decode(data: Any) -> Message:
    """The message :func:`encode` made; :class:`ProtocolError` for anything else."""
    if not isinstance(data, tuple) or len(data) < 2:
        raise ProtocolError(f"not a worker message: {type(data).__name__}")
    version, name, *fields = data
    if version != PROTOCOL_VERSION:
        raise ProtocolError(
            f"the worker speaks protocol version {version}, this app version {PROTOCOL_VERSION}: "
            "the app and its worker come from different installs"
        )
    cls = _BY_NAME.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ProtocolError(f"unknown worker message {name!r}")
    try:
        return cls(*fields)  # type: ignore[no-any-return]
    except TypeError as exc:
        raise ProtocolError(f"malformed {name} message ({exc})") from None
