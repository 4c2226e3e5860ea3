"""``som-studio devices``: the devices JAX sees."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("devices", help="list the devices JAX sees",
                       description="List the devices JAX sees, with their kind and memory where known.")
    return p


def run(args: argparse.Namespace) -> int:
    from som_studio.core import jax_runtime
    from som_studio.core.memory import format_bytes
    from som_studio.session.env import device_info

    jax = jax_runtime.jax()
    devs = jax.devices()
    print(f"backend: {jax.default_backend()}   devices: {len(devs)}   processes: {jax.process_count()}")
    for d in devs:
        info = device_info(d)
        mem = ""
        if info.get("memory_limit"):
            mem = f"  memory {format_bytes(info.get('memory_in_use') or 0)} / {format_bytes(info['memory_limit'])}"
        print(f"  {info['id']:>3}  {d.platform:<5} {info['kind']}{mem}")
    return 0
