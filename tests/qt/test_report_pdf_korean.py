"""The PDF report in Korean: a Hangul font is embedded and its text can be extracted."""

from __future__ import annotations

import io
import re

import pytest

pytest.importorskip("pyqtgraph")

from som_studio import i18n
from som_studio.qt import report_render
from som_studio.report.content import build_report
from tests.qt.test_report_render import _runs


@pytest.fixture
def korean():
    i18n.install("ko")
    yield
    i18n.install("en")


def test_the_korean_pdf_embeds_a_hangul_font_and_its_text_extracts(qapp, korean) -> None:
    from pypdf import PdfReader

    from som_studio.qt.i18n import hangul_family

    family = hangul_family()
    if family is None:
        pytest.skip("no font with Hangul glyphs is installed (Debian/Ubuntu: fonts-noto-cjk or fonts-nanum)")
    assert report_render.report_font_families() == ["DejaVu Sans", family]
    report = build_report(_runs())
    pdf = report_render.pdf_bytes(report, report_render.render_charts(report))
    # Embedded (a font file), with a map back to Unicode: text, not outlines.
    fonts = set(re.findall(rb"/BaseFont\s*/([^\s/]+)", pdf))
    stem = family.replace(" ", "").encode()[:8]
    assert any(stem.lower() in f.lower() for f in fonts), (family, fonts)
    assert re.search(rb"/FontFile[23]?\b", pdf) and b"/ToUnicode" in pdf
    reader = PdfReader(io.BytesIO(pdf))
    # Without spaces: a reader puts some between runs of the two fonts ("6 회").
    text = "".join("".join(p.extract_text().split()) for p in reader.pages)
    for words in ("요약", "주의해서볼점", "반복당시간", "설정", "환경", "반복6회중3회후취소되었습니다", "0.1000"):
        assert words in text, words
    assert reader.metadata.title.startswith("SOM Studio 비교")


def test_the_english_pdf_keeps_its_font(qapp) -> None:
    assert report_render.report_font_families() == ["DejaVu Sans"]


def test_a_pdf_whose_korean_no_font_can_draw_says_so(qapp, korean, tmp_path, monkeypatch, capsys) -> None:
    """Without a Hangul font Qt draws Korean as empty boxes, and the command said only that it wrote the file."""
    from som_studio import cli
    from som_studio.qt import i18n as qt_i18n

    data = tmp_path / "survey.csv"
    data.write_text("나이,점수\n" + "".join(f"{20 + k % 30},{k * 0.5}\n" for k in range(40)), encoding="utf-8")
    args = ["compare", "--data", str(data), "--impl", "numpy-batch", "--grid", "4x3", "--epochs", "2", "--quiet"]
    for family, warned in ((None, True), ("Noto Sans CJK KR", False)):
        monkeypatch.setattr(qt_i18n, "hangul_family", lambda families=None, f=family: f)
        pdf = tmp_path / f"{family}.pdf"
        assert cli.main([*args, "--pdf", str(pdf), "--force"]) == 0
        err = capsys.readouterr().err
        assert pdf.is_file()
        assert ("Hangul" in err or "한글" in err) == warned, err
    i18n.install("en")  # an English report of an English table holds no Hangul: nothing to say
    monkeypatch.setattr(qt_i18n, "hangul_family", lambda families=None: None)
    report = build_report(_runs())
    assert report_render.missing_glyphs(report) is None
