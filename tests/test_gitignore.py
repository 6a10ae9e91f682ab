"""`.gitignore` matching (linter/discover.py): the compiled and indexed patterns decide exactly
what trying every pattern with fnmatch, in order, decides."""

from __future__ import annotations

import fnmatch
import os

from hypothesis import given, settings
from hypothesis import strategies as st
from mgpu_lint.discover import _ignore_file, _ignored


def _ignored_by_trying_each(rel: str, name: str, is_dir: bool,
                            patterns: list[tuple[str, str]]) -> bool:
    """The plain definition: every (base, pattern) in order, the last one matching decides."""
    ignored = False
    for base, pat in patterns:
        negate = pat.startswith("!")
        if negate:
            pat = pat[1:]
        dir_only = pat.endswith("/")
        pat = pat.rstrip("/")
        if dir_only and not is_dir:
            continue
        path = os.path.relpath(rel, base) if base else rel
        if path.startswith(".."):
            continue
        if "/" in pat.lstrip("/"):
            hit = fnmatch.fnmatch(path, pat.lstrip("/")) or fnmatch.fnmatch(
                path, pat.lstrip("/") + "/*")
        elif pat.startswith("/"):
            hit = fnmatch.fnmatch(path, pat[1:])
        else:
            hit = fnmatch.fnmatch(name, pat)
        if hit:
            ignored = not negate
    return ignored


_PART = st.text(alphabet="ab.*?[]!-", min_size=0, max_size=4)
_PATTERN = st.builds(lambda neg, lead, parts, trail: neg + lead + "/".join(parts) + trail,
                     st.sampled_from(["", "!"]), st.sampled_from(["", "/"]),
                     st.lists(_PART, min_size=1, max_size=3), st.sampled_from(["", "/"]))
_NAME = st.text(alphabet="ab.-[]", min_size=1, max_size=5)


@settings(max_examples=400, deadline=None)
@given(root=st.lists(_PATTERN, max_size=6), inner=st.lists(_PATTERN, max_size=4),
       parts=st.lists(_NAME, min_size=1, max_size=3), is_dir=st.booleans(),
       under_inner=st.booleans())
def test_compiled_gitignore_decides_as_fnmatch_in_order(root, inner, parts, is_dir,
                                                        under_inner) -> None:
    rel = "/".join((["sub"] if under_inner else []) + parts)
    name = parts[-1]
    files = [f for f in (_ignore_file("", root) if root else None,
                         _ignore_file("sub", inner) if inner else None) if f is not None]
    plain = [("", p) for p in root] + [("sub", p) for p in inner]
    assert _ignored(rel, name, is_dir, files) == _ignored_by_trying_each(rel, name, is_dir, plain)


def test_many_patterns_cost_the_ones_that_can_match() -> None:
    """Literal beginnings and endings index the patterns: of 20,000, a path is tried against the
    few that start or end as it does, and the ones with wildcards at both ends."""
    f = _ignore_file("", [f"build{i}/*.tmp" for i in range(10_000)]
                     + [f"*.log{i}" for i in range(10_000)] + ["*x*"])
    assert len(f.on_path.of("build7/a.tmp")) == 1  # build7/ (not build70/ …)
    assert len(f.on_name.of("a.log12")) == 2  # .log12 and *x*
    assert _ignored("build7/a.tmp", "a.tmp", False, [f])
    assert not _ignored("build7/a.dat", "a.dat", False, [f])


def test_patterns_past_the_bound_are_not_read(tmp_path, monkeypatch) -> None:
    """At most bounds.MAX_GITIGNORE_PATTERNS patterns apply to a path, its parents' first."""
    from mgpu_lint import bounds, discover
    monkeypatch.setattr(discover, "MAX_GITIGNORE_PATTERNS", 3)
    assert bounds.MAX_GITIGNORE_PATTERNS == 1_000
    (tmp_path / ".gitignore").write_text("a1\na2\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / ".gitignore").write_text("b1\nb2\n")  # b2 is the fourth pattern for sub/…
    for name in ("a1", "a2", "b1", "b2", "c"):
        (sub / name).write_text("x\n")
    assert sorted(os.path.relpath(p, tmp_path) for p in discover.walk(str(tmp_path))) == [
        ".gitignore", "sub/.gitignore", "sub/b2", "sub/c"]
