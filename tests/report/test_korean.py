"""The comparison report in Korean: headings, tables, flags and explanations."""

from __future__ import annotations

import pytest

from som_studio import i18n
from som_studio.report.content import build_report
from som_studio.report.html import report_html
from som_studio.session.record import Chunk, RunRecord
from som_studio.storage.runfile import StoredRun


@pytest.fixture
def korean():
    i18n.install("ko")
    yield
    i18n.install("en")


def _record(impl: str, kind: str, grid: list[int], status: str = "ok", **kw) -> RunRecord:
    count = {"steps": 60} if kind == "online" else {"epochs": 6}
    return RunRecord(
        impl=impl,
        kind=kind,
        config={"impl": impl, "grid": grid, "data": {"source": "random", "samples": 50}, **count},
        status=status,
        samples=50,
        **kw,
    )


def _runs() -> list[StoredRun]:
    timed = {"chunks": [Chunk(i, 1, 0.01 + 0.02 * (i % 2)) for i in range(6)], "compile_s": 0.0, "qe": 0.1, "te": 0.02}
    ok = _record("numpy-batch", "batch", [8, 5], history=[{"iteration": 0, "qe": 0.3, "te": 0.1}], **timed)
    other_problem = _record("jax-vmap-batch", "batch", [12, 8], compiles=3, warmup_compiles=1, **timed)
    cancelled = _record("jax-jit-online", "online", [8, 5], "cancelled", chunks=[Chunk(0, 10, 0.01)])
    failed = _record("numpy-online", "online", [8, 5], "failed", message="memory: too big")
    return [StoredRun(r) for r in (ok, other_problem, cancelled, failed)]


def test_the_html_report_speaks_korean(korean, english_left):
    report = build_report(_runs())
    html = report_html(report, {})
    assert '<html lang="ko">' in html
    for word in ("요약", "주의해서 볼 점", "반복당 시간", "학습 중 지도 품질", "설정", "환경"):
        assert f">{word}</h2>" in html
    # Heading cells of the summary (its columns are the runs, its rows the measures).
    for cell in ("<th>구현</th>", ">속도 향상</th>", ">최대 메모리</th>", ">QE</th>", ">표본/s</th>"):
        assert cell in html
    assert "samples/s" not in html  # the explanation names the column as its heading does
    assert "해당 없음: 다른 문제" in html  # the run of another problem has no speed-up
    assert '<td class="status-cancelled">취소됨</td>' in html and '<td class="status-failed">실패</td>' in html
    assert "워밍업 후 2번 더 컴파일했습니다" in html
    assert english_left(html) == []


def test_the_summary_keeps_english_keys_for_the_files(korean):
    report = build_report(_runs())
    assert report.SUMMARY_HEADER[0] == "implementation" and report.summary_labels()[0] == "구현"
    assert report.summary_values()[0]["status"] == "ok"  # what the JSON and CSV carry
    assert report.summary_rows()[0][2] == "완료"


def test_the_report_is_english_by_default(english_left):
    html = report_html(build_report(_runs()), {})
    assert '<html lang="en">' in html and ">Summary</h2>" in html and "n/a: different problem" in html
    assert english_left(html) != []  # the check finds English where there is English
