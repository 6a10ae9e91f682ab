"""Fail only on a gross speed regression: the quick benchmark's ratio against the baseline's.

The ratio is mgpu-lint's time over yamllint's on the same files (lower is better); when yamllint
is missing in either run it is mgpu-lint's time over bare YAML composition.  Both are measured in
one run on one machine, so the check does not depend on how fast the CI machine is; it never
looks at absolute times.  It fails when the ratio is more than ``FACTOR`` times the recorded one.

    .venv/bin/python bench/check_regression.py                    # runs `run.py --quick` first
    .venv/bin/python bench/check_regression.py --results FILE     # a finished quick run
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BASELINE = HERE / "baseline.json"
FACTOR = 5.0


def compare(current: dict[str, object], baseline: dict[str, object],
            factor: float = FACTOR) -> tuple[bool, str]:
    """(passed, explanation) for one quick run against the baseline's quick run."""
    key = "ratio_vs_yamllint"
    if current.get(key) is None or baseline.get(key) is None:
        key = "ratio_vs_composition"
    now, then = current[key], baseline[key]
    assert isinstance(now, (int, float)) and isinstance(then, (int, float))
    passed = now <= factor * then
    verdict = "ok" if passed else f"REGRESSION (more than {factor:g}x the baseline)"
    return passed, f"{key}: {now} now, {then} in baseline.json: {verdict}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=None,
                        help="results.json of a finished `run.py --quick` (default: run it now)")
    args = parser.parse_args(argv)
    if args.results is None:
        sys.path.insert(0, str(HERE))
        import run

        current = run.measure(quick=True)
    else:
        current = json.loads(args.results.read_text(encoding="utf-8"))
    if current.get("mode") != "quick":
        print("check_regression: compare a quick run (run.py --quick)", file=sys.stderr)
        return 2
    baseline = json.loads(BASELINE.read_text(encoding="utf-8"))["quick"]
    passed, message = compare(current, baseline)
    print(message)
    repo_now, repo_then = current.get("repository"), baseline.get("repository")
    if isinstance(repo_now, dict) and isinstance(repo_then, dict) \
            and "ratio_vs_yamllint" in repo_now and "ratio_vs_yamllint" in repo_then:
        repo_passed, repo_message = compare(repo_now, repo_then)
        print(f"repository scenario: {repo_message}")
        passed = passed and repo_passed
    return 0 if passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
