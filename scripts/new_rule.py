#!/usr/bin/env python3
"""Scaffold a new rule: its function in a rule family module, two fixtures and a snapshot test.

    python scripts/new_rule.py MG206 pp-over-pcie-few-layers interconnect \\
        "pipeline parallelism over PCIe with few layers per stage"

writes
  rules/<family>.py                      a @rule function (docstring in the three sections) put in
                                         the module's RULES list; it yields nothing yet
  fixtures/rules/<CODE>/fires-example.sh a launch the rule must report (edit it)
  fixtures/rules/<CODE>/silent-example.sh a launch it must not report (edit it)
  tests/rules/test_<code>.py             the snapshot test of both fixtures (--select CODE)

The new test fails until the rule reports its fires- fixture, and tests/test_rule_docs.py fails
until the docstring is written and ``python scripts/rule_docs.py`` has made its page: finish
both, run ``make test``, read the new snapshot (``pytest tests/rules/test_<code>.py
--snapshot-update``) and commit.  Then CONTRIBUTING.md's "Adding a rule" checklist applies.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = {"layout": "MG1", "interconnect": "MG2", "memory": "MG3", "moe": "MG4",
            "llamacpp": "MG5", "exposure": "MG6", "operations": "MG7", "startup": "MG8"}

STUB = '''

@rule("{code}", "{name}", Severity.WARNING,
      "{summary}",
      # TODO: the capabilities it needs (engines/adapter.py) and the settings it reads
      needs=(), reads=())
def {func}(d: Deployment) -> Iterator[Finding]:
    """
    What it does: TODO: which launches the rule looks at, and what it compares.

    Why is this bad? TODO: what the engine does with such a launch; cite the engine's source
    file, function and release.

    Use instead: TODO: the launch that is right.
    """
    return  # TODO: yield {func}.finding(message, d.source, span, hint=...)
    yield


'''

FIRES = """#!/usr/bin/env bash
# TODO: a launch that {code} must report.
vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 2
"""

SILENT = """#!/usr/bin/env bash
# TODO: the same launch, done right: {code} must stay silent.
vllm serve meta-llama/Llama-3.1-8B-Instruct
"""

TEST = '''"""{code} {name}: its fixtures, pinned with --select {code}."""

from __future__ import annotations

import pytest

from tests.rulecheck import check_fixture, fixtures_for


@pytest.mark.parametrize("path", fixtures_for(["{code}"]))
def test_fixture(path: str, capsys: pytest.CaptureFixture[str], snapshot) -> None:
    assert check_fixture(capsys, path) == snapshot
'''


def scaffold(root: Path, code: str, name: str, family: str, summary: str) -> list[Path]:
    if not re.fullmatch(r"MG\d{3}", code):
        raise SystemExit(f"usage error: {code!r} is not a rule code like MG206")
    if family not in FAMILIES:
        raise SystemExit(f"usage error: family must be one of {', '.join(FAMILIES)}")
    if not code.startswith(FAMILIES[family]):
        raise SystemExit(f"usage error: {family} rules are {FAMILIES[family]}xx")
    if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", name):
        raise SystemExit(f"usage error: {name!r} is not a kebab-case rule name")
    module = root / "rules" / f"{family}.py"
    text = module.read_text("utf-8")
    if f'"{code}"' in text or (root / "fixtures" / "rules" / code).exists():
        raise SystemExit(f"usage error: {code} exists already")
    func = name.replace("-", "_")
    head = "RULES: list[Rule] = ["
    if text.count(head) != 1:
        raise SystemExit(f"{module}: expected one `{head}` line")
    stub = STUB.format(code=code, name=name, func=func, summary=summary.replace('"', "'"))
    text = text.replace("\n\n\n" + head, stub.rstrip("\n") + "\n\n\n" + head, 1) \
        if "\n\n\n" + head in text else text.replace(head, stub.lstrip("\n") + head, 1)
    text = text.replace(head, f"{head}\n    {func},\n    ", 1)
    written = [module]
    module.write_text(text, "utf-8")
    folder = root / "fixtures" / "rules" / code
    folder.mkdir(parents=True)
    for fname, body in (("fires-example.sh", FIRES), ("silent-example.sh", SILENT)):
        (folder / fname).write_text(body.format(code=code), "utf-8")
        written.append(folder / fname)
    test = root / "tests" / "rules" / f"test_{code.lower()}.py"
    test.write_text(TEST.format(code=code, name=name), "utf-8")
    written.append(test)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("code", help="MGnnn, in its family's range")
    parser.add_argument("name", help="kebab-case name")
    parser.add_argument("family", choices=sorted(FAMILIES))
    parser.add_argument("summary", help="one line: what is wrong")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    for path in scaffold(args.root, args.code, args.name, args.family, args.summary):
        print(f"wrote {path.relative_to(args.root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
