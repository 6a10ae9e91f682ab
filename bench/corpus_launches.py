"""Count launches per file of a directory of deployment files (default: ../shared/corpus/files).

Reads the files in place (nothing is copied); prints each file without a launch, then the totals.
Usage: python bench/corpus_launches.py [DIR] [-v]
"""

from __future__ import annotations

import sys
from pathlib import Path

from mgpu_lint.runner import read_files


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    args = [a for a in argv if a != "-v"]
    root = Path(args[0] if args else "/work/shared/corpus/files")
    files = sorted(p for p in root.rglob("*") if p.is_file())
    with_launch, without = 0, []
    total = 0
    for path in files:
        run = read_files([str(path)])
        n = len(run.launches)
        total += n
        if n:
            with_launch += 1
        else:
            without.append(path)
        if verbose:
            print(f"{n:3d}  {path.relative_to(root)}")
    for path in without:
        print(f"no launch: {path.relative_to(root)}")
    print(f"{len(files)} files, {with_launch} with a launch, {len(without)} without, "
          f"{total} launches")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
