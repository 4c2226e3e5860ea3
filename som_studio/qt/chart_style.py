"""One chart style for every plot: the live plots, the comparison's charts and the report's charts.

A :class:`ChartTheme` is the colours of a chart: the report's is :data:`LIGHT`
(white paper); the app's follow the system's palette (:func:`theme_of`, light
or dark), so a live plot and a comparison chart look alike in one window.
:func:`style_plot` applies a theme to a pyqtgraph ``PlotItem``;
:class:`ReadableAxis` puts at least three labelled ticks on an axis at any
range, linear or log (pyqtgraph's own log axis often shows one over a range
under a decade); :func:`legend_above` places a legend over the plot's data
area, never on the curves.

Thread: the thread that owns the ``QApplication``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import pyqtgraph as pg
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPalette
from PySide6.QtWidgets import QApplication, QGraphicsItem, QWidget

OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#8C564B")
"""Okabe-Ito colours (told apart with colour-blindness too), one per curve or run."""

MIN_TICKS = 3
"""Labelled ticks every axis shows at least."""
PX_PER_TICK = 70
"""About this many pixels between two labelled ticks on a long vertical axis."""
PX_PER_WIDE_TICK = 90
"""... and on a horizontal one, whose labels lie side by side ("12,500")."""
LABEL_HALF_PX = {True: 9.0, False: 22.0}
"""Half a tick label's extent along a vertical (``True``) or horizontal axis, in pixels."""
LABEL_GAP_PX = 6
#: The least room between the two labels of an axis that has room for two only.
PAIR_GAP_PX = 4
"""The least room between two labels side by side on a horizontal axis."""


@dataclass(frozen=True)
class ChartTheme:
    """A chart's colours: its background, text, axis lines, grid and one colour per curve."""

    background: str = "#ffffff"
    text: str = "#1d2330"
    muted: str = "#5b6475"
    axis: str = "#4a5060"
    grid_alpha: float = 0.18
    colours: tuple[str, ...] = OKABE_ITO

    def colour(self, index: int) -> str:
        return self.colours[index % len(self.colours)]

    @property
    def dark(self) -> bool:
        return QColor(self.background).lightnessF() < 0.5


LIGHT = ChartTheme()
"""The report's charts: dark text on white paper."""


def theme_of(widget: QWidget | None = None) -> ChartTheme:
    """The theme of the palette ``widget`` (or the application) uses: light or dark as the system is."""
    app = QApplication.instance()
    pal = widget.palette() if widget is not None else app.palette() if isinstance(app, QApplication) else QPalette()
    base = pal.color(QPalette.ColorRole.Base)
    text = pal.color(QPalette.ColorRole.Text)
    muted = pal.color(QPalette.ColorRole.PlaceholderText)
    theme = ChartTheme(base.name(), text.name(), muted.name(), text.name(), 0.18)
    if theme.dark:  # Okabe-Ito's black is no colour on a dark canvas: the text's colour instead
        theme = replace(theme, colours=tuple(text.name() if c == "#000000" else c for c in OKABE_ITO), grid_alpha=0.25)
    return theme


# -- ticks --------------------------------------------------------------------------------------------
def linear_ticks(
    lo: float, hi: float, size_px: float, min_ticks: int = MIN_TICKS, px_per_tick: float = PX_PER_TICK
) -> tuple[float, list[float]]:
    """``(step, values)``: round values (1, 2, 2.5, 5 times a power of ten) in ``lo..hi``, at least
    ``min_ticks`` of them, about one per ``px_per_tick`` pixels on a longer axis."""
    lo, hi = sorted((float(lo), float(hi)))
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return 1.0, [lo] if math.isfinite(lo) else []
    want = max(min_ticks, min(10, int(size_px / px_per_tick)))
    span = hi - lo
    top = 10.0 ** math.ceil(math.log10(span))
    for k in range(0, 40):  # coarse to fine: the first step that gives the ticks wanted
        for m in (1.0, 0.5, 0.25, 0.2):
            step = top * m / 10.0**k
            first = math.ceil(lo / step - 1e-9)
            values = [v for i in range(first, first + 200) if (v := i * step) <= hi * (1 + 1e-12) + 1e-300]
            if len(values) >= max(min_ticks, math.ceil(0.75 * want)):  # about as many as wanted, never fewer than min
                # -0.0 and float noise read badly as labels: round to the step's decimals.
                digits = max(0, -math.floor(math.log10(step)) + 2)
                return step, [round(v, digits) + 0.0 for v in values]
    return span / 2, [lo, (lo + hi) / 2, hi]


def log_ticks(
    lo: float, hi: float, size_px: float, min_ticks: int = MIN_TICKS, label_px: float = 2 * LABEL_HALF_PX[True]
) -> list[float]:
    """Ticks of a log axis over ``lo..hi`` (log10 of the values): 1-2-5 steps where they fit, at
    least ``min_ticks``, none within ``label_px`` of another; over a range too short for those (a few
    percent), round linear values."""
    lo, hi = sorted((float(lo), float(hi)))
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return []
    room = max(min_ticks + 1, int(size_px / 30))
    mantissas = ((1,), (1, 3), (1, 2, 5), (1, 1.5, 2, 3, 5, 7), tuple(range(1, 10)))
    for steps in mantissas:  # coarse to fine: the first with enough ticks that fit
        vals = [
            v
            for e in range(math.floor(lo) - 1, math.ceil(hi) + 1)
            for m in steps
            if lo <= (v := math.log10(m) + e) <= hi
        ]
        if len(vals) > room:  # many decades: every k-th decade
            decades = [float(e) for e in range(math.ceil(lo), math.floor(hi) + 1)]
            if len(decades) >= min_ticks:
                return decades[:: max(1, math.ceil(len(decades) / room))]
            break
        if len(vals) >= min_ticks:
            return _apart(vals, label_px * (hi - lo) / size_px if size_px > 0 else 0.0)
    _, values = linear_ticks(10.0**lo, 10.0**hi, size_px, min_ticks)
    return [math.log10(v) for v in values if v > 0]


def _apart(values: list[float], gap: float) -> list[float]:
    """``values`` less those within ``gap`` (a label's size) of one kept: on a short log axis 1, 2 and 3 ms lie
    7 px apart and their labels were drawn over each other. A decade is kept before the values between."""
    kept: list[float] = []
    for v in sorted(values, key=lambda v: (not float(v).is_integer(), v)):  # decades first
        if all(abs(v - k) >= gap for k in kept):
            kept.append(v)
    return sorted(kept)


def short_number(v: float) -> str:
    """A tick label: three significant digits, no exponent for everyday sizes."""
    if v == 0:
        return "0"
    a = abs(v)
    if 1e3 <= a < 1e9 and abs(v - round(v)) < 1e-6 * a:
        return f"{v:,.0f}"  # iterations: 12,500, not 1.25e+04
    if 1e-3 <= a < 1e6:
        return f"{v:.4g}"
    return f"{v:.2g}"


class ReadableAxis(pg.AxisItem):
    """An axis with at least :data:`MIN_TICKS` labelled ticks at any range, linear or log (a horizontal
    axis too short for three labels side by side: two).

    ``format``: the label of a value (in log mode, of the value itself, not its logarithm);
    default :func:`short_number`. ``whole``: ticks at whole numbers only (an iteration axis: a run's first
    chunk or two span an iteration or two, where 0.25, 0.5 and 0.75 name iterations that do not exist, and
    ten epochs were ticked 2.5, 5, 7.5).
    """

    def __init__(
        self, orientation: str, format: Callable[[float], str] | None = None, whole: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(orientation, **kwargs)
        self._format = format or short_number
        self._whole = whole
        self.enableAutoSIPrefix(False)  # "(x0.001)" beside a label reads badly; the ticks carry the sizes
        # Kept as a picture on the device: a live plot's curve repaints its view many times a second,
        # and replaying the axis's text each time cost more than the curves (5 ms a paint under Xvfb).
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list[tuple[float | None, list[float]]]:
        # pyqtgraph hides a label that would stick out past the axis's ends: ticks are chosen only
        # where their labels fit whole (half a label's height, or width, in from each end).
        vertical = self.orientation in ("left", "right")
        lo, hi = sorted((minVal, maxVal))
        inset = (hi - lo) * (LABEL_HALF_PX[vertical] / size) if size > 0 else 0.0
        lo, hi = lo + inset, hi - inset
        length = max(size - 2 * LABEL_HALF_PX[vertical], 1.0)
        # A horizontal axis in a narrow dock (two y axes beside it) has room for two labels side by side,
        # not three: three would be drawn over each other ("200300400").
        least = MIN_TICKS if vertical else max(2, min(MIN_TICKS, 1 + int(length // (2 * LABEL_HALF_PX[False]))))
        if self.logMode:
            return [(None, log_ticks(lo, hi, length, least, 2 * LABEL_HALF_PX[vertical]))]
        wide = PX_PER_TICK if vertical else PX_PER_WIDE_TICK
        step, values = linear_ticks(lo, hi, length, least, px_per_tick=wide)
        if self._whole and not float(step).is_integer():  # 0.25, 0.5 or 2.5: 1 or 2 instead
            step = max(1.0, float(math.floor(step)))
            values = [v * step for v in range(math.ceil(lo / step), math.floor(hi / step) + 1)]
        if not vertical and size > 0 and maxVal > minVal:
            step, values = self._side_by_side(step, values, size / (maxVal - minVal))
        return [(step, values)]

    def _side_by_side(self, step: float, values: list[float], px_per_unit: float) -> tuple[float, list[float]]:
        """Every other tick (every third...) until neighbouring labels clear each other, down to one.

        The 1-2-5 steps can leave three labels where two fit ("1,9501,9752,000" on the Quality dock's
        narrow axis), and two where one does ("20,00040,000" on a narrow timing dock): the labels' own
        widths decide, not a guess of them."""
        metrics = QFontMetrics(self.style.get("tickFont") or self.font())
        half = {v: metrics.horizontalAdvance(self._format(v)) / 2 for v in values}
        for k in range(1, len(values) + 1):
            kept = values[::k]
            # Two labels need only a narrow gap (a second figure is worth it; touching, "20,00040,000" read as
            # one number); more, a full gap between.
            gap = LABEL_GAP_PX if len(kept) > 2 else PAIR_GAP_PX
            if len(kept) <= 1 or all(
                (b - a) * px_per_unit >= half[a] + half[b] + gap for a, b in zip(kept, kept[1:], strict=False)
            ):
                return step * k, kept
        return step, values

    def tickStrings(self, values: list[float], scale: float, spacing: float | None) -> list[str]:
        if self.logMode:
            return [self._format(10.0 ** float(v)) for v in values]
        return [self._format(float(v) * scale) for v in values]


def readable_axes(
    sides: tuple[str, ...] = ("left", "bottom", "right"),
    whole: tuple[str, ...] = (),
    **formats: Callable[[float], str] | None,
) -> dict[str, ReadableAxis]:
    """``axisItems`` for a plot: a :class:`ReadableAxis` on each of ``sides`` (formats by side; those in
    ``whole`` ticked at whole numbers only).

    pyqtgraph shows every axis given: a plot with no second y axis asks for ``("left", "bottom")``.
    """
    return {side: ReadableAxis(side, formats.get(side), whole=side in whole) for side in sides}


# -- a plot's look ------------------------------------------------------------------------------------
def font(points: float) -> QFont:
    f = QFont()
    f.setPointSizeF(points)
    return f


def style_plot(
    plot: Any,
    theme: ChartTheme,
    x_label: str = "",
    y_label: str = "",
    title: str = "",
    points: float = 9.0,
    sides: tuple[str, ...] = ("left", "bottom"),
) -> None:
    """Give a ``PlotItem`` the theme's axes, labels, grid and tick font (``points`` pt labels)."""
    for side in sides:
        ax = plot.getAxis(side)
        ax.setPen(pg.mkPen(theme.axis))
        ax.setTextPen(pg.mkPen(theme.text))
        ax.enableAutoSIPrefix(False)
        ax.setStyle(tickFont=font(points), tickTextOffset=6)
    css = {"color": theme.text, "font-size": f"{points + 1:g}pt"}
    if x_label:
        plot.setLabel("bottom", x_label, **css)
    if y_label:
        plot.setLabel("left", y_label, **css)
    if title:
        plot.setTitle(title, color=theme.text, size=f"{points + 2:g}pt")
    plot.showGrid(x=True, y=True, alpha=theme.grid_alpha)


def style_widget(widget: Any, theme: ChartTheme) -> None:
    """A ``PlotWidget`` or ``GraphicsLayoutWidget``'s canvas in the theme's background."""
    widget.setBackground(theme.background)


def legend_above(plot: Any, theme: ChartTheme, columns: int = 4, text_px: int = 12, rows: int = 1) -> pg.LegendItem:
    """A legend in the plot item's title row, above its data: never over a curve.

    It spans the axes' columns too, so a narrow plot (a side dock) is not widened by it: ``columns``
    entries a line, on ``rows`` lines. Curves are added to it with ``legend.addItem(curve, name)``.
    """
    legend = pg.LegendItem(colCount=columns, labelTextColor=theme.text, labelTextSize=f"{text_px}px", horSpacing=12)
    layout = plot.layout
    plot.titleLabel.setVisible(False)
    layout.removeItem(plot.titleLabel)
    layout.addItem(legend, 0, 0, 1, 3)
    layout.setRowFixedHeight(0, rows * (text_px + 8) + 6)
    return legend


def restyle_legend(legend: pg.LegendItem, theme: ChartTheme) -> None:
    """A legend's text in the theme's colour (the palette changed)."""
    legend.setLabelTextColor(theme.text)
    for _sample, label in legend.items:
        label.setText(label.text, color=theme.text)


def crisp(image: Any, target: int = 900) -> Any:
    """``image`` (rows, columns[, channels]) enlarged by whole pixels to about ``target`` pixels wide.

    An exported chart is drawn with smoothing on; a map of 60 units across scaled up by the
    painter would be blurred into a gradient. Enlarged first, each unit stays a sharp block.
    """
    import numpy as np

    arr = np.asarray(image)
    k = max(1, int(target // max(arr.shape[1], 1)))
    return arr if k == 1 else np.ascontiguousarray(np.repeat(np.repeat(arr, k, axis=0), k, axis=1))


def tick_labels(axis: pg.AxisItem, size: float | None = None) -> list[str]:
    """The labelled ticks ``axis`` shows over its present range (what a reader sees; tests read it)."""
    lo, hi = axis.range
    length = size if size is not None else (axis.height() if axis.orientation in ("left", "right") else axis.width())
    labels: list[str] = []
    for spacing, values in axis.tickValues(lo, hi, length):
        labels += [s for s in axis.tickStrings(values, axis.autoSIPrefixScale * axis.scale, spacing) if s]
    return labels


__all__ = [
    "LIGHT",
    "MIN_TICKS",
    "OKABE_ITO",
    "ChartTheme",
    "ReadableAxis",
    "crisp",
    "legend_above",
    "linear_ticks",
    "log_ticks",
    "readable_axes",
    "restyle_legend",
    "short_number",
    "style_plot",
    "style_widget",
    "theme_of",
    "tick_labels",
]
