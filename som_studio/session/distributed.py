"""Runs that span processes (and machines) with JAX's distributed runtime.

``som-studio bench --coordinator HOST:PORT --num-processes P --process-id I``
starts one process per machine; together they see every machine's devices as
one set of global devices, and the sharded implementations lay their mesh over
all of them.

JAX's runtime does not raise when a peer never arrives or dies: it aborts the
process (SIGABRT), after about twice the initialisation timeout or after the
heartbeat timeout, or a collective waits for the dead peer. So the command
runs the distributed part in a supervised child process (:func:`supervise`):
the child reports on a pipe when it starts connecting and when it is
connected; the parent kills it (its whole process group) when connecting takes
longer than ``--init-timeout`` and turns an abort into a message that says
what happened. No run hangs silently.

Every process runs the same sessions in the same order (chunk sizes are made
independent of timing, see :data:`LOCKSTEP_SESSION`), because each chunk is
one program that all processes must enter together.
"""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from som_studio.i18n import N_, _, ngettext

# Marks the supervised child; the value is the fd of the status pipe.
CHILD_ENV = "SOM_STUDIO_DISTRIBUTED_STATUS_FD"
# Time allowed for the child to start Python and import JAX before it connects.
STARTUP_ALLOWANCE_S = 60.0
# Beyond the timeout, time for JAX's own error to arrive before we kill.
GRACE_S = 3.0
# Session settings that make every process run identical chunks: sizes grow
# 1, 4, 16, ... whatever the timings (a chunk is a program all processes enter).
LOCKSTEP_SESSION = {"chunk_target_s": 1e12}

_ADDR_RE = re.compile(r"^\[?([A-Za-z0-9.\-:]+?)\]?:(\d{1,5})$")


#: ``--coordinator auto``: the settings of the cluster the command runs in, as JAX's runtime detects them.
AUTO = "auto"


class DistributedError(RuntimeError):
    """A distributed run could not start or was lost; the message says which and why."""


def detect(init_timeout: int) -> Cluster:
    """The cluster this process runs in (``--coordinator auto``): coordinator, process count and number.

    JAX's distributed runtime reads them from its launcher's environment (Slurm's ``srun``, Open MPI's
    ``mpirun`` and the others it knows); every process of the job detects the same coordinator.
    Raises :class:`DistributedError` when it finds none.
    """
    from som_studio.core import jax_runtime

    jax_runtime.jax()
    # JAX's detection, without joining: initialize() would make it too, but the supervisor needs
    # the process number before any process connects (process 0 prints and writes).
    from jax._src import clusters

    try:
        address, count, number, _devices = clusters.ClusterEnv.auto_detect_unset_distributed_params(
            None, None, None, None, None, init_timeout
        )
    except Exception as exc:  # a launcher's environment JAX cannot read
        raise DistributedError(
            "--coordinator auto: " + _("the cluster's settings cannot be read ({why})").format(why=exc)
        ) from None
    if address is None or count is None or number is None:
        raise DistributedError(
            "--coordinator auto: "
            + _(
                "no cluster found: JAX's runtime reads the settings of Slurm (srun) and Open MPI (mpirun), "
                "and none is set here; give {flags} instead"
            ).format(flags="--coordinator HOST:PORT --num-processes P --process-id I")
        )
    return Cluster(str(address), int(count), int(number), init_timeout, detected=True).check()


@dataclass(frozen=True)
class Cluster:
    """Where this process sits in a multi-process run."""

    coordinator: str
    num_processes: int
    process_id: int
    init_timeout: int
    #: Read from the launcher's environment (``--coordinator auto``), not given.
    detected: bool = False

    def check(self) -> Cluster:
        m = _ADDR_RE.match(self.coordinator)
        if not m or not 0 < int(m.group(2)) < 65536:
            raise DistributedError(
                "--coordinator: "
                + _("expected HOST:PORT such as {example}, got {value!r}").format(
                    example="192.168.100.1:5555", value=self.coordinator
                )
            )
        if self.num_processes < 1:
            raise DistributedError(
                "--num-processes: " + _("must be at least 1, got {value}").format(value=self.num_processes)
            )
        if not 0 <= self.process_id < self.num_processes:
            raise DistributedError(
                "--process-id: "
                + _("must be in {range} for {flag}, got {value}").format(
                    range=f"0..{self.num_processes - 1}",
                    flag=f"--num-processes {self.num_processes}",
                    value=self.process_id,
                )
            )
        if self.init_timeout < 1:
            raise DistributedError(
                "--init-timeout: " + _("must be at least 1 second, got {value}").format(value=self.init_timeout)
            )
        return self

    @property
    def is_main(self) -> bool:
        return self.process_id == 0

    def who(self) -> str:
        return _("process {id} of {n}").format(id=self.process_id, n=self.num_processes)


def initialize(cluster: Cluster) -> None:
    """Join the run: ``jax.distributed.initialize`` before JAX is otherwise used.

    Process 0 hosts the coordinator service, bound to the address given (not
    to every interface). The heartbeat timeout is the init timeout, so a peer
    that dies is noticed within that time.
    """
    from som_studio.core import jax_runtime

    if in_child():
        _exit_with_parent()
    jax = jax_runtime.jax()
    _report("connecting")
    jax.distributed.initialize(
        coordinator_address=cluster.coordinator,
        num_processes=cluster.num_processes,
        process_id=cluster.process_id,
        # A detected address is the launcher's name for the node: listen on every interface there, as JAX does.
        coordinator_bind_address=cluster.coordinator if cluster.is_main and not cluster.detected else None,
        initialization_timeout=cluster.init_timeout,
        heartbeat_timeout_seconds=max(cluster.init_timeout, 5),
        # A process that ends early waits this long at exit for the others before giving up.
        shutdown_timeout_seconds=max(cluster.init_timeout, 5),
    )
    jax.devices()  # the global device list: connected to every peer's devices
    _report("connected")


def check_same_runs(runs: list[dict[str, object]], cluster: Cluster) -> None:
    """Refuse to start when the processes see different numbers of devices or were given different runs.

    Each process trains what its own command line says; if two differ, their programs would not match and
    the collectives would wait for each other. Compares digests of ``runs`` (JSON-able), whole and setting by
    setting, across processes, so the refusal names the setting.
    """
    import hashlib
    import json

    import jax
    import numpy as np
    from jax.experimental import multihost_utils

    # Gathering needs as many devices in each process (it failed with "cannot reshape array of size 3").
    counts = [sum(1 for d in jax.devices() if d.process_index == i) for i in range(cluster.num_processes)]
    if len(set(counts)) > 1:
        raise DistributedError(
            _("the processes see different numbers of devices ({counts}): every process must see as many "
              "(start each with the same {flag}, or on machines alike)").format(
                counts=", ".join(f"{i}: {n}" for i, n in enumerate(counts)), flag="--cpu-devices"
            )
        )  # fmt: skip

    def digest(value: object) -> np.ndarray:
        return np.frombuffer(hashlib.sha256(json.dumps(value, sort_keys=True).encode()).digest()[:4], np.uint32)

    mine = np.concatenate([digest(runs), *(digest([run.get(k) for run in runs]) for k in _RUN_KEYS)])
    every = np.asarray(multihost_utils.process_allgather(mine)).reshape(cluster.num_processes, -1)
    differ = [i for i in range(cluster.num_processes) if not np.array_equal(every[i], every[0])]
    if differ:
        named = [k for j, k in enumerate(_RUN_KEYS) if len({int(v) for v in every[:, j + 1]}) > 1]
        raise DistributedError(
            ngettext(
                "process {ids} was given different run options from process 0 ({settings}): "
                "every process must be started with the same options except {a} and {b}",
                "processes {ids} were given different run options from process 0 ({settings}): "
                "every process must be started with the same options except {a} and {b}",
                len(differ),
            ).format(
                ids=", ".join(map(str, differ)),
                settings=", ".join(named) or _("other settings"),
                a="--process-id",
                b="--json",
            )
        )


#: The settings a refusal of different runs names (a run's configuration's keys, as its record writes them).
_RUN_KEYS = (
    "impl", "grid", "data", "sigma", "learning_rate", "init", "scaling", "labels", "ignore", "id_column",
    "topology", "toroid", "epochs", "steps", "seed", "precision", "layout", "stream", "batch_rows", "clusters",
)  # fmt: skip


def agree(failed: str | None, files: list[tuple[str, int]] | None) -> str | None:
    """What every process of a run ends with once each has checked its part, or ``None`` when all may train.

    ``failed``: why this process cannot train (its data unreadable, a refusal), or ``None``; ``files``:
    the data files it will read and their sizes (a streamed run's), or ``None``. Every process calls
    it at the same point and gets the same answer: the processes that failed, each named with its
    reason, or the first file that some process does not see or sees with another size. So a file
    missing on one machine stops every process with its name, before any of them waits for another.
    In a process that joined no others: ``failed``.
    """
    from som_studio.core import jax_runtime

    _index, count = jax_runtime.processes()
    if count == 1:
        return failed
    every = jax_runtime.gather_json({"failed": failed, "files": files})
    who = [_("process {id} of {n}").format(id=i, n=count) for i in range(count)]
    bad = [f"{who[i]}: {e['failed']}" for i, e in enumerate(every) if e["failed"]]
    if bad:
        return "; ".join(bad)
    seen = [{name: size for name, size in e["files"] or []} for e in every]
    for i, mine in enumerate(seen):
        for j, other in enumerate(seen):
            for name, size in other.items():
                if name not in mine:
                    return _("{path}: {who} does not see this file, which {other} reads; {fix}").format(
                        path=name, who=who[i], other=who[j], fix=_(_SAME_FILES)
                    )
                if mine[name] != size:
                    return _("{path}: {a} bytes on {who} but {b} on {other}; {fix}").format(
                        path=name, a=mine[name], who=who[i], b=size, other=who[j], fix=_(_SAME_FILES)
                    )
    return None


_SAME_FILES = N_("every process must see the same data files at the same path")


def _report(state: str) -> None:
    fd = os.environ.get(CHILD_ENV)
    if fd:
        try:
            os.write(int(fd), (state + "\n").encode())
        except OSError:
            pass


def _exit_with_parent() -> None:
    """In the supervised child: exit at once when the supervisor is gone.

    The child runs in its own session (so the supervisor can kill its whole
    group), so nothing else would stop it when the supervisor is killed.
    """
    import threading

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(3)

    threading.Thread(target=watch, name="som-parent-watch", daemon=True).start()


def in_child() -> bool:
    return bool(os.environ.get(CHILD_ENV))


def supervise(argv: list[str], cluster: Cluster) -> int:
    """Run ``som-studio ARGV`` as a supervised child; return its exit status.

    Raises :class:`DistributedError` when the peers do not all connect within
    ``cluster.init_timeout`` seconds, or when the runtime aborts (a peer died
    or stopped answering). The child and anything it started are killed.
    """
    # SIGTERM (e.g. from `timeout` or a job scheduler) must also take the child down.
    try:
        old_term = signal.signal(signal.SIGTERM, _raise_interrupt)
    except ValueError:  # not the main thread: leave signals alone
        old_term = None
    rfd, wfd = os.pipe()
    env = dict(os.environ, **{CHILD_ENV: str(wfd)})
    # The child's output is relayed (less Gloo's connection chatter, which goes to stdout).
    proc = subprocess.Popen(
        [sys.executable, "-m", "som_studio", *argv],
        env=env,
        pass_fds=(wfd,),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    os.close(wfd)
    assert proc.stdout is not None and proc.stderr is not None
    sinks = {proc.stdout.fileno(): sys.stdout, proc.stderr.fileno(): sys.stderr}
    pending = {fd: b"" for fd in sinks}
    # JAX's runtime log (its C++ lines, a stack trace when it aborts) and what follows it: held, shown unless the
    # run was lost, which the one line below says (a peer's death printed some forty lines of it before that line).
    log: list[bytes] = []
    held: dict[int, list[bytes] | None] = {proc.stdout.fileno(): None, proc.stderr.fileno(): log}
    state, buf = "starting", b""
    open_fds = [rfd, *sinks]
    deadline = time.monotonic() + STARTUP_ALLOWANCE_S
    try:
        while open_fds:
            timeout = None if state == "connected" else max(0.0, deadline - time.monotonic())
            ready, _w, _x = select.select(open_fds, [], [], timeout)
            if not ready:  # the deadline passed in 'starting' or 'connecting'
                _kill(proc)
                if state == "starting":
                    raise DistributedError(
                        _("{who}: did not start within {s:.0f} s").format(who=cluster.who(), s=STARTUP_ALLOWANCE_S)
                    )
                raise DistributedError(_not_connected(cluster))
            for fd in ready:
                chunk = os.read(fd, 65536)
                if not chunk:  # the child exited (or closed it)
                    open_fds.remove(fd)
                    if fd in sinks:
                        _relay(pending[fd], sinks[fd], final=True, held=held[fd])
                elif fd in sinks:
                    pending[fd] = _relay(pending[fd] + chunk, sinks[fd], held=held[fd])
                else:
                    buf += chunk
                    while b"\n" in buf:
                        line, buf = buf.split(b"\n", 1)
                        state = line.decode(errors="replace").strip()
                        if state == "connecting":
                            deadline = time.monotonic() + cluster.init_timeout + GRACE_S
        rc = proc.wait()
    except BaseException:
        _kill(proc)
        raise
    finally:
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)
        os.close(rfd)
        proc.stdout.close()
        proc.stderr.close()
    if log and not (rc < 0 and state in ("connected", "connecting")):
        sys.stderr.write(b"".join(log).decode(errors="replace"))
    if rc < 0:
        sig = signal.Signals(-rc).name if -rc in signal.Signals._value2member_map_ else str(-rc)
        if -rc in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT):
            raise DistributedError(
                _("{who}: the process was stopped by {signal}").format(who=cluster.who(), signal=sig)
            )
        if state == "connected":
            raise DistributedError(
                _(
                    "{who}: the distributed run was lost ({signal}): a peer process died or stopped answering "
                    "for {s} s (the heartbeat timeout, set by {flag})"
                ).format(who=cluster.who(), signal=sig, s=max(cluster.init_timeout, 5), flag="--init-timeout")
            )
        if state == "connecting":
            raise DistributedError(_not_connected(cluster) + _(" (JAX's runtime aborted: {signal})").format(signal=sig))
        raise DistributedError(
            _("{who}: the process aborted ({signal}) before it connected").format(who=cluster.who(), signal=sig)
        )
    return rc


# Gloo's connection chatter, printed by every process: not for the user.
_NOISE = re.compile(rb"^\[Gloo\] Rank \d+ is connected to \d+ peer ranks")


# JAX's C++ runtime log lines (absl's "E1128 12:00:00.123456  4242 file.cc:89] ...") and an abort's stack trace.
_RUNTIME_LOG = re.compile(rb"^([EFWI]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\]|\*\*\* |\s+@ +0x[0-9a-f]+ )")


def _relay(buf: bytes, sink: Any, final: bool = False, held: list[bytes] | None = None) -> bytes:
    """Copy the child's complete lines to ``sink``, without the noise; with ``held``, the lines from JAX's runtime
    log's first on go there instead (shown at the end unless the run was lost). Return the rest."""
    lines = buf.split(b"\n")
    rest = b"" if final else lines.pop()
    if held is not None:  # from the runtime's first line on, all of it: its entries run over several lines
        first = next((i for i, ln in enumerate(lines) if held or _RUNTIME_LOG.match(ln)), len(lines))
        held += [ln + b"\n" for ln in lines[first:]]
        lines = lines[:first]
    out = b"".join(ln + b"\n" for ln in lines if ln and not _NOISE.match(ln))
    if out:
        sink.write(out.decode(errors="replace"))
        sink.flush()
    return rest


def _not_connected(c: Cluster) -> str:
    if c.is_main:
        gave_up = _("{who}: gave up waiting for the other processes at {address} after {s} s ({flag})")
    else:
        gave_up = _("{who}: gave up connecting to the coordinator at {address} after {s} s ({flag})")
    return (
        gave_up.format(who=c.who(), address=c.coordinator, s=c.init_timeout, flag="--init-timeout")
        + ": "
        + _(
            "start all {n} processes with the same {a} and {b}, process 0 on the machine whose address is given, "
            "and check that the port is reachable"
        ).format(n=c.num_processes, a="--coordinator", b="--num-processes")
    )


def _raise_interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill the child's process group (it was started in its own session) and reap it."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()
