"""Example data shipped with SOM Studio, as configurations ready to run (File > Open example data).

Threads: any; nothing here starts a thread or imports Qt.
"""

from __future__ import annotations

from som_studio.config import DataSpec, Init, RunConfig, Scaling, Topology
from som_studio.resources import resource


def iris_config(epochs: int = 50) -> RunConfig:
    """Fisher's iris (``resources/data/iris.csv``): a 12x8 hex map, PCA start, z-scored, species as labels.

    The README's command trains the same map:
    ``som-studio bench --data iris.csv --labels species --topology hex --grid 12x8 --init pca --scaling zscore``.
    """
    return RunConfig(
        impl="numpy-batch",
        width=12,
        height=8,
        data=DataSpec(path=str(resource("data", "iris.csv"))),
        epochs=epochs,
        topology=Topology.HEX,
        init=Init.PCA,
        scaling=Scaling.ZSCORE,
        labels="species",
    )
