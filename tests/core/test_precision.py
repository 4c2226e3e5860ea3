"""Exact float32 everywhere: no JAX program SOM Studio runs has a product without full precision.

On an NVIDIA GPU a float32 ``dot`` without ``precision=HIGHEST`` runs as TF32
(a 10-bit mantissa) and picks wrong best-matching units (../shared/GPU.md). No
GPU is needed to catch it: the precision a product asks for is in the program's
text. Every registered JAX implementation is lowered (and compiled, since XLA
may write products the source never spelled) under every kernel plan, at sizes
that give one and several example chunks, and must have no such product.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from som_studio.config import DataSpec, RunConfig
from som_studio.core import jax_runtime
from som_studio.core.impls import registry
from som_studio.core.inspection import hlo
from som_studio.core.plans import fused_plan
from som_studio.core.som.problem import make_problem
from tests.grids import representative

jax = jax_runtime.jax()

# (width, height, features, samples, chunk budget in bytes): one example chunk at the default budget; several
# chunks, blocks and (matmul) more features than the direct form takes on an accelerator.
SIZES = [(12, 9, 3, 60, None), (20, 15, 20, 400, 1 << 16)]


def _cases() -> list[tuple[str, str]]:
    """Every JAX implementation under every plan; online ones, which search no plan, once."""
    out = []
    for impl in registry.all_implementations():
        if impl.backend == "jax":
            out += [(impl.name, f) for f in (fused_plan.FORMS if impl.kind == "batch" else fused_plan.FORMS[:1])]
    return out


def _problem(name: str, width: int, height: int, features: int, samples: int, _budget: int | None):
    impl = registry.get(name)
    layout = ("2x2" if impl.map_axis else "4x1") if impl.shards else None
    cfg = RunConfig(
        impl=name,
        width=width,
        height=height,
        data=DataSpec(samples=samples),
        seed=1,
        precision="float32",
        epochs=2 if impl.kind == "batch" else None,
        steps=5 if impl.kind == "online" else None,
        **({"layout": layout} if layout else {}),
    )
    data = np.random.default_rng(0).random((samples, features))
    return make_problem(cfg, impl.kind, data)


def test_imprecise_dots_reads_stablehlo_and_hlo():
    """Each product without HIGHEST is found, by its result's shape, before and after XLA compiles it.

    The two imprecise products share no operand: XLA merges products of one operand (a GPU's compiler
    made ``a @ b`` and ``a @ (b + 1)`` one ``f32[3,10]`` product and two slices), and the HIGHEST one
    beside them keeps its own (products of different precisions are never merged).
    """
    jnp = jax.numpy

    def f(a, b, c, d):
        return a @ b, jnp.matmul(a, b, precision=jax.lax.Precision.HIGHEST), jnp.einsum("ij,jk->ik", c, d)

    args = [np.ones(shape, np.float32) for shape in ((3, 4), (4, 5), (2, 7), (7, 6))]
    lowered = jax.jit(f).lower(*args)
    found = hlo.imprecise_dots(lowered.as_text())
    assert len(found) == 2 and "tensor<3x5xf32>" in found[0] and "tensor<2x6xf32>" in found[1]
    # compiled: a dot, or the GEMM custom-call a GPU rewrites it into (its result first in a tuple)
    shapes = [re.search(r"=\s*\(?(f32\[[\d,]*\])", line) for line in hlo.imprecise_dots(lowered.compile().as_text())]
    assert sorted(m.group(1) for m in shapes if m) == ["f32[2,6]", "f32[3,5]"]
    good = jax.jit(lambda a, b: jnp.matmul(a, b, precision="highest")).lower(*args[:2])
    assert hlo.imprecise_dots(good.as_text()) == [] and hlo.imprecise_dots(good.compile().as_text()) == []
    assert hlo.imprecise_dots("%d = f32[2,2]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}")
    assert not hlo.imprecise_dots("%m = f32[2]{0} multiply(%a, %b)")


def test_imprecise_dots_reads_a_gpus_compiled_text():
    """What XLA's GPU compiler writes, read without a GPU: a product inside a wrapped computation (a line of
    an H200's text) and the cuBLAS GEMM custom-call, whose precision sits in its backend config."""
    wrapped = (
        "  ROOT %dot.2 = f32[3,10]{1,0} dot(%param_0.3, %param_1.6), lhs_contracting_dims={1}, "
        'rhs_contracting_dims={0}, metadata={op_name="jit(f)/dot_general" scheduling_name="dot.2" stack_frame_id=40}'
    )
    assert hlo.imprecise_dots(wrapped) == [wrapped.strip()]
    assert not hlo.imprecise_dots(wrapped.replace("dims={0},", "dims={0}, operand_precision={highest,highest},"))

    def gemm(precision: str) -> str:
        return (
            "%custom-call.1 = (f32[3,5]{1,0}, s8[33554432]{0}) custom-call(%p0, %p1), "
            'custom_call_target="__cublas$gemm", backend_config={"operation_queue_id":"0","gemm_backend_config":'
            '{"alpha_real":1,"beta":0,"precision_config":{"operand_precision":["' + precision + '","' + precision
            + '"],"algorithm":"ALG_UNSET"},"epilogue":"DEFAULT"}}'
        )  # fmt: skip

    assert hlo.imprecise_dots(gemm("DEFAULT")) and not hlo.imprecise_dots(gemm("HIGHEST"))


@pytest.mark.parametrize(
    ("name", "form", "size"),
    representative(
        [
            pytest.param(name, form, size, id=f"{name}-{form}-{'x'.join(map(str, size[:4]))}")
            for name, form in _cases()
            for size in SIZES[::-1]  # several chunks first: most of the slice takes them
        ],
    ),
)
def test_every_product_of_every_jax_program_is_highest(name, form, size):
    with fused_plan.forced(form, budget=size[-1]):
        trainer = registry.get(name).create(_problem(name, *size))
    try:
        programs = trainer.programs()  # every JAX trainer must expose what it runs
        assert programs, name
        for key, lowered in programs.items():
            assert hlo.imprecise_dots(lowered.as_text()) == [], f"{name} {form} {key}: StableHLO"
            assert hlo.imprecise_dots(lowered.compile().as_text()) == [], f"{name} {form} {key}: compiled HLO"
        plan = str(getattr(trainer, "plan", ""))
        if registry.get(name).kind == "batch" and name != "jax-vmap-batch":
            assert plan.startswith(form + "/"), plan
            if size[-1] is not None:
                assert int(plan.rsplit("chunk=", 1)[1]) < size[3] // 2  # several chunks per device
    finally:
        trainer.close()


@pytest.mark.parametrize(("name", "form"), representative(_cases()))
def test_hex_toroid_programs_with_missing_values_are_highest_too(name, form):
    # The other lattices' smoothing and the masked searches are programs of their own.
    problem = _problem(name, 20, 16, 20, 400, None)
    data = problem.data.astype(np.float64)
    data[np.random.default_rng(2).random(data.shape) < 0.1] = np.nan
    data[:, 0] = np.where(np.isnan(data).all(axis=1), 0.5, data[:, 0])
    cfg = problem.config.replace(topology="hex", toroid=True)
    with fused_plan.forced(form, budget=1 << 16):
        trainer = registry.get(name).create(make_problem(cfg, problem.kind, data))
    try:
        for key, lowered in trainer.programs().items():
            assert hlo.imprecise_dots(lowered.as_text()) == [], f"{name} {form} {key}: StableHLO"
            assert hlo.imprecise_dots(lowered.compile().as_text()) == [], f"{name} {form} {key}: compiled HLO"
    finally:
        trainer.close()
