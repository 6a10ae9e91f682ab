"""SGLang launches: recognition, the flag catalogs, and argparse's reading of the arguments.

Each behaviour cites where SGLang (or CPython's argparse, which SGLang uses unchanged) does it.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from types import ModuleType

import pytest
from mgpu_lint.engines import ENGINES
from mgpu_lint.engines.adapter import GPU_LAYOUT, HTTP_API, PARALLEL_LAYOUT
from mgpu_lint.engines.catalog import SGLANG_VERSIONS, sglang_catalog
from mgpu_lint.findings import Finding
from mgpu_lint.source import SourceFile
from mgpu_lint.sources import extract

from tests.conftest import DATA, ROOT

from .wordutil import render


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sglang_catalog",
                                                  ROOT / "scripts/sglang_catalog.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("sglang_catalog", module)
    spec.loader.exec_module(module)
    return module


script = _script()

DUMPS = DATA / "engines" / "sglang-versions"
MODEL = "Qwen/Qwen3-8B"


def lint(text: str) -> tuple[list, list[Finding]]:
    """The launches a shell script holds, and every parse finding of each."""
    from mgpu_lint.engines import parse_launch

    result = extract(SourceFile("run.sh", text, kind="shell"))
    findings: list[Finding] = list(result.findings)
    invs = []
    for launch in result.launches:
        inv, found = parse_launch(launch)
        invs.append(inv)
        findings.extend(found)
    return invs, findings


def one(text: str) -> tuple[object, list[str]]:
    invs, findings = lint(text)
    assert len(invs) == 1, invs
    return invs[0], render(findings)


# ------------------------------------------------------------------ catalogs and their dumps
def test_catalogs_are_built_from_the_dumps() -> None:
    """linter/catalog/flags/sglang-*.json are what scripts/sglang_catalog.py build writes."""
    built = script.built()
    assert sorted(p.name for p in built) == sorted(f"sglang-{v}.json" for v in SGLANG_VERSIONS)
    for path, text in built.items():
        assert path.read_text("utf-8") == text, f"{path.name} is stale: run the build"


@pytest.mark.parametrize("release", SGLANG_VERSIONS)
def test_every_dumped_option_is_in_the_catalog(release: str) -> None:
    dump = json.loads((DUMPS / f"{release}.json").read_text("utf-8"))
    assert dump["release"] == release
    catalog = sglang_catalog(release)
    for action in dump["actions"]:
        keys = set()
        for name in action["names"]:
            match = catalog.lookup(name)
            assert match is not None, name
            keys.add(match.option.key)
            if not dump.get("read"):
                assert match.option.key == action["dest"], name
        # an imported release keeps the key an earlier release gave the option
        assert len(keys) == 1, action["names"]
    # argparse's own -h/--help besides ServerArgs.add_cli_args
    assert len(catalog.options) == len(dump["actions"]) + 1


def test_static_reading_of_add_cli_args() -> None:
    """A dump of a small add_cli_args resolves class defaults and closed choice lists only."""
    source = '''
CHOICES = ["a", "b"]
OPEN = ["x"]
def add_open(c):
    OPEN.extend(c)
class ServerArgs:
    port: int = 30000
    made: list = field(default_factory=list)
    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--port", type=int, default=ServerArgs.port)
        parser.add_argument("--kind", choices=CHOICES + ["c"], default=ServerArgs.made)
        parser.add_argument("--plugin", choices=OPEN)
        parser.add_argument("--on", action="store_true")
'''
    records = {r["dest"]: r for r in script.dump_source(source)}
    assert records["port"]["default"] == 30000 and records["port"]["type"] == "int"
    assert records["kind"]["choices"] == ["a", "b", "c"]
    assert records["kind"]["default"] is None and not records["kind"]["default_resolved"]
    assert records["plugin"]["choices"] is None  # extended by a plugin hook: not enforced
    assert records["on"]["action"] == "store_true"


def test_a_release_built_otherwise_is_refused() -> None:
    """0.5.23 builds its options from dataclass fields (sglang/srt/arg_groups/): not guessed."""
    source = '''
class ServerArgs:
    @staticmethod
    def add_cli_args(parser):
        add_cli_args_from_dataclass(parser, ServerArgs)
'''
    with pytest.raises(SystemExit):
        script.dump_source(source)


def test_catalog_facts() -> None:
    """ServerArgs (sglang/srt/server_args.py, 0.4.10.post2 and 0.5.5): host 127.0.0.1,
    port 30000, tp/pp/dp/ep aliases, --model-path with its alias --model."""
    for release in SGLANG_VERSIONS:
        c = sglang_catalog(release)
        assert c.by_key["host"].default == "127.0.0.1"
        assert c.by_key["port"].default == 30000
        assert set(c.by_key["tensor_parallel_size"].names) == {"--tensor-parallel-size",
                                                               "--tp-size"}
        assert set(c.by_key["data_parallel_size"].names) == {"--data-parallel-size", "--dp-size"}
        assert c.by_key["model_path"].names == ("--model-path", "--model")
        assert set(c.by_key["expert_parallel_size"].names) == {"--expert-parallel-size",
                                                               "--ep-size", "--ep"}
        assert c.by_key["enable_dp_attention"].type == "flag"


def test_engine_interface() -> None:
    """HTTP rules and the GPU count (its own layout) run on SGLang; vLLM's layout, memory and
    start-up rules do not."""
    from mgpu_lint.rules import checks_for

    engine = ENGINES["sglang"]
    assert engine.has(HTTP_API) and not engine.has(PARALLEL_LAYOUT)
    assert engine.default_port == 30000 and engine.api_key_env == ()
    codes = {r.code for r in checks_for(engine)}
    assert {"MG101", "MG102", "MG605", "MG606", "MG701", "MG702", "MG820", "MG823"} <= codes
    assert engine.has(GPU_LAYOUT) and engine.layout is not None
    assert not {"MG103", "MG301", "MG305", "MG501", "MG601", "MG801"} & codes


# ------------------------------------------------------------------ recognition
@pytest.mark.parametrize("command,entry", [
    (f"python3 -m sglang.launch_server --model-path {MODEL}", "sglang.launch_server"),
    (f"python -u -m sglang.launch_server --model-path {MODEL}", "sglang.launch_server"),
    (f"sglang serve --model-path {MODEL}", "sglang serve"),
    (f"/usr/local/bin/sglang serve --model-path {MODEL}", "sglang serve"),
])
def test_recognised(command: str, entry: str) -> None:
    inv, findings = one(command + "\n")
    assert findings == []
    assert inv.engine == "sglang" and inv.entry == entry
    assert inv.model is not None and inv.model.value == MODEL


def test_not_a_launch() -> None:
    """`sglang` without `serve` (`sglang generate`, sglang/cli/main.py) serves nothing."""
    invs, _ = lint(f"sglang generate --model-path {MODEL}\npython -m sglang.bench_serving\n")
    assert invs == []


# ------------------------------------------------------------------ argparse's reading
def test_settings_and_abbreviations() -> None:
    """allow_abbrev (argparse default): `--tp 8` is `--tp-size 8`, `--dp 2` `--dp-size 2`; the
    declared aliases `--ep` and `--model` are exact spellings."""
    inv, findings = one(f"python -m sglang.launch_server --model {MODEL} --tp 8 --dp=2 "
                        "--enable-dp-attention --ep 8 --mem-fraction-static 0.85 "
                        "--host 0.0.0.0 --port 30001 --cuda-graph-bs 1 2 4 --api-key k\n")
    # 0.5.23 split --cuda-graph-bs into -decode/-prefill: there the word is an ambiguous
    # prefix; its values are not positional words of their own
    assert findings == [
        "MG004 warning [--cuda-graph-bs] ambiguous option --cuda-graph-bs: SGLang 0.5.23 "
        "(argparse) rejects it because it could match --cuda-graph-bs-decode, "
        "--cuda-graph-bs-prefill (SGLang 0.4.10.post2, 0.5.5 accepts it; nothing in the "
        "launch says which release runs)"]
    assert inv.setting("tensor_parallel_size").value == 8
    assert inv.setting("data_parallel_size").value == 2
    assert inv.setting("enable_dp_attention").value is True
    assert inv.setting("expert_parallel_size").value == 8
    assert inv.setting("mem_fraction_static").value == 0.85
    assert inv.host.value == "0.0.0.0" and inv.port.value == 30001
    assert inv.api_key.value == "k"


def test_defaults() -> None:
    inv, _ = one(f"sglang serve --model-path {MODEL}\n")
    assert inv.host.value == "127.0.0.1" and not inv.host.given
    assert inv.port.value == 30000
    assert inv.setting("tensor_parallel_size").value == 1


def test_ambiguous_prefix() -> None:
    """0.5.5 has --pp-size and --pp-max-micro-batch-size: `--pp` is ambiguous there
    (argparse _parse_optional: "ambiguous option: --pp could match …"); 0.4.10.post2 has only
    --pp-size, so the verdict depends on the release (a warning)."""
    _, findings = one(f"python -m sglang.launch_server --model-path {MODEL} --pp 2\n")
    assert findings == [
        "MG004 warning [--pp] ambiguous option --pp: SGLang 0.5.23 (argparse) rejects it because "
        "it could match --pp-async-batch-depth, --pp-max-micro-batch-size, --pp-size (SGLang "
        "0.4.10.post2 accepts it; nothing in the launch says which release runs)"]


def test_unknown_flags() -> None:
    """No `_` → `-` normalisation in plain argparse (every release: an error); without a pinned
    release a mistyped flag is a warning and a word close to no flag is information (a later
    release than the newest catalogued may have it)."""
    _, findings = one(f"python -m sglang.launch_server --model-path {MODEL} --tp_size 2 "
                      "--tensor-paralel-size 2 -tp 2\n")
    assert [f.split("]")[0] for f in findings] == ["MG004 error [--tp_size",
                                                   "MG004 warning [--tensor-paralel-size",
                                                   "MG004 info [-tp"]
    assert "did you mean --tp-size?" in findings[0]
    assert "did you mean --tensor-parallel-size?" in findings[1]
    assert "a later one may accept it" in findings[2]


def _pod(image: str, args: str) -> list[str]:
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: s}\nspec:\n  containers:\n"
        f"    - name: s\n      image: {image}\n"
        '      command: ["python3", "-m", "sglang.launch_server"]\n'
        f'      args: ["--model-path", "{MODEL}", {args}]\n'
    )
    from mgpu_lint.engines import parse_launch

    (launch,) = extract(SourceFile("pod.yaml", text, kind="yaml")).launches
    return render(parse_launch(launch)[1])


def test_pinned_release() -> None:
    """An lmsysorg/sglang:vX.Y.Z tag with a catalog pins the release: its verdicts are errors,
    and an older release reads the flags it had (0.4.10.post2 has no --pp-max-micro-batch-size,
    so --pp is --pp-size there)."""
    assert [f.split("]")[0] for f in _pod("lmsysorg/sglang:v0.5.5-cu126",
                                          '"--tensor-paralel-size", "2", "--pp", "2", '
                                          '"--tokenizer-mode", "fast"')] == [
        "MG004 error [--tensor-paralel-size", "MG004 error [--pp", "MG006 error [fast"]
    assert _pod("docker.io/lmsysorg/sglang:v0.4.10.post2-cu126", '"--pp", "2"') == []
    # a release without a catalog, or a custom tag: not pinned
    assert [f.split("]")[0] for f in _pod("lmsysorg/sglang:v0.5.9-cu129", '"--pp", "2"')] == [
        "MG004 warning [--pp"]
    assert [f.split("]")[0] for f in _pod("lmsysorg/sglang:kimi-k3",
                                          '"--enable-warp-drive"')] == [
        "MG004 info [--enable-warp-drive"]


def test_flag_of_another_release() -> None:
    """A flag 0.4.10.post2 has and 0.5.5 dropped: a warning naming the release."""
    old = {n for o in sglang_catalog("0.4.10.post2").options for n in o.names}
    new = {n for o in sglang_catalog("0.5.5").options for n in o.names}
    gone = sorted(n for n in old - new if n.startswith("--") and
                  not any(m.startswith(n) for m in new))
    assert gone, "0.5.5 dropped some 0.4.10.post2 flags"
    flag = gone[0]
    spec = sglang_catalog("0.4.10.post2").lookup(flag).option
    value = "" if spec.type == "flag" else " 1"
    _, findings = one(f"python -m sglang.launch_server --model-path {MODEL} {flag}{value}\n")
    assert len(findings) == 1 and findings[0].startswith(f"MG004 warning [{flag}]")
    assert "SGLang 0.4.10.post2 accepts it" in findings[0]


def test_values() -> None:
    """argparse type= and choices= (_get_values, _check_value); store_true takes no value."""
    _, findings = one(f"python -m sglang.launch_server --model-path {MODEL} --tp-size x "
                      "--tokenizer-mode fast --trust-remote-code=true --port\n")
    assert findings == [
        "MG006 error [x] invalid value for --tp-size: invalid int value: 'x'; SGLang exits "
        "(argparse)",
        "MG006 info [fast] invalid value for --tokenizer-mode: invalid choice: 'fast' (choose "
        "from 'auto', 'slow'); SGLang exits (argparse) (assuming SGLang 0.5.23, the newest "
        "catalogued release: a later one may accept it; pin the image tag, "
        "lmsysorg/sglang:vX.Y.Z, to check it exactly)",
        "MG006 error [true] --trust-remote-code takes no value: SGLang fails with \"argument "
        "--trust-remote-code: ignored explicit argument 'true'\"",
        "MG005 error [--port] --port needs a value: SGLang fails with \"argument --port: "
        "expected one argument\"",
    ]


def test_open_choices_are_not_enforced() -> None:
    """QUANTIZATION_CHOICES is extended by add_quantization_method_choices (plugins, 0.5.5)."""
    _, findings = one(f"python -m sglang.launch_server --model-path {MODEL} "
                      "--quantization my_plugin_quant\n")
    assert findings == []


def test_negative_number_is_a_value() -> None:
    """argparse: '-1' is a value when no option looks like a negative number."""
    inv, findings = one(f"python -m sglang.launch_server --model-path {MODEL} "
                        "--max-running-requests -1\n")
    assert findings == [] and inv.setting("max_running_requests").value == -1


def test_config_file_may_hold_the_model() -> None:
    """prepare_server_args merges `--config FILE` before argparse (0.5.5): no MG016."""
    _, findings = one("python -m sglang.launch_server --config serve.yaml\n")
    assert findings == []


def test_model() -> None:
    """--model-path is required (add_argument(..., required=True)); a positional word is
    "unrecognized arguments"."""
    _, findings = one("python -m sglang.launch_server --port 30000\n")
    assert findings == [
        "MG016 error [python] no model: SGLang requires --model-path and exits (\"the "
        "following arguments are required: --model-path/--model\")"]
    _, findings = one(f"python -m sglang.launch_server {MODEL} --tp 2\n")
    assert findings == [
        f"MG004 error [{MODEL}] unexpected argument `{MODEL}`: SGLang takes no positional "
        "arguments and exits (argparse: unrecognized arguments)"]


def test_serve_model_spelling() -> None:
    """`sglang serve` (0.5.5) looks for `--model-path` itself before argparse runs
    (sglang/cli/utils.py get_model_path); 0.5.23 also takes --model and a positional model
    (try_get_model_path, _normalize_positional_model_path): warnings."""
    _, findings = one(f"sglang serve --model {MODEL}\n")
    assert [f.split("]")[0] for f in findings] == ["MG016 warning [--model"]
    _, findings = one(f"sglang serve {MODEL} --tp 2\n")
    assert [f.split("]")[0] for f in findings] == [f"MG016 warning [{MODEL}"]
    _, findings = one(f"sglang serve --model-path={MODEL}\n")
    assert findings == []


def test_duplicate() -> None:
    _, findings = one(f"python -m sglang.launch_server --model-path {MODEL} --tp 2 --tp-size 4\n")
    assert [f.split("]")[0] for f in findings] == ["MG007 warning [2"]


def test_unresolved_and_expansions() -> None:
    inv, findings = one(f'python -m sglang.launch_server --model-path {MODEL} --tp "$TP" '
                        "$EXTRA\n")
    assert not [f for f in findings if f.startswith(("MG004", "MG006", "MG016"))]
    assert not inv.setting("tensor_parallel_size").known


def test_glued_list_item(tmp_path) -> None:
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: s}\nspec:\n  containers:\n"
        "    - name: s\n      image: lmsysorg/sglang:v0.5.5-cu126\n"
        '      command: ["python3", "-m", "sglang.launch_server"]\n'
        f'      args: ["--model-path", "{MODEL}", "--tp 2"]\n'
    )
    result = extract(SourceFile("pod.yaml", text, kind="yaml"))
    from mgpu_lint.engines import parse_launch

    (launch,) = result.launches
    _, findings = parse_launch(launch)
    assert [f.code for f in findings] == ["MG014"]
    assert 'split it into two list items: "--tp", "2"' in (findings[0].hint or "")


def test_pip_pin_pins_the_release() -> None:
    """`pip install sglang==X` in the file installs that release (it replaces the image's):
    0.5.5 rejects the ambiguous --pp (an error once pinned), 0.4.10.post2 reads it as --pp-size."""
    _, findings = one("pip install 'sglang[all]==0.5.5'\n"
                      f"python3 -m sglang.launch_server --model-path {MODEL} --pp 2\n")
    assert [f.split("]")[0] for f in findings] == ["MG004 error [--pp"]
    _, findings = one("uv pip install sglang==0.4.10.post2\n"
                      f"python3 -m sglang.launch_server --model-path {MODEL} --pp 2\n")
    assert findings == []
