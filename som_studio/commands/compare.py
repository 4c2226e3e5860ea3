"""``som-studio compare``: run implementations side by side and write a report."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from som_studio.commands.common import (
    STDOUT,
    CommandError,
    add_checkpoint_options,
    add_run_options,
    check_distinct,
    check_output,
    checkpoint_plan,
    command_reads,
    configs_from_args,
    one_stdout,
    saved_runs,
    say_interrupted,
    stdout_folder_refused,
    wrote,
)
from som_studio.comparison.words import level_text
from som_studio.i18n import _

HELP = "run implementations on the same SOM and write a report (HTML, PDF), CSV, JSON, maps, animation"

DESCRIPTION = """\
Train each implementation named by --impl on the same SOM (same data, seed,
initial map and schedules), one after another, time them as `bench` does, and
write what you ask for:

  --report FILE.html  one self-contained page: summary table, charts (final
                      maps, time per iteration, map quality), every run's
                      configuration, the environment, and flags on suspect
                      numbers (recompiles, noisy iterations, differing configs)
  --pdf FILE.pdf      the same report as a PDF
  --csv FILE          one row per timed chunk per run; - prints it
  --json FILE         every run's full record (the schema of `bench --json`);
                      - prints it (the table and flags then go to stderr)
  --animation FILE    the maps' evolution, all runs side by side; the format
                      follows the extension: .gif, .webp, or .mp4 (needs ffmpeg)
  --maps DIR          the final map of each run as DIR/<implementation>.png

Every output is checked before training starts: an existing file is refused
without --force, and an unwritable folder or unknown extension is an error.
Files are written atomically (a failed write leaves no partial file). Drawing
the charts and the PDF uses Qt offscreen: no display is needed.

examples:
  som-studio compare --impl numpy-batch,jax-vmap-batch --grid 60x34 --epochs 10 --report cmp.html
  som-studio compare --impl numpy-online,jax-jit-online --steps 3000 \\
      --pdf cmp.pdf --csv chunks.csv --animation training.gif --maps maps/
"""

REPORT_SUFFIXES = (".html", ".htm")


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "compare", help=HELP, description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_run_options(p, baseline_default="the NumPy run of the same kind, else the first listed")
    from som_studio.commands.bench import add_inside_options

    add_inside_options(p)  # the report then places the runs under the roofline
    add_checkpoint_options(p)
    o = p.add_argument_group("files to write (each checked before training starts)")
    o.add_argument("--report", metavar="FILE.html", help="the report as one self-contained HTML page")
    o.add_argument("--pdf", metavar="FILE.pdf", help="the report as PDF")
    o.add_argument(
        "--csv", metavar="FILE.csv", help="one row per timed chunk per run; - prints it (the table then goes to stderr)"
    )
    o.add_argument(
        "--json",
        metavar="FILE.json",
        help="every run's full record (the schema of `bench --json`); - prints it (the table then goes to stderr)",
    )
    o.add_argument(
        "--animation", metavar="FILE", help="the maps' evolution, all runs side by side: .gif, .webp or .mp4"
    )
    o.add_argument("--maps", metavar="DIR", help="write each run's final map as DIR/<implementation>.png")
    o.add_argument(
        "--frames",
        type=int,
        default=60,
        metavar="N",
        help="at most N animation frames, evenly spread over each run (default %(default)s)",
    )
    o.add_argument("--title", metavar="TEXT", help="the report's title (default: the implementations compared)")
    return p


def _maps_paths(folder: str, names: list[str], force: bool) -> tuple[Path, dict[str, Path]]:
    from som_studio.report.export import map_file_names
    from som_studio.storage.writers import OutputError, check_writable

    if folder == STDOUT:
        raise stdout_folder_refused("--maps")
    d = Path(folder)
    if d.exists() and not d.is_dir():
        raise CommandError(f"--maps: {d}: " + _("is a file, not a folder"))
    if not d.exists():
        parent = d.parent if str(d.parent) else Path(".")
        if not parent.is_dir():
            raise CommandError(f"--maps: {d}: " + _("folder {folder} does not exist").format(folder=parent))
        if not os.access(parent, os.W_OK | os.X_OK):
            raise CommandError(
                f"--maps: {d}: " + _("cannot create it, folder {folder} is not writable").format(folder=parent)
            )
    elif not os.access(d, os.W_OK | os.X_OK):
        raise CommandError(f"--maps: {d}: " + _("folder is not writable"))
    paths = {n: d / f for n, f in map_file_names(names).items()}
    if d.is_dir():
        for p in paths.values():
            try:
                check_writable(p, force)
            except OutputError as exc:
                raise CommandError(f"--maps: {exc}") from None
    return d, paths


def check_outputs(args: argparse.Namespace, names: list[str]) -> dict[str, Any]:
    """Every output checked before training; returns what to write where."""
    reads = command_reads(args)
    one_stdout({"--json": args.json, "--csv": args.csv})
    out: dict[str, Any] = {
        "report": check_output(args.report, args.force, flag="--report", suffixes=REPORT_SUFFIXES),
        "pdf": check_output(args.pdf, args.force, flag="--pdf", suffixes=(".pdf",)),
        "csv": STDOUT if args.csv == STDOUT else check_output(args.csv, args.force, flag="--csv", reads=reads),
        "json": STDOUT if args.json == STDOUT else check_output(args.json, args.force, flag="--json", reads=reads),
        "animation": None,
        "maps": None,
    }
    if args.frames < 2:
        raise CommandError(
            "--frames: " + _("an animation needs at least 2 frames, got {value}").format(value=args.frames)
        )
    if args.animation is not None:
        from som_studio.report.animation import AnimationError, animation_format

        path = check_output(args.animation, args.force, flag="--animation", reads=reads)
        try:
            fmt = animation_format(args.animation)
        except AnimationError as exc:
            raise CommandError(f"--animation: {exc}") from None
        out["animation"] = (path, fmt)
    if args.maps is not None:
        out["maps"] = _maps_paths(args.maps, names, args.force)

    files = [
        (flag, p)
        for flag, p in (
            ("--report", out["report"]),
            ("--pdf", out["pdf"]),
            ("--csv", out["csv"] if out["csv"] != STDOUT else None),
            ("--json", out["json"] if out["json"] != STDOUT else None),
            ("--animation", out["animation"][0] if out["animation"] else None),
        )
        if p
    ]
    if out["maps"]:
        files += [("--maps", p) for p in out["maps"][1].values()]
    check_distinct([*files, *saved_runs(args.save_runs, names)])

    if out["report"] or out["pdf"]:
        # Fail now, not after minutes of training, if Qt cannot draw here.
        try:
            import pyqtgraph  # noqa: F401

            from som_studio.qt import report_render  # noqa: F401
        except ImportError as exc:
            raise CommandError(
                _(
                    "{flags} draw their charts with Qt, which cannot be imported here ({why}); "
                    "install {packages}, or write only {others}"
                ).format(
                    flags="--report/--pdf", why=exc, packages="PySide6-Essentials, pyqtgraph", others="--csv/--json"
                )
            ) from None
    return out


def run(args: argparse.Namespace) -> int:
    configs = configs_from_args(args)
    outputs = check_outputs(args, [c.impl for c in configs])
    unsaved: list[str] = []
    try:
        runs, interrupted = train(args, configs, outputs["animation"] is not None, unsaved), False
    except TrainingInterrupted as stop:  # Ctrl-C: what ran is still compared and written
        runs, interrupted = stop.runs, True
    comparison = compare(runs, baseline=args.baseline, title=args.title)
    text_out = sys.stderr if _prints_output(args) else sys.stdout  # stdout holds the JSON or CSV alone
    for flag in comparison.flags:
        print(f"{level_text(flag.level)}: {flag.text}", file=text_out)
    write_outputs(comparison, outputs, force=args.force, max_frames=args.frames)
    if not any(outputs[k] for k in ("report", "pdf", "csv", "json", "animation", "maps")) and not args.save_runs:
        print(
            _("compare wrote no file: give {flags} to keep the comparison ({bench} alone prints the table)").format(
                flags="--report FILE.html, --pdf FILE.pdf, --csv FILE, --json FILE, --animation FILE, --maps DIR",
                bench="`bench`",
            ),
            file=sys.stderr,
        )
    if interrupted:
        say_interrupted("compare", [r.record for r in runs])
        return 130
    if unsaved:  # after the comparison's files: the runs are not lost with the file one of them could not keep
        raise CommandError("; ".join(unsaved))
    return 0 if all(r.record.status == "ok" for r in runs) else 1


def _prints_output(args: argparse.Namespace) -> bool:
    """Whether ``--json -`` or ``--csv -`` takes standard output (what is printed then goes to stderr)."""
    return STDOUT in (args.json, args.csv)


class TrainingInterrupted(Exception):
    """Ctrl-C stopped :func:`train`; ``runs`` are the runs kept, the last one ``cancelled``."""

    def __init__(self, runs: list[Any]) -> None:
        super().__init__("interrupted")
        self.runs = runs


def train(
    args: argparse.Namespace, configs: list[Any], snapshots: bool = False, unsaved: list[str] | None = None
) -> list[Any]:
    """Train ``configs`` one after another, print bench's table; the runs as kept (:class:`StoredRun`).

    Ctrl-C raises :class:`TrainingInterrupted` after the table is printed, with
    the runs so far (the interrupted one ``cancelled``, the later ones left out).
    ``snapshots``: keep maps through the run for an animation (the initial and
    final maps come anyway). ``unsaved``: as :func:`~som_studio.commands.bench.run_configs` takes it.
    """
    from som_studio.commands.bench import Interrupted, format_table, inside_options, run_configs
    from som_studio.storage import RunRecorder

    per_run = checkpoint_plan(args, configs)

    recorders = [RunRecorder(c.impl, frames=args.frames) for c in configs]

    def observe(index: int, _cfg: object, event: Any) -> None:
        recorders[index].feed(event)

    interval = 1 / 30 if snapshots else None
    interrupted = False
    try:
        records = run_configs(
            configs,
            quiet=args.quiet,
            observe=observe,
            snapshot_interval_s=interval,
            save_runs=args.save_runs,
            force=args.force,
            per_run=per_run,
            unsaved=unsaved,
            **inside_options(args),
        )
    except Interrupted as stop:
        records, interrupted = stop.records, True
    text_out = sys.stderr if _prints_output(args) else sys.stdout  # stdout holds the JSON or CSV alone
    # The report's baselines; its notes (printed after) say where each run's wall time went.
    print(format_table(records, args.baseline, prefer_numpy=True, flags=False), file=text_out)
    runs = [r.stored() for r in recorders[: len(records)]]
    if interrupted:
        raise TrainingInterrupted(runs)
    return runs


def compare(runs: list[Any], baseline: str | None = None, title: str | None = None) -> Any:
    from som_studio.report import compare as make

    return make(runs, baseline=baseline, title=title)


def write_outputs(comparison: Any, outputs: dict[str, Any], *, force: bool, max_frames: int) -> None:
    """Write every requested file through the comparison pipeline's exporter.

    The first failure stops with a :class:`CommandError` naming its flag.
    """
    from som_studio.comparison.words import status_text
    from som_studio.report import EXPORTS, Exporter, ExportError
    from som_studio.storage.writers import OutputError

    renderer = None
    if outputs["report"] or outputs["pdf"]:
        from som_studio.qt.report_render import QtRenderer

        renderer = QtRenderer()
    exporter = Exporter(comparison, renderer, force=force, max_frames=max_frames)

    def write(kind: str, path: Path) -> None:
        try:
            exporter.write(kind, path)
        except (OutputError, ExportError) as exc:
            raise CommandError(f"{EXPORTS[kind].flag}: {exc}") from None
        print(wrote(path), file=sys.stderr)

    if outputs["json"] == STDOUT:
        sys.stdout.write(str(exporter.content("json")))
    elif outputs["json"]:
        write("json", outputs["json"])
    if outputs["csv"] == STDOUT:
        sys.stdout.write(str(exporter.content("csv")))
    elif outputs["csv"]:
        write("csv", outputs["csv"])
    if outputs["maps"]:
        folder, _paths = outputs["maps"]
        try:
            written, missing = exporter.write_maps(folder, create=True)
        except OutputError as exc:
            raise CommandError(f"--maps: {exc}") from None
        for run in comparison.runs:
            if run.name in missing:
                print(
                    "--maps: "
                    + _("{name} has no map ({status}); no file").format(
                        name=run.name, status=status_text(run.record.status)
                    ),
                    file=sys.stderr,
                )
        for path in written:
            print(wrote(path), file=sys.stderr)
    if outputs["animation"]:
        write("animation", outputs["animation"][0])
    if outputs["report"]:
        write("html", outputs["report"])
    if outputs["pdf"]:
        write("pdf", outputs["pdf"])
        from som_studio.qt.report_render import missing_glyphs

        if why := missing_glyphs(comparison):
            print(f"--pdf: {outputs['pdf']}: {why}", file=sys.stderr)
