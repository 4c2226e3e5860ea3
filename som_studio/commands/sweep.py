"""``som-studio sweep``: train every combination of a few varied settings together, as one program."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from som_studio.commands.common import (
    STDOUT,
    CommandError,
    add_run_options,
    check_distinct,
    check_output,
    check_save_runs,
    command_reads,
    flag_names,
    option_values,
    saved_run_path,
    saved_runs,
    warn,
    wrote,
)
from som_studio.i18n import _, ljust, ngettext, text_width

HELP = "train every combination of --vary's values together (one batched JAX program); QE vs TE per map"

DESCRIPTION = """\
Train one SOM per combination of the values given with --vary, for one map size
and one data set, all together: the fused batch epoch of jax-fused-batch,
vmap-ed over the combinations, compiled once (and sharded over the devices when
there are several). Every other option defines the SOM as it does for bench.
What may vary: sigma_start and sigma_end (a number, or SXxSY per axis) and seed
(it changes the map only with --init random or sample).

Prints one row per combination: its settings, QE, TE and label purity (with
--labels); * marks the trade-off frontier (no other map has both a lower QE and
a lower TE). A jax-fused-batch run with a row's settings trains the same map.

examples:
  som-studio sweep --data resources/data/wine.csv --labels cultivar --scaling zscore --grid 8x6 \\
      --topology hex --vary sigma_end=0.5,0.75,1,2 --vary seed=0,1 --init random
  som-studio sweep --data t.parquet --vary sigma_end=0.5,1x0.5,2 --json sweep.json
"""


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "sweep", help=HELP, description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_run_options(
        p,
        baseline_default=None,
        impls=False,
        save_runs_help="write DIR/<settings>.somrun for each combination",
        unlisted=NOT_TAKEN,
    )
    v = p.add_argument_group("the sweep")
    v.add_argument(
        "--vary",
        action="append",
        default=[],
        metavar="KEY=V1,V2",
        help="a setting and its values (sigma_start, sigma_end, seed); repeat for more: every combination trains",
    )
    v.add_argument("--json", metavar="FILE", help="write the rows and timings as JSON; - prints them")
    v.add_argument("--report", metavar="FILE.html", help="write an HTML report: QE against TE, the frontier marked")
    return p


def _keywords(args: argparse.Namespace) -> dict[str, Any]:
    """The options that define the SOM, as :func:`som_studio.train`'s keywords."""
    if args.scale and args.data is None:
        raise CommandError(
            "--scale: "
            + _("scales the features of {flag}; random colours are already in [0, 1]").format(flag="--data FILE")
        )
    kw = {k: v for k, v in option_values(args).items() if v is not None and k != "data"}
    if args.scale:
        kw["scaling"] = "minmax"
    if args.steps is not None:
        raise CommandError("--steps: " + _("a sweep trains in batch epochs: give {flag}").format(flag="--epochs N"))
    from som_studio.config import setting_named

    for name in ("lr_start", "lr_end"):  # read by the online implementations only: a sweep would ignore them
        if getattr(args, name) not in (None, setting_named(name).default):  # given (their defaults are filled in)
            raise CommandError(
                f"{setting_named(name).flag}: " + _("a sweep trains in batch epochs, which have no learning rate")
            )
    if args.stream or args.batch_rows is not None:
        raise CommandError(
            ("--stream: " if args.stream else "--batch-rows: ")
            + _("a sweep trains its maps together on data held in memory; it does not stream")
        )
    return kw


#: Settings a sweep does not take: out of its help, refused in its words.
NOT_TAKEN = ("steps", "lr_start", "lr_end", "layout", "stream", "batch_rows")


def row_name(settings: dict[str, Any]) -> str:
    """A row's file name stem: its settings, ``sigma_end-0.5_seed-1`` (a per-axis radius as ``1x0.5``)."""
    from som_studio.session.sweep import typed

    return "_".join(f"{k}-{typed(v)}" for k, v in settings.items())


def run(args: argparse.Namespace) -> int:
    from som_studio.config import ConfigError
    from som_studio.core.data import DataError
    from som_studio.sweeps import combinations, read_vary

    names = flag_names()
    try:
        vary: dict[str, list[Any]] = {}
        for text in args.vary:
            key, values = read_vary(text)
            if key in vary:
                raise ConfigError("vary", _("{key} is given twice").format(key=key))
            vary[key] = values
        if not vary:
            raise CommandError(
                "--vary: " + _("a sweep needs at least one --vary KEY=V1,V2 (sigma_start, sigma_end or seed)")
            )
        combos = combinations(vary)
    except ConfigError as exc:
        raise CommandError("--vary: " + exc.refusal.reason) from None
    kw = _keywords(args)
    for key in vary:
        if key != "seed" and kw.get(key) is not None:  # the seed has a default, always "given"
            raise CommandError(
                _("{flag} is given and varied ({vary}); give one").format(
                    flag=names.get(key, key), vary=f"--vary {key}=..."
                )
            )
        kw.pop(key, None)
    to_stdout = args.json == STDOUT
    reads = command_reads(args)
    json_path = None if to_stdout else check_output(args.json, args.force, flag="--json", reads=reads)
    report_path = check_output(args.report, args.force, flag="--report", suffixes=(".html",), reads=reads)
    from som_studio.session.sweep import shown

    stems = [row_name({k: shown(v) for k, v in c.items()}) for c in combos]
    if args.save_runs:
        check_save_runs(args.save_runs, stems, args.force)
    check_distinct([("--json", json_path), ("--report", report_path), *saved_runs(args.save_runs, stems)])

    from som_studio.api import prepare
    from som_studio.sweeps import IMPL, train_together

    try:
        prepared = prepare(args.data, {"impl": IMPL, **kw}, note=warn)
        result = train_together(prepared.config, prepared.table, combos, prepared.read_s)
    except ConfigError as exc:  # a varied value refused: named as typed, after --vary
        raise CommandError(exc.refusal.text({**names, **{k: f"--vary {k}" for k in vary}})) from None
    except DataError as exc:
        raise CommandError(f"--data: {exc}") from None
    out = sys.stderr if to_stdout else sys.stdout
    print(format_rows(result), file=out)
    for note in result.notes:
        print(f"{_('note')}: {note}", file=sys.stderr)
    doc = result.to_dict()
    if to_stdout:
        print(json.dumps(doc, indent=2, allow_nan=False))
    elif json_path is not None:
        from som_studio.storage.writers import write_atomic

        write_atomic(json_path, json.dumps(doc, indent=2, allow_nan=False) + "\n", force=args.force)
        print(wrote(json_path), file=sys.stderr)
    if report_path is not None:
        from som_studio.report.sweep import sweep_html
        from som_studio.storage.writers import write_atomic

        write_atomic(report_path, sweep_html(result), force=args.force)
        print(wrote(report_path), file=sys.stderr)
    if args.save_runs:
        from som_studio.storage.writers import OutputError

        folder = Path(args.save_runs)
        folder.mkdir(parents=True, exist_ok=True)
        for i, stem in enumerate(stems):
            try:
                path = result.run(i).save(saved_run_path(folder, stem), force=args.force)
            except (OutputError, ValueError) as exc:
                raise CommandError(f"--save-runs: {exc}") from None
            if not args.quiet:
                print(wrote(path), file=sys.stderr)
    return 0


def format_rows(result: Any) -> str:
    """The rows as a text table (settings, QE, TE, purity; * on the frontier), then the timings."""
    from som_studio.comparison.words import format_seconds
    from som_studio.session.sweep import typed

    frontier = set(result.frontier())
    keys = list(result.rows[0]["settings"]) if result.rows else []
    purity = any(r["label_purity"] is not None for r in result.rows)
    head = [*keys, "QE", "TE", *([_("purity")] if purity else []), _("frontier")]
    rows = []
    for i, r in enumerate(result.rows):
        cells = [typed(r["settings"][k]) for k in keys]
        cells += [f"{r['qe']:.4f}", f"{r['te']:.3f}"]
        if purity:
            cells.append(f"{r['label_purity']:.3f}" if r["label_purity"] is not None else "-")
        cells.append("*" if i in frontier else "")
        rows.append(cells)
    widths = [max(text_width(h), *(text_width(row[j]) for row in rows)) for j, h in enumerate(head)]
    lines = ["  ".join(ljust(h, w) for h, w in zip(head, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(ljust(c, w) for c, w in zip(row, widths)) for row in rows]
    t = result.timings
    lines.append(
        ngettext(
            "{n} map in {wall} (compile {compile}, {per_epoch} per epoch)",
            "{n} maps together in {wall} (compile {compile}, {per_epoch} per epoch for all of them)",
            len(result.rows),
        ).format(
            n=len(result.rows),
            wall=format_seconds(t["wall_s"]),
            compile=format_seconds(t["compile_s"]),
            per_epoch=format_seconds(t["per_epoch_s"]),
        )
    )
    return "\n".join(lines)
