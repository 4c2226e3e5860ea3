"""``som-studio bench``: train implementations on one configuration and time them."""

from __future__ import annotations

import argparse
import sys

from som_studio.commands.common import (
    CommandError,
    Progress,
    add_run_options,
    check_output,
    configs_from_args,
)

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
"""


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("bench", help=HELP, description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_options(p)
    p.add_argument("--baseline", metavar="IMPL",
                   help="speed-ups are against this implementation, for runs of its kind "
                        "(default: the NumPy run of the same kind, else the first listed)")
    p.add_argument("--json", metavar="FILE", help="write every run's full record as JSON (see README)")
    return p


def run(args: argparse.Namespace) -> int:
    configs = configs_from_args(args)
    names = [c.impl for c in configs]
    if args.baseline and args.baseline not in names:
        raise CommandError(f"--baseline: {args.baseline!r} is not among --impl ({', '.join(names)})")
    json_path = check_output(args.json, args.force)
    records = run_configs(configs, quiet=args.quiet)
    print(format_table(records, args.baseline))
    if json_path is not None:
        from som_studio.report.writers import OutputError, write_json
        from som_studio.session.record import runs_document

        try:
            write_json(json_path, runs_document(records), force=args.force)
        except OutputError as exc:
            raise CommandError(str(exc)) from None
        print(f"wrote {json_path}", file=sys.stderr)
    return 0 if all(r.status == "ok" for r in records) else 1


def run_configs(configs, *, quiet: bool = False, observe=None, **session_kw):
    """Run each config in turn with a progress bar; return their records.

    ``observe(index, config, event)``, if given, sees every event of every run
    (``compare`` keeps the maps from it). ``session_kw`` go to each
    :class:`~som_studio.session.session.Session`.
    """
    from som_studio.core.problem import load_problem_data
    from som_studio.core.data import DataError
    from som_studio.session.events import ChunkTimed, Failed, Finished, Started
    from som_studio.session.session import Session
    from som_studio.session.record import RunRecord

    session_kw.setdefault("snapshot_interval_s", None)
    progress = Progress(not quiet)
    records = []
    data = None
    try:
        data = load_problem_data(configs[0])  # the same data for every run
    except DataError as exc:
        raise CommandError(f"--data: {exc}") from None
    for index, cfg in enumerate(configs):
        session = Session(cfg, data=data, **session_kw)
        total = 0
        record: RunRecord | None = None
        for ev in session.run():
            if observe is not None:
                observe(index, cfg, ev)
            if isinstance(ev, Started):
                total = ev.iterations
                progress.update(cfg.impl, 0, total, 0.0)
            elif isinstance(ev, ChunkTimed):
                progress.update(cfg.impl, ev.end, total, ev.elapsed_s)
            elif isinstance(ev, (Finished, Failed)):
                record = ev.record
        assert record is not None
        if record.status == "ok":
            progress.done(f"{cfg.impl}: ok in {record.total_s:.2f} s")
        else:
            progress.done(f"{cfg.impl}: {record.status}: {record.message}")
        records.append(record)
    return records


def speedups(records, baseline: str | None = None) -> dict[str, float | None]:
    """Median-per-iteration speed-up of each run against the baseline of its kind.

    The baseline is ``baseline`` where it is of the run's kind, else that
    kind's NumPy run, else its first run (see :func:`som_studio.report.content.baseline_index`).
    """
    from som_studio.report import content

    names = [r.impl for r in records]
    b = names.index(baseline) if baseline in names else None
    return dict(zip(names, content.speedups(records, b)))


def _fmt_s(v: float | None) -> str:
    if v is None:
        return "-"
    if v >= 1:
        return f"{v:.2f} s"
    if v >= 1e-3:
        return f"{v * 1e3:.2f} ms"
    return f"{v * 1e6:.1f} us"


def format_table(records, baseline: str | None = None) -> str:
    sp = speedups(records, baseline)
    head = ["implementation", "kind", "status", "compile", "median/it", "p95/it", "total", "samples/s", "QE", "TE", "speed-up"]
    rows = []
    for r in records:
        tp = r.throughput
        rows.append([
            r.impl, r.kind, r.status, _fmt_s(r.compile_s) if r.status != "failed" else "-",
            _fmt_s(r.median_s), _fmt_s(r.p95_s), _fmt_s(r.total_s) if r.total_s else "-",
            f"{tp:,.0f}" if tp else "-",
            f"{r.qe:.4f}" if r.qe is not None else "-",
            f"{r.te:.3f}" if r.te is not None else "-",
            f"{sp[r.impl]:.1f}x" if sp.get(r.impl) else "-",
        ])
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in rows]
    for r in records:
        if r.status != "ok" and r.message:
            lines.append(f"{r.impl}: {r.message}")
    return "\n".join(lines)
