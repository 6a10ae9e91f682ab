"""The flag catalogs against the reference lists (tests/data/engines)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mgpu_lint.engines.catalog import (
    FlagCatalog,
    choose_vllm_version,
    llama_catalog,
    load_file,
    rpc_catalog,
    vllm_catalog,
    validate_file,
    vllm_versions,
)
from pydantic import ValidationError

from tests.conftest import DATA

REFERENCE = DATA / "engines"



def reference(name: str) -> list[dict[str, Any]]:
    return json.loads((REFERENCE / name).read_text("utf-8"))


def test_counts() -> None:
    vllm = vllm_catalog()
    options = [o for o in vllm.options if o.type != "help"]
    assert len(options) == 300
    assert sum(len(o.names) for o in vllm.options) == 325  # -h/--help included
    assert sum(len(o.neg) for o in vllm.options) == 82
    llama = llama_catalog()
    assert len(llama.options) == 249
    assert sum(len(o.names) + len(o.neg) for o in llama.options) == 407
    assert sum(1 for o in llama.options if o.env) == 136
    rpc = rpc_catalog()
    assert len(rpc.options) == 6
    assert set(rpc.retired_by_spelling) == {"-m", "--mem"}


def test_vllm_matches_reference() -> None:
    ref = [r for r in reference("vllm-serve.json") if not r["positional"]]
    catalog = vllm_catalog()
    for r in ref:
        match = catalog.lookup(r["names"][0])
        assert match is not None, r["names"]
        opt = match.option
        assert opt.key == r["dest"]
        assert list(opt.names) == r["names"]
        assert list(opt.neg) == r["neg_names"]
        assert opt.takes_value == r["takes_value"]
        if r["nargs"] in ("+", "?"):
            assert opt.nargs == r["nargs"]
        if r["dest"] != "optimization_level":  # validated 0-3 after argparse (vllm-notes §3)
            assert list(opt.choices or []) == (r["choices"] or []), r["names"]
        assert opt.repeat == ("append" if r.get("repeat") == "append" else None)
    assert len(ref) == len(catalog.options)


@pytest.mark.parametrize("name, load", [
    ("llama-server.json", llama_catalog), ("rpc-server.json", rpc_catalog)])
def test_llama_matches_reference(name: str, load: Any) -> None:
    ref = reference(name)
    catalog = load()
    assert len(ref) == len(catalog.options)
    for r, opt in zip(ref, catalog.options):
        assert list(opt.names) == r["names"]
        assert list(opt.neg) == r["neg_names"]
        assert opt.nargs == r["nargs"]
        assert list(opt.choices or []) == (r["choices"] or [])
        assert opt.env == r["env"]
        assert opt.env_neg == r.get("env_neg")
        assert opt.repeatable == r["repeatable"]
        assert bool(opt.removed) == bool(r.get("removed"))
        assert bool(opt.deprecated) == bool(r.get("deprecated"))
        assert bool(opt.sep) == bool(r["list_sep"])


def test_lookups() -> None:
    vllm = vllm_catalog()
    assert [m.spelling for m in vllm.prefixed("--ep")] == ["--eplb-config"]
    assert vllm.suggest("--tensor-paralel-size") == "--tensor-parallel-size"
    assert vllm.lookup("--no-enable-prefix-caching").negative  # type: ignore[union-attr]
    assert vllm.by_key["max_lora_rank"].choices == (1, 8, 16, 32, 64, 128, 256, 320, 512)
    assert vllm.retired_by_spelling["--swap-space"].last is not None
    assert llama_catalog().by_env["LLAMA_ARG_N_GPU_LAYERS"].option.key == "n_gpu_layers"
    assert llama_catalog().by_env["LLAMA_ARG_NO_KV_OFFLOAD"].negative


def test_versions() -> None:
    assert "0.30.0" in vllm_versions()
    assert choose_vllm_version("0.30.0") == ("0.30.0", None)
    assert choose_vllm_version("0.8.5").version in vllm_versions()


def test_release_as_differences() -> None:
    """Releases are stored as a base plus differences."""
    base = vllm_catalog()
    diff = validate_file({
        "engine": "vllm", "version": "0.29.9", "source": "test", "base": "0.30.0",
        "drop": ["headless"],
        "options": [
            {"key": "tensor_parallel_size", "names": ["--tensor-parallel-size", "-tp"],
             "type": "int", "default": 2},
            {"key": "swap_space", "names": ["--swap-space"], "type": "float"},
        ],
        "retired": [],
    })
    derived = FlagCatalog(validate_file({
        "engine": "vllm", "version": "0.30.0", "source": "test", "options": base.options,
    }).apply(diff))
    assert derived.version == "0.29.9"
    assert "headless" not in derived.by_key
    assert derived.by_key["tensor_parallel_size"].default == 2
    assert derived.lookup("--swap-space") is not None
    assert len(derived.options) == len(base.options) + 1 - 1
    assert derived.retired == ()


def _shipped_files() -> list[str]:
    return ["llama-server.json", "rpc-server.json",
            *(f"vllm-{v}.json" for v in vllm_versions())]


@pytest.mark.parametrize("name", _shipped_files())
def test_shipped_file_validates_and_loads_the_same(name: str) -> None:
    """The run-time loader skips validation; every shipped file must pass pydantic's, and the
    loader must build exactly what the validated document is (tuples, defaults, nesting)."""
    from importlib import resources

    text = resources.files("mgpu_lint.catalog").joinpath("flags", name).read_text("utf-8")
    data = json.loads(text)
    assert load_file(data) == validate_file(data)


@pytest.mark.parametrize("bad", [
    {"engine": "x", "version": "1", "source": "t", "unknown": 1},
    {"engine": "x", "version": "1", "source": "t",
     "options": [{"key": "a", "names": ["-a"], "type": "integer"}]},
    {"engine": "x", "version": "1", "source": "t",
     "options": [{"key": "a", "names": ["-a"], "nargs": "*+"}]},
    {"engine": "x", "version": "1", "source": "t",
     "options": [{"key": "a", "names": ["-a"], "typo": True}]},
    {"engine": "x", "version": "1", "source": "t", "retired": [{"names": ["-a"], "lst": "1"}]},
])
def test_validation_refuses_malformed_documents(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        validate_file(bad)


def test_did_you_mean_is_difflibs_answer() -> None:
    """The prefiltered search gives exactly ``difflib.get_close_matches(n=1, cutoff=0.75)``:
    typos of every catalog's flags, random words, repeated names, long runs of dashes."""
    import difflib
    import random

    from mgpu_lint.engines.catalog import llama_catalog, rpc_catalog, vllm_catalog

    rng = random.Random(20)
    alphabet = "abcdefghijklmnopqrstuvwxyz-_0123456789"
    for cat in (vllm_catalog(), llama_catalog(), rpc_catalog()):
        names = cat._sorted
        for _ in range(300):
            base = rng.choice(names)
            chars = list(base)
            for _ in range(rng.randint(1, 4)):
                p = rng.randrange(len(chars) + 1)
                chars[p:p + rng.randint(0, 1)] = rng.choice(["", rng.choice(alphabet)])
            for spelling in ("".join(chars), base + base[:rng.randint(0, len(base))],
                             "--" + "".join(rng.choice(alphabet) for _ in range(30)),
                             "-" * rng.randint(1, 200) + "x"):
                want = difflib.get_close_matches(spelling, names, n=1, cutoff=0.75)
                assert cat.suggest(spelling) == (want[0] if want else None), spelling
