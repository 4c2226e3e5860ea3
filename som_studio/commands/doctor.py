"""``som-studio doctor``: check the environment and say how to fix what is wrong."""

from __future__ import annotations

import argparse
import sys

from som_studio.commands.common import STDOUT, CommandError, check_output, wrote


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "doctor",
        help="check Python, JAX, the GPU, memory settings and the display",
        description="Check the environment SOM Studio runs in: versions, JAX's backend and devices, "
        "the CUDA plugin and NVIDIA driver, the XLA and memory settings in force, the display. "
        "Each problem comes with its fix. Exit status 1 when there is an error (the main job "
        "cannot work as intended), 0 otherwise: warnings do not fail scripts.",
    )
    p.add_argument(
        "--json",
        nargs="?",
        const=STDOUT,
        metavar="FILE",
        help="write the facts and findings as JSON to FILE; alone or with -, print them",
    )
    p.add_argument("--force", action="store_true", help="overwrite the --json file if it exists")
    return p


def run(args: argparse.Namespace) -> int:
    from som_studio import doctor

    # The file is checked before the checks run, as every command refuses its outputs up front.
    path = check_output(args.json, args.force, flag="--json") if args.json not in (None, STDOUT) else None
    facts = doctor.collect()
    findings = doctor.diagnose(facts)
    if args.json == STDOUT:
        from som_studio.storage.writers import json_text

        sys.stdout.write(json_text(doctor.as_dict(facts, findings)))
    elif path is not None:
        from som_studio.storage.writers import OutputError, write_json

        try:
            write_json(path, doctor.as_dict(facts, findings), force=args.force)
        except OutputError as exc:
            raise CommandError(f"--json: {exc}") from None
        print(doctor.format_report(facts, findings), end="")
        print(wrote(path), file=sys.stderr)
    else:
        print(doctor.format_report(facts, findings), end="")
    return doctor.exit_status(findings)
