"""``bench/envelope.py`` end to end on a tiny shape: its JSON holds every contender, the machine and the command.

Runs the script as users do (a parent process and one process for the shape), with the peers left out
so the test does not depend on MiniSom or XPySom. No timing is asserted: only that times were measured.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_envelope_json_structure(tmp_path: Path) -> None:
    out = tmp_path / "envelope.json"
    only = "numpy-batch,jax-fused-batch,jax-scan-online,floor"
    cmd = [sys.executable, str(ROOT / "bench" / "envelope.py"), "--shapes", "200:3:6x5", "--epochs", "2"]
    cmd += ["--steps", "200", "--cap", "0.1", "--peer-cap", "0.1", "--no-peers", "--only", only, "--json", str(out)]
    cmd += ["--no-command"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(out.read_text())

    assert doc["command"][-len(cmd) + 1 :] == cmd[1:]
    assert doc["machine"]["cpu_count"] >= 1
    assert doc["machine"]["jax"] and doc["machine"]["backend"]
    assert doc["options"]["skip"] == ["minisom-batch", "minisom-online", "xpysom"]
    (shape,) = doc["shapes"]
    assert shape["status"] == "ok"
    assert shape["shape"] == {"samples": 200, "features": 3, "width": 6, "height": 5}
    assert shape["peak_rss_bytes"] > 0
    rows = {r["key"]: r for r in shape["rows"]}
    assert list(rows) == only.split(",")
    for r in rows.values():
        assert r["status"] == "ok", r
        assert r["per_iteration_s"] > 0 and r["per_epoch_s"] > 0
        assert r["iterations"] >= 1
        assert r["rss_high_water_bytes"] > 0
        # No XPySom or MiniSom batch row: no ratio to them.
        assert r["vs_xpysom"] is None and r["vs_minisom_batch"] is None
        assert r["x_floor"] > 0 and r["pairs_per_s"] > 0
    # Online figures are per step, and per epoch-equivalent (per step x examples).
    online = rows["jax-scan-online"]
    assert online["unit"] == "step"
    assert online["per_epoch_s"] == online["per_iteration_s"] * 200
    assert rows["floor"]["x_floor"] == 1.0
    assert rows["jax-fused-batch"]["compile_s"] > 0
    assert rows["jax-fused-batch"]["kernel_plan"]
    # Its share of the measured matmul ceiling, and the cost model's prediction beside the measured epoch.
    assert shape["ceilings"]["matmul_flops_per_s"] > 0
    fused = rows["jax-fused-batch"]
    assert fused["ceiling_share"] == 2 * 200 * 30 * 3 / fused["per_epoch_s"] / shape["ceilings"]["matmul_flops_per_s"]
    assert fused["model_epoch_s"] > 0 and fused["model_runner_up"]
    assert rows["jax-scan-online"]["ceiling_share"] is None and shape["command_runs"] == []
    assert "summary" in proc.stdout and "200 x 3, 6x5" in proc.stdout

    # bench/gpu_check.py imports it where only jax and numpy exist: measuring a shape imports no Qt.
    code = (
        "import sys; sys.path.insert(0, 'bench'); import envelope; "
        "opts = envelope.options(envelope.parse_args(['--cap', '0.05', '--only', 'numpy-batch,floor'])); "
        "envelope.measure_shape({'samples': 50, 'features': 3, 'width': 4, 'height': 3}, opts, log=lambda s: None); "
        "qt = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph')]; "
        "assert not qt, qt"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
