"""``som-studio doctor``: check the environment and say how to fix what is wrong."""

from __future__ import annotations

import argparse
import json


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "doctor",
        help="check Python, JAX, the GPU, memory settings and the display",
        description="Check the environment SOM Studio runs in: versions, JAX's backend and devices, "
        "the CUDA plugin and NVIDIA driver, the XLA and memory settings in force, the display. "
        "Each problem comes with its fix. Exit status 1 when there is an error (the main job "
        "cannot work as intended), 0 otherwise: warnings do not fail scripts.",
    )
    p.add_argument("--json", action="store_true", help="print the facts and findings as JSON")
    return p


def run(args: argparse.Namespace) -> int:
    from som_studio import doctor

    facts = doctor.collect()
    findings = doctor.diagnose(facts)
    if args.json:
        print(json.dumps(doctor.as_dict(facts, findings), indent=2))
    else:
        print(doctor.format_report(facts, findings), end="")
    return doctor.exit_status(findings)
