"""Resource figures for the hostile corpus: every case of tests/hostile_cases.py at full size,
each linted by the installed CLI in its own process.  Prints one line per case (exit code, wall
seconds, peak RSS, whether it ended in MG000, a traceback or a signal) and the worst wall time
and peak RSS; writes bench/out/hostile.json.

    .venv/bin/python bench/hostile.py            # full sizes (9 MiB words, 20,000 launches, ...)
    .venv/bin/python bench/hostile.py --scale 0.05 -k ts-

Limits of the promise (issue 20): under 10 MiB of input, at most 10 s and 500 MiB, no signal, no
MG000, no traceback.  Exit status 1 when a case breaks one of them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.hostile_cases import CASES  # noqa: E402

MAX_SECONDS = 10.0
MAX_RSS_MIB = 500.0
KILL_AFTER = 60.0


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # far above the promise, only so that a runaway case cannot take the shared machine down
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


def run_cli(args: list[str], cwd: Path, timeout: float = KILL_AFTER) -> dict:
    """Run ``mgpu-lint`` on ``args`` in ``cwd``; wall seconds, peak RSS (MiB), outcome."""
    fmt = [] if "--format" in args else ["--format", "json"]
    cmd = [sys.executable, "-m", "mgpu_lint.cli", "--no-color", *fmt, *args]
    if args and args[0] == "launches":  # a sub-command: its own options after its name
        cmd = [sys.executable, "-m", "mgpu_lint.cli", *args]
    out_path = cwd.parent / (cwd.name + ".out")
    err_path = cwd.parent / (cwd.name + ".err")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                preexec_fn=_limits)
        timed_out = False
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                timed_out = True
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.01)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    stdout = out_path.read_bytes()
    stderr = err_path.read_bytes().decode("utf-8", "replace")
    rc = proc.returncode
    return {
        "rc": rc,
        "wall_s": round(wall, 3),
        "rss_mib": round(usage.ru_maxrss / 1024, 1),
        "timed_out": timed_out,
        "signal": signal.Signals(-rc).name if rc < 0 and not timed_out else None,
        # SARIF lists every rule, MG000 too, in its driver; a result names its rule as ruleId
        "mg000": (b'"ruleId":"MG000"' in stdout if b'"$schema"' in stdout[:200]
                  else b'"MG000"' in stdout or b" MG000 " in stdout),
        "traceback": "Traceback (most recent call last)" in stderr,
        "stderr": stderr[-400:],
        "out_bytes": len(stdout),
    }


def broken(r: dict) -> list[str]:
    why = []
    if r["timed_out"] or r["wall_s"] > MAX_SECONDS:
        why.append(f"{r['wall_s']} s")
    if r["rss_mib"] > MAX_RSS_MIB:
        why.append(f"{r['rss_mib']} MiB")
    if r["signal"]:
        why.append(r["signal"])
    if r["rc"] not in (0, 1) and not r["signal"] and not r["timed_out"]:
        why.append(f"exit {r['rc']}")
    if r["mg000"]:
        why.append("MG000")
    if r["traceback"]:
        why.append("traceback")
    return why


def input_bytes(d: Path) -> int:
    total = 0
    for p in d.rglob("*"):
        if p.is_file() and not p.is_symlink():
            total += p.stat().st_size
    return total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("-k", default="", help="only cases whose name contains this")
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "hostile.json"))
    ns = ap.parse_args(argv)
    results = {}
    bad = 0
    with tempfile.TemporaryDirectory(prefix="mgpu-hostile-") as tmp:
        for name, case in CASES.items():
            if ns.k not in name:
                continue
            d = Path(tmp) / name
            d.mkdir()
            args = case(d, ns.scale)
            size = input_bytes(d)
            r = run_cli(args, d)
            r["input_bytes"] = size
            why = broken(r)
            if size > 10 * 1024 * 1024 and why:
                why = [w + " (input over 10 MiB)" for w in why]
            else:
                bad += bool(why)
            results[name] = {**r, "broken": why}
            print(f"{name:34} rc={r['rc']:>3} {r['wall_s']:7.2f} s {r['rss_mib']:7.1f} MiB "
                  f"{size / 1024:9.0f} KiB  {' '.join(why) or 'ok'}", flush=True)
    if results:
        worst_t = max(results, key=lambda n: results[n]["wall_s"])
        worst_m = max(results, key=lambda n: results[n]["rss_mib"])
        summary = {"cases": len(results), "broken": bad,
                   "worst_wall_s": results[worst_t]["wall_s"], "worst_wall_case": worst_t,
                   "peak_rss_mib": results[worst_m]["rss_mib"], "peak_rss_case": worst_m,
                   "scale": ns.scale}
        print(f"\n{len(results)} cases, {bad} broken; worst wall {summary['worst_wall_s']} s "
              f"({worst_t}), peak RSS {summary['peak_rss_mib']} MiB ({worst_m})")
        Path(ns.out).parent.mkdir(parents=True, exist_ok=True)
        Path(ns.out).write_text(json.dumps({"summary": summary, "cases": results}, indent=2))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
