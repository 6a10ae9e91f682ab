"""GitHub Actions annotations: `::error file=…,line=…,col=…,endLine=…,endColumn=…,title=CODE::…`."""

from __future__ import annotations

import pytest
from mgpu_lint.cli import main
from mgpu_lint.findings import Finding, Severity
from mgpu_lint.report.github import escape_data, escape_property, render
from mgpu_lint.source import SourceFile, Span


def github(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main(["--format", "github", *args])
    return code, capsys.readouterr().out.splitlines()


def test_cli_annotation_with_exact_range(capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = github(capsys, "fixtures/bad/unbalanced-quote.sh")
    assert code == 1
    assert lines == [(
        "::error file=fixtures/bad/unbalanced-quote.sh,line=2,col=12,endLine=2,endColumn=13,"
        "title=MG003::unbalanced double quote: no closing \" before the end of the text"
        "%0Ahint: close the quote or escape it as \\\""
    )]


def test_severities_map_to_commands(capsys: pytest.CaptureFixture[str]) -> None:
    _, lines = github(capsys, "fixtures/bad/helm-template.yaml", "fixtures/bad/invalid.yaml")
    assert [ln.split(" ", 1)[0] for ln in lines] == ["::notice", "::error"]
    src = SourceFile("w.sh", "vllm serve x\n", "shell")
    warning = Finding("MG007", Severity.WARNING, "twice", src, Span(5, 10))
    assert render([warning]) == (
        "::warning file=w.sh,line=1,col=6,endLine=1,endColumn=11,title=MG007::twice\n")


def test_command_text_has_no_file_property(capsys: pytest.CaptureFixture[str]) -> None:
    _, lines = github(capsys, "--command", "vllm serve 'x")
    assert lines == [("::error title=MG003::<command>:1:12: unbalanced single quote: no closing ' "
                      "before the end of the text%0Ahint: close the quote or escape it as \\'")]


def test_escaping_of_data_and_properties() -> None:
    assert escape_data("100% a\r\nb: c, d") == "100%25 a%0D%0Ab: c, d"
    assert escape_property("dir:x,y/a%b\n") == "dir%3Ax%2Cy/a%25b%0A"
    src = SourceFile("C:dir,with/odd%name.sh", "é🙂 vllm serve\n", "shell")
    f = Finding("MG004", Severity.ERROR, "50% off:\nsecond line", src, Span(3, 7),
                math=("a = b",), hint="do x, then y")
    assert render([f]) == (
        "::error file=C%3Adir%2Cwith/odd%25name.sh,line=1,col=4,endLine=1,endColumn=8,"
        "title=MG004::50%25 off:%0Asecond line%0Aa = b%0Ahint: do x, then y\n")


def test_multi_line_span_and_no_findings(capsys: pytest.CaptureFixture[str]) -> None:
    src = SourceFile("m.sh", "vllm serve \\\n  --tp 2\n", "shell")
    f = Finding("MG005", Severity.ERROR, "split", src, Span(11, 15))
    assert "line=1,col=12,endLine=2,endColumn=3," in render([f])
    assert render([]) == ""
    code, lines = github(capsys, "--command", "vllm serve Qwen/Qwen3-8B --port 8000")
    assert code == 0 and lines == []
