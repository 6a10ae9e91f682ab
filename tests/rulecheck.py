"""Shared checks for rule fixtures: fixtures/rules/<CODE>/fires-*.* and silent-*.*.

Each rule family's test module parametrises over its codes' fixtures and pins the text report of
each one with a snapshot (read every line of a changed snapshot before accepting it).  The
snapshot is the report with ``--select CODE`` (the fixture's directory), so a new rule or a change
to another rule never changes this rule's snapshots; the fixture is also linted with every rule on,
which must give no internal error and the same findings of CODE.
"""

from __future__ import annotations

from pathlib import Path

from mgpu_lint.cli import main

from tests.conftest import ROOT

RULE_FIXTURES = ROOT / "fixtures" / "rules"


def fixtures_for(codes: list[str]) -> list[str]:
    out = []
    for code in codes:
        d = RULE_FIXTURES / code
        out.extend(str(p.relative_to(ROOT)) for p in sorted(d.iterdir()) if p.is_file())
    return out


def lint_text(capsys, path: str, *extra: str) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    code = main(["--no-color", *extra, path])
    return code, capsys.readouterr().out


def lint_command(capsys, command: str) -> str:  # type: ignore[no-untyped-def]
    """The text report for one `--command` line."""
    main(["--no-color", "--command", command])
    return capsys.readouterr().out


def check_fixture(capsys, path: str) -> str:  # type: ignore[no-untyped-def]
    """Lint one rule fixture: `fires-*` must report its directory's code, `silent-*` must not."""
    code_dir = Path(path).parent.name
    _, everything = lint_text(capsys, path)
    assert "MG000" not in everything, everything
    exit_code, out = lint_text(capsys, path, "--select", code_dir)
    assert exit_code in (0, 1)
    assert _own(out, code_dir) == _own(everything, code_dir), "--select changed the findings"
    name = Path(path).name
    hit = f": {code_dir} [" in out
    if name.startswith("fires-"):
        assert hit, f"{path} should report {code_dir}:\n{out}"
    else:
        assert name.startswith("silent-"), f"fixture names start with fires- or silent-: {path}"
        assert not hit, f"{path} must not report {code_dir}:\n{out}"
    return out


def _own(report: str, code: str) -> list[str]:
    """The finding lines of ``code`` in a text report."""
    return [line for line in report.splitlines() if f": {code} [" in line]
