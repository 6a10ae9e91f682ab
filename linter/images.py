"""Known container images whose entrypoint is an engine (data: catalog/images.json)."""

from __future__ import annotations

import json
import re
from functools import lru_cache

from .catalog.data import read_text
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


def lookup(ref: str) -> ImageEntry | None:
    """The engine an image runs with no command given, or None for images we do not know."""
    image = parse_image(ref)
    info = _table().get(image.repository)
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


def is_engine_image(ref: str) -> bool:
    return lookup(ref) is not None
