"""Every catalogued vLLM release against its reference dump (tests/data/engines/vllm-versions)
and the release-dependent parsing: version choice, removed/added/deprecated flags, entry points."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from mgpu_lint.engines import Invocation, parse_launch
from mgpu_lint.engines.catalog import (
    DEFAULT_VLLM_VERSION,
    choose_vllm_version,
    version_key,
    vllm_catalog,
    vllm_versions,
)
from mgpu_lint.findings import Finding
from mgpu_lint.launch import ENTRY_VLLM_API_SERVER

from tests.conftest import DATA

from .wordutil import codes, make_launch, render

REFERENCE = DATA / "engines" / "vllm-versions"

RELEASES = vllm_versions()


@cache
def reference(version: str) -> list[dict[str, Any]]:
    return [r for r in json.loads((REFERENCE / f"{version}.json").read_text("utf-8"))
            if not r["positional"]]


def parse(command: str, version: str | None = None, **kw: Any) -> tuple[Invocation, list[Finding]]:
    return parse_launch(make_launch(command, version_pin=version, **kw))


def test_every_line_from_0_6_to_0_33_is_catalogued() -> None:
    assert len(RELEASES) == 29
    assert {version_key(v)[:2] for v in RELEASES} == {(0, m) for m in range(6, 34)}
    assert RELEASES == tuple(sorted(RELEASES, key=version_key))


def test_releases_are_the_reference_files() -> None:
    assert sorted(RELEASES) == sorted(p.stem for p in REFERENCE.glob("*.json"))


@pytest.mark.parametrize("version", RELEASES)
def test_release_matches_reference(version: str) -> None:
    """Spellings, negative forms, booleans, choices and arities, option by option."""
    catalog = vllm_catalog(version)
    ref = reference(version)
    assert len(catalog.options) == len(ref)
    for r in ref:
        opt = catalog.by_key[r["dest"]]
        where = (version, r["dest"])
        assert list(opt.names) == r["names"], where
        assert list(opt.neg) == r["neg_names"], where
        if r["action"] == "StoreBoolean":  # bare flag, or the word true/false
            assert (opt.type, opt.nargs, opt.const) == ("bool", "?", True), where
        else:
            assert opt.is_bool == (r["is_bool"] and not r["takes_value"]), where
        assert opt.takes_value == r["takes_value"], where
        assert opt.nargs == (1 if r["nargs"] is None else r["nargs"]), where
        if r["dest"] != "optimization_level":  # validated 0-3 after argparse (vllm-notes §3)
            assert list(opt.choices or []) == (r["choices"] or []), where
        assert (opt.repeat == "append") == (r["action"] == "_AppendAction"), where
        assert opt.type != "help" or r["type"] == "help"
    spellings = {n for r in ref for n in r["names"] + r["neg_names"]}
    assert set(catalog.by_spelling) == spellings
    # every spelling another release accepts is retired here, with the right releases
    for flag in catalog.retired:
        (name,) = flag.names
        assert name not in spellings
        if flag.last is not None:
            assert version_key(flag.last) < version_key(version)
            assert name in {n for r in reference(flag.last) for n in r["names"] + r["neg_names"]}
        if flag.since is not None:
            assert version_key(flag.since) > version_key(version)
            assert name in {n for r in reference(flag.since)
                            for n in r["names"] + r["neg_names"]}


def test_every_spelling_of_every_release_parses() -> None:
    for version in RELEASES:
        catalog = vllm_catalog(version)
        for r in reference(version):
            spec = catalog.by_key[r["dest"]]
            if spec.type == "help" or spec.key in ("model", "config"):
                continue
            for spelling in r["names"] + r["neg_names"]:
                value = "" if not spec.takes_value or spec.nargs == "?" else " " + (
                    str(spec.choices[0]) if spec.choices else "2")
                command = f"vllm serve org/model {spelling}{value}"
                if spec.type in ("json", "json_or_str") and value:
                    command = f"vllm serve org/model {spelling} {{}}"
                inv, findings = parse(command, version)
                errors = [f for f in findings if f.code in ("MG004", "MG005", "MG013")]
                assert not errors, (version, render(errors))
                assert [o.key for o in inv.occurrences] == [spec.key], (version, spelling)


def test_choosing_a_release() -> None:
    assert choose_vllm_version(None) == (DEFAULT_VLLM_VERSION, None)
    assert choose_vllm_version("latest") == (RELEASES[-1], None)
    assert choose_vllm_version("0.8.5") == ("0.8.5.post1", None)  # same option code
    assert choose_vllm_version("0.6.6") == ("0.6.6.post1", None)
    assert choose_vllm_version("0.10.0") == ("0.10.0", None)
    for requested, chosen, why in [
        ("0.8.4", "0.8.5.post1", "of the 0.8 line"),
        ("0.7.2", "0.7.3", "of the 0.7 line"),
        ("0.10.1.1", "0.10.2", "of the 0.10 line"),
        ("0.30.1", "0.30.0", "of the 0.30 line"),
        ("0.9.0rc1", "0.9.2", "of the 0.9 line"),
        ("0.5.4", "0.6.6.post1", "nearest"),
        ("0.34.0", "0.33.0", "nearest"),
        ("1.0.0", "0.33.0", "nearest"),
        ("nightly", DEFAULT_VLLM_VERSION, "default"),
        ("sha256:0123abcd", DEFAULT_VLLM_VERSION, "default"),
    ]:
        choice = choose_vllm_version(requested)
        assert choice.version == chosen and choice.note is not None and why in choice.note, \
            requested


def test_removed_and_added_flags_name_the_release() -> None:
    _, findings = parse("vllm serve m --swap-space 4", "0.17.1")
    assert not findings
    _, findings = parse("vllm serve m --swap-space 4", "0.18.1")
    assert codes(findings) == ["MG004"]
    assert "removed after vLLM 0.17.1" in findings[0].message
    _, findings = parse("vllm serve m --log-level info", "0.30.0")
    assert "added later (vLLM 0.31.0 accepts it)" in findings[0].message
    _, findings = parse("vllm serve m --disable-log-requests", "0.20.2")
    assert "removed after vLLM 0.16.0 (and accepted again from 0.33.0)" in findings[0].message
    _, findings = parse("vllm serve m --disable-log-requests", "0.33.0")
    assert not findings  # the inverse of --enable-log-requests there


def test_deprecated_flags() -> None:
    _, findings = parse("vllm serve m --disable-log-requests", "0.10.2")
    assert codes(findings) == ["MG008"] and "removed after 0.16.0" in findings[0].message
    _, findings = parse("vllm serve m --disable-log-requests", "0.10.0")
    assert not findings  # a plain store_true before 0.10.2
    _, findings = parse("vllm serve m --worker-use-ray", "0.6.6")
    assert codes(findings) == ["MG008"] and "--distributed-executor-backend" in \
        findings[0].message


def test_boolean_styles() -> None:
    inv, findings = parse("vllm serve m --enable-chunked-prefill false", "0.7.3")
    assert not findings and inv.setting("enable_chunked_prefill").value is False
    inv, findings = parse("vllm serve m --enable-chunked-prefill", "0.6.6.post1")
    assert not findings and inv.setting("enable_chunked_prefill").value is True
    _, findings = parse("vllm serve m --enable-chunked-prefill maybe", "0.7.3")
    assert codes(findings) == ["MG006"] and "Expected 'true' or 'false'" in findings[0].message
    _, findings = parse("vllm serve m --no-enable-chunked-prefill", "0.7.3")
    assert "added later (vLLM 0.8.5.post1" in findings[0].message
    _, findings = parse("vllm serve m --enable-chunked-prefill false", "0.8.5")
    assert codes(findings) == ["MG006"] and "takes no value" in findings[0].message
    inv, findings = parse("vllm serve m --disable-chunked-prefill", "0.33.0")
    assert not findings and inv.setting("enable_chunked_prefill").value is False
    _, findings = parse("vllm serve m --disable-chunked-prefill", "0.32.0")
    assert "added later (vLLM 0.33.0" in findings[0].message


def test_optimization_flag() -> None:
    inv, findings = parse('vllm serve m -O {"level":3}', "0.11.2")
    assert not findings and inv.setting("compilation_config").value == {"level": 3}
    inv, findings = parse("vllm serve m -O3", "0.8.5")
    assert not findings and inv.setting("compilation_config").value == 3
    _, findings = parse('vllm serve m -O {"level":3}', "0.12.0")
    assert codes(findings) == ["MG006"] and "-cc" in (findings[0].hint or "")
    inv, findings = parse("vllm serve m -O3", "0.12.0")
    assert not findings and inv.setting("optimization_level").value == "3"


def test_model_by_release() -> None:
    _, findings = parse("vllm serve -tp 2", "0.7.3")
    assert codes(findings) == ["MG016"] and "requires the model" in findings[0].message
    _, findings = parse("vllm serve --model org/m", "0.6.6.post1")
    assert codes(findings) == ["MG016"] and "only as the positional" in findings[0].message
    for version in ("0.8.5", "0.9.2", "0.10.2"):
        _, findings = parse("vllm serve --model org/m", version)
        assert codes(findings) == ["MG016"] and "ValueError" in findings[0].message
        inv, findings = parse("vllm serve --model=org/m", version)
        assert not findings and inv.model is not None and inv.model.value == "org/m"
    _, findings = parse("vllm serve --model org/m", "0.11.2")
    assert codes(findings) == ["MG008"]
    _, findings = parse("vllm serve -tp 2", "0.9.2")
    assert codes(findings) == ["MG016"] and "facebook/opt-125m" in findings[0].message
    api = {"entry": ENTRY_VLLM_API_SERVER, "engine": "vllm", "skip": 3}
    _, findings = parse("python3 -m vllm.entrypoints.openai.api_server org/m", "0.9.2", **api)
    assert codes(findings) == ["MG016"] and "rejects it" in findings[0].message
    _, findings = parse("python3 -m vllm.entrypoints.openai.api_server org/m", "0.10.0", **api)
    assert codes(findings) == ["MG016"] and "ignores it" in findings[0].message
    _, findings = parse("python3 -m vllm.entrypoints.openai.api_server --model m", "0.28.0", **api)
    assert not findings
    _, findings = parse("python3 -m vllm.entrypoints.openai.api_server --model m", "0.29.0", **api)
    assert codes(findings) == ["MG008"]


def test_defaults_follow_the_release() -> None:
    inv, _ = parse("vllm serve m", "0.19.1")
    assert inv.gpu_memory_utilization.value == 0.9
    inv, _ = parse("vllm serve m", "0.20.2")
    assert inv.gpu_memory_utilization.value == 0.92
    inv, _ = parse("vllm serve m", "0.7.3")
    assert inv.max_num_seqs.value == 256 and not inv.max_num_seqs.given  # V0 engine
    inv, _ = parse("vllm serve m", "0.8.5")
    assert inv.max_num_seqs.value is None  # V1 decides by GPU memory at start-up
    inv, _ = parse("vllm serve", "0.9.2")
    assert inv.model is not None and inv.model.value == "facebook/opt-125m"
    inv, _ = parse("vllm serve", "0.10.0")
    assert inv.model is not None and inv.model.value == "Qwen/Qwen3-0.6B"
