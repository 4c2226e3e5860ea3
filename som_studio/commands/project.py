"""``som-studio project``: where the rows of a data file land on a trained map.

Writes ``row,bmu_col,bmu_row,distance,cluster,label`` (then the run's ``--id``
column) for each input row, as CSV or Parquet, streaming: the file is read and
written in chunks (a Parquet row group each), to a temporary file renamed at
the end, so a refusal, a failure or a full disk leaves no output file.
"""

from __future__ import annotations

import argparse
import csv
import functools
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from som_studio import config as cfgmod
from som_studio.commands.common import CommandError, _argument_type, check_not_read, warn
from som_studio.i18n import _, ngettext

HELP = "project the rows of a data file onto a stored run's map; write each row's unit as CSV or Parquet"
COLUMNS = ("row", "bmu_col", "bmu_row", "distance", "cluster", "label")
PARQUET = ".parquet"


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "project",
        help=HELP,
        description=(
            "Project the rows of DATA (.csv, .csv.gz, .npy, .parquet or .arrow) onto the map of RUN (a .somrun file, "
            "e.g. from --save-runs). Columns are matched by name; the data is scaled as the run's data was. "
            "Writes row,bmu_col,bmu_row,distance,cluster,label (then the run's id column) per row; "
            "`row` is the 0-based data row, `distance` is in the scaled space the map was trained in."
        ),
    )
    p.add_argument("run_file", metavar="RUN.somrun", help="a stored run")
    p.add_argument(
        "data",
        metavar="DATA",
        help=".csv (or gzip'd, .csv.gz), .npy, .parquet or .arrow file of rows to project, or a folder of such files "
        "or a quoted glob (one format; their rows in file-name order)",
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="FILE",
        help="output file: .csv, or .parquet (a row group per chunk read, needs pyarrow); - for CSV on stdout",
    )
    p.add_argument(
        "--clusters",
        type=_argument_type(functools.partial(cfgmod.parse_count, least=2)),  # as a run's: one cluster says nothing
        metavar="K",
        help="k-means with K clusters instead of the run's",
    )
    p.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    return p


def run(args: argparse.Namespace) -> int:
    from som_studio.config import MAX_CLUSTERS
    from som_studio.core.data import DataError
    from som_studio.trained import RunFileError, load_run

    if args.out != "-":
        check_not_read(args.out, {"RUN.somrun": args.run_file, "DATA": args.data}, flag="--out")
    try:
        model = load_run(args.run_file)
    except RunFileError as exc:
        raise CommandError(str(exc)) from None
    clusters = None
    if args.clusters is not None:
        from som_studio.core.som.clusters import kmeans

        most = min(MAX_CLUSTERS, model.width * model.height)
        if not 2 <= args.clusters <= most:  # as a run's --clusters: one cluster says nothing
            raise CommandError(
                "--clusters: "
                + _("must be between 2 and {most} (the units), got {value}").format(most=most, value=args.clusters)
            )
        clusters = kmeans(model.scaling.apply(model.codebook), args.clusters, seed=int(model.config.get("seed", 0)))
    id_name = model.model.id_column
    header = [*COLUMNS, *([id_name] if id_name else [])]
    out = None if args.out == "-" else _check_out(args.out, args.force)
    try:
        if out is None:
            _write(sys.stdout, model, args.data, clusters, header)
            return 0
        from som_studio.storage.writers import OutputError, file_mode, publish

        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".part", dir=out.parent)
        try:
            os.fchmod(fd, file_mode(out))  # mkstemp's file is private (0600); the mode open() would give
            if out.suffix.lower() == PARQUET:
                os.close(fd)
                n = _write_parquet(tmp, model, args.data, clusters, header)
            else:
                with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                    n = _write(f, model, args.data, clusters, header)
            publish(tmp, out, args.force)
        except OutputError as exc:
            Path(tmp).unlink(missing_ok=True)
            raise CommandError(f"--out: {exc}") from None
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except DataError as exc:
        raise CommandError(str(exc)) from None
    except BrokenPipeError:  # `--out - | head`: the reader left; cli.main ends quietly
        raise
    except OSError as exc:
        raise CommandError(f"--out: {args.out}: " + _("cannot write ({why})").format(why=exc.strerror or exc)) from None
    print(ngettext("wrote {path} ({n:,} row)", "wrote {path} ({n:,} rows)", n).format(path=out, n=n), file=sys.stderr)
    return 0


def _check_out(path: str, force: bool) -> Path:
    from som_studio.storage.writers import OutputError, check_writable

    suffix = Path(path).suffix.lower()
    if suffix not in (".csv", PARQUET):
        raise CommandError(f"--out: {path}: " + _("expected a .csv or .parquet file name (or - for stdout)"))
    if suffix == PARQUET:
        try:
            import pyarrow.parquet  # noqa: F401
        except ImportError:
            raise CommandError(
                f"--out: {path}: "
                + _("writing Parquet needs pyarrow; install it with {command}").format(command="pip install pyarrow")
            ) from None
    try:
        return check_writable(path, force)
    except OutputError as exc:
        raise CommandError(f"--out: {exc}") from None


def _write_parquet(path: str, model, data: str, clusters, header: list[str]) -> int:  # type: ignore[no-untyped-def]
    """Write the projection as Parquet, a row group per chunk projected; the rows written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from som_studio.core.data.frames import integer_ids

    fields = [
        pa.field("row", pa.int64()),
        pa.field("bmu_col", pa.int32()),
        pa.field("bmu_row", pa.int32()),
        pa.field("distance", pa.float64()),
        pa.field("cluster", pa.int32()),  # null: the run has no clusters
        pa.field("label", pa.string()),  # null: the unit has no label
    ]
    with_ids = len(header) > len(COLUMNS)  # the run's id column, last
    kind = _id_kind(data, header[-1]) if with_ids else "string"
    if with_ids:
        fields.append(pa.field(header[-1], {"integer": pa.int64(), "floating": pa.float64()}.get(kind, pa.string())))
    schema = pa.schema(fields)
    n = 0
    with pq.ParquetWriter(path, schema) as writer:
        for part in model.project_chunks(data, clusters=clusters, on_note=warn):
            if n == 0:
                _say_no_ids(part, header, data)
            rows = len(part.bmu_row)
            label = [v if v else None for v in part.label.tolist()]
            columns = [
                pa.array(np.arange(n, n + rows, dtype=np.int64)),
                pa.array(part.bmu_col, pa.int32()),
                pa.array(part.bmu_row, pa.int32()),
                pa.array(part.distance, pa.float64()),
                pa.array(part.cluster, pa.int32(), mask=part.cluster < 0),
                pa.array(label, pa.string()),
            ]
            if with_ids:
                if part.ids is None:
                    ids: list[Any] = [None] * rows
                elif kind == "integer":  # integer ids as integers (a chunk of only missing ones: nulls)
                    ids = integer_ids(part.ids) or [None] * rows
                elif kind == "floating":  # as the source holds them, a missing one null, not ""
                    ids = [float(v) if v != "" else None for v in part.ids.tolist()]
                else:
                    ids = part.ids.tolist()
                columns.append(pa.array(ids, fields[-1].type))
            writer.write_table(pa.Table.from_arrays(columns, schema=schema))
            n += rows
    return n


def _id_kind(data: str, name: str) -> str:
    """``"integer"`` or ``"floating"`` where ``data`` is Parquet or Arrow files whose column ``name`` holds such
    numbers, so the ids are written back as the source holds them; else ``"string"``."""
    import pyarrow as pa

    from som_studio.core.data import COLUMNAR_SUFFIXES, DataError, read_columnar
    from som_studio.core.data.checks import data_suffix
    from som_studio.core.data.files import data_files

    try:
        f = data_files(data)[0]
        if data_suffix(f).suffix not in COLUMNAR_SUFFIXES:
            return "string"
        schema = read_columnar(f).schema
    except DataError:
        return "string"
    if name not in schema.names:
        return "string"
    kind = schema.field(name).type
    return "integer" if pa.types.is_integer(kind) else "floating" if pa.types.is_floating(kind) else "string"


def _say_no_ids(part, header: list[str], data: str) -> None:  # type: ignore[no-untyped-def]
    """Warn that the run's id column, written last, stays empty: the data projected has no such column."""
    if len(header) > len(COLUMNS) and part.ids is None:
        warn(
            _("{path}: has no column {name!r}, the run's id column: its rows' ids are left empty").format(
                path=data, name=header[-1]
            )
        )


def _write(f, model, data: str, clusters, header: list[str]) -> int:  # type: ignore[no-untyped-def]
    w = csv.writer(f, lineterminator="\n")
    n = 0
    # The header once the first rows are read: data refused up front (a wrong file, no rows) writes nothing,
    # not a header before the error, to a terminal or a pipe.
    headed = False
    for part in model.project_chunks(data, clusters=clusters, on_note=warn):
        if not headed:
            _say_no_ids(part, header, data)
            w.writerow(header)
            headed = True
        cluster = [("" if c < 0 else str(c)) for c in part.cluster.tolist()]
        ids = part.ids.tolist() if part.ids is not None else None
        for i in range(len(part.bmu_row)):
            line = [n, int(part.bmu_col[i]), int(part.bmu_row[i]), f"{part.distance[i]:.9g}", cluster[i], part.label[i]]
            if len(header) > len(COLUMNS):
                line.append(ids[i] if ids is not None else "")
            w.writerow(line)
            n += 1
    if not headed:
        w.writerow(header)
    return n
