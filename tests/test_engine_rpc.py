"""rpc-server / ggml-rpc-server argument parsing."""

from __future__ import annotations

import json
from typing import Any

from mgpu_lint.engines import Invocation, parse_launch
from mgpu_lint.findings import Finding

from tests.conftest import DATA

from .wordutil import codes, list_launch, make_launch, render

REFERENCE = DATA / "engines"


def parse(command: str) -> tuple[Invocation, list[Finding]]:
    return parse_launch(make_launch(command, engine="rpc-server"))


def test_every_reference_spelling_is_accepted() -> None:
    for r in json.loads((REFERENCE / "rpc-server.json").read_text("utf-8")):
        value = {"int": " 2", "string": " 127.0.0.1"}.get(r["value_type"], " CUDA0")
        for spelling in r["names"]:
            _, findings = parse(f"rpc-server {spelling}{value if r['nargs'] else ''}")
            assert not findings, (spelling, render(findings))


def test_settings() -> None:
    command = "ggml-rpc-server -H 0.0.0.0 -p 50053 -c -d CUDA0,CUDA1 -t 8"
    inv, findings = parse(command)
    assert not findings
    assert inv.host.value == "0.0.0.0" and inv.port.value == 50053
    assert inv.cache.value is True and inv.device.value == ["CUDA0", "CUDA1"]
    assert inv.threads.value == 8
    span = inv.host.span
    assert span is not None and command[span.start:span.end] == "0.0.0.0"
    inv, _ = parse("rpc-server")
    assert inv.host.value == "127.0.0.1" and not inv.host.given and inv.port.value == 50052
    assert inv.cache.value is False


def test_removed_and_unknown() -> None:
    _, findings = parse("rpc-server --mem 2048 -H 127.0.0.1 --hots x")
    assert codes(findings) == ["MG004", "MG004"]
    assert "removed" in findings[0].message and "#16616" in (findings[0].hint or "")
    assert "did you mean --host?" in findings[1].message


def test_invalid_values() -> None:
    inv, findings = parse("rpc-server -p 70000 -t 0 -H")
    assert codes(findings) == ["MG005", "MG006", "MG006"]
    assert not inv.port.known


def test_glued_list_item() -> None:
    launch = list_launch(["-H 0.0.0.0", "-p", "50052"], engine="rpc-server",
                         program="rpc-image")
    inv, findings = parse_launch(launch)
    assert codes(findings) == ["MG014"] and not inv.host.known


def test_unresolved_host() -> None:
    inv, findings = parse("rpc-server -H $BIND -p 50052")
    assert codes(findings) == ["MG009"] and "MG601" in findings[0].message
    assert not inv.host.known


def test_report_snapshot(snapshot: Any) -> None:
    _, findings = parse("rpc-server -H 0.0.0.0 -p 50052 -p 50053 -m 4096 --cache")
    assert render(findings) == snapshot
