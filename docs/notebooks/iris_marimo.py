"""SOM Studio in a marimo notebook: `marimo edit docs/notebooks/iris_marimo.py` (or `python` it as a script).

marimo is not one of SOM Studio's dependencies: `pip install marimo` first, in the same environment."""

import marimo

app = marimo.App()


@app.cell
def _():
    import tempfile
    from pathlib import Path

    import marimo as mo
    import pandas as pd

    import som_studio
    from som_studio.resources import resource

    iris = pd.read_csv(resource("data", "iris.csv"))
    return Path, iris, mo, som_studio, tempfile


@app.cell
def _(iris, som_studio):
    # The keywords are the command line's flags in Python spelling; the run shows itself (_repr_html_).
    run = som_studio.train(iris, labels="species", grid="8x6", topology="hex", scaling="zscore", epochs=30)
    run
    return (run,)


@app.cell
def _(mo, run):
    quality = run.record["quality"]
    mo.md(f"QE **{quality['qe']:.3f}**, TE **{quality['te']:.3f}**, purity **{quality['label_purity']:.3f}**")
    return


@app.cell
def _(iris, run):
    result = run.project(iris.drop(columns="species").head(5))
    projected = list(zip(result.bmu_row, result.bmu_col, result.label))
    projected
    return


@app.cell
def _(iris, som_studio):
    # Every combination trains together, as one JAX program.
    rows = som_studio.sweep(
        iris, vary={"sigma_end": [0.5, 0.75, 1, 2]}, labels="species", grid="8x6", topology="hex",
        scaling="zscore", epochs=30,
    )  # fmt: skip
    rows.to_pandas()
    return (rows,)


@app.cell
def _(rows):
    rows.run(rows.frontier()[0])
    return


@app.cell
def _(Path, run, som_studio, tempfile):
    path = run.save(Path(tempfile.mkdtemp()) / "iris.somrun")
    again = som_studio.load_run(path)
    assert (again.codebook == run.codebook).all()
    again
    return


if __name__ == "__main__":
    app.run()
