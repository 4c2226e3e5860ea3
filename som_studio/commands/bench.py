"""``som-studio bench``: train implementations on one configuration and time them."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from som_studio.commands.common import (
    STDOUT,
    CommandError,
    Progress,
    _count,
    _whole,
    add_checkpoint_options,
    add_run_options,
    check_distinct,
    check_output,
    checkpoint_plan,
    command_reads,
    configs_from_args,
    impl_names,
    saved_run_path,
    saved_runs,
    say_interrupted,
    warn,
    write_runs_json,
    wrote,
)
from som_studio.i18n import _, ngettext

if TYPE_CHECKING:
    from som_studio.session.interrupt import CtrlC

HELP = "run and time implementations on the same SOM; print a table, write --json"

DESCRIPTION = """\
Train each implementation named by --impl on the same SOM (same data, seed,
initial map and schedules) and time it honestly: compile and warm-up apart,
every chunk of iterations timed with its results ready, medians and p95 per
iteration (an epoch for batch implementations, a step for online ones).

--epochs applies to batch implementations and --steps to online ones, so one
command can mix both kinds. A failing implementation does not stop the others;
the exit status is then 1.

examples:
  som-studio bench --impl numpy-batch,jax-vmap-batch --grid 60x34 --epochs 10
  som-studio bench --impl numpy-online,jax-jit-online --steps 5000 --json runs.json
  som-studio bench --impl docs/examples/my_som.py:MySom,jax-fused-batch --grid 60x34 --epochs 5
  som-studio --cpu-devices 4 bench --impl jax-shardmap-batch,jax-pmap-batch --layout 4x1

across machines (one command per machine; process 0 prints and writes):
  som-studio bench --impl jax-shardmap-batch --layout 2x1 \\
      --coordinator 192.168.100.1:5555 --num-processes 2 --process-id 0
"""


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "bench", help=HELP, description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_run_options(p, baseline_default="the first listed implementation of the same kind")
    p.add_argument(
        "--json",
        metavar="FILE",
        help="write every run's full record as JSON (see README); - prints it (the table then goes to stderr)",
    )
    add_inside_options(p)
    add_checkpoint_options(p)
    d = p.add_argument_group("across processes and machines (JAX's distributed runtime)")
    d.add_argument(
        "--coordinator",
        metavar="HOST:PORT",
        help="address of process 0, which hosts the coordinator there; every process gives the same; "
        "auto: the cluster's own settings, where JAX's runtime detects them (Slurm's srun, Open MPI's mpirun), "
        "with no --num-processes or --process-id",
    )
    d.add_argument("--num-processes", type=_count, metavar="P", help="number of processes taking part")
    d.add_argument("--process-id", type=_whole, metavar="I", help="this process's number, 0..P-1 (0 prints and writes)")
    d.add_argument(
        "--init-timeout",
        type=_count,
        default=120,
        metavar="S",
        help="give up when the processes are not all connected within S seconds, or when a peer stops "
        "answering for S seconds; default %(default)s",
    )
    return p


def add_inside_options(p: argparse.ArgumentParser) -> None:
    """``--inside`` and ``--keep-programs`` (``bench`` and ``compare``)."""
    i = p.add_argument_group("the inside of each run (see `som-studio explain`)")
    i.add_argument(
        "--inside",
        action="store_true",
        help="record what XLA compiled (kernels, loop trips, FLOPs and bytes per iteration, compile time split "
        "into trace, lower and compile) and the device's ceilings, after the timed iterations (it compiles "
        "once more); adds a roofline table and extra.inside to the JSON",
    )
    i.add_argument(
        "--keep-programs",
        action="store_true",
        help="with --inside: keep each run's jaxpr, StableHLO and optimized HLO text in its record "
        "(extra.inside.programs: the JSON and --save-runs files grow by their size)",
    )


def inside_options(args: argparse.Namespace) -> dict[str, bool]:
    """The session's keywords for ``--inside`` / ``--keep-programs``; refuses the second alone."""
    if args.keep_programs and not args.inside:
        raise CommandError("--keep-programs: " + _("keeps what {flag} records; give it too").format(flag="--inside"))
    return {"inside": True, "keep_programs": args.keep_programs} if args.inside else {}


def _cluster(args: argparse.Namespace):
    """The multi-process settings, checked; ``None`` for a one-process run."""
    from som_studio.session.distributed import AUTO, Cluster, DistributedError, detect

    if args.coordinator == AUTO:
        if args.num_processes is not None or args.process_id is not None:
            raise CommandError(
                _("{a} and {b} come from the cluster with {flag}").format(
                    a="--num-processes", b="--process-id", flag="--coordinator auto"
                )
            )
        try:
            cluster = detect(args.init_timeout)
        except DistributedError as exc:
            raise CommandError(str(exc)) from None
        _only_sharded(args)
        return cluster
    if args.coordinator is None:
        if args.num_processes is not None or args.process_id is not None:
            raise CommandError(
                _("{a} and {b} need {needed}").format(
                    a="--num-processes", b="--process-id", needed="--coordinator HOST:PORT"
                )
            )
        return None
    if args.num_processes is None or args.process_id is None:
        raise CommandError(
            _("{flag} needs {a} and {b}").format(flag="--coordinator", a="--num-processes P", b="--process-id I")
        )
    try:
        cluster = Cluster(args.coordinator, args.num_processes, args.process_id, args.init_timeout).check()
    except DistributedError as exc:
        raise CommandError(str(exc)) from None
    _only_sharded(args)
    _resolvable(cluster.coordinator.rsplit(":", 1)[0])
    return cluster


def _resolvable(host: str) -> None:
    """Refuse a coordinator whose host name the system says does not exist, at once: JAX's runtime waited out
    --init-timeout for it, then aborted. A lookup that takes longer than a moment is left to the runtime."""
    import socket
    import threading

    found: list[BaseException | None] = []

    def look() -> None:
        try:
            socket.getaddrinfo(host.strip("[]"), None)
            found.append(None)
        except (OSError, UnicodeError) as exc:
            found.append(exc)

    t = threading.Thread(target=look, daemon=True)
    t.start()
    t.join(2.0)
    if found and isinstance(found[0], socket.gaierror):
        raise CommandError(
            "--coordinator: " + _("cannot find host {host!r} ({why})").format(host=host, why=found[0].strerror)
        )


def _only_sharded(args: argparse.Namespace) -> None:
    """Refuse implementations that run on one device in a run across processes."""
    from som_studio.core.impls import registry

    names = impl_names(args)
    flat = [n for n in names if not registry.get(n).shards]
    if flat:
        sharded = [i.name for i in registry.all_implementations() if i.shards]
        raise CommandError(
            "--coordinator: "
            + ngettext(
                "{names} runs on one device; only sharded implementations span processes ({sharded})",
                "{names} run on one device; only sharded implementations span processes ({sharded})",
                len(flat),
            ).format(names=", ".join(flat), sharded=", ".join(sharded))
        )


def run(args: argparse.Namespace) -> int:
    inside = inside_options(args)
    if args.inside and args.coordinator is not None:
        raise CommandError(
            "--inside: " + _("records runs in one process; it cannot go with {flag}").format(flag="--coordinator")
        )
    if args.coordinator is not None and (args.checkpoint or args.resume):  # before waiting for the other processes
        raise CommandError(
            ("--resume: " if args.resume else "--checkpoint: ")
            + _("saves runs in one process; it cannot go with {flag} yet").format(flag="--coordinator")
        )
    cluster = _cluster(args)
    main = cluster is None or cluster.is_main
    if cluster is not None:
        from som_studio.session import distributed

        if not distributed.in_child():
            if main and args.json != STDOUT:
                # refuse before any process starts training
                check_output(args.json, args.force, flag="--json", reads=command_reads(args))
            try:
                return distributed.supervise(args._argv, cluster)
            except distributed.DistributedError as exc:
                raise CommandError(str(exc)) from None
        distributed.initialize(cluster)  # before anything else starts JAX
    configs = configs_from_args(args)
    if cluster is not None:
        from som_studio.session.distributed import DistributedError, check_same_runs

        try:
            check_same_runs([c.to_dict() for c in configs], cluster)
        except DistributedError as exc:
            raise CommandError(str(exc)) from None
    to_stdout = args.json == STDOUT
    json_path = (
        check_output(args.json, args.force, flag="--json", reads=command_reads(args))
        if main and not to_stdout
        else None
    )
    check_distinct([("--json", json_path), *saved_runs(args.save_runs, [c.impl for c in configs])])
    session_kw: dict[str, Any] = {}
    if cluster is None:
        session_kw.update(inside)
    per_run = checkpoint_plan(args, configs)
    if cluster is not None:
        from som_studio.session.distributed import LOCKSTEP_SESSION

        session_kw.update(LOCKSTEP_SESSION)
    interrupted = False
    unsaved: list[str] = []
    try:
        records = run_configs(
            configs,
            quiet=args.quiet,
            silent=not main,
            save_runs=args.save_runs if main else None,
            force=args.force,
            interruptible=cluster is None,  # processes in lockstep cannot stop one alone
            per_run=per_run,
            unsaved=unsaved,
            **session_kw,
        )
    except Interrupted as stop:
        records, interrupted = stop.records, True
    if not main:  # only process 0 prints and writes; a run that failed is said on every process
        for r in records:
            if r.status == "failed":
                print(f"{r.impl}: {r.message}", file=sys.stderr)
        return 0 if all(r.status == "ok" for r in records) else 1
    print(format_table(records, args.baseline), file=sys.stderr if to_stdout else sys.stdout)
    if args.inside and cluster is None:
        from som_studio.report.inside import format_inside_table

        names = [r.impl for r in records]
        print("\n" + format_inside_table(names, records), file=sys.stderr if to_stdout else sys.stdout)
    if to_stdout:
        from som_studio.session.record import runs_document
        from som_studio.storage.writers import json_text

        sys.stdout.write(json_text(runs_document(records)))
    elif json_path is not None:
        write_runs_json(json_path, records, args.force)
    if interrupted:
        say_interrupted("bench", records)
        return 130
    if unsaved:  # after the table and the JSON: a run that trained for an hour is not lost with its file
        raise CommandError("; ".join(unsaved))
    return 0 if all(r.status == "ok" for r in records) else 1


def save_run(folder, record, final_map, *, silent: bool = False, force: bool = False) -> None:
    """Write ``folder/<implementation>.somrun`` (``--save-runs``): the run, its final map and its model.

    The folder is made here, for the first run saved; a file already there is replaced (atomically)
    only with ``force``.
    """
    from som_studio.storage import StoredRun
    from som_studio.storage.writers import OutputError

    path = saved_run_path(folder, record.impl)
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CommandError(
            f"--save-runs: {folder}: " + _("cannot create ({why})").format(why=exc.strerror or exc)
        ) from None
    try:
        StoredRun(record=record, final_map=final_map).save(path, force=force)
    except OutputError as exc:
        raise CommandError(f"--save-runs: {exc}") from None
    if not silent:
        print(wrote(path), file=sys.stderr)


class Interrupted(Exception):
    """Ctrl-C stopped :func:`run_configs`: ``records`` holds the finished runs and the interrupted one.

    The interrupted run's record has ``status == "cancelled"``; the runs after it never started.
    """

    def __init__(self, records: list) -> None:
        super().__init__("interrupted")
        self.records = records


def run_configs(
    configs,
    *,
    quiet: bool = False,
    silent: bool = False,
    observe=None,
    save_runs: str | None = None,
    force: bool = False,
    interruptible: bool = True,
    per_run=None,
    unsaved: list[str] | None = None,
    **session_kw,
):
    """Run each config in turn with a progress bar; return their records.

    ``quiet``: no progress bar; ``silent``: nothing at all on stderr. ``unsaved``: a run ``--save-runs``
    could not keep (its file appeared meanwhile: another command writing there) is said there, and the runs
    go on and their results are written; without it, the first such run stops the command.
    ``observe(index, config, event)``, if given, sees every event of every run
    (``compare`` keeps the maps from it). ``session_kw`` go to each
    :class:`~som_studio.session.session.Session`, and ``per_run[impl]`` (a dict of keywords,
    e.g. its checkpoints) to that implementation's.

    Ctrl-C (with ``interruptible``) in any phase of a run stops there: the
    run is recorded as ``cancelled`` (and ``observe`` sees its ``Finished``),
    the later runs do not start, and :class:`Interrupted` carries the records.
    """
    from som_studio.comparison.words import status_text
    from som_studio.session.interrupt import CtrlC
    from som_studio.session.session import Session

    session_kw.setdefault("snapshot_interval_s", None)
    progress = Progress(not quiet and not silent)
    records: list[Any] = []
    ctrl_c = CtrlC(interruptible)
    now = _Now(configs[0])
    with ctrl_c:
        try:
            tr = time.perf_counter()
            data = _load(configs[0], silent)  # the same data for every run
            read_s = time.perf_counter() - tr  # the first run's: a stopwatch around it would count it
            ctrl_c.check()
            for index, cfg in enumerate(configs):
                now.begin(index, cfg)
                own = (per_run or {}).get(cfg.impl, {})
                session = Session(cfg, data=data, read_s=read_s if index == 0 else 0.0, **session_kw, **own)
                if own.get("resume") is not None and not silent:
                    progress.done(
                        _("{impl}: resuming at iteration {n:,} of {total:,} from {folder}").format(
                            impl=cfg.impl, n=own["resume"].iteration, total=cfg.iterations, folder=own["resume"].folder
                        )
                    )
                ctrl_c.watch(session)
                ctrl_c.check()
                record, final = _train_one(session, now, observe, progress, ctrl_c)
                if save_runs is not None and record.status == "ok":
                    try:
                        save_run(save_runs, record, final, silent=silent, force=force)
                    except CommandError as exc:
                        if unsaved is None:
                            raise
                        unsaved.append(str(exc))
                if silent:
                    pass
                elif record.status == "ok":
                    progress.done(_("{impl}: ok in {s:.2f} s").format(impl=cfg.impl, s=record.total_s))
                else:
                    progress.done(f"{cfg.impl}: {status_text(record.status)}: {record.message}")
                records.append(record)
                if ctrl_c.requested:  # cancelled between chunks: the runs after it do not start
                    raise Interrupted(records)
        except KeyboardInterrupt:
            _keep_interrupted(now, records, observe, progress, silent)
            raise Interrupted(records) from None
    return records


class _Now:
    """Where :func:`run_configs` is: the run, what it showed so far, its phase; for the record Ctrl-C leaves."""

    def __init__(self, cfg: Any) -> None:
        from som_studio.storage import RecordSoFar

        self.index, self.cfg = 0, cfg
        self.partial = RecordSoFar(cfg)  # the record of a run interrupted outside the chunk loop
        self.phase = _("loading the data")
        self.record: Any = None

    def begin(self, index: int, cfg: Any) -> None:
        from som_studio.storage import RecordSoFar

        self.index, self.cfg = index, cfg
        self.partial = RecordSoFar(cfg)
        self.phase = _("preparing the run")
        self.record = None


def _load(cfg: Any, silent: bool) -> Any:
    """The runs' data, read once, its notes said and its range checked against the precision."""
    from som_studio.core.data import DataError, Table
    from som_studio.core.som.problem import check_range, load_problem_table
    from som_studio.session.resolve import load_data

    try:
        data = load_data(cfg)
        if not isinstance(data, Table) and data is not None:  # a stream: each session reads it in batches
            if not silent:
                for note in data.notes:
                    warn(note)
            if not cfg.stream and not silent:
                print(
                    _("{path}: {rows:,} rows x {features} would not fit in memory: streamed").format(
                        path=data.spec, rows=data.rows, features=data.features
                    ),
                    file=sys.stderr,
                )
            return data
        if data is None:
            data = load_problem_table(cfg)
        if not silent:  # what reading it decided without certainty (encoding, header)
            for note in data.notes:
                warn(note)
        check_range(data.values, cfg.precision, cfg.data.path or _("data"))  # one precision
    except DataError as exc:
        raise CommandError(f"--data: {exc}") from None
    return data


def _train_one(session: Any, now: _Now, observe: Any, progress: Progress, ctrl_c: CtrlC) -> tuple[Any, Any]:
    """One session's events to the end: ``(record, final map)``; the phase and the progress bar follow them."""
    from som_studio.session.events import ChunkTimed, Compiled, EpochProgress, Failed, Finished, Snapshot, Started

    cfg = now.cfg
    total = 0
    elapsed = 0.0  # training seconds at the end of the last chunk
    final = None
    events = session.run()
    try:
        for ev in events:
            if observe is not None:
                observe(now.index, cfg, ev)
            now.partial.feed(ev)
            if isinstance(ev, Snapshot):
                final = ev.map
            ctrl_c.follow(ev)
            if isinstance(ev, Started):
                total = ev.iterations
                now.phase = _("compiling")
                progress.update(cfg.impl, 0, total, 0.0)
            elif isinstance(ev, Compiled):
                now.phase = _("training")
            elif isinstance(ev, ChunkTimed):
                if ev.end >= total:
                    now.phase = _("measuring the final map")
                elapsed = ev.elapsed_s
                progress.update(cfg.impl, ev.end, total, elapsed)
            elif isinstance(ev, EpochProgress) and ev.rows:
                # A streamed epoch of many rows moves the bar between its batches, not only at its end.
                progress.update(cfg.impl, ev.iteration + ev.row / ev.rows, total, elapsed + ev.seconds)
            elif isinstance(ev, (Finished, Failed)):
                now.record = ev.record
    finally:
        ctrl_c.cancellable = False
        getattr(events, "close", lambda: None)()  # a generator: closes the trainer now
    assert now.record is not None
    return now.record, final


def _keep_interrupted(now: _Now, records: list[Any], observe: Any, progress: Progress, silent: bool) -> None:
    """Keep the record of the run Ctrl-C stopped: its own if it ended just before, else what it showed so far."""
    from som_studio.comparison.words import status_text
    from som_studio.session.events import Finished

    if len(records) <= now.index and now.record is not None:  # it ended just before Ctrl-C
        records.append(now.record)
    elif len(records) <= now.index:  # interrupted before its record was kept
        done = now.partial.iterations_done
        kept = now.partial.record
        kept.message = _("interrupted (Ctrl-C) while {phase}").format(phase=now.phase)
        if done:
            kept.message += ngettext(", after {n:,} iteration", ", after {n:,} iterations", done).format(n=done)
        if observe is not None:
            observe(now.index, now.cfg, Finished(kept))
        if not silent:
            progress.done(f"{now.cfg.impl}: {status_text('cancelled')}: {kept.message}")
        records.append(kept)


def speedups(records, baseline: str | None = None, prefer_numpy: bool = False) -> dict[str, float | None]:
    """Median-per-iteration speed-up of each run against the baseline of its kind.

    The baseline is ``baseline`` where it is of the run's kind, else the first
    listed run of that kind (``bench``), or with ``prefer_numpy`` its NumPy run
    (``compare``, as its report does; see :func:`som_studio.comparison.rules.baseline_index`).
    """
    from som_studio.comparison import rules

    names = [r.impl for r in records]
    b = names.index(baseline) if baseline in names else None
    return dict(zip(names, rules.speedups(records, b, prefer_numpy=prefer_numpy)))


def format_table(records, baseline: str | None = None, prefer_numpy: bool = False, flags: bool = True) -> str:
    """The runs' summary as a text table, the comparison's flags below it, and sharded runs' traffic.

    The table is the report's summary (:mod:`som_studio.comparison.summary`), its columns empty for
    every run left out. ``baseline`` and ``prefer_numpy`` choose each kind's baseline as :func:`speedups`
    does; ``flags``: print the comparison's flags (``compare`` prints its report's instead).
    """
    from som_studio.comparison.rules import judge
    from som_studio.comparison.summary import text_table
    from som_studio.comparison.words import level_text
    from som_studio.storage.runfile import StoredRun

    runs = [StoredRun(r) for r in records]
    verdict = judge(runs, baseline if baseline in [r.impl for r in records] else None, prefer_numpy)
    lines = text_table(runs, verdict)
    for flag in verdict.flags if flags else ():
        # Its first line: a failed run's message went to stderr whole, its traceback with it, as the run ended.
        lines.append(f"{level_text(flag.level)}: {flag.text.partition(chr(10))[0]}")
    for r in records:  # what sharded runs communicate (read from their compiled programs)
        if r.status == "ok" and r.extra.get("bytes_per_epoch") is not None:
            from som_studio.i18n import format_bytes

            kinds = sorted({c["kind"] for c in r.extra.get("collectives", []) if c["per_epoch"] and c["sent_bytes"]})
            lines.append(
                _("{impl} on {layout}: sends {bytes} per device per epoch ({collectives})").format(
                    impl=r.impl,
                    layout=r.layout,
                    bytes=format_bytes(r.extra["bytes_per_epoch"]),
                    collectives=", ".join(kinds) or _("no collectives"),
                )
            )
    return "\n".join(lines)
