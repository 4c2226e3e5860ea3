"""Training from Python: :func:`train` one map, :class:`SOM` as a scikit-learn estimator. No Qt.

>>> run = som_studio.train("resources/data/wine.csv", labels="cultivar", grid="8x6", scaling="zscore")  # doctest: +SKIP
>>> run.record["quality"]["qe"], run.codebook.shape  # doctest: +SKIP
>>> run.save("wine.somrun")  # doctest: +SKIP

:func:`train` runs the very :class:`~som_studio.session.session.Session` the command line runs,
in this process, and returns the :class:`~som_studio.trained.SomRun` that
:func:`~som_studio.load_run` returns for the file it would save. Its keywords are the run
settings (:data:`som_studio.config.SETTINGS`) in Python spelling: the names the settings are
declared under, so a keyword the declaration does not have is refused with the ones it has.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from som_studio import config as cfgmod
from som_studio.config import ConfigError, DataSpec, RunConfig
from som_studio.core.data import DataError, Table, is_frame, unmasked
from som_studio.core.data.checks import reword_column_flags
from som_studio.core.data.stream import Source
from som_studio.i18n import _

# The keywords train() names in its signature; the rest of the settings come through ``**schedule``.
# Settings that say where the data comes from: train()'s ``data`` argument gives them.
_DATA = ("data",)


class DataNote(UserWarning):
    """What reading a data file decided without certainty (a guessed encoding, a header of years)."""


class Disagreement(UserWarning):
    """Your own implementation's run disagrees with the reference implementation: its map is not the SOM's."""


class TrainError(ValueError):
    """A run that could not train (refused, or failed on the way); the message says why."""


def keywords() -> tuple[str, ...]:
    """Every keyword :func:`train` takes for a run setting, in the declaration's order."""
    return tuple(s.name for s in cfgmod.SETTINGS if s.name not in _DATA)


@dataclass(frozen=True)
class Prepared:
    """A run's validated config and its data (loaded and scaled, or a source read in batches), ready for a session."""

    config: RunConfig
    table: Table | Source
    #: Seconds reading and checking the data took: the run's ``phases.data`` counts them.
    read_s: float = 0.0


def prepare(data: Any, settings: Mapping[str, Any], note: Callable[[str], None] | None = None) -> Prepared:
    """Check every setting and load the data through the one resolver the CLI and the app use.

    ``settings`` are :func:`train`'s keywords by name; ``None`` means the declared default
    (``grid``: the SOM Toolbox's rule for tables, the playbook's map for colours; the iteration
    count: the default of the implementation's kind). What reading a file decided without
    certainty is warned as a :class:`DataNote` (or given to ``note`` as the command line words it, to say as
    it says them). Raises :class:`TrainKeywordError`,
    :class:`ConfigError` or :class:`DataError`.
    """
    from som_studio.core.impls import registry, user_impl
    from som_studio.session.resolve import resolve

    if isinstance(data, bytes):  # a path as bytes (os.fsencode's), not an array of its characters
        data = os.fsdecode(data)
    known = keywords()
    unknown = [k for k in settings if k not in known]
    if unknown:
        raise TrainKeywordError(
            _("unknown keyword {names}; choose from {choices}").format(
                names=", ".join(repr(k) for k in unknown), choices=", ".join(known)
            )
        )
    t0 = time.perf_counter()
    impl = settings.get("impl")
    if isinstance(impl, str) and user_impl.is_spec(impl):  # your own class, "my_som.py:MySom", as --impl takes it
        try:
            settings = {**settings, "impl": user_impl.load(impl).name}
        except user_impl.UserImplError as exc:
            raise ConfigError("impl", str(exc)) from None
    impl = settings.get("impl")
    if isinstance(impl, str) and impl in registry.names():
        check_counts([impl], {registry.get(impl).kind}, settings)
    try:
        resolved = resolve({**settings, "data": data})
    except registry.UnknownImplementation as exc:
        raise ConfigError(exc.refusal.field, exc.refusal.reason) from None
    for said in resolved.notes:  # what reading the data decided without certainty: the CLI's warnings
        if note is not None:
            note(said)
        else:
            warnings.warn(api_words(said), DataNote, stacklevel=3)
    if resolved.source is not None:  # streamed: read in batches during every pass
        return Prepared(resolved.config, resolved.source, time.perf_counter() - t0)
    assert resolved.table is not None  # loaded
    return Prepared(resolved.config, resolved.table, time.perf_counter() - t0)


def check_counts(names: Sequence[str], kinds: set[str], settings: Mapping[str, Any]) -> None:
    """Refuse ``epochs`` where no implementation of ``names`` trains in epochs, or ``steps`` where none trains in
    steps: it would be dropped without a word (the command line refuses it too). Raises :class:`ConfigError`."""
    from som_studio.session.resolve import count_refusal

    refused = count_refusal(names, kinds, settings)
    if refused is not None:
        raise refused


def api_words(text: str) -> str:
    """A message of the data's reader with its column flags (``--labels species``) as this API's keywords
    (``labels=species``)."""
    return reword_column_flags(text, lambda name: f"{name}=")


class TrainKeywordError(TypeError):
    """A keyword :func:`train` does not take; the message lists the ones it does."""


def _refusal_text(exc: ConfigError) -> str:
    """A refusal in the API's words: its field by its keyword name (a record names them so)."""
    return exc.refusal.text()


def progress_observer(progress: Any) -> tuple[Callable[[Any], None] | None, Callable[[], None]]:
    """``(observe, close)`` for ``progress``: ``None``, ``True`` (a tqdm bar) or a callable taking each event."""
    if progress is None or progress is False:
        return None, lambda: None
    if callable(progress):
        return progress, lambda: None
    if progress is not True:  # "yes", 1: a bar by accident, or a typo of a callable's name
        raise TypeError(
            _("progress: expected True, False, None or a callable taking each event, got {value!r}").format(
                value=progress
            )
        )
    try:
        with warnings.catch_warnings():
            # A notebook without ipywidgets gets tqdm's text bar, which works; tqdm says so in red, as if it
            # were an error, the first time.
            warnings.filterwarnings("ignore", message="IProgress not found")
            from tqdm.auto import tqdm
    except ImportError:
        raise TrainError(
            _("progress=True needs tqdm; install it with {command}").format(command="pip install tqdm")
        ) from None
    from som_studio.session.events import ChunkTimed, Started

    bar: Any = None

    def observe(ev: Any) -> None:
        nonlocal bar
        if isinstance(ev, Started):
            bar = tqdm(total=ev.iterations, desc=ev.config.impl, unit="it" if ev.kind == "batch" else "step")
        elif isinstance(ev, ChunkTimed) and bar is not None:
            bar.update(ev.count)

    def close() -> None:
        if bar is not None:
            bar.close()

    return observe, close


def run_session(prepared: Prepared, progress: Any = None, **session_kw: Any) -> Any:
    """Train ``prepared`` in a :class:`Session` in this process; return its :class:`~som_studio.trained.SomRun`.

    ``session_kw`` go to the session (its checkpoints, the checkpoint it resumes from, a map to start from).
    Ctrl-C (SIGINT: a terminal's, or a notebook's interrupt) while it trains its chunks stops it as the
    command line's does, where it stood and saved in its checkpoint folder if it has one, and then raises
    :class:`KeyboardInterrupt`; elsewhere (reading, compiling, the final quality pass) it interrupts at once.
    """
    from som_studio.session.events import Failed, Finished, Snapshot
    from som_studio.session.interrupt import CtrlC
    from som_studio.session.session import Session
    from som_studio.trained import SomRun

    observe, close = progress_observer(progress)
    record = None
    final = None
    ctrl_c = CtrlC()
    try:
        session = Session(
            prepared.config, data=prepared.table, snapshot_interval_s=None, read_s=prepared.read_s, **session_kw
        )
        ctrl_c.watch(session)
        with ctrl_c:
            events = session.run()
            try:
                for ev in events:
                    ctrl_c.follow(ev)
                    if observe is not None:
                        observe(ev)
                    if isinstance(ev, Snapshot):
                        final = ev.map
                    elif isinstance(ev, (Finished, Failed)):
                        record = ev.record
            finally:
                getattr(events, "close", lambda: None)()  # a generator: an interrupt closes the trainer now
    finally:
        close()
    assert record is not None
    if ctrl_c.requested and record.status == "cancelled":
        raise KeyboardInterrupt(_interrupted_text(record))
    if record.status != "ok" or final is None:
        raise TrainError(f"{record.impl}: {record.message or record.status}")
    from som_studio.core.impls.user_impl import agreement_text, disagrees

    if disagrees(record.extra):  # bench says so in its table; a run returned in Python would say nothing
        warnings.warn(f"{record.impl}: {agreement_text(record.extra['agreement'])}", Disagreement, stacklevel=3)
    return SomRun.trained(record, final)


def _interrupted_text(record: Any) -> str:
    """Where a run Ctrl-C stopped stands: its iterations, and the folder that keeps them if it checkpoints."""
    saved = record.extra.get("checkpoint")
    if saved is None:
        return str(record.message)
    return _("{message}; saved in {folder}: resume={folder!r} goes on from there").format(
        message=record.message, folder=saved["folder"]
    )


def train(
    data: Any = None,
    *,
    impl: str | None = None,
    grid: str | tuple[int, int] | None = None,
    topology: str | None = None,
    toroid: bool | None = None,
    epochs: int | None = None,
    steps: int | None = None,
    init: str | None = None,
    scaling: str | None = None,
    labels: str | None = None,
    seed: int | None = None,
    precision: str | None = None,
    layout: str | None = None,
    progress: Any = None,
    checkpoint: str | os.PathLike[str] | None = None,
    checkpoint_every: float = 60.0,
    resume: str | os.PathLike[str] | None = None,
    **schedule: Any,
) -> Any:
    """Train one SOM and return it as a :class:`~som_studio.trained.SomRun` (``Run``).

    Parameters
    ----------
    data : a NumPy array (examples x features), a pandas or polars DataFrame or a pyarrow
        Table (column names become feature names), a path to a ``.csv``, ``.npy``,
        ``.parquet`` or ``.arrow``/``.feather`` file, or ``None`` for the playbook's random
        colours (``samples=`` of them).
    impl, grid, topology, toroid, epochs, steps, init, scaling, labels, seed, precision, layout :
        the run settings, as the command line's flags (``grid`` ``"WxH"`` or ``(width, height)``);
        ``None`` (or ``"auto"``) takes the declared default (``impl``: ``jax-fused-batch``;
        ``init``: ``pca`` for data, ``random`` for the colours).
    progress : ``None`` (quiet), ``True`` (a tqdm bar: terminal, Jupyter, marimo), or a callable
        given each of the session's events.
    checkpoint : a folder to save the run into as it trains, every ``checkpoint_every`` seconds,
        when it ends and when it stops (``--checkpoint``). Ctrl-C (or a notebook's interrupt) while
        it trains saves it where it stood, then raises :class:`KeyboardInterrupt`.
    resume : a folder of checkpoints of this run (``--resume``): training goes on from the latest
        and ends at the map of an uninterrupted run; the settings and data must be the run's own.
        Checkpoints then go on into it unless ``checkpoint`` names another folder.
    **schedule : the other settings: ``sigma_start``, ``sigma_end`` (a number, ``(sx, sy)`` or
        ``"SXxSY"``), ``lr_start``, ``lr_end``, ``ignore``, ``id_column``, ``clusters``, ``samples``.

    Raises
    ------
    TypeError : an unknown keyword.
    ValueError : a refused setting or data (the message names it), or a run that failed.
    """
    settings = dict(
        impl=impl,
        grid=grid,
        topology=topology,
        toroid=toroid,
        epochs=epochs,
        steps=steps,
        init=init,
        scaling=scaling,
        labels=labels,
        seed=seed,
        precision=precision,
        layout=layout,
        **schedule,
    )
    try:
        prepared = prepare(data, settings)
    except TrainKeywordError as exc:
        raise TrainKeywordError(str(exc)) from None
    except ConfigError as exc:
        raise TrainError(_refusal_text(exc)) from None
    except DataError as exc:
        raise TrainError(api_words(str(exc))) from None
    from som_studio.session.preflight import preflight

    refused = preflight(prepared.config)
    if refused:
        raise TrainError(str(refused[0]))
    return run_session(prepared, progress, **_checkpoints(prepared.config, checkpoint, checkpoint_every, resume))


def _checkpoints(
    config: RunConfig,
    checkpoint: str | os.PathLike[str] | None,
    every_s: float,
    resume: str | os.PathLike[str] | None,
) -> dict[str, Any]:
    """The session's keywords for :func:`train`'s ``checkpoint`` and ``resume``, checked."""
    from som_studio.session.checkpoint import CheckpointError, Checkpoints, refuse_foreign, resume_from, unfinished

    out: dict[str, Any] = {}
    for keyword, given in (("checkpoint", checkpoint), ("resume", resume)):
        if given is None:
            continue
        try:  # before Orbax reads it: it logs a warning for each numbered folder of the user's
            refuse_foreign(given)
        except CheckpointError as exc:
            raise TrainError(f"{keyword}: {exc}") from None
    if resume is not None:
        try:
            out["resume"] = resume_from(resume, config)
        except ConfigError as exc:
            raise TrainError(_refusal_text(exc)) from None
        except CheckpointError as exc:
            raise TrainError(f"resume: {exc}") from None
    folder = checkpoint if checkpoint is not None else resume
    if checkpoint is not None and resume is None and (saved := unfinished(checkpoint)) is not None:
        raise TrainError(
            "checkpoint: "
            + _(
                "{folder} holds an unfinished run's checkpoint (iteration {n:,} of {total:,}); go on from it with "
                "resume={folder!r}, or give another folder"
            ).format(folder=str(checkpoint), n=saved.iteration, total=saved.config.iterations)
        )
    if folder is not None:
        if not every_s > 0:
            raise TrainError(
                "checkpoint_every: " + _("must be a positive number of seconds, got {value}").format(value=every_s)
            )
        out["checkpoint"] = Checkpoints(folder, every_s)
    return out


class SOM:
    """A self-organizing map as a scikit-learn estimator (scikit-learn itself is not needed).

    Parameters are :func:`train`'s keywords; learned attributes end in ``_``: ``run_`` (the
    trained :class:`~som_studio.trained.SomRun`), ``codebook_`` (height, width, features, in the
    data's units), ``n_features_in_`` and ``feature_names_in_`` (for a data frame).
    ``predict`` gives each row's unit as ``row * width + col``; ``transform`` the distances to
    every unit (in the space the map was trained in); ``score`` minus the quantization error.
    Missing values (NaN) are allowed: a row is matched over its known features; a row with none is
    refused (``ValueError``), as :meth:`Run.project <som_studio.trained.SomRun.project>` refuses it.
    """

    def __init__(
        self,
        grid: str | tuple[int, int] | None = None,
        *,
        impl: str | None = None,
        epochs: int | None = None,
        seed: int | None = None,
        topology: str | None = None,
        toroid: bool | None = None,
        steps: int | None = None,
        init: str | None = None,
        scaling: str | None = None,
        precision: str | None = None,
        layout: str | None = None,
        sigma_start: Any = None,
        sigma_end: Any = None,
        lr_start: float | None = None,
        lr_end: float | None = None,
        clusters: int | None = None,
    ) -> None:
        self.grid = grid
        self.impl = impl
        self.epochs = epochs
        self.seed = seed
        self.topology = topology
        self.toroid = toroid
        self.steps = steps
        self.init = init
        self.scaling = scaling
        self.precision = precision
        self.layout = layout
        self.sigma_start = sigma_start
        self.sigma_end = sigma_end
        self.lr_start = lr_start
        self.lr_end = lr_end
        self.clusters = clusters

    @classmethod
    def _get_param_names(cls) -> list[str]:
        # The settings train() takes that describe the map, not the data's columns (fit's data holds those).
        return [k for k in keywords() if k not in _COLUMNS]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self._get_param_names()}

    def set_params(self, **params: Any) -> SOM:
        names = self._get_param_names()
        for k, v in params.items():
            if k not in names:
                raise ValueError(
                    _("unknown keyword {names}; choose from {choices}").format(names=repr(k), choices=", ".join(names))
                )
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        changed = {k: v for k, v in self.get_params().items() if v is not None and v != _DEFAULTS.get(k)}
        return "SOM(" + ", ".join(f"{k}={v!r}" for k, v in changed.items()) + ")"

    def __sklearn_tags__(self) -> Any:
        from sklearn.utils import Tags, TargetTags, TransformerTags  # only asked for by scikit-learn itself

        tags = Tags(
            estimator_type="clusterer", target_tags=TargetTags(required=False), transformer_tags=TransformerTags()
        )
        tags.input_tags.allow_nan = True
        return tags

    # -- fitting ------------------------------------------------------------------------
    def fit(self, X: Any, y: Any = None) -> SOM:
        """Train on ``X`` (an array or a data frame); ``y`` is ignored."""
        del y
        names = None
        if is_frame(X):
            from som_studio.core.data import frame_column_names

            names = np.asarray(frame_column_names(X) or [], dtype=object)
        else:
            X = _as_matrix(X, fitted=False)
        params = {k: v for k, v in self.get_params().items() if k not in ("progress",)}
        if params.get("epochs") is None and params.get("steps") is None:
            params.pop("epochs")
        try:
            prepared = prepare(X, {k: v for k, v in params.items() if v is not None})
        except ConfigError as exc:
            raise TrainError(_refusal_text(exc)) from None
        except DataError as exc:
            why = str(exc)
            if names is not None and "=" in why:
                # The reader names train()'s column keywords; the estimator fits every column of X.
                why += _(
                    " (keywords of som_studio.train; SOM.fit takes numeric columns only: leave the others out "
                    "of X, e.g. X.drop(columns=[...]))"
                )
            raise TrainError(why) from None
        self.run_ = run_session(prepared)
        self.codebook_ = self.run_.codebook
        self.n_features_in_ = int(self.codebook_.shape[2])
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return self

    def partial_fit(self, X: Any, y: Any = None) -> SOM:
        """Train the fitted map on more rows, ``X``, from where it stands (the first call fits).

        The map goes on with the fitted run's final neighbourhood radius and learning rate (the
        fine-tuning phase of a SOM's training: the map's order is kept, its units move toward the
        new rows) for the estimator's ``epochs`` (or ``steps``), and ``X`` is scaled with the
        scaling the first fit learned, so every call sees its rows in the same units.
        """
        del y
        if not hasattr(self, "run_"):
            return self.fit(X)
        from som_studio.core.data import Table

        x = self._scaled(X)
        fitted = RunConfig.from_dict(self.run_.record["config"])
        end = fitted.sigmas[1]
        counts: dict[str, int] = {}
        if self.epochs is not None or self.steps is not None:
            counts = {k: v for k, v in (("epochs", self.epochs), ("steps", self.steps)) if v is not None}
        cfg = fitted.replace(
            data=DataSpec(path="array"), sigma_start=end, sigma_end=end, lr_start=fitted.lr_end, **counts
        )
        table = Table(x, tuple(self.run_.feature_names), scaling=self.run_.scaling, source="array")
        self.run_ = run_session(Prepared(cfg, table), initial_map=self.run_._trained)
        self.codebook_ = self.run_.codebook
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "run_"):
            try:
                from sklearn.exceptions import NotFittedError
            except ImportError:
                raise AttributeError(_("this SOM is not fitted yet: call fit first")) from None
            raise NotFittedError(_("this SOM is not fitted yet: call fit first"))

    def _scaled(self, X: Any) -> np.ndarray:
        from som_studio.core.data import check_known_rows

        self._check_fitted()
        if is_frame(X):
            from som_studio.core.data import frame_features

            values, _ids = frame_features(X, self.run_.feature_names)
        else:
            values = _as_matrix(X, fitted=True)
            if values.shape[1] != self.n_features_in_:
                raise ValueError(
                    _("X has {d} features, but SOM is expecting {n} features as input").format(
                        d=values.shape[1], n=self.n_features_in_
                    )
                )
        # A row with no known value is at no distance from any unit: refused, as Run.project refuses it.
        check_known_rows(values, "X")
        scaled: np.ndarray = self.run_.scaling.apply(values)
        return scaled

    def predict(self, X: Any) -> np.ndarray:
        """Each row's best-matching unit, as the flat index ``row * width + col``."""
        from som_studio.core.som import metrics

        x = self._scaled(X)
        first, _d2 = metrics.nearest_units(self.run_._trained, x)
        return np.asarray(first, dtype=np.int64)

    def fit_predict(self, X: Any, y: Any = None) -> np.ndarray:
        return self.fit(X, y).predict(X)

    def transform(self, X: Any) -> np.ndarray:
        """Each row's Euclidean distance to every unit (N, units), over its known features."""
        x = self._scaled(X)
        w = self.run_._trained.reshape(-1, x.shape[1])
        known = ~np.isnan(x)
        xz = np.where(known, x, 0.0)
        d2 = (xz**2).sum(1)[:, None] - 2 * xz @ w.T + (known.astype(np.float64) @ (w**2).T)
        out: np.ndarray = np.sqrt(np.maximum(d2, 0.0))
        return out

    def fit_transform(self, X: Any, y: Any = None) -> np.ndarray:
        return self.fit(X, y).transform(X)

    def score(self, X: Any, y: Any = None) -> float:
        """Minus the quantization error of ``X`` on the map (higher is better)."""
        del y
        from som_studio.core.som import metrics

        x = self._scaled(X)
        _first, d2 = metrics.nearest_units(self.run_._trained, x)
        return -float(np.mean(np.sqrt(d2)))


# The settings of the data (its columns, how it is read): given with fit's data, not as estimator parameters.
_COLUMNS = ("samples", "labels", "ignore", "id_column", "stream", "batch_rows")
_DEFAULTS = {s.name: s.default for s in cfgmod.SETTINGS}  # a parameter left at its default is not shown


def _as_matrix(X: Any, fitted: bool) -> np.ndarray:
    """``X`` as a 2-D float64 array, NaN allowed, refused in scikit-learn's words where it has them."""
    if hasattr(X, "tocsr") or hasattr(X, "todense"):
        raise TypeError(_("sparse input is not supported: a SOM needs dense data; convert it with X.toarray()"))
    try:
        arr = np.asarray(unmasked(X))
    except (TypeError, ValueError) as exc:
        raise ValueError(_("X cannot be read as an array ({why})").format(why=exc)) from None
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(_("X must be numeric: {why}").format(why=exc)) from None
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(_("Complex data not supported"))
    if arr.ndim != 2:
        raise ValueError(
            _(
                "Expected a 2D array, got a {ndim}D array instead; Reshape your data with X.reshape(-1, 1) or "
                "X.reshape(1, -1)"
            ).format(ndim=arr.ndim)
        )
    if arr.shape[0] < 1:
        raise ValueError(
            _("Found array with 0 sample(s) (shape={shape}) while a minimum of 1 is required.").format(shape=arr.shape)
        )
    if arr.shape[1] < 1:
        raise ValueError(
            _("Found array with 0 feature(s) (shape={shape}) while a minimum of 1 is required.").format(shape=arr.shape)
        )
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValueError(_("X must be numeric, got dtype {dtype}").format(dtype=arr.dtype))
    out = np.asarray(arr, dtype=np.float64)
    if np.isinf(out).any():
        raise ValueError(_("Input contains infinity or a value too large for dtype('float64')."))
    return out
