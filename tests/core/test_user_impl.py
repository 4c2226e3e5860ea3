"""A user's own implementation: refused with the file and the problem named, checked against the reference."""

from __future__ import annotations

import shutil
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from som_studio.config import DataSpec, RunConfig
from som_studio.core.impls import registry, user_impl
from som_studio.core.som.problem import load_problem_data
from som_studio.session.session import Session, run_to_completion

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"

# A correct NumPy batch SOM, vectorised: what a user might write first.
GOOD = '''
import numpy as np


class Good:
    """Vectorised NumPy batch SOM."""

    kind = "batch"

    def __init__(self, problem):
        self.p = problem
        self.w = problem.init_map.astype(np.float64)
        self.every = problem.whole()

    def warmup(self):
        pass

    def run(self, first, count):
        h, w, d = self.w.shape
        ys, xs = np.arange(h), np.arange(w)
        x = self.p.data.astype(np.float64)
        for t in range(first, first + count):
            flat = self.w.reshape(-1, d)
            bmu = np.argmin(((x[:, None, :] - flat[None]) ** 2).sum(-1), axis=1)
            by, bx = np.divmod(bmu, w)
            hy = np.exp(-((ys[None] - by[:, None]) ** 2) / self.every.sigma_y[t] ** 2)
            hx = np.exp(-((xs[None] - bx[:, None]) ** 2) / self.every.sigma_x[t] ** 2)
            num = np.einsum("ny,nx,nd->yxd", hy, hx, x)
            den = np.einsum("ny,nx->yx", hy, hx)[:, :, None]
            self.w = np.where(den > 1e-30, num / np.where(den > 1e-30, den, 1), self.w)

    def get_map(self):
        return self.w.astype(self.p.dtype)

    def close(self):
        pass
'''


SHAPE_LINE = "        h, w, d = self.w.shape\n"
LAZY = GOOD.replace(SHAPE_LINE, "        return\n" + SHAPE_LINE)  # returns the initial map
RUN_LOOP = "        for t in range(first, first + count):\n"


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


def refused(spec: str, **kw) -> str:
    with pytest.raises(user_impl.UserImplError) as info:
        user_impl.load(spec, **kw)
    return str(info.value)


def test_a_file_that_does_not_exist_is_refused_by_name(tmp_path, forget):
    assert refused(f"{tmp_path}/nope.py:MySom") == f"{tmp_path}/nope.py: no such file"


def test_no_such_class(tmp_path, forget):
    path = write(tmp_path, "good.py", GOOD)
    msg = refused(f"{path}:Missing")
    assert msg == f"{path}: defines no Missing"


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (
            "class C:\n    kind = 'batch'\n    def run(self, first, count): pass\n",
            "lacks the method(s) warmup, get_map, close",
        ),
        (GOOD.replace('kind = "batch"', 'kind = "minibatch"').replace("class Good", "class C"), "C.kind must be"),
        (
            GOOD.replace("def __init__(self, problem)", "def __init__(self)").replace("class Good", "class C"),
            "C(problem) must take the problem",
        ),
    ],
    ids=["missing-method", "bad-kind", "no-problem-argument"],
)
def test_a_class_that_breaks_the_contract_is_refused(tmp_path, forget, body, problem):
    path = write(tmp_path, "bad.py", body)
    msg = refused(f"{path}:C")
    assert msg.startswith(f"{path}: ") and problem in msg
    assert "C" not in registry.names()


def test_wrong_shapes_returned_are_refused_with_the_shapes(tmp_path, forget):
    flat = GOOD.replace("return self.w.astype(self.p.dtype)", "return self.w.reshape(-1, 3)")
    path = write(tmp_path, "flat.py", flat)
    msg = refused(f"{path}:Good")
    assert msg == (
        f"{path}: Good.get_map() returned shape (20, 3); the contract is (height, width, features) = (4, 5, 3)"
    )


def test_an_exception_at_import_shows_the_users_own_lines(tmp_path, forget):
    path = write(tmp_path, "boom.py", "import math\n\nvalue = math.sqrt(-1)  # the user's mistake\n")
    msg = refused(f"{path}:Boom")
    assert msg.startswith(f"{path}: raised an error when imported\n")
    assert f'File "{path}", line 3, in <module>' in msg and "math.sqrt(-1)" in msg
    assert msg.rstrip().endswith("ValueError: math domain error")
    assert "som_studio" not in msg  # their frames, not ours


def test_a_syntax_error_names_the_line(tmp_path, forget):
    path = write(
        tmp_path, "typo.py", "class Typo:\n    kind = 'batch'\n    def run(self, first count):\n        pass\n"
    )
    msg = refused(f"{path}:Typo")
    assert msg.startswith(f"{path}: raised an error when imported\n")
    assert f'File "{path}", line 3' in msg and "SyntaxError" in msg and "som_studio" not in msg


def test_an_exception_in_run_shows_the_users_own_lines(tmp_path, forget):
    path = write(tmp_path, "div.py", GOOD.replace(SHAPE_LINE, SHAPE_LINE + "        1 / 0\n"))
    msg = refused(f"{path}:Good")
    assert "Good raised an error while training" in msg and "in run" in msg and "1 / 0" in msg
    assert "ZeroDivisionError" in msg and "som_studio" not in msg


def test_a_file_that_loops_forever_at_import_is_refused_after_the_time_limit(tmp_path, forget):
    path = write(tmp_path, "loop.py", "while True:\n    pass\n")
    t0 = time.monotonic()
    msg = refused(f"{path}:Loop", timeout_s=1.5)
    assert msg == f"{path}: did not finish importing within 1.5 s (does it loop or wait at import?)"
    assert time.monotonic() - t0 < 60  # a guard against a hang, not a timing assertion
    assert "loop" not in "".join(registry.names())


def test_agreement_catches_an_implementation_that_returns_the_initial_map(tmp_path, forget):
    impl = user_impl.load(f"{write(tmp_path, 'lazy.py', LAZY)}:Good")
    cfg = RunConfig(impl=impl.name, width=10, height=7, data=DataSpec(samples=200), epochs=5)
    check = user_impl.agreement(impl, cfg, load_problem_data(cfg))
    assert check["agrees"] is False and check["reference"] == "numpy-batch"
    assert check["max_map_difference"] > 0.05 and check["bmu_agreement"] < 0.9


def test_a_correct_implementation_agrees_and_its_record_names_the_file_and_hash(tmp_path, forget):
    path = write(tmp_path, "good.py", GOOD)
    impl = user_impl.load(f"{path}:Good")
    assert impl.name == "good.py:Good" and impl.kind == "batch" and impl.backend == "numpy"
    cfg = RunConfig(impl=impl.name, width=14, height=9, data=DataSpec(samples=150), epochs=4)
    record = run_to_completion(Session(cfg, snapshot_interval_s=None))
    assert record.status == "ok", record.message
    check = record.extra["agreement"]
    assert check["agrees"] is True and check["bmu_agreement"] == 1.0 and check["max_map_difference"] < 1e-5
    assert check["grid"] == [12, 8] and check["iterations"] == 4
    import hashlib

    assert record.extra["user_impl"] == {
        "file": str(path.resolve()),
        "class": "Good",
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
    }


def test_a_changed_file_is_loaded_again(tmp_path, forget):
    path = write(tmp_path, "good.py", GOOD)
    first = user_impl.load(f"{path}:Good")
    assert not user_impl.changed(first)
    path.write_text(GOOD.replace('"""Vectorised NumPy batch SOM."""', '"""Second version."""'))
    assert user_impl.changed(first)
    second = user_impl.load(f"{path}:Good")
    assert second.description == "Second version." and second.file_sha256 != first.file_sha256
    assert registry.get("good.py:Good") is second


def test_errors_while_training_in_a_session_show_the_users_lines(tmp_path, forget):
    # Fails only past the agreement check's few epochs, so the session's own run meets it.
    text = GOOD.replace(RUN_LOOP, "        assert first < 6, 'too far'\n" + RUN_LOOP)
    impl = user_impl.load(f"{write(tmp_path, 'late.py', text)}:Good")
    cfg = RunConfig(impl=impl.name, width=6, height=5, data=DataSpec(samples=60), epochs=20)
    record = run_to_completion(Session(cfg, snapshot_interval_s=None, max_chunk=2))
    assert record.status == "failed"
    assert "late.py" in record.message and "assert first < 6" in record.message
    assert "AssertionError: too far" in record.message and "som_studio" not in record.message


@pytest.mark.parametrize(
    "spec", ["my_som.py:MySom", "jit_loop.py:JitLoop", "fori_loop.py:ForiLoop", "no_vmap.py:NoVmap"]
)
def test_the_documented_examples_agree_with_the_reference(tmp_path, forget, spec):
    for f in EXAMPLES.glob("*.py"):  # a copy: the examples import each other from their folder
        shutil.copy(f, tmp_path / f.name)
    impl = user_impl.load(f"{tmp_path}/{spec}")
    assert impl.backend == "jax" and impl.kind == "batch"
    cfg = RunConfig(impl=impl.name, width=24, height=13, data=DataSpec(samples=300), epochs=6)
    check = user_impl.agreement(impl, cfg, load_problem_data(cfg))
    assert check["agrees"], check
    assert check["bmu_agreement"] == 1.0 and np.isfinite(check["max_map_difference"])


ONLINE = """
from som_studio.core.impls.numpy_som import NumpyOnline


class Online(NumpyOnline):
    \"\"\"The reference itself, as a user's file: an online implementation agrees exactly.\"\"\"

    kind = "online"
    topologies = ("rect", "hex")
"""


def test_an_online_implementation_is_checked_against_numpy_online(tmp_path, forget):
    impl = user_impl.load(f"{write(tmp_path, 'online.py', ONLINE)}:Online")
    assert impl.kind == "online" and impl.topologies == ("rect", "hex")
    cfg = RunConfig(impl=impl.name, width=10, height=6, data=DataSpec(samples=100), steps=1000, topology="hex")
    check = user_impl.agreement(impl, cfg, load_problem_data(cfg))
    assert check["reference"] == "numpy-online" and check["iterations"] == 300
    assert check["agrees"] and check["max_map_difference"] == 0.0 and check["bmu_agreement"] == 1.0


def test_an_error_under_jax_shows_the_users_lines_and_no_note_about_jaxs_frames(tmp_path, forget):
    for f in EXAMPLES.glob("*.py"):
        shutil.copy(f, tmp_path / f.name)
    mine = tmp_path / "my_som.py"
    mine.write_text(mine.read_text().replace("self.sigma_x[t], self.sigma_y[t])\n", "self.sigma_x[t])\n"))
    msg = refused(f"{mine}:MySom")
    assert msg.startswith(f"{mine}: MySom raised an error while training\nTraceback (most recent call last):\n")
    assert f'File "{mine}", line' in msg and ", in run" in msg
    assert msg.endswith("TypeError: epoch() missing 1 required positional argument: 'sigma_y'")
    assert "JAX_TRACEBACK_FILTERING" not in msg and "site-packages" not in msg


def test_two_users_files_each_import_their_own_helper_of_one_name(tmp_path):
    # Each folder's helper module is called the same; a file must get its own folder's, not the one
    # another user's file imported earlier in this process (as a script run from its folder would).
    for who in ("first", "second"):
        folder = tmp_path / who
        folder.mkdir()
        (folder / "som_helpers.py").write_text(f"WHO = {who!r}\n")
        (folder / "mine.py").write_text(
            textwrap.dedent(
                """
                from som_helpers import WHO

                class Mine:
                    kind = "batch"
                    who = WHO

                    def __init__(self, problem): ...
                    def warmup(self): ...
                    def run(self, first, count): ...
                    def get_map(self): ...
                    def close(self): ...
                """
            )
        )
    seen = [user_impl.import_class(str(tmp_path / who / "mine.py"), "Mine")[0].who for who in ("first", "second")]
    assert seen == ["first", "second"]


def test_a_file_that_ends_the_checking_process_is_refused_with_its_last_words(tmp_path, forget):
    quits = "import os, sys\n\nsys.stderr.write('no licence for the solver\\n')\nos._exit(3)\n"
    path = write(tmp_path, "quits.py", quits)
    msg = refused(f"{path}:Quits")
    assert msg == f"{path}: the process checking it ended unexpectedly (exit status 3): no licence for the solver"


def test_the_checking_process_finds_the_package_from_any_folder():
    # The child runs in the user's folder; a plain source tree (no install) must still import.
    assert (user_impl.source_root() / "som_studio" / "__init__.py").is_file()
