"""The doctor: each diagnosis from faked facts, the report, the exit status, the command."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from som_studio import doctor
from som_studio.display import DisplayCheck
from som_studio.doctor import DeviceFact, JaxFacts, Probes

SMI_SUMMARY = """\
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 580.95.05              Driver Version: 580.95.05      CUDA Version: 13.0     |
+-----------------------------------------+------------------------+----------------------+
|   0  NVIDIA GB10                    On  |   0000000F:01:00.0  On |                  N/A |
| N/A   42C    P0             11W /  N/A  | Not Supported          |      3%      Default |
+-----------------------------------------+------------------------+----------------------+
"""
GB10 = DeviceFact(0, "gpu", "NVIDIA GB10", 96 << 30, 1 << 20)
ON_GPU = JaxFacts(backend="gpu", devices=(GB10,))
ON_CPU = JaxFacts(
    backend="cpu",
    devices=(DeviceFact(0, "cpu", "cpu"),),
    gpu_error="Unknown backend: 'gpu' requested, but no platforms that are instances of gpu are present.",
)
VERSIONS = {
    "numpy": "2.3.1",
    "jax": "0.12.1",
    "jaxlib": "0.12.1",
    "PySide6-Essentials": "6.12.0",
    "shiboken6": "6.12.0",
    "pyqtgraph": "0.14.0",
    "jax-cuda13-plugin": "0.12.1",
    "jax-cuda13-pjrt": "0.12.1",
}


def fake_smi(summary: str = SMI_SUMMARY, query: str = "NVIDIA GB10, [N/A]", rc: int = 0):
    def run(argv):
        if any(a.startswith("--query-gpu") for a in argv):
            return rc, query
        return rc, summary

    return run


def spark(**over) -> Probes:
    """A healthy DGX Spark session; each test changes one thing."""
    versions = dict(VERSIONS)
    versions.update(over.pop("versions", {}))
    p = Probes(
        environ={"DISPLAY": ":1", "XLA_PYTHON_CLIENT_PREALLOCATE": "false"},
        python=(3, 12, 3),
        executable="/home/me/som/.venv/bin/python",
        machine="aarch64",
        system="Linux",
        version=lambda d: versions.get(d),
        which=lambda name: "/usr/bin/nvidia-smi" if name == "nvidia-smi" else None,
        run=fake_smi(),
        jax=lambda: ON_GPU,
        preallocate_is_ours=lambda: True,
        in_container=lambda: False,
        display=lambda env: DisplayCheck("ok", display="DISPLAY=:1"),  # the faked session's display works
        compile_cache=lambda: doctor.CompileCacheFact(
            "/home/me/.cache/som-studio/jax", 3 << 20, 12, 1 << 30, (200 << 10, 5)
        ),
        ceilings=lambda: (),
    )
    return replace(p, **over)


def findings(probes: Probes) -> list[doctor.Finding]:
    return doctor.diagnose(doctor.collect(probes))


def by_severity(fs: list[doctor.Finding], sev: str) -> list[doctor.Finding]:
    return [f for f in fs if f.severity == sev]


def test_healthy_spark_has_no_errors_or_warnings():
    fs = findings(spark())
    assert by_severity(fs, "error") == [] and by_severity(fs, "warning") == []
    assert any("JAX runs on the GPU" in f.title and "NVIDIA GB10" in f.title for f in fs)
    assert any("on demand" in f.title and "SOM Studio's default" in f.title for f in fs)
    assert doctor.exit_status(fs) == 0


def test_nvidia_smi_facts_are_parsed():
    facts = doctor.collect(spark())
    assert facts.driver.driver_version == "580.95.05" and facts.driver.cuda_version == "13.0"
    assert facts.driver.gpus == (doctor.GpuFact("NVIDIA GB10", None),)
    assert facts.unified_memory
    assert facts.plugins == {"jax-cuda13-plugin": "0.12.1", "jax-cuda13-pjrt": "0.12.1"}


def test_driver_present_without_plugin_is_the_cuda_jax_mismatch():
    fs = findings(spark(jax=lambda: ON_CPU, versions={"jax-cuda13-plugin": None, "jax-cuda13-pjrt": None}))
    [err] = by_severity(fs, "error")
    assert err.title == "an NVIDIA driver is present but JAX runs on the CPU"
    assert "NVIDIA GB10 (CUDA 13.0)" in err.detail and "no CUDA plugin" in err.detail
    assert 'pip install -U "jax[cuda13]"' in err.fix
    assert '"/home/me/som/.venv/bin/python" -m pip install -U "jax[cuda13]"' in err.fix
    assert "SOM_STUDIO_EXTRAS=cuda13 ./dev.sh app" in err.fix
    assert doctor.exit_status(fs) == 1


def test_cuda12_driver_gets_the_cuda12_extra():
    summary = SMI_SUMMARY.replace("CUDA Version: 13.0", "CUDA Version: 12.8")
    fs = findings(
        spark(
            jax=lambda: ON_CPU,
            run=fake_smi(summary, "NVIDIA RTX A6000, 49140"),
            versions={"jax-cuda13-plugin": None, "jax-cuda13-pjrt": None},
        )
    )
    [err] = by_severity(fs, "error")
    assert 'pip install -U "jax[cuda12]"' in err.fix and "cuda13" not in err.fix


def test_plugin_that_failed_to_start_shows_jaxs_reason():
    failed = replace(ON_CPU, gpu_error="Backend 'cuda' failed to initialize: CUDA driver version is insufficient")
    fs = findings(spark(jax=lambda: failed))
    [err] = by_severity(fs, "error")
    assert "plugin is installed but did not start" in err.detail
    assert "CUDA driver version is insufficient" in err.detail


def test_plugin_version_mismatch_is_named():
    fs = findings(spark(jax=lambda: ON_CPU, versions={"jax-cuda13-plugin": "0.11.0", "jax-cuda13-pjrt": "0.11.0"}))
    assert len(by_severity(fs, "error")) == 1
    [warn] = [f for f in fs if "differs from jaxlib" in f.title]
    assert "jax-cuda13-plugin 0.11.0" in warn.detail and "jaxlib 0.12.1" in warn.detail


def test_jax_platforms_cpu_is_a_warning_not_the_mismatch():
    env = {"DISPLAY": ":1", "JAX_PLATFORMS": "cpu", "XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    fs = findings(spark(jax=lambda: ON_CPU, environ=env))
    assert by_severity(fs, "error") == []
    assert any("JAX_PLATFORMS=cpu" in f.title for f in by_severity(fs, "warning"))


def test_jax_that_fails_to_import_is_an_error():
    fs = findings(spark(jax=lambda: JaxFacts(error="ImportError: libcudart.so.13: cannot open shared object file")))
    [err] = by_severity(fs, "error")
    assert err.title == "JAX fails to import or start" and "libcudart" in err.detail
    assert "--force-reinstall jax jaxlib" in err.fix and "jax[cuda13]" in err.fix
    assert doctor.exit_status(fs) == 1


@pytest.mark.parametrize(
    ("python", "pyside", "severity"),
    [
        ((3, 11, 7), "6.12.0", "error"),
        ((3, 11, 7), "6.11.2", "warning"),
        ((3, 12, 1), "6.12.0", None),
    ],
)
def test_python_and_pyside_pairs(python, pyside, severity):
    fs = findings(spark(python=python, versions={"PySide6-Essentials": pyside}))
    bad = [f for f in fs if f.severity != "ok" and "Python" in f.title]
    if severity is None:
        assert bad == []
    else:
        [f] = bad
        assert f.severity == severity and "3.12" in f.fix
        if severity == "error":
            assert "crashes" in f.title and "bool_dealloc" in f.detail


def test_no_display_over_ssh_is_a_warning():
    fs = findings(
        spark(environ={"SSH_CONNECTION": "10.0.0.2 5000 10.0.0.3 22", "XLA_PYTHON_CLIENT_PREALLOCATE": "false"})
    )
    [warn] = by_severity(fs, "warning")
    assert warn.title == "no display in an SSH session: the desktop app cannot open"
    assert "ssh -X" in warn.fix and "xvfb-run" in warn.fix
    assert doctor.exit_status(fs) == 0


def test_wayland_counts_as_a_display():
    facts = doctor.collect(spark(environ={"WAYLAND_DISPLAY": "wayland-0"}))
    assert facts.display == "WAYLAND_DISPLAY=wayland-0"


def test_no_gpu_at_all_is_a_warning():
    fs = findings(
        spark(
            which=lambda name: None,
            jax=lambda: ON_CPU,
            in_container=lambda: True,
            versions={"jax-cuda13-plugin": None, "jax-cuda13-pjrt": None},
        )
    )
    [warn] = by_severity(fs, "warning")
    assert warn.title == "no GPU: JAX runs on the CPU" and "--gpus all" in warn.fix
    assert doctor.exit_status(fs) == 0


def test_nvidia_smi_that_cannot_reach_the_driver():
    msg = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
    fs = findings(spark(run=fake_smi(msg, "", rc=9), jax=lambda: ON_CPU))
    warn = [f for f in by_severity(fs, "warning") if "cannot talk" in f.title]
    assert warn and warn[0].detail == msg
    assert by_severity(fs, "error") == []


@pytest.mark.parametrize(
    "env",
    [
        {"XLA_PYTHON_CLIENT_PREALLOCATE": "true"},
        {"XLA_PYTHON_CLIENT_PREALLOCATE": "1", "XLA_CLIENT_MEM_FRACTION": ".9"},
        {},  # JAX's own default when nothing (not even SOM Studio) set it
    ],
)
def test_preallocation_on_unified_memory_is_a_warning(env):
    fs = findings(spark(environ={"DISPLAY": ":1", **env}, preallocate_is_ours=lambda: False))
    [warn] = by_severity(fs, "warning")
    assert "preallocation is on for unified memory" in warn.title
    assert ("90%" if "XLA_CLIENT_MEM_FRACTION" in env else "75%") in warn.title
    assert "XLA_PYTHON_CLIENT_PREALLOCATE" in warn.fix


def test_preallocation_on_a_discrete_gpu_is_fine():
    h100 = JaxFacts(backend="gpu", devices=(DeviceFact(0, "gpu", "NVIDIA H100 80GB HBM3", 80 << 30, 0),))
    fs = findings(
        spark(
            environ={"DISPLAY": ":1", "XLA_PYTHON_CLIENT_PREALLOCATE": "true"},
            jax=lambda: h100,
            run=fake_smi(query="NVIDIA H100 80GB HBM3, 81559"),
            preallocate_is_ours=lambda: False,
        )
    )
    assert by_severity(fs, "warning") == []
    assert any("preallocates 75%" in f.title and "your setting" in f.title for f in fs)


def test_report_lists_versions_devices_settings_and_findings():
    facts = doctor.collect(spark(jax=lambda: ON_CPU, versions={"jax-cuda13-plugin": None, "jax-cuda13-pjrt": None}))
    text = doctor.format_report(facts, doctor.diagnose(facts))
    for needle in (
        "Python          3.12.3 (/home/me/som/.venv/bin/python)",
        "jaxlib          0.12.1",
        "CUDA plugins    none installed",
        "driver / CUDA   580.95.05 / 13.0",
        "NVIDIA GB10, memory not reported (unified)",
        "backend         cpu (1 device)",
        "XLA_PYTHON_CLIENT_PREALLOCATE=false  (SOM Studio's default)",
        "unified CPU/GPU memory: yes",
        "DISPLAY=:1",
        "[error] an NVIDIA driver is present but JAX runs on the CPU",
        'fix: pip install -U "jax[cuda13]"',
        "1 error, 0 warnings.",
    ):
        assert needle in text, needle
    gpu = doctor.collect(spark())
    text = doctor.format_report(gpu, doctor.diagnose(gpu))
    assert "0  gpu   NVIDIA GB10" in text and "1.0 MiB in use of 96.0 GiB" in text
    assert "jax-cuda13-plugin 0.12.1, jax-cuda13-pjrt 0.12.1" in text and "CUDA plugin     in use" in text


@pytest.mark.test_devices
def test_report_text_for_this_process():
    # The real probes: JAX on this test process's 8 simulated CPU devices.
    text = doctor.report_text()
    assert "backend         cpu (8 devices)" in text
    assert text.count("  cpu   ") == 8
    assert "JAX_PLATFORMS=cpu" in text and "Findings" in text


def _som_studio(tmp_path: Path, smi: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the real command with a fake ``nvidia-smi`` first on PATH (or none)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("JAX_PLATFORMS", "XLA_FLAGS", "XLA_PYTHON_CLIENT_PREALLOCATE", "DISPLAY", "WAYLAND_DISPLAY")
    }
    bindir = tmp_path / "bin"
    bindir.mkdir()
    if smi is not None:
        exe = bindir / "nvidia-smi"
        exe.write_text(
            f"#!/bin/sh\ncase \"$1\" in --query-gpu*) echo 'NVIDIA GB10, [N/A]';; *) cat <<'END'\n{smi}END\nesac\n"
        )
        exe.chmod(0o755)
    env["PATH"] = f"{bindir}{os.pathsep}{os.path.dirname(sys.executable)}{os.pathsep}/usr/bin:/bin"
    return subprocess.run(
        [sys.executable, "-m", "som_studio", "doctor", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_command_exits_1_when_the_driver_is_there_but_jax_is_on_the_cpu(tmp_path):
    import importlib.util

    if importlib.util.find_spec("jax_cuda13_plugin") or importlib.util.find_spec("jax_cuda12_plugin"):
        pytest.skip("a CUDA plugin is installed here: JAX would not fall back to the CPU the same way")
    proc = _som_studio(tmp_path, SMI_SUMMARY, "--json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["jax"]["backend"] == "cpu" and doc["driver"]["cuda_version"] == "13.0"
    assert doc["env"]["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false" and doc["preallocate_is_ours"]
    errors = [f for f in doc["findings"] if f["severity"] == "error"]
    assert [f["title"] for f in errors] == ["an NVIDIA driver is present but JAX runs on the CPU"]
    assert 'pip install -U "jax[cuda13]"' in errors[0]["fix"]


def test_command_exits_0_on_warnings_only(tmp_path):
    proc = _som_studio(tmp_path, None)
    assert proc.returncode == 0, proc.stderr
    # No display here; and where no NVIDIA driver is to be seen, no GPU (on a GPU machine that one is fine).
    warnings = re.findall(r"^  \[warning\] (.*)$", proc.stdout, re.M)
    assert "[error]" not in proc.stdout and any(w.startswith("no display") for w in warnings), proc.stdout
    if shutil.which("nvidia-smi", path="/usr/bin:/bin") is None:
        assert "no GPU: JAX runs on the CPU" in warnings
    assert f"0 errors, {len(warnings)} warning{'s' if len(warnings) != 1 else ''}." in proc.stdout


# -- precision policy -------------------------------------------------------------------
def test_precision_policy_is_stated_and_its_overrides_warned_about():
    facts = doctor.collect(spark())
    fs = doctor.diagnose(facts)
    assert any(f.severity == "ok" and "HIGHEST" in f.title for f in fs)
    text = doctor.format_report(facts, fs)
    assert "Precision policy" in text and "JAX_DEFAULT_MATMUL_PRECISION unset" in text
    for var, value in (("JAX_DEFAULT_MATMUL_PRECISION", "tensorfloat32"), ("NVIDIA_TF32_OVERRIDE", "0")):
        env = {"DISPLAY": ":1", "XLA_PYTHON_CLIENT_PREALLOCATE": "false", var: value}
        facts = doctor.collect(spark(environ=env))
        fs = doctor.diagnose(facts)
        [warn] = by_severity(fs, "warning")
        assert warn.title == f"{var}={value} is set" and warn.fix == f"unset {var}"
        assert f"{var}={value}" in doctor.format_report(facts, fs)
        assert doctor.exit_status(fs) == 0  # a warning, not an error


def test_every_record_states_the_precision_policy(monkeypatch):
    from som_studio.session import env

    monkeypatch.setenv("NVIDIA_TF32_OVERRIDE", "1")
    monkeypatch.delenv("JAX_DEFAULT_MATMUL_PRECISION", raising=False)
    for backend in ("numpy", None):
        e = env.describe(backend)
        assert e["precision_policy"] == env.PRECISION_POLICY == doctor.PRECISION_POLICY
        assert e["precision_env"] == {"NVIDIA_TF32_OVERRIDE": "1"}


def test_a_process_som_studio_started_keeps_preallocation_as_its_default(tmp_path):
    """The app's doctor runs in a child process: the default it inherits is still SOM Studio's, not the user's."""
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_PYTHON_CLIENT_PREALLOCATE",)}
    env = {k: v for k, v in env.items() if k != "SOM_STUDIO_PREALLOCATE_DEFAULT"}
    child = "from som_studio.core import jax_runtime as j; j.configure(); print(j.preallocate_is_ours())"
    parent = (
        "import subprocess, sys\n"
        "from som_studio.core import jax_runtime as j\n"
        "j.configure()\n"
        f"print(j.preallocate_is_ours()); sys.stdout.flush(); subprocess.run([sys.executable, '-c', {child!r}])\n"
    )
    out = subprocess.run([sys.executable, "-c", parent], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["True", "True"], out.stderr
    env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"  # the user's own setting stays theirs, in children too
    out = subprocess.run([sys.executable, "-c", parent], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["False", "False"], out.stderr


# -- the report in Korean, and a Hangul font for it ----------------------------------------------
@pytest.fixture
def korean():
    from som_studio import i18n

    i18n.install("ko")
    yield
    i18n.install("en")


def test_the_report_speaks_korean(korean, english_left):
    probes = spark(language=lambda: "ko", hangul_fonts=lambda: ("Noto Sans CJK KR",))
    facts = doctor.collect(probes)
    text = doctor.format_report(facts, doctor.diagnose(facts))
    for word in ("진단 (doctor)", "버전", "NVIDIA 드라이버", "진단 결과", "[정상]", "한글 글꼴: Noto Sans CJK KR"):
        assert word in text
    assert "오류 0개, 경고 0개." in text
    assert english_left(text) == []


def test_korean_without_a_hangul_font_is_a_warning_naming_the_package(korean):
    facts = doctor.collect(spark(language=lambda: "ko", hangul_fonts=lambda: ()))
    fs = doctor.diagnose(facts)
    (font,) = [f for f in fs if "한글 글꼴" in f.title]
    assert font.severity == "warning" and "빈 네모" in font.title
    assert "fonts-noto-cjk" in font.fix and "fonts-nanum" in font.fix
    assert doctor.exit_status(fs) == 0  # a warning: scripts do not fail


def test_english_needs_no_hangul_font():
    asked = []
    facts = doctor.collect(spark(hangul_fonts=lambda: asked.append(1) or ()))
    assert facts.language == "en" and facts.hangul_fonts is None and asked == []
    assert not any("Hangul" in f.title for f in doctor.diagnose(facts))


def test_the_report_says_where_compiled_programs_are_kept_and_how_much():
    text = doctor.report_text(spark())
    assert "Compiled programs" in text
    assert "/home/me/.cache/som-studio/jax" in text and "3.0 MiB (12 programs)" in text
    assert "1.0 GiB: past it the programs used longest ago are dropped" in text
    assert "200.0 KiB (5 programs) read back instead of traced again; at most 64.0 MiB" in text
    off = doctor.report_text(spark(compile_cache=lambda: doctor.CompileCacheFact(None, None, None)))
    assert "the cache is off (SOM_STUDIO_COMPILE_CACHE=off)" in off


def test_the_report_says_when_the_ceilings_were_measured():
    fact = doctor.CeilingFact("cpu/cpu", 212e9, 40e9, "2026-11-26T03:00:00Z", 3)
    text = doctor.report_text(spark(ceilings=lambda: (fact,)))
    assert "Device ceilings" in text and "212 GFLOP/s float32 matmul, 40 GB/s memory" in text
    assert "measured 2026-11-26 03:00:00 UTC (the best of 3 measurements)" in text
    stale = doctor.CeilingFact("cpu/cpu", 38e9, 40e9, "2026-11-26T03:00:00Z", 1, "a run reached 90 GFLOP/s")
    text = doctor.report_text(spark(ceilings=lambda: (stale,)))
    assert "too low (a run reached 90 GFLOP/s): measured again when next needed" in text
    assert "not yet" in doctor.report_text(spark(ceilings=lambda: ()))


def test_the_ceilings_probe_reads_the_cache_and_skips_a_damaged_entry(tmp_path, monkeypatch):
    from som_studio.doctor.facts import _probe_ceilings

    monkeypatch.setenv("SOM_STUDIO_CACHE_DIR", str(tmp_path))
    entry = {"matmul_flops_per_s": 1e11, "bandwidth_bytes_per_s": 4e10, "device": "cpu/cpu", "measurements": 2}
    (tmp_path / "ceilings.json").write_text(json.dumps({"a": entry, "b": {"device": "x"}}), encoding="utf-8")
    assert _probe_ceilings() == (doctor.CeilingFact("cpu/cpu", 1e11, 4e10, "", 2),)


def test_the_compile_cache_probe_sizes_the_folder(tmp_path, monkeypatch):
    from som_studio.core import jax_runtime
    from som_studio.doctor.facts import _probe_compile_cache

    monkeypatch.setattr(jax_runtime, "compile_cache_in_use", lambda: None)
    monkeypatch.setenv("SOM_STUDIO_COMPILE_CACHE", str(tmp_path))
    (tmp_path / "a-cache").write_bytes(b"x" * 1000)
    (tmp_path / "b-cache").write_bytes(b"y" * 24)
    (tmp_path / "b-atime").write_bytes(b"z" * 8)  # when b was last read: not a program
    bound = jax_runtime.COMPILE_CACHE_BYTES
    assert _probe_compile_cache() == doctor.CompileCacheFact(str(tmp_path), 1024, 2, bound, (0, 0))
    (tmp_path / "traced").mkdir()
    (tmp_path / "traced" / "quality-0a.exported").write_bytes(b"t" * 300)
    assert _probe_compile_cache() == doctor.CompileCacheFact(str(tmp_path), 1024, 2, bound, (300, 1))
    monkeypatch.setenv("SOM_STUDIO_COMPILE_CACHE", "off")
    assert _probe_compile_cache().folder is None
