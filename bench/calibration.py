"""Print how the vLLM budget predicts the calibration sweep (not a timed test).

    .venv/bin/python bench/calibration.py [--rows]
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mgpu_lint.sizing import vllm_budget as vb  # noqa: E402

from tests.calibration import GIB, inputs, rows  # noqa: E402


def main() -> int:
    show = "--rows" in sys.argv
    ratios: list[float] = []
    unknown: list[str] = []
    for row in rows():
        x = inputs(row)
        if x is None:
            unknown.append(row.case)
            continue
        b = vb.budget(x)
        r = b.kv_tokens / row.kv_tokens
        ratios.append(r)
        if show:
            print(f"{row.case:28} tokens {b.kv_tokens:>9,} / {row.kv_tokens:>9,} = {r:6.3f}  "
                  f"weights {b.weights / GIB:6.2f} ({row.weights_gib:6.2f})  "
                  f"act {b.activation / GIB:4.2f} ({row.logged('activation peak')})  "
                  f"kv {b.kv_budget / GIB:6.2f} ({row.kv_gib:6.2f})")
    within = sum(1 for r in ratios if abs(r - 1) <= 0.05)
    worst = max(ratios, key=lambda r: max(r, 1 / r))
    print(f"rows: {len(ratios)} predicted, {len(unknown)} not in the catalog "
          f"({', '.join(unknown) or 'none'})")
    print(f"KV tokens predicted / logged: median {statistics.median(ratios):.3f}, worst "
          f"{worst:.3f}, within ±5%: {within} of {len(ratios)} "
          f"({within / len(ratios):.0%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
