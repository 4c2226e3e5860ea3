"""SOM Studio's defaults against R kohonen's on kohonen's own ``wines`` data (177 x 13, vintage labels).

Needs R with kohonen (Debian: ``apt-get install r-cran-kohonen``). Exports ``wines`` with
Rscript, trains kohonen's default map (``som(scale(wines), somgrid(8, 6, "hexagonal"))``: online,
100 passes, radius from two thirds of the grid's distances to 0) over ``--seeds`` seeds, and SOM
Studio's ``train(wines, labels="vintage", grid="8x6", topology="hex", scaling="zscore")`` with its
default epochs and radii over as many seeds, in this process, side by side. QE is the mean distance
of each row to its best unit in the z-scored space, for both (kohonen's ``distances`` are squared).
The issue's target: SOM Studio's QE at most 1.1x kohonen's with TE at most 0.10.

    python bench/kohonen.py              # 10 seeds each
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from _common import fmt_s, table

import som_studio

R_SCRIPT = """
suppressMessages(library(kohonen))
data(wines)
write.csv(data.frame(wines, vintage = vintages), "{csv}", row.names = FALSE)
X <- scale(wines)
cat(as.character(packageVersion("kohonen")), "\\n")
for (s in seq_len({seeds})) {{
  set.seed(s)
  t0 <- proc.time()[["elapsed"]]
  m <- som(X, grid = somgrid(8, 6, "hexagonal"))
  cat(mean(sqrt(m$distances)), proc.time()[["elapsed"]] - t0, "\\n")
}}
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    args = ap.parse_args()
    if shutil.which("Rscript") is None:
        raise SystemExit("bench/kohonen.py needs R with kohonen: apt-get install r-cran-kohonen")
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "wines.csv"
        out = subprocess.run(
            ["Rscript", "-e", R_SCRIPT.format(csv=csv, seeds=args.seeds)], capture_output=True, text=True, check=True
        ).stdout.split("\n")
        version = out[0].strip()
        koh = [tuple(float(v) for v in line.split()) for line in out[1:] if line.strip()]
        rows = [
            [f"kohonen {version} (online, 100 passes)", *_summary([q for q, _t in koh], None, [t for _q, t in koh])]
        ]
        ours: dict[str, tuple[list[float], list[float], list[float]]] = {}
        for impl in ("numpy-batch", "jax-fused-batch"):
            qes, tes, walls = [], [], []
            for seed in range(args.seeds):
                t0 = time.perf_counter()
                run = som_studio.train(
                    csv, labels="vintage", impl=impl, grid="8x6", topology="hex", scaling="zscore", seed=seed
                )
                walls.append(time.perf_counter() - t0)
                qes.append(run.record["quality"]["qe"])
                tes.append(run.record["quality"]["te"])
            ours[impl] = (qes, tes, walls)
            rows.append([f"SOM Studio {impl} (defaults)", *_summary(qes, tes, walls)])
    print(table(["map (8x6 hex, z-scored wines)", "QE median", "QE range", "TE median", "wall median"], rows))
    k = statistics.median(q for q, _t in koh)
    for impl, (qes, _tes, _w) in ours.items():
        print(f"{impl}: QE {statistics.median(qes) / k:.3f}x kohonen's median (target <= 1.1x)")


def _summary(qes: list[float], tes: list[float] | None, walls: list[float]) -> list[str]:
    return [
        f"{statistics.median(qes):.3f}",
        f"{min(qes):.3f}-{max(qes):.3f}",
        f"{statistics.median(tes):.3f}" if tes else "-",
        fmt_s(statistics.median(walls)),
    ]


if __name__ == "__main__":
    main()
