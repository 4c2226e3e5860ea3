"""The Run form with an online implementation on a folder streamed from disk: runnable, and worded for steps."""

from __future__ import annotations

import numpy as np
import pytest

from som_studio.app_model.form import RunForm, read_data
from som_studio.config import DataSpec, RunConfig


def test_an_online_run_streams_a_folder_a_row_a_step(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    x = np.random.default_rng(4).random((400, 3))
    for i, (a, b) in enumerate([(0, 150), (150, 400)]):
        pq.write_table(pa.table({c: x[a:b, j] for j, c in enumerate("abc")}), tmp_path / f"p{i}.parquet")
    form = RunForm()
    st = form.set_config(RunConfig(impl="jax-scan-online", data=DataSpec(path=str(tmp_path)), steps=1000))
    st = form.data_read(st.data_needed, read_data(st.data_needed))
    st = form.edit(stream=True, batch_rows=100)
    assert st.runnable, st.reason
    assert "Streamed: read in batches of 100 rows, a row a step in the files' order" in st.data_text
    assert "every epoch" not in st.data_text
    assert "for 1,000 steps (2.50 passes over the data" in st.time_text  # as fast as the form's pass went
    st = form.edit(impl="jax-vmap-batch")
    assert not st.runnable and "does not train from a stream" in st.reason
