"""The commands under ``--lang ko``: refusals, flag-value errors and the bench table read in Korean."""

from __future__ import annotations

from pathlib import Path

import pytest

from som_studio import cli, i18n

IRIS = Path(__file__).resolve().parents[2] / "resources" / "data" / "iris.csv"


@pytest.fixture(autouse=True)
def _english_after():
    yield
    i18n.install("en")  # a Korean test must not leave later tests' messages in Korean


def _error(capsys, argv: list[str]) -> str:
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse's own refusals
        code = exc.code
    assert code == 2
    return capsys.readouterr().err


def test_a_bad_flag_value_is_refused_in_korean(capsys, english_left):
    err = _error(capsys, ["--lang", "ko", "bench", "--epochs", "0"])
    assert "오류: 인자 --epochs: 1 이상이어야 합니다 (받은 값: 0)" in err
    err = _error(capsys, ["--lang", "ko", "bench", "--grid", "12by8"])
    assert "WIDTHxHEIGHT 형식이어야 합니다" in err and english_left(err) == []
    # The same refusal in English by default.
    assert "must be at least 1, got 0" in _error(capsys, ["bench", "--epochs", "0"])


def test_a_configuration_refusal_names_the_flag_and_says_why_in_korean(capsys, english_left):
    err = _error(capsys, ["--lang", "ko", "bench", "--impl", "numpy-online", "--epochs", "5"])
    assert err.startswith("som-studio bench: 오류: --epochs: 배치 구현에 쓰는 옵션인데")
    assert english_left(err) == []
    err = _error(capsys, ["--lang", "ko", "bench", "--impl", "jax-shardmap-batch", "--layout", "16x16"])
    assert "--layout: 장치 배치 16x16에는 장치 256개가 필요하지만" in err and english_left(err) == []


@pytest.mark.cpu_backend  # the remedy, more simulated CPU devices, is the CPU backend's
def test_a_layout_refusal_names_its_remedy_by_its_flag_in_korean(capsys, english_left):
    err = _error(capsys, ["--lang", "ko", "bench", "--impl", "jax-shardmap-batch", "--layout", "4x4"])
    assert "가상 CPU 장치를 늘리세요: --cpu-devices 16" in err  # the remedy, named by its flag
    assert english_left(err) == []


def test_a_non_numeric_column_in_data_is_refused_in_korean(capsys, english_left):
    err = _error(capsys, ["--lang", "ko", "bench", "--data", str(IRIS), "--epochs", "1"])
    assert "숫자가 아닌 값 'setosa'" in err and "(--labels species)" in err
    assert english_left(err) == []


def test_a_file_that_is_not_a_run_is_refused_in_korean(tmp_path, capsys, english_left):
    bad = tmp_path / "bad.somrun"
    bad.write_text("just some notes\n")
    err = _error(capsys, ["--lang", "ko", "project", str(bad), str(IRIS), "--out", "-"])
    assert "SOM Studio 실행 파일이 아닙니다" in err and "텍스트 파일입니다" in err
    assert english_left(err) == []


def test_the_bench_table_reads_in_korean(capsys, english_left):
    argv = ["bench", "--impl", "numpy-batch,numpy-online", "--grid", "5x4", "--samples", "40"]
    argv += ["--epochs", "2", "--steps", "40", "-q"]
    assert cli.main(["--lang", "ko", *argv]) == 0
    out = capsys.readouterr()
    head = out.out.splitlines()[0].split()
    assert head[:3] == ["구현", "종류", "상태"] and "중앙값" in " ".join(head)
    assert "속도 향상" in out.out.splitlines()[0]  # the report's words
    assert "배치    완료" in out.out and "온라인  완료" in out.out  # columns padded by terminal width
    assert english_left(out.out + out.err) == []
    assert cli.main(argv) == 0  # English stays the default
    assert capsys.readouterr().out.split()[:3] == ["implementation", "kind", "status"]
