"""Before and after in one run: the same scenarios on two trees of mgpu-lint, interleaved.

    .venv/bin/python bench/ab.py main                       # commit `main` against the work tree
    .venv/bin/python bench/ab.py HEAD~1 -s sarif -s launches-lsp --repeat 3

The other tree is ``git archive REV`` unpacked under ``bench/out/ab/``; both run with this
venv's interpreter and libraries, each from a directory that lays its files out as the installed
package (``mgpu_lint`` = ``linter/``, ``mgpu_lint.rules`` = ``rules/``, ...), first on
``PYTHONPATH``, with their bytecode written first.  Each repeat runs every scenario on both trees
one after the other, so load on a shared machine falls on both alike; the table gives the median
of each and after ÷ before.  Times are wall seconds of a child process (``cli``) or the time a
child measured inside itself (``inproc``: imports and warm-up excluded).

Scenarios (``-s``, default all):

- ``sarif``: ``--format sarif`` on one shell line holding N and 2N ``--port`` repeats (about
  8,600 and 17,200 findings on 100 and 200 KB); ``sarif/json`` is the SARIF run over the JSON run
  of the same file, ``sarif-growth`` T(2N) ÷ T(N) (2.0 is linear; start-up makes it less);
- ``launches-cli``, ``launches-lsp``: a 200 KB script of 3,283 ``vllm serve`` lines, through the
  command line (``--format json``) and as the language server lints an edited document
  (``lsp.lint_text`` and ``lsp.diagnostics_json``, in-process after a warm-up);
- ``one-file``: the command line on one generated manifest (start-up);
- ``all-launch``: the command line on 1,000 generated manifests (bench/generate.py).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
AB = OUT / "ab"
PYTHON = str(ROOT / ".venv" / "bin" / "python")
# where each part of the source tree goes in the installed package (pyproject.toml package-dir)
LAYOUT = {"linter": "", "rules": "rules", "grammars": "grammars", "docs/rules": "rule_pages"}

sys.path.insert(0, str(HERE))


def package_dir(tree: Path) -> Path:
    """A directory holding ``mgpu_lint`` laid out as installed, made of symlinks into ``tree``."""
    site = AB / "site" / (tree.name if tree != ROOT else "worktree")
    pkg = site / "mgpu_lint"
    pkg.mkdir(parents=True, exist_ok=True)
    for part, name in LAYOUT.items():
        src = tree / part
        if name:
            _link(pkg / name, src)
            continue
        for entry in src.iterdir():
            if entry.name != "__pycache__":
                _link(pkg / entry.name, entry)
    # compileall does not enter symlinked directories: the tree's own folders are compiled too
    # (else the subpackages of one tree would be compiled from source on every start)
    subprocess.run([PYTHON, "-m", "compileall", "-q", str(site),
                    *(str(tree / part) for part in LAYOUT)], check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return site


def _link(link: Path, target: Path) -> None:
    if link.is_symlink() or link.exists():
        if link.resolve() == target.resolve():
            return
        link.unlink()
    link.symlink_to(target)


def archive(rev: str) -> Path:
    sha = subprocess.run(["git", "rev-parse", "--short=10", rev], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.strip()
    tree = AB / sha
    if not (tree / "linter").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile() as tar:
            subprocess.run(["git", "archive", sha], cwd=ROOT, check=True, stdout=tar)
            tar.seek(0)
            with tarfile.open(fileobj=tar) as t:
                t.extractall(tree, filter="data")
    return tree


INPROC_LSP = """
import sys, time
from lsprotocol import types
from mgpu_lint.lsp import diagnostics_json, lint_text
name, path = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8").read()
lint_text(name, text[: len(text) // 50])  # warm-up: imports, catalogs
best = None
for k in range(2):
    edited = text[:-1] + " " * (k + 1) + "\\n"  # an edit: an unchanged text is not linted again
    t0 = time.perf_counter()
    found = lint_text(name, edited)
    diagnostics_json("file:///" + name, edited, found, {}, types.PositionEncodingKind.Utf16)
    t = time.perf_counter() - t0
    best = t if best is None else min(best, t)
print(best)
"""


def inputs() -> dict[str, Path]:
    from generate import generate
    from relint_latency import SHAPES

    d = AB / "inputs"
    d.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    for kb in (100, 200):
        files[f"one-line-{kb}"] = d / f"one-line-{kb}.sh"
        files[f"one-line-{kb}"].write_text(SHAPES["findings-one-line"][1](kb * 1024))
    files["launches"] = d / "launches-200.sh"
    files["launches"].write_text(SHAPES["launches"][1](200 * 1024))
    k8s = d / "k8s-1000"
    if not k8s.is_dir() or len(list(k8s.glob("*.yaml"))) != 1000:
        generate(1000, k8s)
    files["k8s"] = k8s
    files["one"] = k8s / "vllm-00000.yaml"
    return files


def wall(site: Path, args: list[str], env_extra: dict[str, str] | None = None) -> float:
    env = {**os.environ, "PYTHONPATH": str(site), **(env_extra or {})}
    t0 = time.perf_counter()
    subprocess.run([PYTHON, "-m", "mgpu_lint.cli", "--exit-zero", *args], env=env, cwd=ROOT,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def inproc(site: Path, script: str, *args: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(site)}
    out = subprocess.run([PYTHON, "-c", script, *args], env=env, cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    return float(out.split()[-1])


def scenario(name: str, site: Path, f: dict[str, Path]) -> dict[str, float]:
    if name == "sarif":
        s100 = wall(site, ["--format", "sarif", str(f["one-line-100"])])
        j100 = wall(site, ["--format", "json", str(f["one-line-100"])])
        s200 = wall(site, ["--format", "sarif", str(f["one-line-200"])])
        j200 = wall(site, ["--format", "json", str(f["one-line-200"])])
        return {"sarif-100KB": s100, "sarif-200KB": s200, "json-100KB": j100,
                "sarif/json-200KB": s200 / j200,
                "json-200KB": j200, "sarif-growth": s200 / s100}
    if name == "launches-cli":
        return {"launches-cli": wall(site, ["--format", "json", str(f["launches"])])}
    if name == "launches-lsp":
        return {"launches-lsp": inproc(site, INPROC_LSP, "run.sh", str(f["launches"]))}
    if name == "one-file":
        return {"one-file": statistics.median(
            wall(site, ["--format", "json", str(f["one"])]) for _ in range(5))}
    if name == "all-launch":
        return {"all-launch": wall(site, ["--format", "json", str(f["k8s"])])}
    raise SystemExit(f"unknown scenario {name}")


SCENARIOS = ("sarif", "launches-cli", "launches-lsp", "one-file", "all-launch")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rev", help="the 'before' commit (the work tree is 'after')")
    ap.add_argument("-s", "--scenario", action="append", choices=SCENARIOS)
    ap.add_argument("--repeat", type=int, default=3)
    ns = ap.parse_args(argv)
    names = ns.scenario or list(SCENARIOS)
    trees = {"before": package_dir(archive(ns.rev)), "after": package_dir(ROOT)}
    f = inputs()
    got: dict[tuple[str, str], list[float]] = {}
    for _ in range(ns.repeat):
        for name in names:
            for label, site in trees.items():
                for key, value in scenario(name, site, f).items():
                    got.setdefault((label, key), []).append(value)
    keys = list(dict.fromkeys(k for _, k in got))
    print(f"before = {ns.rev}, after = work tree; median of {ns.repeat}, interleaved")
    print(f"{'':20} {'before':>10} {'after':>10} {'after/before':>13}")
    for key in keys:
        b = statistics.median(got[("before", key)])
        a = statistics.median(got[("after", key)])
        print(f"{key:20} {b:10.3f} {a:10.3f} {a / b:13.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
