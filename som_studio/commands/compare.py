"""``som-studio compare``: run implementations side by side and write a report."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from som_studio.commands.common import CommandError, add_run_options, check_output, configs_from_args

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
  --csv FILE          one row per timed chunk per run
  --json FILE         every run's full record (the schema of `bench --json`)
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
    o = p.add_argument_group("files to write (each checked before training starts)")
    o.add_argument("--report", metavar="FILE.html", help="the report as one self-contained HTML page")
    o.add_argument("--pdf", metavar="FILE.pdf", help="the report as PDF")
    o.add_argument("--csv", metavar="FILE.csv", help="one row per timed chunk per run")
    o.add_argument("--json", metavar="FILE.json", help="every run's full record (the schema of `bench --json`)")
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
    from som_studio.report.tables import safe_file_stem
    from som_studio.report.writers import OutputError, check_writable

    d = Path(folder)
    if d.exists() and not d.is_dir():
        raise CommandError(f"--maps: {d}: is a file, not a folder")
    if not d.exists():
        parent = d.parent if str(d.parent) else Path(".")
        if not parent.is_dir():
            raise CommandError(f"--maps: {d}: folder {parent} does not exist")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise CommandError(f"--maps: {d}: cannot create it, folder {parent} is not writable")
    elif not os.access(d, os.W_OK | os.X_OK):
        raise CommandError(f"--maps: {d}: folder is not writable")
    paths = {n: d / f"{safe_file_stem(n)}.png" for n in names}
    if d.is_dir():
        for p in paths.values():
            try:
                check_writable(p, force)
            except OutputError as exc:
                raise CommandError(f"--maps: {exc}") from None
    return d, paths


def check_outputs(args: argparse.Namespace, names: list[str]) -> dict[str, Any]:
    """Every output checked before training; returns what to write where."""
    out: dict[str, Any] = {
        "report": check_output(args.report, args.force, flag="--report", suffixes=REPORT_SUFFIXES),
        "pdf": check_output(args.pdf, args.force, flag="--pdf", suffixes=(".pdf",)),
        "csv": check_output(args.csv, args.force, flag="--csv"),
        "json": check_output(args.json, args.force, flag="--json"),
        "animation": None,
        "maps": None,
    }
    if args.frames < 2:
        raise CommandError(f"--frames: an animation needs at least 2 frames, got {args.frames}")
    if args.animation is not None:
        from som_studio.report.animation import AnimationError, animation_format

        try:
            fmt = animation_format(args.animation)
        except AnimationError as exc:
            raise CommandError(f"--animation: {exc}") from None
        out["animation"] = (check_output(args.animation, args.force, flag="--animation"), fmt)
    if args.maps is not None:
        out["maps"] = _maps_paths(args.maps, names, args.force)

    files = [
        (flag, p)
        for flag, p in (
            ("--report", out["report"]),
            ("--pdf", out["pdf"]),
            ("--csv", out["csv"]),
            ("--json", out["json"]),
            ("--animation", out["animation"][0] if out["animation"] else None),
        )
        if p
    ]
    if out["maps"]:
        files += [("--maps", p) for p in out["maps"][1].values()]
    seen: dict[Path, str] = {}
    for flag, p in files:
        key = p.resolve()
        if key in seen:
            raise CommandError(f"{flag}: {p} is also the file of {seen[key]}; give each output its own file")
        seen[key] = flag

    if out["report"] or out["pdf"]:
        # Fail now, not after minutes of training, if Qt cannot draw here.
        try:
            import pyqtgraph  # noqa: F401

            from som_studio.qt import report_render  # noqa: F401
        except ImportError as exc:
            raise CommandError(
                f"--report/--pdf draw their charts with Qt, which cannot be imported here ({exc}); "
                "install PySide6-Essentials and pyqtgraph, or write only --csv/--json"
            ) from None
    return out


def run(args: argparse.Namespace) -> int:
    from som_studio.commands.bench import format_table, run_configs

    configs = configs_from_args(args)
    names = [c.impl for c in configs]
    outputs = check_outputs(args, names)

    from som_studio.session.capture import RunCapture

    captures = [RunCapture.new(name, frames=args.frames) for name in names]

    def observe(index: int, _cfg: object, event: object) -> None:
        captures[index].feed(event)  # type: ignore[arg-type]

    # Snapshots only where an animation wants them: the initial and final maps come anyway.
    interval = 1 / 30 if outputs["animation"] else None
    records = run_configs(
        configs, quiet=args.quiet, observe=observe, snapshot_interval_s=interval, save_runs=args.save_runs
    )
    print(format_table(records, args.baseline, prefer_numpy=True))  # the report's baselines

    from som_studio.report.content import build_report

    report = build_report(captures, baseline=args.baseline, title=args.title)
    for flag in report.flags:
        print(f"{flag.level}: {flag.text}")
    write_outputs(report, records, outputs, force=args.force, max_frames=args.frames)
    return 0 if all(r.status == "ok" for r in records) else 1


def write_outputs(report: Any, records: list[Any], outputs: dict[str, Any], *, force: bool, max_frames: int) -> None:
    """Write every requested file; the first failure stops with a :class:`CommandError` naming its flag."""
    from som_studio.report.writers import OutputError, write_atomic, write_json

    def write(flag: str, path: Path, content: bytes | str) -> None:
        try:
            write_atomic(path, content, force=force)
        except OutputError as exc:
            raise CommandError(f"{flag}: {exc}") from None
        print(f"wrote {path}", file=sys.stderr)

    if outputs["json"]:
        from som_studio.session.record import runs_document

        try:
            write_json(outputs["json"], runs_document(records), force=force)
        except OutputError as exc:
            raise CommandError(f"--json: {exc}") from None
        print(f"wrote {outputs['json']}", file=sys.stderr)
    if outputs["csv"]:
        from som_studio.report.tables import chunks_csv

        write("--csv", outputs["csv"], chunks_csv(records))
    if outputs["maps"]:
        from som_studio.report.tables import png_bytes, upscale

        folder, paths = outputs["maps"]
        try:
            folder.mkdir(exist_ok=True)
        except OSError as exc:
            raise CommandError(f"--maps: {folder}: cannot create it ({exc.strerror or exc})") from None
        for run in report.runs:
            if run.final_image is None:
                print(f"--maps: {run.name} has no map ({run.record.status}); no file", file=sys.stderr)
                continue
            write("--maps", paths[run.name], png_bytes(upscale(run.final_image)))
    if outputs["animation"]:
        from som_studio.report.animation import AnimationError, compose_frames, encode

        path, fmt = outputs["animation"]
        try:
            data = encode(compose_frames(report.runs, max_frames), fmt)
        except AnimationError as exc:
            raise CommandError(f"--animation: {exc}") from None
        write("--animation", path, data)
    if outputs["report"] or outputs["pdf"]:
        from som_studio.qt.report_render import pdf_bytes, render_charts

        charts = render_charts(report)
        if outputs["report"]:
            from som_studio.report.html import report_html

            write("--report", outputs["report"], report_html(report, charts))
        if outputs["pdf"]:
            write("--pdf", outputs["pdf"], pdf_bytes(report, charts))
