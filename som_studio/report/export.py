"""A comparison's files: the report (HTML, PDF), the timed chunks (CSV), the records (JSON), maps, animation.

One :class:`Exporter` per comparison writes every kind the same way for the
CLI and the app (so both give the same files for the same runs). Drawing is
not done here: the charts of the HTML page and the PDF come from a
:class:`Renderer` (the Qt layer's draws offscreen), drawn once and shared by
both. Every file is written atomically (:func:`~som_studio.storage.writers.write_atomic`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from som_studio.i18n import N_, _
from som_studio.report.content import Report
from som_studio.storage.writers import OutputError, json_text, write_atomic


class Renderer(Protocol):
    """Draws what a report shows as pictures. Implemented by :class:`som_studio.qt.report_render.QtRenderer`."""

    def charts(self, report: Report) -> dict[str, bytes | None]:
        """PNG bytes of every chart section of ``report``, by section key (``None``: not drawn)."""
        ...

    def pdf(self, report: Report, charts: Mapping[str, bytes | None]) -> bytes:
        """The report as a PDF, with ``charts`` (from :meth:`charts`) on their pages."""
        ...


@dataclass(frozen=True)
class ExportKind:
    """One kind of file: its CLI flag, the app's menu text and file dialog filter, and its default suffix.

    ``menu`` and ``file_filter`` are the English source strings (marked for the catalogue):
    show :attr:`menu_text` and :attr:`filter_text`, which are in the user's language.
    """

    key: str
    flag: str
    menu: str
    file_filter: str
    suffix: str
    drawn: bool = False  # needs a renderer

    @property
    def menu_text(self) -> str:
        return _(self.menu)

    @property
    def filter_text(self) -> str:
        return _(self.file_filter) if self.file_filter else ""


EXPORTS: dict[str, ExportKind] = {
    k.key: k
    for k in (
        ExportKind("html", "--report", N_("Report (HTML)…"), N_("HTML page (*.html)"), ".html", drawn=True),
        ExportKind("pdf", "--pdf", N_("Report (PDF)…"), "PDF (*.pdf)", ".pdf", drawn=True),
        ExportKind("csv", "--csv", N_("Timed chunks (CSV)…"), "CSV (*.csv)", ".csv"),
        ExportKind("json", "--json", N_("Full records (JSON)…"), "JSON (*.json)", ".json"),
        ExportKind("maps", "--maps", N_("Final maps (PNG, one per run)…"), "", ""),
        ExportKind(
            "animation",
            "--animation",
            N_("Animation (GIF, WebP, MP4)…"),
            "GIF (*.gif);;WebP (*.webp);;MP4 (*.mp4)",
            ".gif",
        ),
    )
}
"""Every kind of file a comparison exports, by key, in the order the app's Export menu lists them."""

DEFAULT_FRAMES = 60
"""Animation frames at most, evenly spread over each run."""


class ExportError(ValueError):
    """A file cannot be made from this comparison (no maps, an unknown animation format); says why."""


def map_file_names(names: list[str]) -> dict[str, str]:
    """Each run's map file name: ``<run name>.png``, made safe for a file system."""
    from som_studio.report.tables import safe_file_stem

    return {n: f"{safe_file_stem(n)}.png" for n in names}


class Exporter:
    """Writes the files of one comparison.

    Parameters
    ----------
    report : the comparison (:func:`~som_studio.report.compare`).
    renderer : draws the charts and the PDF; needed only for ``html`` and ``pdf``.
    force : replace existing files.
    max_frames : at most this many animation frames.
    """

    def __init__(
        self, report: Report, renderer: Renderer | None = None, *, force: bool = False, max_frames: int = DEFAULT_FRAMES
    ) -> None:
        self.report = report
        self.renderer = renderer
        self.force = force
        self.max_frames = max_frames
        self._charts: dict[str, bytes | None] | None = None

    @property
    def records(self) -> list:  # type: ignore[type-arg]
        return [r.record for r in self.report.runs]

    def charts(self) -> dict[str, bytes | None]:
        """The report's charts, drawn once for the HTML page and the PDF."""
        if self._charts is None:
            if self.renderer is None:
                raise ExportError(_("the report's charts need a renderer (Qt), and none was given"))
            self._charts = self.renderer.charts(self.report)
        return self._charts

    # -- content --------------------------------------------------------------------------
    def content(self, kind: str, path: str | os.PathLike[str] | None = None) -> bytes | str:
        """The bytes (or text) of one file of ``kind`` (not ``maps``); ``path`` picks the animation's format."""
        if kind == "json":
            from som_studio.session.record import runs_document

            return json_text(runs_document(self.records))
        if kind == "csv":
            from som_studio.report.tables import chunks_csv

            return chunks_csv(self.records)
        if kind == "animation":
            from som_studio.report.animation import AnimationError, animation_format, compose_frames, encode

            try:
                fmt = animation_format(path or "animation.gif")
                return encode(compose_frames(self.report.runs, self.max_frames), fmt)
            except AnimationError as exc:
                raise ExportError(str(exc)) from None
        if kind == "html":
            from som_studio.report.html import report_html

            return report_html(self.report, self.charts())
        if kind == "pdf":
            assert self.renderer is not None  # charts() checked
            charts = self.charts()
            return self.renderer.pdf(self.report, charts)
        raise ExportError(_("unknown export {kind!r}; one of {kinds}").format(kind=kind, kinds=", ".join(EXPORTS)))

    # -- files ----------------------------------------------------------------------------
    def write(self, kind: str, path: str | os.PathLike[str]) -> Path:
        """Write one file of ``kind`` (not ``maps``: see :meth:`write_maps`) to ``path``."""
        return write_atomic(path, self.content(kind, path), force=self.force)

    def write_maps(self, folder: str | os.PathLike[str], create: bool = False) -> tuple[list[Path], list[str]]:
        """Each run's final map as ``folder/<run name>.png``; returns (files written, runs without a map).

        Existing files are refused before any is written, unless ``force``.
        ``create``: make the folder if it is missing.
        """
        from som_studio.report.tables import upscale
        from som_studio.storage.writers import png_bytes

        d = Path(folder)
        if create and not d.exists():
            try:
                d.mkdir()
            except OSError as exc:
                raise OutputError(
                    _("{path}: cannot create it ({why})").format(path=d, why=exc.strerror or exc)
                ) from None
        if not d.is_dir():
            raise OutputError(_("{path}: not a folder").format(path=d))
        runs = [r for r in self.report.runs if r.final_image is not None]
        names = map_file_names([r.name for r in runs])
        paths = {r.name: d / names[r.name] for r in runs}
        existing = [p for p in paths.values() if p.exists()]
        if existing and not self.force:
            raise OutputError(_("{path}: exists; use {flag} to overwrite it").format(path=existing[0], flag="--force"))
        written = []
        for r in runs:
            assert r.final_image is not None
            written.append(write_atomic(paths[r.name], png_bytes(upscale(r.final_image)), force=True))
        return written, [r.name for r in self.report.runs if r.final_image is None]
