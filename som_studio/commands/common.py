"""Options and helpers shared by the commands that train (``bench``, ``compare``)."""

from __future__ import annotations

import argparse
import fnmatch
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from som_studio import config as cfgmod
from som_studio.config import ConfigError, RunConfig
from som_studio.i18n import _, ljust, ngettext


class CommandError(Exception):
    """A user error: printed as ``som-studio COMMAND: error: ...`` with exit status 2."""


def _argument_type(read: Callable[[str], Any]) -> Callable[[str], Any]:
    """A setting's ``parse`` as an argparse type: its refusal is argparse's error, in the same words."""

    def convert(text: str) -> Any:
        try:
            return read(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = getattr(read, "__name__", "value")
    return convert


_count = _argument_type(cfgmod.parse_count)
_whole = _argument_type(cfgmod.parse_whole)
_grid = _argument_type(cfgmod.read_grid)

# Options of the SOM that the CLI spells its own way, not from the declaration's defaults.
_SPECIAL = ("impl",)
# The counts default to None until configs_from_args: it tells a count given for no listed implementation.
_NO_DEFAULT = ("grid", "epochs", "steps", "scaling")


def add_setting(g: Any, s: cfgmod.Setting, listed: bool = True) -> None:
    """The command-line option of setting ``s``, as its declaration says (``listed`` false: not in the help)."""
    kw: dict[str, Any] = {"help": s.help if listed else argparse.SUPPRESS, "dest": s.name}
    if s.control == cfgmod.Control.CHECK:
        kw["action"] = "store_true"
    else:
        if s.choices is not None:
            kw["choices"] = tuple(str(c) for c in s.choices)  # argparse names them by repr()
        elif s.parse is not None:
            kw["type"] = _argument_type(s.parse)
        if s.metavar:
            kw["metavar"] = s.metavar
        if s.name not in _NO_DEFAULT and s.default is not None:
            kw["default"] = s.default
    g.add_argument(s.flag, **kw)


def add_run_options(
    p: argparse.ArgumentParser,
    *,
    baseline_default: str | None,
    impls: bool = True,
    impl_default: str | None = None,
    save_runs_help: str = "write DIR/<implementation>.somrun for each finished run",
    unlisted: Sequence[str] = (),
) -> None:
    """The options that define the SOM to train, and ``--baseline`` (shared by ``bench`` and ``compare``).

    ``baseline_default`` says, for the help, which run is the baseline when none is given
    (``None``: no ``--baseline``); ``impls`` false leaves out ``--impl``'s list (``sweep``
    trains with one implementation's kernels). ``unlisted``: settings the command does not take, left out of its
    help (still read, so that the command refuses them in its own words).
    """
    g = p.add_argument_group(
        "the SOM to train (the same for every implementation)" if impls else "the SOM every map shares"
    )
    if impls:
        default = impl_default or (
            "the declared default implementation after its NumPy reference (" + ",".join(default_impls()) + ")"
        )
        g.add_argument("--impl", help=cfgmod.setting_named("impl").help + "; default: " + default)
    for s in cfgmod.SETTINGS:
        if s.name in _SPECIAL:
            continue
        add_setting(g, s, listed=s.name not in unlisted)
        if s.name == "data":
            g.add_argument(
                "--scale", action="store_true", help="min-max scale each feature of --data to [0, 1] (--scaling minmax)"
            )
    g.add_argument("--save-runs", metavar="DIR", help=save_runs_help)
    o = p.add_argument_group("output")
    if baseline_default is not None:
        o.add_argument(
            "--baseline",
            metavar="IMPL",
            help=f"speed-ups are against this implementation, for runs of its kind (default: {baseline_default})",
        )
    o.add_argument("--force", action="store_true", help="overwrite output files that exist")
    o.add_argument("--quiet", "-q", action="store_true", help="no progress bar")


def add_checkpoint_options(p: argparse.ArgumentParser) -> None:
    """``--checkpoint``, ``--checkpoint-every`` and ``--resume`` (the commands that train runs one by one)."""
    g = p.add_argument_group("checkpoints (a run killed or stopped resumes where it stood, to the same map)")
    g.add_argument(
        "--checkpoint",
        metavar="DIR",
        help="save each run as it trains into DIR/<implementation> (every --checkpoint-every seconds, "
        "when it ends and when it is stopped); the previous checkpoint is replaced only once the next is complete, "
        "and an unfinished run's checkpoint already there only with --force (go on from it with --resume)",
    )
    g.add_argument(
        "--checkpoint-every",
        type=_positive_seconds,
        metavar="S",
        default=60.0,
        help="seconds of training between checkpoints; default %(default)g",
    )
    g.add_argument(
        "--resume",
        metavar="DIR",
        help="continue the runs checkpointed in DIR (by --checkpoint DIR), with the interrupted command's options: "
        "the SOM, the data and the batch settings must be the same (--json, --save-runs, --checkpoint* and -q "
        "may differ); checkpoints go on into DIR unless --checkpoint names another folder",
    )


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(_("expected a number of seconds, got {value!r}").format(value=text)) from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(_("must be a positive number of seconds, got {value}").format(value=text))
    return value


def checkpoint_plan(args: argparse.Namespace, configs: list[RunConfig]) -> dict[str, dict[str, Any]]:
    """The session keywords of each run by implementation: its checkpoints and the checkpoint it resumes from.

    Refused up front (:class:`CommandError`, naming the flag): a ``--resume`` folder without a
    complete checkpoint, a run whose settings differ from its checkpoint's, and a folder the
    checkpoints cannot be written into (:func:`check_folder`).
    """
    from som_studio.session.checkpoint import CheckpointError, Checkpoints, resume_from

    folder = args.checkpoint or args.resume
    plan: dict[str, dict[str, Any]] = {c.impl: {} for c in configs}
    if args.resume is not None:
        root = Path(args.resume)
        if root.exists() and not root.is_dir():
            raise CommandError("--resume: " + _("{path}: a file, not a folder of checkpoints").format(path=root))
        if not root.is_dir():
            raise CommandError(
                "--resume: "
                + _(
                    "{folder}: no such folder (a command stopped before its first run saved anything writes none: "
                    "give it again with {checkpoint} instead)"
                ).format(folder=root, checkpoint="--checkpoint")
            )
        found = 0
        for cfg in configs:
            run_dir = root / run_file_stem(cfg.impl)
            if not run_dir.is_dir() and (root / cfg.impl).is_dir():
                run_dir = root / cfg.impl  # checkpointed under the implementation's own name, colon and all
            if not run_dir.is_dir():
                continue  # never checkpointed (the command stopped before it): it starts afresh
            found += 1
            _refuse_foreign(run_dir, "--resume")
            if not any(step.name.isdigit() for step in run_dir.iterdir()):
                continue  # stopped while it prepared, before its first checkpoint: it starts afresh
            try:
                plan[cfg.impl]["resume"] = resume_from(run_dir, cfg)
            except ConfigError as exc:
                raise CommandError(exc.refusal.text(flag_names())) from None
            except CheckpointError as exc:
                raise CommandError(f"--resume: {exc}") from None
        if not found:
            raise CommandError(
                "--resume: "
                + _("{folder}: holds no checkpoint of {names}").format(
                    folder=root, names=", ".join(c.impl for c in configs)
                )
            )
    if folder is not None:
        flag = "--checkpoint" if args.checkpoint is not None else "--resume"
        check_folder(folder, flag)
        for cfg in configs:
            resumed = plan[cfg.impl].get("resume")
            # A run resumed in place goes on in the folder it was read from (an older one's name has its colon).
            if resumed is not None and args.checkpoint is None:
                run_dir = Path(resumed.folder)
            else:
                run_dir = Path(folder) / run_file_stem(cfg.impl)
                _refuse_foreign(run_dir, flag)
                _keep_unfinished(run_dir, cfg.impl, flag, bool(getattr(args, "force", False)))
            check_folder(str(run_dir), flag)
            plan[cfg.impl]["checkpoint"] = Checkpoints(run_dir, args.checkpoint_every)
    return plan


def say_interrupted(command: str, records: list[Any]) -> None:
    """The line an interrupted command ends with, after where each stopped run's checkpoint went on."""
    for r in records:
        ck = r.extra.get("checkpoint") if r.status == "cancelled" else None
        if ck and ck.get("iteration") is not None:
            # A streamed epoch stopped part way keeps its rows read so far: "iteration 0" alone read as nothing kept.
            n, rows = int(ck["iteration"]), int(ck.get("row") or 0)
            at = _("iteration {n:,}").format(n=n)
            if rows and r.samples and rows >= r.samples:  # a whole epoch summed: "rows into" read as applied
                at = _("iteration {n:,}, with the next one's {rows:,} rows all read but not yet applied,").format(
                    n=n, rows=rows
                )
            elif rows:
                at = _("iteration {n:,} and {rows:,} rows into the next").format(n=n, rows=rows)
            print(
                _("{impl}: its checkpoint at {at} is kept in {folder}; go on with {resume} {root}").format(
                    impl=r.impl, at=at, folder=ck["folder"], resume="--resume", root=Path(ck["folder"]).parent,
                ),
                file=sys.stderr,
            )  # fmt: skip
    print(_("som-studio {command}: interrupted").format(command=command), file=sys.stderr)


def _refuse_foreign(run_dir: Path, flag: str) -> None:
    """Refuse a run's checkpoint folder that holds the user's own files: Orbax would delete numbered ones."""
    from som_studio.session.checkpoint import CheckpointError, refuse_foreign

    try:
        refuse_foreign(run_dir)
    except CheckpointError as exc:
        raise CommandError(f"{flag}: {exc}") from None


def _keep_unfinished(run_dir: Path, impl: str, flag: str, force: bool) -> None:
    """Refuse to start a run afresh over an unfinished run's checkpoint (its hours of training), unless ``force``."""
    from som_studio.session.checkpoint import unfinished

    saved = None if force else unfinished(run_dir)
    if saved is None:
        return
    raise CommandError(
        f"{flag}: "
        + _(
            "{folder} holds an unfinished checkpoint of {impl} (iteration {n:,} of {total:,}); go on from it "
            "with {resume} {root}, or pass {force} to start afresh there"
        ).format(
            folder=run_dir, impl=impl, n=saved.iteration, total=saved.config.iterations, resume="--resume",
            root=run_dir.parent, force="--force",
        )
    )  # fmt: skip


def default_impls() -> list[str]:
    """What ``bench`` and ``compare`` train when ``--impl`` is not given: the default implementation, timed
    against the NumPy reference of its kind."""
    from som_studio.core.impls import registry
    from som_studio.core.impls.user_impl import REFERENCE

    default = str(cfgmod.setting_named("impl").default)
    return [REFERENCE[registry.get(default).kind], default]


def impl_names(args: argparse.Namespace) -> list[str]:
    """The implementations ``--impl`` names, in order; a user's ``FILE.py:CLASS`` is loaded and named as registered."""
    from som_studio.core.impls import registry, user_impl

    names = [n.strip() for n in args.impl.split(",") if n.strip()] if args.impl is not None else default_impls()
    if not names:
        raise CommandError(
            "--impl: " + _("give at least one implementation (see {command})").format(command="`som-studio list`")
        )
    names = [_load_user_impl(n) if user_impl.is_spec(n) else n for n in names]
    unknown = [n for n in names if n not in registry.names()]
    if len(unknown) == 1:  # in the words every front end uses for it
        raise CommandError(registry.UnknownImplementation(unknown[0]).refusal.text(flag_names()))
    if unknown:
        raise CommandError(
            "--impl: "
            + ngettext(
                "unknown implementation {names}; choose from {choices}",
                "unknown implementations {names}; choose from {choices}",
                len(unknown),
            ).format(names=", ".join(unknown), choices=", ".join(registry.names()))
        )
    if len(set(names)) != len(names):
        raise CommandError("--impl: " + _("an implementation is listed twice"))
    return names


def _load_user_impl(spec: str) -> str:
    """Load a user's implementation (checked in a child process, with a time limit); its registered name."""
    from som_studio.core.impls import user_impl

    try:
        return user_impl.load(spec).name
    except user_impl.UserImplError as exc:
        raise CommandError(f"--impl: {exc}") from None


def configs_from_args(args: argparse.Namespace) -> list[RunConfig]:
    """One validated config per ``--impl`` entry, ``--steps``/``--epochs`` by kind (the one resolver's).

    A count given for a kind that no listed implementation has (``--impl numpy-online --epochs 5``,
    ``--impl numpy-batch --epochs 3 --steps 100``) is refused: it would otherwise be ignored.
    A grid left unset follows the data (read for it here), and the line that says so goes to stderr.
    """
    return list(resolve_args(args).configs)


def resolve_args(args: argparse.Namespace) -> Any:
    """The options as the one resolver resolves them (:func:`som_studio.session.resolve.resolve`), flags named."""
    from som_studio.core.data import DataError
    from som_studio.core.impls import registry, user_impl
    from som_studio.session.resolve import resolve

    if args.scale and args.data is None:
        raise CommandError(
            "--scale: "
            + _("scales the features of {flag}; random colours are already in [0, 1]").format(flag="--data FILE")
        )
    if args.scale and args.scaling not in (None, "minmax"):
        raise CommandError(
            _("{flag} is {same}; it cannot go with {other}").format(
                flag="--scale", same="--scaling minmax", other=f"--scaling {args.scaling}"
            )
        )
    names = impl_names(args)
    if args.save_runs:
        check_save_runs(args.save_runs, names, args.force)
    if args.baseline and user_impl.is_spec(args.baseline):  # named as in --impl: the name it is registered under
        args.baseline = _load_user_impl(args.baseline)
    if args.baseline and args.baseline not in names:
        raise CommandError(
            "--baseline: "
            + _("{name!r} is not among {flag} ({names})").format(
                name=args.baseline, flag="--impl", names=", ".join(names)
            )
        )
    _check_counts(args, names, {registry.get(n).kind for n in names})
    try:
        # The data is read here only when the grid follows it; otherwise where Ctrl-C stops it as a phase of the run.
        resolved = resolve({**option_values(args), "impl": names}, scale=args.scale, load=False)
    except ConfigError as exc:
        raise CommandError(exc.refusal.text(flag_names())) from None
    except DataError as exc:
        raise CommandError(f"--data: {exc}") from None
    if resolved.grid_from_data and resolved.rows is not None and not getattr(args, "quiet", False):
        print(
            ngettext(
                "grid: {grid} for {rows:,} row (about 5*sqrt(N) units, sides in the ratio of "
                "the first two principal components); {flag} sets it",
                "grid: {grid} for {rows:,} rows (about 5*sqrt(N) units, sides in the ratio of "
                "the first two principal components); {flag} sets it",
                resolved.rows,
            ).format(grid=resolved.config.grid, rows=resolved.rows, flag="--grid WxH"),
            file=sys.stderr,
        )
    check_configs(list(resolved.configs))
    return resolved


def option_values(args: argparse.Namespace) -> dict[str, Any]:
    """Every setting's value as the options gave it (``None``: not given), but the implementations' list."""
    return {s.name: getattr(args, s.name) for s in cfgmod.SETTINGS if s.name not in _SPECIAL}


def _check_counts(args: argparse.Namespace, names: list[str], kinds: set[str]) -> None:
    """Refuse a count given for a kind no listed implementation has, in the command line's words.

    It would be ignored: the runs would take the default count, or the other count given with it.
    """
    from som_studio.session.resolve import count_refusal

    refused = count_refusal(names, kinds, {"epochs": args.epochs, "steps": args.steps}, use=lambda n: f"--{n}")
    if refused is not None:
        raise CommandError(f"--{refused.refusal.field}: {refused.refusal.reason}")


def check_configs(configs: list[RunConfig]) -> None:
    """Refuse, before any training, what the session would refuse (the one preflight, flags named).

    Every config is checked before the layouts are checked against the devices,
    and JAX is started for that only when a sharded implementation is asked
    for (the others run on one device and do not use the layout).
    """
    from som_studio.core.impls import registry
    from som_studio.session.preflight import Devices, preflight

    for cfg in configs:
        refused = preflight(cfg)
        if refused:
            raise CommandError(refused[0].text(flag_names()))
    if not any(registry.get(c.impl).shards for c in configs):
        return
    devices = Devices.from_jax()
    for cfg in configs:
        refused = preflight(cfg, devices=devices)
        if refused:
            raise CommandError(refused[0].text(flag_names()))


# Each run setting's flag: a refusal names its field by it (the app names its controls instead).
FLAGS = {
    **{s.name: s.flag for s in cfgmod.SETTINGS},
    "memory": "memory",
    "cpu_devices": "--cpu-devices",
}


def flag_names() -> dict[str, str]:
    """:data:`FLAGS`, with the one name that is a word, not a flag, in the user's language."""
    return {**FLAGS, "memory": _("memory")}


STDOUT = "-"
"""``--json -``: the JSON goes to standard output (and the table, when there is one, to stderr).

A text output (JSON, CSV) takes it; any other output refuses it (:func:`check_output`,
:func:`check_folder`): no command makes a file or folder named ``-``.
"""


def one_stdout(outputs: dict[str, str | None]) -> bool:
    """Whether one of ``outputs`` (values by flag) goes to standard output; two that do are refused."""
    flags = [flag for flag, value in outputs.items() if value == STDOUT]
    if len(flags) > 1:
        raise CommandError(
            f"{flags[1]}: "
            + _("goes to standard output (-), as {other} does; give one of them a file").format(other=flags[0])
        )
    return bool(flags)


def check_output(
    path: str | None,
    force: bool,
    *,
    flag: str | None = None,
    suffixes: tuple[str, ...] | None = None,
    reads: dict[str, str | None] | None = None,
) -> Path | None:
    """Refuse an output file up front: before any training happens.

    ``flag`` prefixes the message (``--pdf: ...``); ``suffixes`` (lower case,
    with the dot) are the extensions the file may have; ``reads`` are the
    files the command reads, by flag (:func:`check_not_read`). :data:`STDOUT`
    (``-``) is not a file: it is refused here, so a caller that can print the
    output tests for it before calling.
    """
    if path is None:
        return None
    from som_studio.storage.writers import OutputError, check_writable

    prefix = f"{flag}: " if flag else ""
    if path == STDOUT:
        raise CommandError(
            prefix
            + _("- is standard output, which this output cannot go to; give a file name (./- for a file named -)")
        )
    check_not_read(path, reads or {}, flag=flag)
    if suffixes and Path(path).suffix.lower() not in suffixes:
        raise CommandError(
            f"{prefix}{path}: " + _("expected a {suffixes} file name").format(suffixes=_(" or ").join(suffixes))
        )
    try:
        return check_writable(path, force)
    except OutputError as exc:
        raise CommandError(f"{prefix}{exc}") from None


def check_distinct(outputs: Iterable[tuple[str, str | os.PathLike[str] | None]]) -> None:
    """Refuse two outputs of one command that are one file, even with --force: one would replace the other.

    ``outputs``: every file the command will write, by its flag (``None``: not asked for), each file
    that a folder option writes (``--save-runs``, ``--maps``) included.
    """
    seen: dict[Path, str] = {}
    for flag, path in outputs:
        if path is None:
            continue
        key = Path(path).resolve()
        if key in seen:
            raise CommandError(
                f"{flag}: "
                + _("{path} is also the file of {other}; give each output its own file").format(
                    path=path, other=seen[key]
                )
            )
        seen[key] = flag


def saved_runs(folder: str | None, names: list[str]) -> list[tuple[str, Path | None]]:
    """The files ``--save-runs`` writes, by its flag, for :func:`check_distinct`."""
    return [("--save-runs", saved_run_path(folder, n)) for n in names] if folder else []


def command_reads(args: argparse.Namespace) -> dict[str, str | None]:
    """The files a training command reads, by the option that names them: its data and its --impl's Python files."""
    from som_studio.core.impls.user_impl import is_spec

    reads: dict[str, str | None] = {"--data": getattr(args, "data", None)}
    for spec in (getattr(args, "impl", None) or "").split(","):
        if is_spec(spec.strip()):
            reads[f"--impl {spec.strip()}"] = spec.strip().rpartition(":")[0]
    return reads


def check_not_read(path: str | os.PathLike[str], reads: dict[str, str | None], *, flag: str | None = None) -> None:
    """Refuse an output that is a file the command reads (``reads``: by flag or argument name), even with --force.

    Writing the output would destroy the input while it is being read (a projection streams its
    rows into the output as it reads them); the same file reached by another name or a link is
    caught too.
    """
    prefix = f"{flag}: " if flag else ""
    for name, source in reads.items():
        if not source:
            continue
        files: list[str | os.PathLike[str]] = [source, *_files_of(source)]
        if any(_same_file(path, f) for f in files):
            raise CommandError(
                prefix
                + _(
                    "{path}: is also this command's input {name}; no command writes over a file it reads, "
                    "not even with {force}"
                ).format(path=path, name=name, force="--force")
            )
        if _joins(path, source):
            raise CommandError(
                f"{prefix}{path}: "
                + _("is inside {data}, whose files are being read; write it elsewhere").format(data=source)
            )


def _same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one does not exist (yet): they are not one file
        return False


def _is_set(source: str | os.PathLike[str]) -> bool:
    """Whether ``source`` names a set of data files: a folder or a glob."""
    text = str(source)
    return Path(text).is_dir() or any(c in text for c in "*?[")


def _files_of(source: str | os.PathLike[str]) -> list[Path]:
    """The data files a folder or a glob names (none for one file, or where there are none to read)."""
    if not _is_set(source):
        return []
    from som_studio.core.data import DataError
    from som_studio.core.data.files import data_files

    try:
        return data_files(source)
    except (DataError, OSError):  # refused when it is read, with its own words
        return []


def _joins(path: str | os.PathLike[str], source: str | os.PathLike[str]) -> bool:
    """Whether a data file written at ``path`` would become one of the set ``source`` names: the next run on
    that folder or glob would read it as data."""
    from som_studio.core.data.checks import data_suffix
    from som_studio.core.data.files import FORMATS

    out = Path(path)
    if data_suffix(out).suffix not in FORMATS or not _is_set(source):
        return False
    text = str(source)
    if Path(text).is_dir():
        return out.resolve().parent == Path(text).resolve()
    return fnmatch.fnmatch(os.path.abspath(out), os.path.abspath(text))


def run_file_stem(name: str) -> str:
    """The stem of the files and folders named for a run (``--save-runs``, ``--maps``, ``--checkpoint``).

    A user's implementation is named ``my_som.py:MySom``: the colon is special on Windows and macOS and to
    scp, so every file takes the one safe form (``my_som.py_MySom``).
    """
    from som_studio.report.tables import safe_file_stem

    return safe_file_stem(name)


def saved_run_path(folder: str | os.PathLike[str], name: str) -> Path:
    """The file ``--save-runs`` writes for the run of ``name``."""
    from som_studio.storage.runfile import SUFFIX

    return Path(folder) / f"{run_file_stem(name)}{SUFFIX}"


def stdout_folder_refused(flag: str) -> CommandError:
    """The refusal of ``-`` for an option that writes a folder of files."""
    return CommandError(
        f"{flag}: " + _("- is standard output, which a folder of files cannot go to; give a folder name")
    )


def check_folder(folder: str, flag: str) -> Path:
    """Refuse, before any training, a folder an option writes its files into (made when first written).

    Refused: ``-`` (standard output), a file where the folder should be, and a folder that cannot
    be made or written. Nothing is created here, so a refused or failed run leaves nothing behind.
    """
    p = Path(folder)
    prefix = f"{flag}: {folder}: "
    if folder == STDOUT:
        raise stdout_folder_refused(flag)
    if p.exists() and not p.is_dir():
        raise CommandError(prefix + _("is a file, not a folder"))
    # The nearest folder that exists: the folder is made inside it.
    made_in = next((q for q in (p, *p.parents) if q.exists()), Path("."))
    if not made_in.is_dir():
        why = _("{path} is not a folder").format(path=made_in)
        raise CommandError(prefix + _("cannot create ({why})").format(why=why))
    if not os.access(made_in, os.W_OK | os.X_OK) or not _takes_new_files(made_in):
        why = _("{path} is not writable").format(path=made_in)
        raise CommandError(prefix + _("cannot create ({why})").format(why=why))
    return p


def _takes_new_files(folder: Path) -> bool:
    """Whether a file can be made in ``folder``: for root, :func:`os.access` says yes to /proc and to a
    read-only mount, which refuse it all the same."""
    import tempfile

    try:
        fd, name = tempfile.mkstemp(prefix=".som-studio-probe-", dir=folder)
    except OSError:
        return False
    os.close(fd)
    os.unlink(name)
    return True


def check_save_runs(folder: str, names: list[str], force: bool) -> Path:
    """Refuse ``--save-runs DIR`` up front, before any training.

    Refused: what :func:`check_folder` refuses, and a ``DIR/<implementation>.somrun`` that exists
    (unless ``force``). The folder is made when the first run is saved.
    """
    from som_studio.storage.writers import OutputError, check_writable

    p = check_folder(folder, "--save-runs")
    if p.is_dir():
        for name in names:
            try:
                check_writable(saved_run_path(p, name), force)
            except OutputError as exc:
                raise CommandError(f"--save-runs: {exc}") from None
    return p


def wrote(path: object) -> str:
    """The line that says an output file was written."""
    return _("wrote {path}").format(path=path)


class Progress:
    """A one-line progress bar on stderr; where stderr is not a terminal (a log, a pipe), a plain line every
    :data:`LOG_EVERY_S` seconds instead, so a long run is not silent for minutes."""

    LOG_EVERY_S = 30.0

    def __init__(self, enabled: bool) -> None:
        self.logging = enabled and not sys.stderr.isatty()
        self.enabled = enabled and not self.logging
        self._last = ""
        self._logged = time.monotonic()

    def update(self, label: str, done: float, total: int, elapsed: float) -> None:
        """``done`` of ``total`` iterations after ``elapsed`` seconds; a fraction moves the bar inside one."""
        if self.logging:
            now = time.monotonic()
            if now - self._logged >= self.LOG_EVERY_S:
                self._logged = now
                sys.stderr.write(
                    _("{label}: {done} of {total} iterations, {elapsed:.0f} s").format(
                        label=label, done=int(done), total=total, elapsed=elapsed
                    )
                    + "\n"
                )
                sys.stderr.flush()
            return
        if not self.enabled:
            return
        frac = done / total if total else 1.0
        width = 30
        bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
        eta = elapsed / frac - elapsed if frac > 0 else 0.0
        line = f"\r{ljust(label, 22)} [{bar}] {int(done)}/{total} {elapsed:6.1f}s " + _("eta {eta:5.1f}s").format(
            eta=eta
        )
        if line != self._last:
            sys.stderr.write(line)
            sys.stderr.flush()
            self._last = line

    def done(self, text: str) -> None:
        if self.enabled:
            sys.stderr.write("\r" + " " * 90 + "\r")
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


def write_runs_json(path: Path, records: list[Any], force: bool) -> None:
    """Write ``records`` as the runs JSON (``--json FILE``), refusing as a command error; say what was written."""
    from som_studio.session.record import runs_document
    from som_studio.storage.writers import OutputError, write_json

    try:
        write_json(path, runs_document(records), force=force)
    except OutputError as exc:
        raise CommandError(str(exc)) from None
    print(wrote(path), file=sys.stderr)


def warn(note: str) -> None:
    """Say on stderr what a command decided without certainty (how it read the data), as every command says it."""
    print(f"{_('warning')}: {note}", file=sys.stderr)
