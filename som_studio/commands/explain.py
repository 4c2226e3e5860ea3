"""``som-studio explain``: what JAX made of an implementation, and how close it comes to the device's ceilings."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from som_studio.commands.common import (
    STDOUT,
    CommandError,
    add_run_options,
    check_distinct,
    check_output,
    command_reads,
    configs_from_args,
    saved_runs,
    write_runs_json,
    wrote,
)
from som_studio.config import setting_named
from som_studio.i18n import _, ngettext

HELP = "show what XLA compiled for an implementation: kernels, FLOPs, bytes, the roofline; write its HLO"

DESCRIPTION = """\
Train the implementations named by --impl (default: jax-fused-batch on the
playbook's 240x135 map) as `bench` does, then record the inside of each run:
the program XLA compiled (its jaxpr, StableHLO and optimized HLO), per
iteration the kernels it launches, its while-loop trips, custom calls,
collectives and host-device transfers, its FLOPs and bytes (XLA's cost
analysis, each inner loop body times its trip count, checked against a count
of the SOM's own operations), the compile time split into trace, lower and
compile, and the device's two ceilings (float32 matmul FLOP/s at HIGHEST
precision, memory bandwidth by a large copy; measured once per device and
cached). The table says for each run the FLOP/s and bytes/s it achieved, the
fraction of the ceiling it reached at its arithmetic intensity (FLOPs per
byte) and what bounds it: memory, compute, launch overhead (many small
kernels with little work each) or, for a NumPy run far below both ceilings,
interpreter overhead (Python and NumPy's own calls).

Recording happens after the timed iterations, never inside them.

examples:
  som-studio explain
  som-studio explain --impl jax-vmap-batch --grid 60x34 --epochs 5 --hlo vmap.hlo
  som-studio explain --impl jax-scan-online --steps 2000 --trace /tmp/som-trace
    (open the trace's perfetto_trace.json.gz in https://ui.perfetto.dev or chrome://tracing)
"""


def _host_ceilings() -> None:
    """A NumPy run is held to the host CPU's ceilings: measured with JAX's CPU device and kept, if none are yet."""
    from som_studio.core import jax_runtime
    from som_studio.core.inspection import inside

    if inside.kept_ceilings("cpu") is None:
        inside.ceilings(jax_runtime.jax().devices("cpu")[0])


#: Iterations the profiler trace covers: enough to see the kernels repeat, few enough to read.
TRACE_ITERATIONS = 3


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "explain", help=HELP, description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    impl = str(setting_named("impl").default)
    add_run_options(p, baseline_default="the first listed implementation of the same kind", impl_default=impl)
    p.set_defaults(impl=impl)  # one implementation: the declared default
    o = p.add_argument_group("what to write")
    o.add_argument(
        "--hlo",
        metavar="FILE",
        help="write the optimized HLO text XLA compiled (one JAX implementation in --impl)",
    )
    o.add_argument(
        "--trace",
        metavar="DIR",
        help=f"write a jax.profiler trace of {TRACE_ITERATIONS} iterations into DIR (one JAX implementation in "
        "--impl; Perfetto and Chrome's trace viewer open its perfetto_trace.json.gz)",
    )
    o.add_argument(
        "--json",
        metavar="FILE",
        help="write every run's full record as JSON, extra.inside included; - prints it (the tables then go to stderr)",
    )
    return p


def run(args: argparse.Namespace) -> int:
    from som_studio.core.impls import registry

    configs = configs_from_args(args)
    reads = command_reads(args)
    jax_impls = [c.impl for c in configs if registry.get(c.impl).backend == "jax"]
    for flag, value in (("--hlo", args.hlo), ("--trace", args.trace)):
        if value is not None and not jax_impls:
            others = [c.impl for c in configs]
            raise CommandError(
                f"{flag}: "
                + ngettext(
                    "{names} is not a JAX implementation; name one in {impl} (such as {example})",
                    "{names} are not JAX implementations; name one in {impl} (such as {example})",
                    len(others),
                ).format(names=", ".join(others), impl="--impl", example=setting_named("impl").default)
            )
        if value is not None and len(jax_impls) != 1:
            raise CommandError(
                f"{flag}: "
                + _("writes one JAX implementation's program; {flag2} lists {n}").format(
                    flag2="--impl", n=len(jax_impls)
                )
            )
    if args.hlo is not None and registry.get(jax_impls[0]).file is not None:
        # Its programs are its own jax.jit's, made inside its run(): the session sees none to write.
        raise CommandError(
            "--hlo: "
            + _("{name} is your own class: its programs are compiled inside it, where none can be written out; "
                "name a built-in JAX implementation (such as {example})").format(
                name=jax_impls[0], example=setting_named("impl").default
            )
        )  # fmt: skip
    jax_cfg = next((c for c in configs if c.impl in jax_impls), None)
    for flag, value in (("--hlo", args.hlo), ("--trace", args.trace)):
        if value is not None and jax_cfg is not None and _streams(jax_cfg):
            raise CommandError(
                f"{flag}: "
                + _("a streamed run calls its programs batch by batch, none of them an iteration: leave out {stream} "
                    "(the table must fit in memory)").format(stream="--stream")
            )  # fmt: skip
    hlo_path = check_output(args.hlo, args.force, flag="--hlo", reads=reads)
    to_stdout = args.json == STDOUT
    json_path = None if to_stdout else check_output(args.json, args.force, flag="--json", reads=reads)
    check_distinct([("--hlo", hlo_path), ("--json", json_path), *saved_runs(args.save_runs, [c.impl for c in configs])])
    trace_dir = _trace_dir(args.trace, reads)
    if len(jax_impls) < len(configs):
        _host_ceilings()

    from som_studio.commands.bench import Interrupted, format_table, run_configs

    try:
        records = run_configs(
            configs,
            quiet=args.quiet,
            save_runs=args.save_runs,
            force=args.force,
            inside=True,
            keep_programs=hlo_path is not None,
            quality_points=0,
            final_quality=False,
        )
    except Interrupted as stop:
        records = stop.records
        print(_("som-studio {command}: interrupted").format(command="explain"), file=sys.stderr)
        return 130
    names = [r.impl for r in records]
    from som_studio.report.inside import format_inside_table

    out = sys.stderr if to_stdout else sys.stdout  # stdout holds the JSON alone
    print(format_table(records, args.baseline, flags=False), file=out)
    print(file=out)
    print(format_inside_table(names, records), file=out)
    jax_records = [r for r in records if r.impl in jax_impls]
    if hlo_path is not None:
        progs = ((jax_records[0].extra.get("inside") or {}).get("programs") or {}) if jax_records else {}
        text = next((p.get("hlo") for p in progs.values() if p.get("hlo")), None)
        if text is None:
            raise CommandError("--hlo: " + _("the run recorded no program (it failed: see above)"))
        _write_text(hlo_path, text, args.force)
        for r in jax_records:  # the JSON keeps the figures; the text went to --hlo
            (r.extra.get("inside") or {}).pop("programs", None)
    if to_stdout:
        from som_studio.session.record import runs_document
        from som_studio.storage.writers import json_text

        sys.stdout.write(json_text(runs_document(records)))
    elif json_path is not None:
        write_runs_json(json_path, records, args.force)
    if trace_dir is not None:
        where = _profile(configs[[c.impl for c in configs].index(jax_impls[0])], trace_dir)
        print(wrote(where), file=sys.stderr)
    return 0 if all(r.status == "ok" for r in records) else 1


def _trace_dir(value: str | None, reads: dict[str, str | None]) -> Path | None:
    """``--trace DIR`` checked before any training: a folder (made if missing) that can be written."""
    if value is None:
        return None
    from som_studio.commands.common import check_folder, check_not_read

    check_not_read(value, reads, flag="--trace")
    return check_folder(value, "--trace")


def _write_text(path: Path, text: str, force: bool) -> None:
    """Write ``text`` whole or not at all (a temporary file renamed over ``path``)."""
    from som_studio.storage.writers import OutputError, write_atomic

    try:
        write_atomic(path, text, force)
    except OutputError as exc:
        raise CommandError(f"--hlo: {exc}") from None
    print(wrote(path), file=sys.stderr)


def _streams(cfg: Any) -> bool:
    """Whether ``cfg``'s run reads its data in batches (asked, or too big to load): the session's own decision."""
    from som_studio.session.resolve import open_data, streams

    if cfg.data.path is None:
        return False
    try:
        source = open_data(cfg.data.path, bool(cfg.stream), cfg.labels, cfg.ignore, cfg.id_column)
    except Exception:  # unreadable: the run says so in its own words
        return False
    return source is not None and streams(bool(cfg.stream), source)


def _profile(cfg: Any, folder: Path) -> Path:
    """A jax.profiler trace of :data:`TRACE_ITERATIONS` iterations of a fresh trainer (after its warm-up)."""
    from som_studio.core import jax_runtime
    from som_studio.core.data import Table
    from som_studio.core.impls import registry
    from som_studio.core.som.problem import load_problem_table, make_problem
    from som_studio.session.resolve import load_data

    jax = jax_runtime.jax()
    impl = registry.get(cfg.impl)
    loaded = load_data(cfg)  # a folder's or a glob's files too, as the run read them (a streamed run is refused)
    data = (loaded if isinstance(loaded, Table) else load_problem_table(cfg)).values
    trainer = impl.create(make_problem(cfg, impl.kind, data))
    try:
        trainer.warmup()
        n = min(TRACE_ITERATIONS, cfg.iterations)
        folder.mkdir(parents=True, exist_ok=True)
        try:
            with jax.profiler.trace(str(folder), create_perfetto_trace=True):
                trainer.run(0, n)
        except Exception as exc:  # the profiler cannot start (another trace running, no such plugin)
            raise CommandError(f"--trace: {folder}: {exc}") from None
    finally:
        trainer.close()
    found = sorted(folder.glob("plugins/profile/*/perfetto_trace.json.gz"))
    return found[-1] if found else folder
