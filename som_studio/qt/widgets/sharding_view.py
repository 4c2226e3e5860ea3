"""The sharding view: the map grid and the data, coloured by the device that holds each part.

Pure layout first, drawing last (``jax.debug.visualize_sharding``'s habit): the
description comes from :mod:`som_studio.app_model.sharding_layout` (the engine's
sharding description when it exists) and this widget only paints it.
Replicated parts are marked with the replica count; bytes per device and, when
a run reported it, device memory are listed under the picture.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from som_studio.app_model.sharding_layout import describe
from som_studio.config import ConfigError, RunConfig
from som_studio.core.impls import registry
from som_studio.i18n import format_bytes

_PALETTE = [
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
]


def device_colour(device: int) -> QColor:
    c = QColor(_PALETTE[device % len(_PALETTE)])
    return c.darker(100 + 25 * (device // len(_PALETTE)))


class ShardingView(QWidget):
    """Paints a sharding description.

    Threads: GUI thread only.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.description: dict[str, Any] | None = None
        self.note = self.tr("Choose a valid configuration to see its layout.")
        self._memory: dict[int, tuple[int, int]] = {}
        self.setMinimumHeight(160)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    # -- feeding ---------------------------------------------------------------------------
    def set_config(
        self, config: RunConfig | None, cpu_devices: int | None = None, features: int = 3, samples: int | None = None
    ) -> None:
        """Show how ``config`` would be laid out (before a run)."""
        if config is None:
            self.description, self.note = None, self.tr("Choose a valid configuration to see its layout.")
            self.update()
            return
        try:
            impl = registry.get(config.impl)
        except registry.UnknownImplementation as exc:
            self.description, self.note = None, str(exc)
            self.update()
            return
        n = samples if samples is not None else (config.data.samples if config.data.path is None else 0)
        try:
            self.description = describe(config, features, n, impl.shards)
        except (ConfigError, ValueError) as exc:
            self.description, self.note = None, str(exc)
            self.update()
            return
        no_shards = self.tr("{impl} does not shard: it runs on the first device (layout {layout})")
        self.note = "" if impl.shards else no_shards.format(impl=impl.name, layout="1x1")
        self.update()

    def set_run(self, config: RunConfig, layout: str, env: dict[str, Any], features: int = 3, samples: int = 0) -> None:
        """A run started: show the layout it runs with, on the devices it reported, with their memory."""
        self._memory = {}
        devices = list(env.get("devices") or [])
        for d in devices:
            if d.get("memory_limit"):
                self._memory[int(d["id"])] = (int(d.get("memory_in_use") or 0), int(d["memory_limit"]))
        try:
            self.description = describe(config.replace(layout=layout), features, samples, True, devices)
        except ConfigError as exc:
            self.description, self.note = None, str(exc)
        self.update()

    # -- painting ------------------------------------------------------------------------------
    def paintEvent(self, _event: Any) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), self.palette().base())
        text = self.palette().text().color()
        p.setPen(text)
        desc = self.description
        if desc is None:
            p.drawText(
                self.rect().adjusted(8, 8, -8, -8), Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextWordWrap, self.note
            )
            p.end()
            return
        fm = p.fontMetrics()
        line = fm.height()
        w, h = self.width(), self.height()
        margin = 8
        map_arr, data_arr = desc["arrays"]["map"], desc["arrays"]["data"]
        per: dict[int, int] = {}
        for arr in desc["arrays"].values():
            for k, v in arr["bytes_per_device"].items():
                per[int(k)] = per.get(int(k), 0) + int(v)
        legend = []
        for dev in sorted(per):
            label = self.tr("device {id}: {bytes}").format(id=dev, bytes=format_bytes(per[dev]))
            if dev in self._memory:
                used, limit = self._memory[dev]
                label += " " + self.tr("(memory {used} / {limit})").format(
                    used=format_bytes(used), limit=format_bytes(limit)
                )
            legend.append((dev, label, fm.horizontalAdvance(label) + 22))
        # Lay the legend out first, so the pictures get the height that is left.
        legend_lines, x = 1, float(margin)
        for _dev, _label, tw in legend:
            if x + tw > w - margin and x > margin:
                legend_lines += 1
                x = float(margin)
            x += tw + 8
        # The line beneath, wrapped where the page is narrow (cut off mid-word at 1,024 px before).
        arrays = ", ".join(self._array_name(a) for a in desc["arrays"])
        foot = self.tr("bytes per device hold: {arrays}").format(arrays=arrays) + (
            f".  {self.note}" if self.note else ""
        )
        wrap = Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextWordWrap
        foot_h = float(fm.boundingRect(0, 0, max(1, w - 2 * margin), 10 * line, wrap, foot).height())
        legend_h = line * (legend_lines + 0.5) + foot_h
        area = QRectF(margin, margin + line, w - 2 * margin, max(40, h - 2 * margin - legend_h - line))
        # The map's copies on the left (each keeps the map's aspect ratio), the data's copies on the right.
        map_area = QRectF(area.left(), area.top(), area.width() * 0.72, area.height())
        mh, mw = map_arr["shape"][0], map_arr["shape"][1]
        map_title = self.map_title(map_arr)
        map_right = self._paint_copies(
            p, map_area, map_arr, (mh, mw), map_title.format(shape=f"({mh}, {mw}, {map_arr['shape'][2]})", axis="map")
        )
        # Shapes as the arrays have them, (rows, columns, features): "20x15" is the form's width x height.
        widest = map_title.format(shape="(0000, 0000, 00)", axis="map") + ", " + self.tr("{n} copies").format(n=0)
        left = max(map_right, area.left() + fm.horizontalAdvance(widest))
        left += 3 * margin
        data_area = QRectF(left, area.top(), min(area.right() - left, area.width() * 0.28), area.height())
        n = max(int(data_arr["shape"][0]), 1)
        self._paint_copies(
            p,
            data_area,
            data_arr,
            (n, max(1, n // 8)),
            self.tr("data {shape} over '{axis}'").format(
                shape=f"({data_arr['shape'][0]:,}, {data_arr['shape'][1]})", axis="data"
            ),
            fill=True,
        )
        y = area.bottom() + line * 0.5
        x = float(margin)
        for dev, label, tw in legend:
            if x + tw > w - margin and x > margin:
                x = float(margin)
                y += line
            p.fillRect(QRectF(x, y + 2, 12, line - 4), device_colour(dev))
            p.setPen(text)
            p.drawText(QRectF(x + 16, y, tw, line), Qt.AlignmentFlag.AlignLeft, label)
            x += tw + 8
        p.setPen(text)
        p.drawText(QRectF(margin, y + line, w - 2 * margin, foot_h), wrap, foot)
        p.end()

    def map_title(self, map_arr: dict[str, Any]) -> str:
        """The map's caption: its rows split over the mesh's 'map' axis, or whole on every device (pmap's copies;
        "rows split" stood under four whole copies)."""
        split = len({tuple(s["index"][0]) for s in map_arr["shards"]}) > 1
        return self.tr("map {shape}: rows split over '{axis}'") if split else self.tr("map {shape}: whole")

    def _array_name(self, key: str) -> str:
        """The description's array ``key`` (``map``, ``data``, ``sums``) in words."""
        words = {"map": self.tr("map"), "data": self.tr("data"), "sums": self.tr("sums")}
        return words.get(key, key)

    def _paint_copies(
        self, p: QPainter, area: QRectF, arr: dict[str, Any], aspect: tuple[int, int], title: str, fill: bool = False
    ) -> float:
        """One picture per replica (copy) of ``arr``, side by side, split in bands by the first index range.

        Returns the right edge of what was drawn.
        """
        replicas = sorted({int(s["replica"]) for s in arr["shards"]})
        r = len(replicas)
        text = self.palette().text().color()
        p.setPen(text)
        label = title + (", " + self.tr("{n} copies").format(n=r) if r > 1 else "")
        label = p.fontMetrics().elidedText(label, Qt.TextElideMode.ElideRight, int(area.width()))
        p.drawText(
            QRectF(area.left(), area.top() - p.fontMetrics().height(), area.width(), p.fontMetrics().height()),
            Qt.AlignmentFlag.AlignLeft,
            label,
        )
        gap = 6.0
        copy_w = (area.width() - gap * (r - 1)) / r
        rows, cols = aspect
        if fill:
            cw, ch = copy_w, area.height()
        else:
            scale = min(copy_w / max(cols, 1), area.height() / max(rows, 1))
            cw, ch = cols * scale, rows * scale
        n = max(int(arr["shape"][0]), 1)
        fm = p.fontMetrics()
        for k, rep in enumerate(replicas):
            box = QRectF(area.left() + k * (cw + gap), area.top(), cw, ch)  # copies side by side, no slack
            for s in arr["shards"]:
                if int(s["replica"]) != rep:
                    continue
                start, stop = (int(v) for v in s["index"][0])
                if stop <= start:
                    continue
                cell = QRectF(
                    box.left(), box.top() + box.height() * start / n, box.width(), box.height() * (stop - start) / n
                )
                p.fillRect(cell, device_colour(int(s["device"])))
                p.setPen(QPen(self.palette().base().color(), 1))
                p.drawRect(cell)
                name = str(s["device"])
                if cell.height() >= fm.height() and cell.width() >= fm.horizontalAdvance(name):
                    p.setPen(QPen(QColor("white")))
                    p.drawText(cell, Qt.AlignmentFlag.AlignCenter, name)
            if r > 1:  # mark the copy as a replica
                p.setPen(QPen(text, 1, Qt.PenStyle.DashLine))
                p.drawRect(box)
        return area.left() + r * cw + (r - 1) * gap


def _preview() -> None:  # python -m som_studio.qt.widgets.sharding_view
    from PySide6.QtWidgets import QApplication

    from som_studio.app_model.sharding_layout import layout_description

    app = QApplication([])
    view = ShardingView()
    view.description = layout_description("2x2", 135, 240, 3, 1000)
    view.note = "fake 2x2 layout"
    view.resize(700, 320)
    view.show()
    app.exec()


if __name__ == "__main__":
    _preview()
