"""The sharding view: the map grid and the data, coloured by the device that holds each part.

Pure layout first, drawing last (``jax.debug.visualize_sharding``'s habit): the
description comes from :mod:`som_studio.qt.sharding_layout` (the engine's
sharding description when it exists) and this widget only paints it.
Replicated parts are marked with the replica count; bytes per device and, when
a run reported it, device memory are listed under the picture.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from som_studio.config import ConfigError, RunConfig
from som_studio.core import registry
from som_studio.core.memory import format_bytes
from som_studio.qt.sharding_layout import describe

_PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
            "#9c755f", "#bab0ac"]


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
        self.note = "Choose a valid configuration to see its layout."
        self._memory: dict[int, tuple[int, int]] = {}
        self.setMinimumHeight(160)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    # -- feeding ---------------------------------------------------------------------------
    def set_config(self, config: RunConfig | None, cpu_devices: int | None = None, features: int = 3,
                   samples: int | None = None) -> None:
        """Show how ``config`` would be laid out (before a run)."""
        if config is None:
            self.description, self.note = None, "Choose a valid configuration to see its layout."
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
        except ConfigError as exc:
            self.description, self.note = None, str(exc)
            self.update()
            return
        self.note = ("" if impl.shards else
                     f"{impl.name} does not shard: it runs on the first device (layout 1x1)")
        self.update()

    def set_run(self, config: RunConfig, layout: str, env: dict[str, Any]) -> None:
        """A run started: show its actual layout and the devices' memory."""
        self._memory = {}
        for d in env.get("devices") or []:
            if d.get("memory_limit"):
                self._memory[int(d["id"])] = (int(d.get("memory_in_use") or 0), int(d["memory_limit"]))
        self.update()

    # -- painting ------------------------------------------------------------------------------
    def paintEvent(self, _event: Any) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        p.fillRect(self.rect(), self.palette().base())
        desc = self.description
        if desc is None:
            p.drawText(self.rect().adjusted(8, 8, -8, -8), Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextWordWrap, self.note)
            return
        font = QFont(self.font())
        p.setFont(font)
        fm = p.fontMetrics()
        line = fm.height()
        w, h = self.width(), self.height()
        margin = 8
        legend_h = line * (2 + (1 if self.note else 0))
        area_h = max(40, h - 2 * margin - legend_h - line)
        map_arr = desc["arrays"]["map"]
        data_arr = desc["arrays"]["data"]
        mh, mw = map_arr["shape"][0], map_arr["shape"][1]
        # The map keeps its aspect ratio on the left; the data is a tall bar on the right.
        map_w_avail = max(40, w * 0.62 - 2 * margin)
        scale = min(map_w_avail / max(mw, 1), area_h / max(mh, 1))
        map_rect = QRectF(margin, margin + line, mw * scale, mh * scale)
        p.drawText(QRectF(margin, margin, w, line), Qt.AlignmentFlag.AlignLeft,
                   f"map {mh}x{mw}x{map_arr['shape'][2]} (rows split over 'map')")
        self._paint_array(p, map_rect, map_arr, axis_len=mh)
        data_rect = QRectF(map_rect.right() + 3 * margin, margin + line, max(40.0, w * 0.18), area_h)
        p.drawText(QRectF(data_rect.left(), margin, w - data_rect.left(), line), Qt.AlignmentFlag.AlignLeft,
                   f"data {data_arr['shape'][0]:,}x{data_arr['shape'][1]} (split over 'data')")
        self._paint_array(p, data_rect, data_arr, axis_len=max(data_arr["shape"][0], 1))
        # Legend: bytes per device (map + data) and memory where known.
        y = margin + line + area_h + line * 0.5
        x = float(margin)
        per = {int(k): int(v) for k, v in map_arr["bytes_per_device"].items()}
        for k, v in data_arr["bytes_per_device"].items():
            per[int(k)] = per.get(int(k), 0) + int(v)
        for dev in sorted(per):
            text = f"dev {dev}: {format_bytes(per[dev])}"
            if dev in self._memory:
                used, limit = self._memory[dev]
                text += f" (memory {format_bytes(used)}/{format_bytes(limit)})"
            tw = fm.horizontalAdvance(text) + 22
            if x + tw > w - margin:
                x = float(margin)
                y += line
            p.fillRect(QRectF(x, y + 2, 12, line - 4), device_colour(dev))
            p.setPen(self.palette().text().color())
            p.drawText(QRectF(x + 16, y, tw, line), Qt.AlignmentFlag.AlignLeft, text)
            x += tw + 8
        if self.note:
            p.drawText(QRectF(margin, y + line, w - 2 * margin, line), Qt.AlignmentFlag.AlignLeft, self.note)
        p.end()

    def _paint_array(self, p: QPainter, rect: QRectF, arr: dict[str, Any], axis_len: int) -> None:
        """Split ``rect`` vertically by the first index range of each shard; replicas side by side."""
        groups: dict[tuple[int, int], list[dict[str, Any]]] = {}
        for s in arr["shards"]:
            start, stop = s["index"][0]
            groups.setdefault((int(start), int(stop)), []).append(s)
        text_pen = QPen(QColor("white"))
        for (start, stop), shards in sorted(groups.items()):
            if stop <= start:
                continue
            top = rect.top() + rect.height() * start / axis_len
            height = rect.height() * (stop - start) / axis_len
            n = len(shards)
            for k, s in enumerate(sorted(shards, key=lambda s: s["device"])):
                cell = QRectF(rect.left() + rect.width() * k / n, top, rect.width() / n, height)
                p.fillRect(cell, device_colour(int(s["device"])))
                p.setPen(QPen(self.palette().base().color(), 1))
                p.drawRect(cell)
                label = f"{s['device']}" + (f" ×{n}" if n > 1 and k == 0 else "")
                if cell.height() >= p.fontMetrics().height() and cell.width() >= p.fontMetrics().horizontalAdvance(label):
                    p.setPen(text_pen)
                    p.drawText(cell, Qt.AlignmentFlag.AlignCenter, label)
            if n > 1:  # replicated: the same rows are held by n devices
                p.setPen(QPen(QColor("white"), 1, Qt.PenStyle.DashLine))
                p.drawRect(QRectF(rect.left(), top, rect.width(), height))


def _preview() -> None:  # python -m som_studio.qt.widgets.sharding_view
    from PySide6.QtWidgets import QApplication

    from som_studio.qt.sharding_layout import layout_description

    app = QApplication([])
    view = ShardingView()
    view.description = layout_description("2x2", 135, 240, 3, 1000)
    view.note = "fake 2x2 layout"
    view.resize(700, 320)
    view.show()
    app.exec()


if __name__ == "__main__":
    _preview()
