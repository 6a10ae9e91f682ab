"""Container images whose entrypoint is an engine: the known ones (data: catalog/images.json)
and the configuration's ``[images]`` table (custom images, set per file by the runner)."""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Iterator, Mapping

from .catalog.data import read_text
from .identity import ByIdentity
from .records import dataclass
from .versions import version_key as release_key

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?((?:\.post\d+|rc\d+|\.\d+)*)")


@dataclass(frozen=True, slots=True)
class ImageRef:
    repository: str  # normalised: no docker.io/ or library/ prefix
    tag: str | None
    digest: str | None


@dataclass(frozen=True, slots=True)
class ImageEntry:
    engine: str
    entry: str | None  # None: this image's entrypoint for this tag is not known
    argv: tuple[str, ...]
    # what the reference pins: a release ("0.8.5"), "latest", or the tag / digest that names no
    # release ("nightly", "sha256:…"); the vLLM parser picks the catalogued release from it
    version: str | None
    repository: str


def parse_image(ref: str) -> ImageRef:
    ref = ref.strip()
    digest = None
    if "@" in ref:
        ref, digest = ref.split("@", 1)
    tag = None
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    if colon > slash:
        ref, tag = ref[:colon], ref[colon + 1:]
    repo = ref.lower()
    for prefix in ("docker.io/", "index.docker.io/", "registry-1.docker.io/"):
        repo = repo.removeprefix(prefix)
    repo = repo.removeprefix("library/")
    return ImageRef(repo, tag, digest)


def version_key(version: str) -> tuple[int, ...]:
    """(major, minor, patch) of a release string (entrypoint ranges ignore post/rc parts)."""
    return release_key(version)[:3]


def tag_version(tag: str | None) -> str | None:
    """The release a tag names: ``v0.8.5`` → ``0.8.5``; ``latest``/none → ``latest``."""
    if tag is None or tag == "latest":
        return "latest"
    m = _VERSION.match(tag)
    if not m:
        return None
    return m.group(0).lstrip("v")


@lru_cache(maxsize=1)
def _table() -> dict[str, dict]:
    data = json.loads(read_text("images.json"))
    table: dict[str, dict] = {}
    for image in data["images"]:
        table[image["repository"]] = image
        for alias in image.get("aliases", ()):
            table[alias] = image
    return table


def _registry_host(component: str) -> bool:
    """A first path component that names a registry (Docker's rule: it holds a `.` or a `:`,
    or is `localhost`; docker/distribution reference normalize.go splitDockerDomain)."""
    return "." in component or ":" in component or component == "localhost"


def _known(repository: str) -> dict | None:
    """The images.json entry of ``repository``, or of the image it mirrors: the same path
    under another registry host (`registry.example/vllm/vllm-openai`, a pull-through cache or
    a project prefix such as `harbor.corp/dockerhub/vllm/vllm-openai`) is that image, pulled
    from elsewhere (same entrypoint, same release per tag).  Only a path that ends with the
    whole catalogued repository counts: `registry/aibrix/vllm-openai` is another image (a
    fork built on vLLM's, whose release its tag does not prove)."""
    table = _table()
    info = table.get(repository)
    if info is not None:
        return info
    parts = repository.split("/")
    if len(parts) < 3 or not _registry_host(parts[0]):
        return None
    for i in range(1, len(parts) - 1):
        info = table.get("/".join(parts[i:]))
        if info is not None and "/" in info["repository"]:
            return info
    return None


# The configuration's `[images]` table for the file being read: (pattern, entry point) pairs,
# patterns lower-case and without a docker.io/ or library/ prefix.  A context variable, so the
# language server's concurrent lints each see their own file's table.
_CUSTOM: ContextVar[tuple[tuple[str, str], ...]] = ContextVar("mgpu_lint_images", default=())
CUSTOM = "custom"  # ImageEntry.engine of a table entry: ``entry`` is the entry point as written


def _custom_table(table: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple((parse_image(k).repository + _pattern_tail(k), v) for k, v in table.items())


# one configuration's table serves every file under it (built per file: 7 ms a file with 1,000
# entries)
_custom_table_of = ByIdentity(_custom_table)


@contextmanager
def custom_images(table: Mapping[str, str]) -> Iterator[None]:
    """Within this block, ``lookup`` answers the table's images first (see config.Settings)."""
    token = _CUSTOM.set(_custom_table_of(table) if table else ())
    try:
        yield
    finally:
        _CUSTOM.reset(token)


def _pattern_tail(pattern: str) -> str:
    image = parse_image(pattern)
    return (f":{image.tag}" if image.tag is not None else "") + \
        (f"@{image.digest}" if image.digest is not None else "")


def custom_entry(ref: str) -> str | None:
    """The entry point the `[images]` table gives ``ref``: the first pattern that matches the
    repository (any tag), ``repository:tag`` or ``repository@digest``."""
    table = _CUSTOM.get()
    if not table:
        return None
    image = parse_image(ref)
    names = [image.repository]
    if image.tag is not None:
        names.append(f"{image.repository}:{image.tag}")
    if image.digest is not None:
        names.append(f"{image.repository}@{image.digest}")
    for pattern, entry in table:
        if any(fnmatch.fnmatchcase(n, pattern) for n in names):
            return entry
    return None


# lookup() of the references seen last, by (reference, the `[images]` table in force): its
# answer depends on nothing else (images.json is read once) and ImageEntry is frozen, so a hit
# is the same answer.  A file of many launches names the same few images, each looked up by
# several readers and rules.  Cleared when full, so it never grows with a run.
_LOOKUPS: dict[tuple[str, tuple[tuple[str, str], ...]], ImageEntry | None] = {}
_LOOKUPS_MAX = 256


def lookup(ref: str) -> ImageEntry | None:
    """The engine an image runs with no command given, or None for images we do not know."""
    key = (ref, _CUSTOM.get())
    try:
        return _LOOKUPS[key]
    except KeyError:
        pass
    if len(_LOOKUPS) >= _LOOKUPS_MAX:
        _LOOKUPS.clear()
    hit = _LOOKUPS[key] = _lookup(ref)
    return hit


def _lookup(ref: str) -> ImageEntry | None:
    custom = custom_entry(ref)
    image = parse_image(ref)
    if custom is not None:
        # the release is not in a custom image's name: target-version or the newest catalog
        return ImageEntry(CUSTOM, custom, tuple(shlex.split(custom)), None, image.repository)
    info = _known(image.repository)
    if info is None:
        return None
    if info["engine"] == "vllm":
        # a digest alone, or a tag that is no release, is kept as written (MG015 names it)
        version = (tag_version(image.tag) if image.digest is None or image.tag else None) or \
            image.tag or image.digest or "latest"
        key = version_key(version)
        entry: str | None = None
        argv: tuple[str, ...] = ()
        if version == "latest" or version.startswith("nightly"):
            # nightly images are built from the main branch, like the newest release
            entry = info["latest"]
        elif key:
            for ep in info["entrypoints"]:
                lo = version_key(ep["from"]) if "from" in ep else ()
                hi = version_key(ep["to"]) if "to" in ep else None
                if key >= lo and (hi is None or key <= hi):
                    entry = ep["entry"]
                    break
        for ep in info["entrypoints"]:
            if ep["entry"] == entry:
                argv = tuple(ep["argv"])
        return ImageEntry("vllm", entry, argv, version, image.repository)
    tag = image.tag or "latest"
    for t in info["tags"]:
        if tag.startswith(t["prefix"]):
            return ImageEntry(info["engine"], t["entry"], tuple(t["argv"]), None, image.repository)
    return None


# An image neither images.json nor the `[images]` table names, whose own name (the last path
# component) names an engine: a custom image built on one (`myorg/vllm-cuda12:2`,
# `registry/team/llamacpp-server`).  Its entry point is not known, so the engine is only
# inferred from it when the arguments parse cleanly as that engine's (commandline.
# launch_from_image; MG018 says the engine was inferred).
_NAMED_ENGINES = (
    (re.compile(r"(?:^|[-_.])vllm(?:$|[-_.])"), "vllm"),
    (re.compile(r"llama[-_.]?cpp"), "llama-server"),
)


def named_engine(ref: str) -> str | None:
    """The engine an unknown image's name names, or None (known images and table entries have
    their own entry point: ``lookup``; a known repository with a tag that runs no server, such
    as llama.cpp's ``light`` images, names none)."""
    image = parse_image(ref)
    if _known(image.repository) is not None or custom_entry(ref) is not None:
        return None
    name = image.repository.rsplit("/", 1)[-1]
    for pattern, engine in _NAMED_ENGINES:
        if pattern.search(name):
            return engine
    return None


def runs_as_root(ref: str | None, operator: str | None = None) -> bool:
    """Whether the engine in image ``ref`` (started by ``operator``) runs as root, so that its
    home is /root.  The engine images of images.json do; a custom image (the `[images]` table's,
    one whose engine is inferred from its name, any image a command names) runs as whoever it
    was built for."""
    if operator == "KubeAI":
        # KubeAI's model pods run as root: charts/kubeai/values.yaml modelServerPods.
        # securityContext.runAsUser: 0 (substratusai/kubeai 2f32ef4), on vllm/vllm-openai
        return True
    if ref is None:
        return False
    entry = lookup(ref)
    return entry is not None and entry.engine != CUSTOM


def is_engine_image(ref: str) -> bool:
    return lookup(ref) is not None
