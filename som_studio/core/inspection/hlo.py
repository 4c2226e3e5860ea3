"""Reading a program's HLO text (plain text parsing): its collectives, and its products' precision.

``jax.jit(f).lower(...).compile().as_text()`` is the partitioned, per-device
program XLA will run. Its collectives (``all-reduce``, ``all-gather``,
``reduce-scatter``, ``all-to-all``, ``collective-permute``) are what a layout
costs in communication; counting them also shows whether two approaches
compiled to the same program.

Bytes are per device: ``bytes`` is the size of a collective's result buffer on
one device; ``sent_bytes`` estimates what one device sends for it with the
usual ring algorithms (all-reduce ``2 (n-1)/n B``, all-gather and all-to-all
``(n-1)/n B``, reduce-scatter ``(n-1) B``, collective-permute ``B``, with ``n``
the group size and ``B`` the result buffer). A collective inside a ``while``
loop's body is counted once per iteration: the sharded trainers run one epoch
per iteration of their only loop, so that is the cost of one epoch.

:func:`imprecise_dots` lists the matrix products that do not ask for full
precision: on an NVIDIA GPU a float32 product without it runs as TF32 (a
10-bit mantissa), which picked a wrong best-matching unit for 38 % of the
playbook's examples. It reads StableHLO (``jit(f).lower(...).as_text()``) and
XLA's HLO (``.compile().as_text()``, where the partitioner or a kernel plan may
have written products the source never spelled).
"""

from __future__ import annotations

import re
from typing import Any

KINDS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute", "collective-broadcast")

_ITEMSIZE = {
    "pred": 1,
    "s8": 1,
    "u8": 1,
    "s16": 2,
    "u16": 2,
    "f16": 2,
    "bf16": 2,
    "s32": 4,
    "u32": 4,
    "f32": 4,
    "s64": 8,
    "u64": 8,
    "f64": 8,
    "c64": 8,
    "c128": 16,
}
_COMP_RE = re.compile(r"^\s*(?:ENTRY\s+)?%?([\w.\-]+)\s*\(.*\)\s*->\s*.*\{\s*$")
_INSTR_RE = re.compile(
    r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*(?P<shape>.+?)\s+(?P<op>" + "|".join(KINDS) + r")(?P<start>-start)?\("
)
_ARRAY_RE = re.compile(r"\b(pred|[suf]\d+|bf16|c64|c128)\[([\d,]*)\]")
_CALLS_RE = re.compile(r"\b(?:calls|to_apply|body|condition|true_computation|false_computation)=%?([\w.\-]+)")
_BRANCHES_RE = re.compile(r"branch_computations=\{([^}]*)\}")
_BODY_RE = re.compile(r"\bbody=%?([\w.\-]+)")
_GROUPS_LIST_RE = re.compile(r"replica_groups=\{\{([\d,\s]*)\}")
_GROUPS_IOTA_RE = re.compile(r"replica_groups=\[(\d+),(\d+)\]")
_GROUPS_MESH_RE = re.compile(r"replica_groups=mesh\[([^\]]*)\]\s*\{([^}]*)\}")
_MESH_AXIS_RE = re.compile(r"'?([\w-]+)'?\s*=\s*(\d+)")


def _arrays(shape: str) -> list[tuple[str, tuple[int, ...], int]]:
    out = []
    for dt, dims in _ARRAY_RE.findall(shape):
        ds = tuple(int(x) for x in dims.split(",") if x)
        n = _ITEMSIZE.get(dt, 4)
        for d in ds:
            n *= d
        out.append((dt, ds, n))
    return out


def _group_size(line: str, default: int) -> int:
    m = _GROUPS_MESH_RE.search(line)  # replica_groups=mesh['data'=2,'map'=4] {'map'}
    if m:
        sizes = {a: int(n) for a, n in _MESH_AXIS_RE.findall(m.group(1))}
        n = 1
        for axis in re.findall(r"[\w-]+", m.group(2)):
            n *= sizes.get(axis, 1)
        return n
    m = _GROUPS_IOTA_RE.search(line)
    if m:
        return int(m.group(2))
    m = _GROUPS_LIST_RE.search(line)
    if m and m.group(1).strip():
        return len([x for x in m.group(1).split(",") if x.strip()])
    return default


def _sent(kind: str, nbytes: int, n: int) -> int:
    if n <= 1:
        return 0
    if kind == "all-reduce":
        return 2 * (n - 1) * nbytes // n
    if kind in ("all-gather", "all-to-all"):
        return (n - 1) * nbytes // n
    if kind == "reduce-scatter":
        return (n - 1) * nbytes
    return nbytes  # collective-permute, collective-broadcast


def computations(text: str) -> dict[str, list[str]]:
    """HLO text split into ``{computation name: its instruction lines}``."""
    comps: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        m = _COMP_RE.match(line)
        if m:
            current = comps.setdefault(m.group(1), [])
            continue
        if line.strip() == "}":
            current = None
            continue
        if current is not None:
            current.append(line)
    return comps


def _called(line: str) -> list[str]:
    names = _CALLS_RE.findall(line)
    for group in _BRANCHES_RE.findall(line):
        names += [g.strip().lstrip("%") for g in group.split(",") if g.strip()]
    return names


def collectives(text: str, devices: int = 1) -> list[dict[str, Any]]:
    """The collectives of a compiled HLO module, one entry per instruction.

    Each entry: ``kind``, ``shape`` (``"f32[4,12,4]"``), ``bytes`` (result buffer
    per device), ``group`` (devices taking part), ``sent_bytes`` (estimated,
    per device), ``per_epoch`` (inside a ``while`` loop body, so run once per
    iteration of the loop).
    """
    comps = computations(text)
    in_loop: set[str] = set()
    todo = [b for lines in comps.values() for ln in lines for b in _BODY_RE.findall(ln)]
    while todo:
        name = todo.pop()
        if name in in_loop or name not in comps:
            continue
        in_loop.add(name)
        for ln in comps[name]:
            todo += _called(ln)
    out = []
    for name, lines in comps.items():
        for ln in lines:
            m = _INSTR_RE.match(ln)
            if not m:
                continue
            arrays = _arrays(m.group("shape"))
            if not arrays:
                continue
            if m.group("start"):  # async pair: the start's result holds operands and results
                dt, dims, nbytes = max(arrays, key=lambda a: a[2])
            else:
                dt, dims, nbytes = arrays[0] if len(arrays) == 1 else (arrays[0][0], (), sum(a[2] for a in arrays))
            kind = m.group("op")
            group = _group_size(ln, devices)
            out.append(
                {
                    "kind": kind,
                    "shape": f"{dt}[{','.join(str(d) for d in dims)}]"
                    if len(arrays) == 1 or m.group("start")
                    else "(" + ", ".join(f"{a[0]}[{','.join(map(str, a[1]))}]" for a in arrays) + ")",
                    "bytes": nbytes,
                    "group": group,
                    "sent_bytes": _sent(kind, nbytes, group),
                    "per_epoch": name in in_loop,
                }
            )
    return out


def summary(colls: list[dict[str, Any]], devices: int) -> dict[str, Any]:
    """What a run record keeps: the collectives and the bytes each epoch moves."""
    per_device = sum(c["sent_bytes"] for c in colls if c["per_epoch"])
    return {
        "collectives": colls,
        "bytes_per_epoch": per_device,
        "bytes_per_epoch_all_devices": per_device * devices,
        "bytes_per_call": sum(c["sent_bytes"] for c in colls if not c["per_epoch"]),
    }


# A product in StableHLO / MHLO (dot, dot_general, convolution) or in XLA's HLO (dot, convolution), and the
# GEMM custom-calls a GPU backend rewrites HLO dots into (their precision sits in a JSON backend config).
_DOT_RE = re.compile(
    r"(?:\bstablehlo\.(?:dot_general|dot|convolution)\b|\bmhlo\.(?:dot_general|dot|convolution)\b"
    r"|=\s*\S.*?\s(?:dot|convolution)\(|custom_call_target=\"[^\"]*(?:gemm|matmul)[^\"]*\")",
    re.IGNORECASE,
)
_HIGHEST_RES = (
    re.compile(r"precision\s*=\s*\[\s*HIGHEST\s*,\s*HIGHEST\s*\]"),  # StableHLO
    re.compile(r"precision_config\s*=\s*\[\s*#\w+<precision HIGHEST>\s*,\s*#\w+<precision HIGHEST>\s*\]"),
    re.compile(r"operand_precision=\{highest,highest\}"),  # HLO
    re.compile(r"\"operand_precision\":\[\"HIGHEST\",\"HIGHEST\"\]"),  # a GEMM's backend config
)


def imprecise_dots(text: str) -> list[str]:
    """The products in an HLO or StableHLO text that lack full precision on both operands (stripped lines).

    An empty list means every ``dot``/``dot_general``/``convolution`` (and GPU
    GEMM custom-call) asks for ``HIGHEST``: in HLO ``operand_precision={highest,highest}``,
    in StableHLO ``precision = [HIGHEST, HIGHEST]``.
    """
    out = []
    for line in text.splitlines():
        if _DOT_RE.search(line) and not any(r.search(line) for r in _HIGHEST_RES):
            out.append(line.strip())
    return out


# -- what a compiled program does per call: kernels, loops, FLOPs and bytes -------------------------------------

# Instructions that launch nothing: they name, pack or unpack buffers, or hand control to computations
# counted on their own (a while loop's body, a call's callee).
_NO_KERNEL = frozenset(
    {
        "parameter",
        "constant",
        "get-tuple-element",
        "tuple",
        "bitcast",
        "while",
        "call",
        "conditional",
        "after-all",
        "opt-barrier",
        "add-dependency",
        "partition-id",
        "replica-id",
        "domain",
    }
)
# XLA's cost analysis counts these as transcendentals, not FLOPs.
_TRANSCENDENTAL = frozenset(
    {"exponential", "exponential-minus-one", "log", "log-plus-one", "tanh", "sine", "cosine", "tan", "atan2",
     "power", "sqrt", "rsqrt", "cbrt", "logistic", "erf"}
)  # fmt: skip
# One FLOP per result element (XLA's HandleElementwiseOp and its kin).
_ELEMENTWISE = frozenset(
    {"add", "subtract", "multiply", "divide", "maximum", "minimum", "compare", "select", "and", "or", "xor",
     "not", "negate", "abs", "sign", "floor", "ceil", "round-nearest-afz", "round-nearest-even", "remainder",
     "clamp", "convert", "shift-left", "shift-right-logical", "shift-right-arithmetic", "is-finite", "popcnt"}
)  # fmt: skip
_LINE_RE = re.compile(
    r"^\s*(?:ROOT\s+)?%?(?P<name>[\w.\-]+)\s*=\s*(?P<shape>.+?)\s+(?P<op>[a-z][\w\-]*)\((?P<args>[^)]*)\)(?P<rest>.*)$"
)
_OPERAND_RE = re.compile(r"%([\w.\-]+)")
_TRIPS_RE = re.compile(r'"known_trip_count":\{"n":"(\d+)"\}')
_CONTRACT_RE = re.compile(r"lhs_contracting_dims=\{([\d,]*)\}")
_WINDOW_RE = re.compile(r"window=\{size=([\dx]+)")


def _elements(shape: str) -> int:
    n = 0
    for _dt, dims, _bytes in _arrays(shape):
        e = 1
        for d in dims:
            e *= d
        n += e
    return n


def _nbytes(shape: str) -> int:
    return sum(a[2] for a in _arrays(shape))


class _Instr:
    __slots__ = ("name", "op", "operands", "rest", "shape")

    def __init__(self, name: str, shape: str, op: str, operands: list[str], rest: str) -> None:
        self.name, self.shape, self.op, self.operands, self.rest = name, shape, op, operands, rest


def _parse(text: str) -> tuple[dict[str, list[_Instr]], str | None]:
    """Every computation's instructions, and the entry computation's name."""
    comps: dict[str, list[_Instr]] = {}
    entry = None
    current: list[_Instr] | None = None
    for line in text.splitlines():
        m = _COMP_RE.match(line)
        if m:
            current = comps.setdefault(m.group(1), [])
            if line.lstrip().startswith("ENTRY"):
                entry = m.group(1)
            continue
        if line.strip() == "}":
            current = None
            continue
        if current is None:
            continue
        i = _LINE_RE.match(line)
        if i:
            current.append(
                _Instr(i.group("name"), i.group("shape"), i.group("op"), _OPERAND_RE.findall(i.group("args")),
                       i.group("rest"))
            )  # fmt: skip
    return comps, entry


class ProgramCosts:
    """What one call of a compiled program does, read from its optimized HLO text.

    Counted per computation with XLA's rules (a product ``2 x result x
    contracted``, one FLOP per element of an elementwise op, a reduction one
    per input element, transcendentals apart; bytes: what each launched
    kernel reads and writes), a ``while`` loop's body and condition multiplied
    by its trip count where XLA knows it (``known_trip_count``). A loop whose
    trip count depends on the arguments, the chunk programs' loop over
    iterations, is the *iteration loop*: :attr:`per_trip` is one trip of it,
    :attr:`per_call` the rest of a call (set-up and hoisted constants).

    Each figure is a dict: ``flops``, ``transcendentals``, ``bytes``,
    ``kernels`` (launched instructions: fusions, products, custom calls,
    copies, collectives...), ``fusions``, ``custom_calls``, ``collectives``,
    ``loop_trips`` (trips of the ``while`` loops inside), ``conditionals`` (branches taken, each
    counted as its largest branch, as XLA counts them).
    """

    KEYS = (
        "flops",
        "transcendentals",
        "bytes",
        "kernels",
        "fusions",
        "custom_calls",
        "collectives",
        "loop_trips",
        "conditionals",
    )

    def __init__(self, text: str) -> None:
        self._comps, self.entry = _parse(text)
        self._cache: dict[tuple[str, bool, bool], dict[str, float]] = {}
        self.iteration_loop: str | None = None  # the body of the loop with an unknown trip count
        self._loop_cond: str | None = None
        for ins in self._comps.get(self.entry or "", []):
            if ins.op == "while" and not _TRIPS_RE.search(ins.rest):
                body, cond = (
                    re.search(r"\bbody=%?([\w.\-]+)", ins.rest),
                    re.search(r"\bcondition=%?([\w.\-]+)", ins.rest),
                )
                if body:
                    self.iteration_loop = body.group(1)
                    self._loop_cond = cond.group(1) if cond else None
                break

    def _count(self, comp: str, fused: bool, trips: bool) -> dict[str, float]:
        key = (comp, fused, trips)
        if key in self._cache:
            return self._cache[key]
        out = dict.fromkeys(self.KEYS, 0.0)
        self._cache[key] = out  # a cycle (there is none in HLO) would read zeros, not recurse forever
        instrs = self._comps.get(comp, [])
        shapes = {i.name: i.shape for i in instrs}

        def add(counts: dict[str, float], times: float = 1.0, keys: tuple[str, ...] = self.KEYS) -> None:
            for k in keys:
                out[k] += counts[k] * times

        for ins in instrs:
            op = ins.op
            elems = _elements(ins.shape)
            if op == "dot":
                lhs = _arrays(shapes.get(ins.operands[0], "")) if ins.operands else []
                m = _CONTRACT_RE.search(ins.rest)
                k = 1
                if lhs and m:
                    for d in (int(x) for x in m.group(1).split(",") if x):
                        k *= lhs[0][1][d] if d < len(lhs[0][1]) else 1
                out["flops"] += 2 * elems * k
            elif op in _ELEMENTWISE:
                out["flops"] += elems
            elif op in _TRANSCENDENTAL:
                out["transcendentals"] += elems
            elif op in ("reduce", "reduce-window", "scatter", "select-and-scatter"):
                called = _CALLS_RE.findall(ins.rest)
                per = self._count(called[0], True, trips)["flops"] if called else 1.0
                if op == "reduce":
                    inputs = _elements(shapes.get(ins.operands[0], "")) if ins.operands else 0
                    out["flops"] += per * max(inputs - elems, 0)
                elif op == "reduce-window":
                    w = _WINDOW_RE.search(ins.rest)
                    size = 1
                    for s in w.group(1).split("x") if w else ():
                        size *= int(s)
                    out["flops"] += per * elems * size
                else:
                    upd = _elements(shapes.get(ins.operands[-1], "")) if ins.operands else 0
                    out["flops"] += per * upd
            elif op == "fusion":
                called = _CALLS_RE.findall(ins.rest)
                if called:
                    add(self._count(called[0], True, trips), keys=("flops", "transcendentals", "custom_calls"))
            elif op == "while":
                body = re.search(r"\bbody=%?([\w.\-]+)", ins.rest)
                cond = re.search(r"\bcondition=%?([\w.\-]+)", ins.rest)
                m = _TRIPS_RE.search(ins.rest)
                n = int(m.group(1)) if (m and trips) else 1
                if body:
                    add(self._count(body.group(1), False, trips), n)
                if cond:
                    add(self._count(cond.group(1), False, trips), n + 1 if m and trips else 1)
                out["loop_trips"] += int(m.group(1)) if m else 1
            elif op == "conditional":
                # One branch runs: each figure the largest of any branch's (XLA's rule).
                branches = [self._count(c, fused, trips) for c in _called(ins.rest)]
                if branches:
                    add({k: max(b[k] for b in branches) for k in self.KEYS})
                out["conditionals"] += 1
            elif op in ("call", "async-start"):
                for c in _called(ins.rest):
                    add(self._count(c, fused, trips))
            if op == "custom-call":
                out["custom_calls"] += 1
            if op.removesuffix("-start") in KINDS:
                out["collectives"] += 1
            if not fused and op not in _NO_KERNEL and not op.endswith("-done"):
                out["kernels"] += 1
                if op == "fusion":
                    out["fusions"] += 1
                out["bytes"] += _nbytes(ins.shape) + sum(_nbytes(shapes.get(o, "")) for o in ins.operands)
        return out

    def whole(self, trips: bool = True) -> dict[str, float]:
        """One call of the whole program (``trips``: inner loops as many times as they run; else once, as XLA's
        cost analysis counts them)."""
        return dict(self._count(self.entry or "", False, trips))

    @property
    def per_trip(self) -> dict[str, float]:
        """One trip of the iteration loop (inner loops times their trips); the whole call when there is none."""
        if self.iteration_loop is None:
            return self.whole()
        out = dict(self._count(self.iteration_loop, False, True))
        if self._loop_cond:
            for k, v in self._count(self._loop_cond, False, True).items():
                out[k] += v
        return out

    @property
    def loops(self) -> list[tuple[str, int | None]]:
        """Every ``while`` loop as ``(body, known trip count or None)``."""
        out = []
        for instrs in self._comps.values():
            for ins in instrs:
                if ins.op == "while":
                    body = re.search(r"\bbody=%?([\w.\-]+)", ins.rest)
                    m = _TRIPS_RE.search(ins.rest)
                    out.append((body.group(1) if body else "?", int(m.group(1)) if m else None))
        return out


def folded(text: str) -> list[tuple[str, str]]:
    """HLO text as ``[(computation header, its whole text)]``, for a viewer that folds by computation.

    Lines before the first computation (the module's header) come first with the header ``""``.
    """
    out: list[tuple[str, str]] = []
    head, lines = "", list[str]()
    for line in text.splitlines():
        if _COMP_RE.match(line):
            if lines and any(s.strip() for s in lines):
                out.append((head, "\n".join(lines)))
            head, lines = line.strip(), [line]
            continue
        lines.append(line)
    if lines and any(s.strip() for s in lines):
        out.append((head, "\n".join(lines)))
    return out
