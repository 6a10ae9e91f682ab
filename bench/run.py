"""Benchmark the installed mgpu-lint CLI against yamllint and bare YAML composition.

One run measures, on the same generated files (bench/generate.py):

- throughput of ``mgpu-lint --exit-zero --format json DIR`` and ``yamllint DIR`` (files/s);
- YAML composition alone (ruamel.yaml's C ``CBaseLoader``, files read and composed in one process,
  timed inside it) and "work after composition ÷ composition" for mgpu-lint;
- linearity: the same with twice the files;
- one-file cold start of both tools (wall time of the installed CLI, median of several runs);
- peak memory (``ru_maxrss`` of each child, from ``os.wait4``);
- ``python -X importtime`` of a one-command lint, summarised as the ten largest imports.

It prints a table and writes ``bench/out/results.json``.  yamllint is installed into a throwaway
venv under ``bench/out/`` (never a project dependency); when that fails the comparison is skipped
and said so.

    .venv/bin/python bench/run.py            # 1,000 and 2,000 files, 7 cold starts
    .venv/bin/python bench/run.py --quick    # 100 and 200 files, 3 cold starts (CI)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from dataclasses import asdict, dataclass
from pathlib import Path

from generate import generate, make_spec, render  # bench/ is the script's directory
from generate_repo import generate_repo

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
VENV_BIN = ROOT / ".venv" / "bin"
YAMLLINT_VENV = OUT / "yamllint-venv"

COMPOSE_SCRIPT = """
import sys, time
from pathlib import Path
from ruamel.yaml.cyaml import CBaseLoader
paths = sorted(Path(sys.argv[1]).glob("*.yaml"))
t0 = time.perf_counter()
for p in paths:
    loader = CBaseLoader(p.read_text(encoding="utf-8"))
    while loader.check_node():
        loader.get_node()
    loader.dispose()
print(time.perf_counter() - t0)
"""


@dataclass(frozen=True, slots=True)
class Child:
    """One finished child process."""

    wall: float  # seconds
    returncode: int
    maxrss_mib: float
    stdout: bytes


def run_child(cmd: list[str], timeout: float = 600.0) -> Child:
    """Run ``cmd``; wall time and this child's own peak RSS (os.wait4, not RUSAGE_CHILDREN)."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL, cwd=ROOT)
        deadline = t0 + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.002)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        # Linux reports ru_maxrss in KiB
        return Child(wall, proc.returncode, usage.ru_maxrss / 1024, out.read())


def median_child(cmd: list[str], runs: int) -> tuple[float, float]:
    """Median wall time and the largest peak RSS over ``runs`` runs."""
    children = [run_child(cmd) for _ in range(runs)]
    return (statistics.median(c.wall for c in children), max(c.maxrss_mib for c in children))


def yamllint_path() -> Path | None:
    """yamllint from a throwaway venv under bench/out/, installed on first use."""
    exe = YAMLLINT_VENV / "bin" / "yamllint"
    if exe.exists():
        return exe
    try:
        venv.create(YAMLLINT_VENV, with_pip=True, clear=True)
        subprocess.run([str(YAMLLINT_VENV / "bin" / "pip"), "install", "--quiet", "yamllint"],
                       check=True, timeout=300, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"yamllint could not be installed ({exc}); comparison skipped", file=sys.stderr)
        return None
    return exe if exe.exists() else None


def compose_seconds(python: str, directory: Path, runs: int) -> float:
    """Median in-process time to read and compose every file of ``directory``."""
    times = [float(run_child([python, "-c", COMPOSE_SCRIPT, str(directory)]).stdout)
             for _ in range(runs)]
    return statistics.median(times)


def import_times(python: str, top: int = 10) -> dict[str, object]:
    """`-X importtime` of a one-command lint: total, and the largest imports."""
    proc = subprocess.run([python, "-X", "importtime", "-m", "mgpu_lint.cli", "--command",
                           "vllm serve m"], check=False, capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    rows: list[tuple[int, int, int, str]] = []  # (self us, cumulative us, depth, name)
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cum_us, name = line[len("import time:"):].split("|")
        depth = (len(name) - len(name.lstrip(" ")) - 1) // 2
        rows.append((int(self_us), int(cum_us), depth, name.strip()))
    top_level = sorted((r for r in rows if r[2] == 0), key=lambda r: -r[1])[:top]
    by_self = sorted(rows, key=lambda r: -r[0])[:top]
    return {
        "total_ms": round(sum(r[0] for r in rows) / 1000, 1),
        "modules": len(rows),
        "largest_top_level_cumulative_ms": [[r[3], round(r[1] / 1000, 1)] for r in top_level],
        "largest_self_ms": [[r[3], round(r[0] / 1000, 1)] for r in by_self],
    }


LSP_SCRIPT = """
import statistics, sys, time
from mgpu_lint.lsp import lint_text
text = open(sys.argv[1], encoding="utf-8").read()
for _ in range(3):
    lint_text(sys.argv[1], text)  # warm-up: catalogs, grammars, caches
times = []
for i in range(int(sys.argv[2])):
    edited = text.replace("replicas: 1", f"replicas: {1 + i % 3}", 1)  # a real edit each time
    t0 = time.perf_counter()
    lint_text(sys.argv[1], edited)
    times.append(time.perf_counter() - t0)
print(statistics.median(times))
"""


def lsp_manifest(path: Path, target_bytes: int = 27_000) -> int:
    """A multi-document manifest of about ``target_bytes`` (generated Deployments)."""
    docs: list[str] = []
    i = 0
    while sum(len(d) for d in docs) < target_bytes:
        docs.append(render(make_spec(i, 7)))
        i += 1
    text = "---\n".join(docs)
    path.write_text(text, encoding="utf-8")
    return len(text.encode("utf-8"))


def lsp_relint_seconds(python: str, path: Path, runs: int) -> float:
    """Median in-process time of the language server's lint of one open document."""
    return float(run_child([python, "-c", LSP_SCRIPT, str(path), str(runs)]).stdout)


@dataclass(slots=True)
class Throughput:
    files: int
    seconds: float
    files_per_s: float
    maxrss_mib: float


def throughput(cmd: list[str], files: int, runs: int) -> Throughput:
    seconds, rss = median_child(cmd, runs)
    return Throughput(files, round(seconds, 4), round(files / seconds, 1), round(rss, 1))


def count_findings(cli: str, directory: Path) -> dict[str, int]:
    """Files with at least one finding, and the finding count (the generated files all have one
    planted problem; this shows how many the linter catches today)."""
    report = json.loads(run_child([cli, "--exit-zero", "--format", "json", str(directory)]).stdout)
    findings = report.get("findings", [])
    return {"findings": len(findings), "files_with_findings": len({f["path"] for f in findings})}


def compile_bytecode(python: str) -> None:
    """Write the package's ``.pyc`` files first.  An editable install has none, and with
    ``PYTHONDONTWRITEBYTECODE`` set every mgpu-lint start-up would recompile ~80 modules from
    source (~0.2 s) while yamllint, installed from a wheel, starts from bytecode; a user's
    ``pip install`` compiles them too.  compileall writes them whatever that variable says."""
    subprocess.run([python, "-m", "compileall", "-q", str(ROOT / "linter"), str(ROOT / "rules")],
                   check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)


def measure(quick: bool) -> dict[str, object]:
    n = 100 if quick else 1000
    cold_runs = 3 if quick else 7
    repeats = 1 if quick else 3
    python = str(VENV_BIN / "python")
    cli = str(VENV_BIN / "mgpu-lint")
    small, large = OUT / f"k8s-{n}", OUT / f"k8s-{2 * n}"
    generate(n, small)
    generate(2 * n, large)
    one = str(small / "vllm-00000.yaml")
    compile_bytecode(python)

    lint_cmd = [cli, "--exit-zero", "--format", "json"]
    mg = throughput([*lint_cmd, str(small)], n, repeats)
    mg2 = throughput([*lint_cmd, str(large)], 2 * n, repeats)
    mg_cold, mg_cold_rss = median_child([*lint_cmd, one], cold_runs)
    comp = compose_seconds(python, small, repeats)
    # the work of a run beyond start-up, split into composition and everything after it
    after = mg.seconds - mg_cold - comp
    results: dict[str, object] = {
        "mode": "quick" if quick else "full",
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "platform": platform.platform()},
        "files": n,
        "mgpu_lint": asdict(mg),
        "mgpu_lint_2x": asdict(mg2),
        "linearity": round((mg2.seconds - mg_cold) / (mg.seconds - mg_cold), 2),
        "mgpu_lint_cold_start_s": round(mg_cold, 4),
        "mgpu_lint_cold_start_maxrss_mib": round(mg_cold_rss, 1),
        "composition": {"seconds": round(comp, 4), "files_per_s": round(n / comp, 1)},
        "after_composition_over_composition": round(after / comp, 2),
        "catches": count_findings(cli, small),
        "imports": import_times(python),
    }
    exe = yamllint_path()
    if exe is None:
        results["yamllint"] = None
    else:
        yl = throughput([str(exe), str(small)], n, 1)
        yl_cold, yl_cold_rss = median_child([str(exe), one], cold_runs)
        results["yamllint"] = asdict(yl)
        results["yamllint_cold_start_s"] = round(yl_cold, 4)
        results["yamllint_cold_start_maxrss_mib"] = round(yl_cold_rss, 1)
        results["speedup_vs_yamllint"] = round(mg.files_per_s / yl.files_per_s, 2)
        results["ratio_vs_yamllint"] = round(mg.seconds / yl.seconds, 3)
        results["cold_start_ratio_vs_yamllint"] = round(mg_cold / yl_cold, 2)
    results["ratio_vs_composition"] = round(mg.seconds / comp, 2)
    results["repository"] = repository(cli, exe, 100 if quick else 1000, repeats)
    manifest = OUT / "lsp-27k.yaml"
    size = lsp_manifest(manifest)
    results["lsp_relint"] = {"bytes": size,
                             "seconds": round(lsp_relint_seconds(python, manifest,
                                                                 10 if quick else 30), 4)}
    return results


def repository(cli: str, yamllint: Path | None, n: int, repeats: int) -> dict[str, object]:
    """The repository scenario: a platform repo where ~15% of the files launch an engine."""
    tree = OUT / f"repo-{n}"
    counts = generate_repo(n, tree)
    size = sum(p.stat().st_size for p in tree.rglob("*") if p.is_file())
    mg = throughput([cli, "--exit-zero", "--format", "json", str(tree)], n, repeats)
    out: dict[str, object] = {"files": n, "kinds": counts, "bytes": size, "mgpu_lint": asdict(mg)}
    if yamllint is not None:
        yl = throughput([str(yamllint), str(tree)], n, 1)
        out["yamllint"] = asdict(yl)
        out["speedup_vs_yamllint"] = round(mg.files_per_s / yl.files_per_s, 2)
        out["ratio_vs_yamllint"] = round(mg.seconds / yl.seconds, 4)
    return out


def table(r: dict[str, object]) -> str:
    mg, mg2, comp = r["mgpu_lint"], r["mgpu_lint_2x"], r["composition"]
    assert isinstance(mg, dict) and isinstance(mg2, dict) and isinstance(comp, dict)
    rows = [
        ("files", f"{r['files']:,}"),
        ("mgpu-lint", (f"{mg['files_per_s']:,.0f} files/s ({mg['seconds']:.2f} s), "
                      f"peak {mg['maxrss_mib']:.0f} MiB")),
        (f"mgpu-lint x2 ({mg2['files']:,})", (f"{mg2['files_per_s']:,.0f} files/s; "
                                              f"time ratio after start-up {r['linearity']}")),
        ("composition only", f"{comp['files_per_s']:,.0f} files/s ({comp['seconds']:.3f} s)"),
        ("after composition ÷ composition", str(r["after_composition_over_composition"])),
        ("mgpu-lint cold start (1 file)", (f"{r['mgpu_lint_cold_start_s'] * 1000:.0f} ms, "
                                          f"peak {r['mgpu_lint_cold_start_maxrss_mib']:.0f} MiB")),
    ]
    yl = r.get("yamllint")
    if isinstance(yl, dict):
        rows += [
            ("yamllint", (f"{yl['files_per_s']:,.0f} files/s ({yl['seconds']:.2f} s), "
                         f"peak {yl['maxrss_mib']:.0f} MiB")),
            ("yamllint cold start (1 file)",
             (f"{r['yamllint_cold_start_s'] * 1000:.0f} ms, "
              f"peak {r['yamllint_cold_start_maxrss_mib']:.0f} MiB")),
            ("mgpu-lint speed-up vs yamllint", f"{r['speedup_vs_yamllint']}x"),
            ("cold start mgpu-lint ÷ yamllint", str(r["cold_start_ratio_vs_yamllint"])),
        ]
    else:
        rows.append(("yamllint", "not installed: comparison skipped"))
    catches = r["catches"]
    imports = r["imports"]
    assert isinstance(catches, dict) and isinstance(imports, dict)
    rows.append(("files with a finding", (f"{catches['files_with_findings']:,} of {r['files']:,} "
                                         f"({catches['findings']:,} findings)")))
    rows.append(("import time (one command)", (f"{imports['total_ms']} ms, "
                                             f"{imports['modules']} modules")))
    repo = r.get("repository")
    if isinstance(repo, dict):
        rmg = repo["mgpu_lint"]
        assert isinstance(rmg, dict)
        rows.append((f"repository ({repo['files']:,} files, {repo['bytes'] / 1e6:.0f} MB)",
                     f"{rmg['files_per_s']:,.0f} files/s, peak {rmg['maxrss_mib']:.0f} MiB"))
        if "speedup_vs_yamllint" in repo:
            ryl = repo["yamllint"]
            assert isinstance(ryl, dict)
            rows.append(("repository: yamllint", f"{ryl['files_per_s']:,.1f} files/s"))
            rows.append(("repository speed-up vs yamllint", f"{repo['speedup_vs_yamllint']}x"))
    lsp = r.get("lsp_relint")
    if isinstance(lsp, dict):
        rows.append((f"LSP re-lint ({lsp['bytes'] / 1000:.0f} KB manifest)",
                     f"{lsp['seconds'] * 1000:.1f} ms"))
    width = max(len(k) for k, _ in rows)
    lines = [f"{k:<{width}}  {v}" for k, v in rows]
    lines.append("largest imports (cumulative ms, top level):")
    lines += [f"  {name:<40} {ms:>7.1f}"
              for name, ms in imports["largest_top_level_cumulative_ms"]]  # type: ignore[union-attr]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark mgpu-lint (see bench/README.md).")
    parser.add_argument("--quick", action="store_true",
                        help="100/200 files and 3 cold starts (for CI)")
    args = parser.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    results = measure(args.quick)
    print(table(results))
    path = OUT / "results.json"
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
