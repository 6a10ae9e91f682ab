"""Hostile input sets, one per class of the bounded-input promise (issue 20).

Each case writes files into an empty directory and returns the arguments to lint there (paths
relative to that directory).  The same cases run in CI (tests/test_bounded.py, small sizes), in
the benchmark (bench/hostile.py: worst wall time and peak RSS, full sizes) and as seeds of the
long campaign (bench/fuzz_campaign.py).  ``scale`` shrinks the big ones for CI.

Nothing here is copied from another repository or from the corpus: every file is generated.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Callable

Case = Callable[[Path, float], list[str]]

VLLM_IMAGE = "vllm/vllm-openai:v0.30.0"


def deployment(args: list[str], gpus: str = "4", image: str = VLLM_IMAGE, extra: str = "") -> str:
    items = "\n".join(f"            - {json.dumps(a)}" for a in args)
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: hostile
spec:
  template:
    spec:
      containers:
        - name: engine
          image: {image}
          args:
{items}
          resources:
            limits:
              nvidia.com/gpu: {json.dumps(gpus)}
{extra}"""


def shell(line: str) -> str:
    return "#!/bin/sh\n" + line + "\n"


# --------------------------------------------------------------------------- GGUF writing

def gguf_bytes(meta: list[tuple[str, int, object]], tensors: list[tuple[str, list[int], int]],
               raw_meta: bytes = b"") -> bytes:
    """A GGUF v3 header: metadata (key, value type, value) and tensor descriptions."""
    def string(s: str) -> bytes:
        b = s.encode()
        return struct.pack("<Q", len(b)) + b

    scalars = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
               10: "<Q", 11: "<q", 12: "<d"}
    out = [b"GGUF", struct.pack("<I", 3), struct.pack("<Q", len(tensors)),
           struct.pack("<Q", len(meta) + (1 if raw_meta else 0))]
    for key, vtype, value in meta:
        out.append(string(key) + struct.pack("<I", vtype))
        out.append(string(value) if vtype == 8 else struct.pack(scalars[vtype], value))
    out.append(raw_meta)
    for name, dims, ttype in tensors:
        out.append(string(name) + struct.pack("<I", len(dims)))
        out.extend(struct.pack("<Q", d) for d in dims)
        out.append(struct.pack("<I", ttype) + struct.pack("<Q", 0))
    return b"".join(out)


def gguf_model(block_count: int = 4, heads: int = 8, hidden: int = 64,
               raw_meta: bytes = b"") -> bytes:
    meta: list[tuple[str, int, object]] = [
        ("general.architecture", 8, "llama"), ("general.name", 8, "hostile"),
        ("llama.block_count", 10, block_count), ("llama.embedding_length", 10, hidden),
        ("llama.attention.head_count", 10, heads), ("llama.context_length", 10, 4096),
    ]
    return gguf_bytes(meta, [("token_embd.weight", [hidden, 100], 0)], raw_meta)


def gguf_nested_array(depth: int) -> bytes:
    """A metadata value: an array of arrays of ... ``depth`` levels (type 9 = array)."""
    key = b"hostile.nested"
    body = struct.pack("<Q", len(key)) + key + struct.pack("<I", 9)
    for _ in range(depth):
        body += struct.pack("<I", 9) + struct.pack("<Q", 1)
    body += struct.pack("<I", 4) + struct.pack("<Q", 0)
    return body


def diff_of_fixes_on_every_line(d: Path, scale: float) -> list[str]:
    """`--diff --unsafe-fixes` of a script whose every line gets a fix: difflib's matcher read
    the whole file at once, quadratic in its repeated lines (4 MiB 17 s, 6.4 MiB over 60 s)."""
    lines = ["vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-paralel-size 2\n",
             "vllm serve meta-llama/Llama-3.1-8B-Instruct --pipline-parallel-size 2\n"]
    n = max(20_000, int(FULL * scale * 0.6)) // len(lines[0])
    (d / "run.sh").write_text("".join(lines[i % 2] for i in range(n)))
    return ["--diff", "--unsafe-fixes", "run.sh"]


def _files_under_gitignore(line: Callable[[int], str], patterns: int, files: int) -> Case:
    """A 1 MiB `.gitignore` of ``patterns`` lines over ``files`` small scripts: each pattern was
    tried with fnmatch (and a relpath) on every path, 114 s for 5,000 lines over 5,000 files."""
    def case(d: Path, scale: float) -> list[str]:
        text = "".join(line(i) for i in range(max(100, int(patterns * scale))))
        (d / ".gitignore").write_text(text[:1 << 20].rsplit("\n", 1)[0] + "\n")
        for i in range(max(50, int(files * scale))):
            (d / f"r{i}.sh").write_text("vllm serve m\n")
        return ["."]
    return case


def configuration_with_full_tables(d: Path, scale: float) -> list[str]:
    """A configuration holding the most entries it may in each table (bounds.MAX_CONFIG_ENTRIES)
    over many small launch files and a manifest of many images: each table was prepared again
    for every file or launch, and each per-file-ignores glob matched through fnmatch (1,000
    entries: 3 to 5 s for 2,000 files; 40,000: over 60 s)."""
    n = 1_000
    models = "".join(f"'o/m{i}' = {{params = 1e9, layers = 2, hidden = 64, heads = 2, "
                     f"kv_heads = 2, head_dim = 32}}\n" for i in range(n))
    (d / "mgpu-lint.toml").write_text(
        "extend-exclude = [" + ",".join(f"'x{i}/*'" for i in range(n)) + "]\n"
        "[per-file-ignores]\n" + "".join(f"'d{i}/*' = ['MG0']\n" for i in range(n))
        + "[images]\n" + "".join(f"'reg/img{i}-*' = 'vllm serve'\n" for i in range(n))
        + "[gpus]\n" + "".join(f"'g{i}' = {{memory_gb = 80, bandwidth_tbs = 3}}\n"
                                for i in range(n))
        + "[models]\n" + models)
    files = max(100, int(5_000 * scale))
    (d / "many").mkdir()
    for i in range(files):
        (d / "many" / f"r{i}.sh").write_text(f"vllm serve o/m{i % n} -tp 2\n")
    (d / "k.yaml").write_text("---\n".join(deployment([f"o/m{i}", "-tp", "2"], gpus="2",
                                                       image=f"reg/img{i}-x:1")
                                            for i in range(min(files, n))))
    return ["."]


# --------------------------------------------------------------------------- the cases

def billion_laughs(levels: int = 12) -> str:
    lines = ['a0: &a0 "lol"']
    for i in range(1, levels):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 9)}]")
    lines.append(f"max-model-len: *a{levels - 1}")
    return "\n".join(lines) + "\n"


def _config_case(text: str) -> Case:
    def case(d: Path, scale: float) -> list[str]:
        (d / "cfg.yaml").write_text(text)
        (d / "deploy.yaml").write_text(deployment(
            ["meta-llama/Llama-3.1-8B-Instruct", "--config", "cfg.yaml"]))
        return ["deploy.yaml"]
    return case


def deep_config_yaml(d: Path, scale: float) -> list[str]:
    n = max(2000, int(100_000 * scale))
    return _config_case("max-model-len: " + "[" * n + "]" * n + "\n")(d, scale)


def deep_block_config_yaml(d: Path, scale: float) -> list[str]:
    n = max(1100, int(3000 * scale))
    text = "".join(" " * i + "- \n" for i in range(0, n * 2, 2))
    return _config_case("a:\n" + text)(d, scale)


def alias_bomb_config(d: Path, scale: float) -> list[str]:
    return _config_case(billion_laughs())(d, scale)


def config_values_json_cannot_encode(d: Path, scale: float) -> list[str]:
    return _config_case(
        "served-model-name: 2024-01-01\n"
        "api-key: 2001-12-14t21:59:43.10-05:00\n"
    )(d, scale)


def config_self_alias(d: Path, scale: float) -> list[str]:
    return _config_case("compilation-config: &x [*x, *x]\n")(d, scale)


def _vllm_args(*args: str, gpus: str = "4", model: str = "meta-llama/Llama-3.1-8B-Instruct"
               ) -> Case:
    def case(d: Path, scale: float) -> list[str]:
        (d / "deploy.yaml").write_text(deployment([model, *args], gpus=gpus))
        return ["deploy.yaml"]
    return case


def _llama_args(*args: str, gpus: str = "4") -> Case:
    def case(d: Path, scale: float) -> list[str]:
        (d / "deploy.yaml").write_text(deployment(
            ["-m", "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", *args], gpus=gpus,
            image="ghcr.io/ggml-org/llama.cpp:server-cuda"))
        return ["deploy.yaml"]
    return case


def _sh(line: str, *side: tuple[str, str | bytes]) -> Case:
    def case(d: Path, scale: float) -> list[str]:
        for name, content in side:
            p = d / name
            p.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                p.write_bytes(content)
            else:
                p.write_text(content)
        (d / "run.sh").write_text(shell(line))
        return ["run.sh"]
    return case


def _local_config(cfg: str) -> Case:
    def case(d: Path, scale: float) -> list[str]:
        (d / "model").mkdir()
        (d / "model" / "config.json").write_text(cfg)
        (d / "deploy.yaml").write_text(deployment(["./model", "-tp", "4"]))
        return ["deploy.yaml"]
    return case


LLAMA_CFG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
             "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
             "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
             "max_position_embeddings": 131072, "torch_dtype": "bfloat16"}


def _cfg(**over: object) -> str:
    return json.dumps({**LLAMA_CFG, **over})


def config_json_huge(d: Path, scale: float) -> list[str]:
    n = int(60 * 1024 * 1024 * min(scale, 1.0)) or 1024 * 1024
    (d / "model").mkdir()
    with open(d / "model" / "config.json", "wb") as fh:
        fh.write(_cfg().encode()[:-1] + b', "pad": "')
        fh.seek(n)
        fh.write(b'"}')
    (d / "deploy.yaml").write_text(deployment(["./model", "-tp", "4"]))
    return ["deploy.yaml"]


def fifo_env_beside_compose(d: Path, scale: float) -> list[str]:
    os.mkfifo(d / ".env")
    (d / "compose.yaml").write_text(
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n"
        "    command: [\"meta-llama/Llama-3.1-8B-Instruct\", \"--port\", \"${PORT}\"]\n")
    return ["compose.yaml"]


def fifo_dockerfile_of_build(d: Path, scale: float) -> list[str]:
    os.mkfifo(d / "Dockerfile")
    (d / "compose.yaml").write_text(
        "services:\n  vllm:\n    build: .\n"
        "    command: [\"--model\", \"meta-llama/Llama-3.1-8B-Instruct\"]\n")
    return ["compose.yaml"]


def fifo_gitignore(d: Path, scale: float) -> list[str]:
    (d / "tree").mkdir()
    os.mkfifo(d / "tree" / ".gitignore")
    (d / "tree" / "deploy.yaml").write_text(deployment(["meta-llama/Llama-3.1-8B-Instruct"]))
    return ["tree"]


def fifo_config_yaml(d: Path, scale: float) -> list[str]:
    os.mkfifo(d / "cfg.yaml")
    (d / "deploy.yaml").write_text(deployment(
        ["meta-llama/Llama-3.1-8B-Instruct", "--config", "cfg.yaml"]))
    return ["deploy.yaml"]


def fifo_config_json(d: Path, scale: float) -> list[str]:
    (d / "model").mkdir()
    os.mkfifo(d / "model" / "config.json")
    (d / "deploy.yaml").write_text(deployment(["./model", "-tp", "4"]))
    return ["deploy.yaml"]


def gguf_tokens(n: int) -> bytes:
    """A metadata value: ``tokenizer.ggml.tokens``, an array of ``n`` strings (type 9 of 8)."""
    key = b"tokenizer.ggml.tokens"
    return (struct.pack("<Q", len(key)) + key + struct.pack("<IIQ", 9, 8, n)
            + (struct.pack("<Q", 3) + b"tok") * n)


def big_gguf_beside_launches(d: Path, scale: float) -> list[str]:
    """A 3.2 MiB GGUF header (300,000 tokenizer strings) named by 1,000 launches of a script:
    each launch read the header again (over 120 s)."""
    (d / "m.gguf").write_bytes(gguf_model(raw_meta=gguf_tokens(max(1000, int(300_000 * scale)))))
    (d / "run.sh").write_text("llama-server -m ./m.gguf -ngl 99\n"
                              * max(20, int(1000 * scale)))
    return ["run.sh"]


def big_config_beside_launches(d: Path, scale: float) -> list[str]:
    """A 0.75 MiB --config (a list of 130,000 names) named by 1,000 launches: each launch
    parsed it again and converted each item (over 120 s)."""
    (d / "c.yaml").write_text("tensor-parallel-size: 2\n" + f"# {'x' * 60}\n" * 5_000
                              + "served-model-name: [" + "a, " * int(130_000 * scale) + "a]\n")
    (d / "run.sh").write_text("vllm serve meta-llama/Llama-3.1-8B-Instruct --config c.yaml\n"
                              * max(20, int(1000 * scale)))
    return ["run.sh"]


def many_configs_beside_launches(d: Path, scale: float) -> list[str]:
    """Launches naming 12 different 0.9 MiB --config files of 300,000 one-letter names each:
    the YAML loader takes about 3.7 s for each (36 s); bounds.SIDE_BYTES_PER_FILE stops after
    one."""
    body = ("tensor-parallel-size: 2\nserved-model-name: ["
            + "a, " * int(0.9 * (1 << 20) * scale / 3) + "a]\n")
    n = max(3, int(12 * scale))
    for i in range(n):
        (d / f"c{i}.yaml").write_text(body)
    (d / "run.sh").write_text("".join(
        f"vllm serve meta-llama/Llama-3.1-8B-Instruct --config c{i}.yaml\n" for i in range(n)))
    return ["run.sh"]


def services_building_one_dockerfile(d: Path, scale: float) -> list[str]:
    """1,000 compose services building one 3.2 MB Dockerfile (90,000 RUN lines): each
    service read and parsed it again (over 120 s)."""
    (d / "Dockerfile").write_text("FROM vllm/vllm-openai:v0.10.2\n"
                                  + f"RUN echo {'a' * 26}\n" * int(90_000 * scale))
    (d / "compose.yaml").write_text("services:\n" + "".join(
        f"  s{i}:\n    build: .\n    command: [\"--model\", \"Qwen/Qwen2.5-7B-Instruct\"]\n"
        for i in range(max(20, int(1000 * scale)))))
    return ["compose.yaml"]


def services_building_an_image_of_many_env_lines(d: Path, scale: float) -> list[str]:
    """1,000 compose services building one 1 MiB Dockerfile of 60,000 ENV lines: each service
    copied the image's ENV into its environment (80 s)."""
    (d / "Dockerfile").write_text("FROM vllm/vllm-openai:v0.10.2\n" + "".join(
        f"ENV A{i}=$A{i - 1}x\n" for i in range(1, max(100, int(60_000 * scale)))))
    (d / "compose.yaml").write_text("services:\n" + "".join(
        f"  s{i}:\n    build: .\n    command: [\"--model\", \"Qwen/Qwen2.5-7B-Instruct\"]\n"
        for i in range(max(20, int(1000 * scale)))))
    return ["compose.yaml"]


def fifo_gguf(d: Path, scale: float) -> list[str]:
    os.mkfifo(d / "m.gguf")
    (d / "run.sh").write_text(shell("llama-server -m ./m.gguf -ngl 99"))
    return ["run.sh"]


def non_utf8_env(d: Path, scale: float) -> list[str]:
    (d / ".env").write_bytes(b"PORT=80\xff\xfe00\nMODEL=\xc3\x28\n")
    (d / "compose.yaml").write_text(
        "services:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n"
        "    command: [\"meta-llama/Llama-3.1-8B-Instruct\", \"--port\", \"${PORT}\"]\n")
    return ["compose.yaml"]


def many_findings_one_line(d: Path, scale: float) -> list[str]:
    n = max(200, int(2000 * scale))
    flags = " ".join(f"--port {i}" for i in range(n))
    (d / "run.sh").write_text(shell(f"vllm serve meta-llama/Llama-3.1-8B-Instruct {flags}"))
    return ["--format", "text", "run.sh"]


def many_unknown_flags(d: Path, scale: float) -> list[str]:
    n = max(300, int(8000 * scale))
    flags = " \\\n  ".join(f"--unknown-option-{i:05d}-x" for i in range(n))
    (d / "run.sh").write_text(shell(f"vllm serve meta-llama/Llama-3.1-8B-Instruct {flags}"))
    return ["run.sh"]


def many_unknown_flags_no_model(d: Path, scale: float) -> list[str]:
    """No positional model: each unknown flag asks whether `--model` gives one (once per
    launch, not once per flag: 7,000 flags took 5.9 s when it was asked per flag)."""
    n = max(300, int(8000 * scale))
    flags = " \\\n  ".join(f"--unknown-option-{i:05d}-x" for i in range(n))
    (d / "run.sh").write_text(shell(f"vllm serve {flags}"))
    return ["run.sh"]


def many_launches(d: Path, scale: float) -> list[str]:
    n = max(500, int(20_000 * scale))
    lines = [f"vllm serve meta-llama/Llama-3.1-8B-Instruct --port {8000 + i % 1000} -tp 1"
             for i in range(n)]
    (d / "run.sh").write_text("#!/bin/sh\n" + "\n".join(lines) + "\n")
    return ["run.sh"]


def many_broken_continuations(d: Path, scale: float) -> list[str]:
    """Lines whose backslash escapes a space (MG003's broken continuation) in a script that
    launches vLLM: each used to make MG003's launch test re-read every later line."""
    n = max(2_000, int(20_000 * scale))
    (d / "run.sh").write_text("#!/bin/sh\nvllm serve meta-llama/Llama-3.1-8B-Instruct\n"
                              + "echo a \\ \n" * n)
    return ["run.sh"]


def long_word(d: Path, scale: float) -> list[str]:
    n = max(100_000, int(9 * 1024 * 1024 * scale))
    (d / "run.sh").write_text(shell("vllm serve " + "a" * n))
    return ["run.sh"]


def long_word_quoted_var(d: Path, scale: float) -> list[str]:
    n = max(100_000, int(9 * 1024 * 1024 * scale))
    (d / "run.sh").write_text(shell('vllm serve "$x' + "a" * n + '"'))
    return ["run.sh"]


def long_yaml_scalar(d: Path, scale: float) -> list[str]:
    n = max(100_000, int(9 * 1024 * 1024 * scale))
    (d / "deploy.yaml").write_text(deployment(["meta-llama/Llama-3.1-8B-Instruct",
                                               "--served-model-name", "x\\ty" * (n // 4)]))
    return ["deploy.yaml"]


def _long_shell(make: Callable[[int], str], prelude: str = "") -> Case:
    """A script whose one word is ``make(n)`` for an n of about 4 MiB at full scale."""
    def case(d: Path, scale: float) -> list[str]:
        n = max(50_000, int(4 * 1024 * 1024 * scale))
        (d / "run.sh").write_text(shell(prelude + "vllm serve meta-llama/Llama-3.1-8B-Instruct "
                                        + make(n)))
        return ["run.sh"]
    return case


def blank_runs_in_sarif_names(d: Path, scale: float) -> list[str]:
    """A shell function line and a Markdown heading with a long run of blanks in them, read for
    the SARIF logical locations: the old patterns tried every split of the run between their
    \\s*, cubic (2,000 blanks took 28 s and 6 s)."""
    n = max(4_000, int(1024 * 1024 * scale))
    launch = "vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 3\n"
    (d / "run.sh").write_text("#!/bin/sh\nfunction f" + " " * n + "x\nstart()" + " " * n
                              + "{\n  " + launch + "}\n")
    (d / "README.md").write_text("# a" + " " * n + "b\n\n```sh\n" + launch + "```\n")
    return ["--format", "sarif", "run.sh", "README.md"]


def long_fence_info_string(d: Path, scale: float) -> list[str]:
    """A Markdown line of three backticks, a long info string and a backtick (no fence: a
    backtick ends it): the fence pattern tried every split of the info string, quadratic."""
    n = max(100_000, int(4 * 1024 * 1024 * scale))
    (d / "README.md").write_text("```" + "a" * n + "`\n\n```sh\n"
                                 "vllm serve meta-llama/Llama-3.1-8B-Instruct\n```\n")
    return ["README.md"]


def unclosed_template_actions(d: Path, scale: float) -> list[str]:
    """`{{` repeated with no `}}` after it, in a Deployment's argument, an `eval` of a script
    and a KServe LLMInferenceServiceConfig: each lazy `{{.*?}}` read from every `{{` to the
    end, quadratic."""
    n = max(100_000, int(4 * 1024 * 1024 * scale))
    run = "{{" * (n // 2)
    (d / "deploy.yaml").write_text(deployment(["meta-llama/Llama-3.1-8B-Instruct",
                                               "--served-model-name", run]))
    (d / "run.sh").write_text(shell("eval vllm serve meta-llama/Llama-3.1-8B-Instruct " + run))
    (d / "config.yaml").write_text(f"""\
apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceServiceConfig
metadata:
  name: hostile
spec:
  template:
    containers:
      - name: main
        image: {VLLM_IMAGE}
        args: ["--tensor-parallel-size", "{{{{ .Spec.Parallelism.Tensor }}}}",
               "--served-model-name", "{run}"]
""")
    return ["deploy.yaml", "run.sh", "config.yaml"]


def many_installer_words(d: Path, scale: float) -> list[str]:
    """A script with no launch (MG017 looks for an engine's name): a line of `vllm` between
    `pip` and `install` (read again for each mention), then one of `pip` words without an
    install verb (the pattern read from each to the line's end)."""
    n = max(300_000, int(4 * 1024 * 1024 * scale))
    (d / "run.sh").write_text("pip " + "vllm " * (n // 10) + "install\n" + "pip " * (n // 8)
                              + "vllm\n")  # no launch: MG017 looks for the engine's name
    return ["run.sh"]


def compose_nested_defaults(d: Path, scale: float) -> list[str]:
    """A compose command of `${a:-{}` repeated, never closed: the interpolation pattern read
    the default again from every `${` before it, quadratic."""
    n = max(250_000, int(4 * 1024 * 1024 * scale))
    (d / "compose.yaml").write_text(
        "services:\n  engine:\n    image: vllm/vllm-openai:v0.30.0\n"
        "    command: [\"meta-llama/Llama-3.1-8B-Instruct\", \"--served-model-name\", \""
        + "${a:-{}" * (n // 7) + "\"]\n")
    return ["compose.yaml"]


def many_pip_installs(d: Path, scale: float) -> list[str]:
    """`pip install` repeated on a line that pins nothing, then `vllm[` repeated with no `]`
    on its line: the pin pattern read from each to the line's end (and to the next `]`)."""
    n = max(500_000, int(4 * 1024 * 1024 * scale))
    (d / "run.sh").write_text("pip install " * (n // 24) + "\npip install" + " vllm[" * (n // 12)
                              + "\necho ]\nvllm serve meta-llama/Llama-3.1-8B-Instruct\n")
    return ["run.sh"]


def long_folded_blank_lines(d: Path, scale: float) -> list[str]:
    n = max(50_000, int(4 * 1024 * 1024 * scale))
    (d / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: c\n"
        "    image: vllm/vllm-openai:v0.30.0\n    args:\n    - meta-llama/Llama-3.1-8B-Instruct\n"
        "    - --served-model-name\n    - >\n      a\n" + "\n" * n + "      b\n")
    return ["pod.yaml"]


def many_launches_one_gpu(d: Path, scale: float) -> list[str]:
    """Launches pinned to one GPU whose utilisations never add up past 1: every pair is a
    candidate for MG108, none is a finding."""
    n = max(300, int(20_000 * scale))
    lines = [f"CUDA_VISIBLE_DEVICES=0 vllm serve meta-llama/Llama-3.1-8B-Instruct "
             f"--port {8000 + i % 1000} --gpu-memory-utilization 0.00001" for i in range(n)]
    (d / "run.sh").write_text("#!/bin/sh\n" + "\n".join(lines) + "\n")
    return ["run.sh"]


def many_assignments_then_commands(d: Path, scale: float) -> list[str]:
    """A script's variables, then commands that launch nothing: each command copied every
    variable (40,000 and 40,000 took 15 s)."""
    n = max(2_000, int(200_000 * scale))
    (d / "run.sh").write_text("#!/bin/sh\nvllm serve meta-llama/Llama-3.1-8B-Instruct\n"
                              + "".join(f"a{i}=1\n" for i in range(n)) + "true\n" * n)
    return ["run.sh"]


def assignments_between_launches(d: Path, scale: float) -> list[str]:
    """A variable, a launch, another variable, another launch: each launch kept a copy of
    every variable (4,000 of each took 431 MiB)."""
    n = max(500, int(50_000 * scale))
    (d / "run.sh").write_text("#!/bin/sh\n" + "".join(
        f"a{i}=1\nvllm serve meta-llama/Llama-3.1-8B-Instruct --port {8000 + i % 1000}\n"
        for i in range(n)))
    return ["run.sh"]


FULL = int(9.5 * 1024 * 1024)  # the size the bounds promise holds up to (10 MiB)


def _words_script(make: Callable[[int], str]) -> Case:
    """A script of ``make(n)``, about 9.5 MiB at full scale: a file of millions of short words
    costs microseconds each, past the file's budget of shell words (linter/bounds.py) none."""
    def case(d: Path, scale: float) -> list[str]:
        (d / "run.sh").write_text(make(max(20_000, int(FULL * scale))))
        return ["run.sh"]
    return case


def kubeai_models_of_many_bad_flags(d: Path, scale: float) -> list[str]:
    """KubeAI Models of 250 repeated and 250 unknown flags each, about 9.5 MiB at full scale,
    in SARIF: every launch lists 100 of each code, so 1,000 Models made 203,000 findings (a
    130 MB SARIF, 14.5 s / 509 MiB) before a file listed at most 1,000 of a code."""
    flags = ", ".join(["--max-model-len=1"] * 250 + [f"--bogus-flag-{i}" for i in range(250)])
    model = ("apiVersion: kubeai.org/v1\nkind: Model\nmetadata:\n  name: m{i}\nspec:\n"
             "  url: hf://Qwen/Qwen2.5-7B-Instruct\n  engine: VLLM\n"
             f"  args: [{flags}]\n  resourceProfile: nvidia-gpu-l4:1\n")
    n = max(20, int(FULL * scale) // len(model))
    (d / "models.yaml").write_text("---\n".join(model.format(i=i) for i in range(n)))
    return ["--format", "sarif", "models.yaml"]


def documents_of_many_launch_words(d: Path, scale: float) -> list[str]:
    """Pods whose command is a flow list of 240,000 items (each document just under
    bounds.MAX_YAML_NODES), about 9.5 MiB at full scale: thirteen took 32 s / 824 MiB, and
    13.7 s only to compose when the lists were not commands, before a file's YAML was bounded
    (bounds.MAX_FILE_YAML_NODES)."""
    items = max(2_000, int(240_000 * scale))
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec:\n  containers:\n"
           "  - name: c\n    image: vllm/vllm-openai:v0.30.0\n"
           "    command: [vllm, serve, m, " + ", ".join(["a"] * items) + "]\n"
           "    resources: {{limits: {{nvidia.com/gpu: 1}}}}\n")
    n = max(3, int(FULL * scale) // len(pod))
    (d / "pods.yaml").write_text("---\n".join(pod.format(i=i) for i in range(n)))
    return ["pods.yaml"]


def _full_file(name: str, make: Callable[[int], str]) -> Case:
    """A file ``name`` of ``make(n)``, about n characters (9.5 MiB at full scale): one of
    the shapes whose parts each cost little and whose count had no bound."""
    def case(d: Path, scale: float) -> list[str]:
        (d / name).write_text(make(max(20_000, int(FULL * scale))))
        return [name]
    return case


def _documents(make: Callable[[int], str]) -> Callable[[int], str]:
    """YAML documents ``make(i)`` up to about n characters."""
    def text(n: int) -> str:
        one = len(make(0)) + 4
        return "---\n".join(make(i) for i in range(max(1, n // one)))
    return text


_SERVICE = ("apiVersion: v1\nkind: Service\nmetadata: {{name: vllm-{i}, labels: {{app: vllm}}}}\n"
            "spec: {{selector: {{app: vllm}}, ports: [{{port: 80, targetPort: 8000}}]}}\n")


def _services_before_launches(host: str) -> Case:
    """Half the file LoadBalancer Services, then Deployments, all of one label: each launch
    was compared with every Service and got a finding (or a related location) for each,
    quadratic in time and memory (1 MiB: 30 s, 2.2 GB)."""
    def case(d: Path, scale: float) -> list[str]:
        n = max(20_000, int(FULL * scale))
        svc = ("---\napiVersion: v1\nkind: Service\nmetadata: {{name: s{i}}}\nspec:\n"
               "  type: LoadBalancer\n  selector: {{app: vllm}}\n"
               "  ports: [{{port: 80, targetPort: 8000}}]\n")
        dep = deployment(["meta-llama/Llama-3.1-8B-Instruct", "-tp", "2", *host.split()]) \
            .replace("  template:\n", "  template:\n    metadata: {labels: {app: vllm}}\n")
        services = "".join(svc.format(i=i) for i in range(n // 2 // len(svc.format(i=0))))
        launches = "".join(f"---\n{dep.replace('name: hostile', f'name: engine-{i}')}"
                           for i in range(n // 2 // (len(dep) + 4)))
        (d / "deploy.yaml").write_text(services[4:] + launches)
        return ["deploy.yaml"]
    return case


def llmisvcs_naming_many_configs(d: Path, scale: float) -> list[str]:
    """300 LLMInferenceServiceConfigs, then LLMInferenceServices each naming all of them in
    baseRefs: each ref scanned every config (1 MiB: 13.5 s), each service was merged over 300
    configs and kept its 300 ref nodes (9.5 MiB: 15 s, 790 MB)."""
    k = 300
    cfg = ("---\napiVersion: serving.kserve.io/v1alpha2\nkind: LLMInferenceServiceConfig\n"
           "metadata: {{name: c{i}, namespace: ns}}\nspec:\n  template:\n    containers:\n"
           f"    - name: main\n      image: {VLLM_IMAGE}\n      args: [--max-model-len, '4096']\n")
    refs = "[" + ", ".join(f"{{name: c{i}}}" for i in range(k)) + "]"
    svc = ("---\napiVersion: serving.kserve.io/v1alpha2\nkind: LLMInferenceService\n"
           "metadata: {{name: s{i}, namespace: ns}}\nspec:\n"
           "  model: {{uri: 'hf://meta-llama/Llama-3.1-8B-Instruct', name: m}}\n"
           "  baseRefs: REFS\n  template:\n    containers:\n    - name: main\n"
           "      resources: {{limits: {{nvidia.com/gpu: '2'}}}}\n")
    head = "".join(cfg.format(i=i) for i in range(k))
    one = len(svc.format(i=0).replace("REFS", refs))
    n = max(1, (max(20_000, int(FULL * scale)) - len(head)) // one)
    (d / "kserve.yaml").write_text(head + "".join(svc.format(i=i).replace("REFS", refs)
                                                  for i in range(n)))
    return ["kserve.yaml"]


def many_gpu_count_fixes(d: Path, scale: float) -> list[str]:
    """Deployments whose GPU count MG101 offers to fix, after a long ConfigMap: each fix split
    the whole file into lines again, quadratic."""
    n = max(50, int(1_500 * scale))
    pad = "".join(f"    line {i} of a long embedded file\n" for i in range(int(100_000 * scale)))
    docs = [f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: pad}}\ndata:\n  notes: |\n{pad}"]
    docs += [deployment(["meta-llama/Llama-3.1-8B-Instruct", "-tp", "2"]).replace(
        "name: hostile", f"name: engine-{i}") for i in range(n)]
    (d / "deploy.yaml").write_text("---\n".join(docs))
    return ["deploy.yaml"]


def diff_of_many_fixes(d: Path, scale: float) -> list[str]:
    """`--diff` of Deployments whose GPU count is fixed: difflib's matcher over the whole file
    is quadratic in its repeated lines (2 MiB of them took 29 s)."""
    n = max(50, int(3_000 * scale))
    (d / "deploy.yaml").write_text("---\n".join(
        deployment(["meta-llama/Llama-3.1-8B-Instruct", "-tp", "2"]).replace(
            "name: hostile", f"name: engine-{i}") for i in range(n)))
    return ["--diff", "--unsafe-fixes", "--format", "text", "deploy.yaml"]


def many_compose_services(d: Path, scale: float) -> list[str]:
    """A compose file of many services with a finding each: a finding's SARIF name was found by
    reading every service before it, quadratic."""
    n = max(300, int(5_000 * scale))
    (d / "compose.yaml").write_text("services:\n" + "".join(
        f"  engine-{i}:\n    image: vllm/vllm-openai:v0.30.0\n    ports: [\"{8000 + i % 1000}:8000\"]\n"
        f"    command: [meta-llama/Llama-3.1-8B-Instruct, --host, 0.0.0.0]\n" for i in range(n)))
    return ["--format", "sarif", "compose.yaml"]


def many_inference_services(d: Path, scale: float) -> list[str]:
    """KServe ServingRuntimes and the InferenceServices naming them, in one file: each
    InferenceService read every runtime, and each joined runtime re-sorted the file's
    launches, quadratic."""
    n = max(100, int(3_000 * scale))
    (d / "kserve.yaml").write_text("---\n".join(f"""\
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata: {{name: runtime-{i}}}
spec:
  supportedModelFormats: [{{name: vLLM}}]
  containers:
    - name: kserve-container
      image: {VLLM_IMAGE}
      command: ["python3", "-m", "vllm.entrypoints.openai.api_server"]
      args: ["--port=8080", "--model=/mnt/models"]
---
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {{name: isvc-{i}}}
spec:
  predictor:
    model:
      modelFormat: {{name: vLLM}}
      runtime: runtime-{i}
      storageUri: hf://meta-llama/Llama-3.1-8B-Instruct
      args: ["--tensor-parallel-size=2"]
      resources: {{limits: {{nvidia.com/gpu: "2"}}}}
""" for i in range(n)))
    return ["kserve.yaml"]


def many_autoselected_inference_services(d: Path, scale: float) -> list[str]:
    """InferenceServices that name no runtime, then the runtimes they could run on: each
    service read every runtime (15,000 x 1,000 took over 120 s at 9.5 MiB)."""
    runtime = ("apiVersion: serving.kserve.io/v1alpha1\nkind: ServingRuntime\n"
               "metadata: {{name: runtime-{i}}}\nspec:\n"
               "  supportedModelFormats: [{{name: vLLM, autoSelect: true, priority: {p}}}]\n"
               "  containers:\n    - name: kserve-container\n      image: " + VLLM_IMAGE + "\n"
               "      command: [python3, -m, vllm.entrypoints.openai.api_server]\n"
               "      args: [--port=8080, --model=/mnt/models]\n")
    isvc = ("apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\n"
            "metadata: {{name: isvc-{i}, namespace: ns-{i}}}\nspec:\n  predictor:\n    model:\n"
            "      modelFormat: {{name: vLLM}}\n"
            "      storageUri: hf://meta-llama/Llama-3.1-8B-Instruct\n"
            "      args: [--tensor-parallel-size=2]\n"
            "      resources: {{limits: {{nvidia.com/gpu: '2'}}}}\n")
    n = max(100, int(FULL * scale) // (len(runtime) + len(isvc) + 40))
    (d / "kserve.yaml").write_text("---\n".join(
        [isvc.format(i=i) for i in range(n)] + [runtime.format(i=i, p=i) for i in range(n)]))
    return ["kserve.yaml"]


def launches_of_a_script_with_many_variables(d: Path, scale: float) -> list[str]:
    """`mgpu-lint launches --format json` lists each launch's variables: 20,000 assignments
    and 1,000 launches printed 450 MB in 69 s (every launch all 20,000)."""
    n = max(2_000, int(100_000 * scale))
    (d / "run.sh").write_text("".join(f"a{i}=1\n" for i in range(n)) + (
        "vllm serve meta-llama/Llama-3.1-8B-Instruct\n" * max(100, n // 100)))
    return ["launches", "--format", "json", "run.sh"]


LLAMA = "llama-server -m Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf "


def stack_mounts_and_volumes(d: Path, scale: float) -> list[str]:
    """A production-stack values entry of 24,000 extraVolumeMounts and as many extraVolumes
    (just under bounds.MAX_YAML_NODES): each mount's volume was found by reading every
    volume's name again (5,300 of each: 85 s; 24,000 would be half an hour)."""
    n = max(500, int(24_000 * scale))
    (d / "values.yaml").write_text(
        "servingEngineSpec:\n  modelSpec:\n  - name: a\n"
        "    modelURL: meta-llama/Llama-3.1-8B-Instruct\n    requestGPU: 2\n"
        "    vllmConfig: {tensorParallelSize: 2}\n    extraVolumeMounts:\n"
        + "".join(f"      - {{name: v{i}, mountPath: /m{i}}}\n" for i in range(n))
        + "    extraVolumes:\n"
        + "".join(f"      - {{name: v{i}, emptyDir: {{}}}}\n" for i in range(n)))
    return ["values.yaml"]


def stack_shared_env_beside_many_entries(d: Path, scale: float) -> list[str]:
    """production-stack values: 2,000 servingEngineSpec.env entries beside 1,000 modelSpec
    entries, each of which reads the shared env again (1,400 entries in 0.35 MB: 20 s, 590 MiB;
    now spent from the file's words, bounds.MAX_SHELL_WORDS, MG001 past them)."""
    n = max(50, int(1_000 * scale))
    (d / "values.yaml").write_text(
        "servingEngineSpec:\n  env:\n"
        + "".join(f"    - {{name: E{i}, value: x}}\n" for i in range(2 * n))
        + "  modelSpec:\n" + "".join(
            f"    - name: a{i}\n      modelURL: meta-llama/Llama-3.1-8B-Instruct\n"
            "      requestGPU: 2\n      vllmConfig: {tensorParallelSize: 2}\n" for i in range(n)))
    return ["values.yaml"]


CASES: dict[str, Case] = {
    # side files: --config YAML
    "config-yaml-deep-flow": deep_config_yaml,
    "config-yaml-deep-block": deep_block_config_yaml,
    "config-yaml-alias-bomb": alias_bomb_config,
    "config-yaml-json-cannot-encode": config_values_json_cannot_encode,
    "config-yaml-self-alias": config_self_alias,
    "config-yaml-self-alias-map": _config_case("override-generation-config: &a {x: *a}\n"),
    "config-yaml-binary": _config_case("chat-template: !!binary aGVsbG8=\n"),
    "config-yaml-int-keys": _config_case("limit-mm-per-prompt: {1: 2}\n"),
    "config-yaml-complex-key": _config_case("limit-mm-per-prompt: {[a]: b}\n? [x]\n: 1\n"),
    "config-yaml-set": _config_case("served-model-name: !!set {a, b}\n"),
    "config-yaml-python-tag": _config_case("x: !!python/object/apply:os.system ['true']\n"),
    "config-yaml-fifo": fifo_config_yaml,
    # side files: config.json beside the manifest
    "config-json-zero-heads": _local_config(_cfg(num_attention_heads=0)),
    "config-json-zero-everything": _local_config(_cfg(
        num_attention_heads=0, num_key_value_heads=0, hidden_size=0, num_hidden_layers=0,
        vocab_size=0, intermediate_size=0)),
    "config-json-1e400": _local_config(_cfg().replace("4096", "1e400")),
    "config-json-huge-int": _local_config(_cfg().replace("4096", "9" * 4000)),
    "config-json-huge-layers": _local_config(_cfg(num_hidden_layers=2**40,
                                                  max_position_embeddings=10**30)),
    "config-json-negative": _local_config(_cfg(num_hidden_layers=-5, hidden_size=-4096)),
    "config-json-nan": _local_config(_cfg().replace("4096", "NaN")),
    "config-json-infinity": _local_config(_cfg().replace('"hidden_size": 4096',
                                                         '"hidden_size": Infinity')),
    "config-json-moe-huge": _local_config(_cfg(num_local_experts=10**12,
                                               num_experts_per_tok=10**9,
                                               architectures=["MixtralForCausalLM"],
                                               model_type="mixtral")),
    "config-json-wrong-types": _local_config(_cfg(num_attention_heads="32", hidden_size=[1],
                                                  num_hidden_layers={"a": 1},
                                                  torch_dtype=7)),
    "config-json-deep": _local_config('{"text_config": ' + "[" * 100_000 + "]" * 100_000 + "}"),
    "config-json-deep-objects": _local_config('{"a":' * 50_000 + "1" + "}" * 50_000),
    "config-json-not-utf8": _local_config('{"hidden_size": "\udcff"}'.encode(
        "utf-8", "surrogateescape").decode("latin-1")),
    "config-json-huge-file": config_json_huge,
    "config-json-fifo": fifo_config_json,
    # GGUF headers
    "gguf-block-count-2^40": _sh("llama-server -m ./m.gguf -ngl 99",
                                 ("m.gguf", gguf_model(block_count=2**40))),
    "gguf-zero-heads": _sh("llama-server -m ./m.gguf -ngl 99",
                           ("m.gguf", gguf_model(heads=0))),
    "gguf-huge-hidden": _sh("llama-server -m ./m.gguf -ngl 99 -c 1000000000",
                            ("m.gguf", gguf_model(hidden=2**62))),
    "gguf-nested-arrays": _sh("llama-server -m ./m.gguf -ngl 99",
                              ("m.gguf", gguf_model(raw_meta=gguf_nested_array(2000)))),
    "gguf-fifo": fifo_gguf,
    # one side file named by 1,000 launches: read once (safeio.memo)
    "gguf-header-beside-many-launches": big_gguf_beside_launches,
    "config-yaml-beside-many-launches": big_config_beside_launches,
    "many-configs-beside-launches": many_configs_beside_launches,
    "services-building-one-dockerfile": services_building_one_dockerfile,
    "services-building-an-image-of-many-env-lines": services_building_an_image_of_many_env_lines,
    # compose .env and .gitignore
    "env-fifo": fifo_env_beside_compose,
    "build-dockerfile-fifo": fifo_dockerfile_of_build,
    "env-not-utf8": non_utf8_env,
    "gitignore-fifo": fifo_gitignore,
    # numbers that drive loops and allocations
    "tp-1e9": _vllm_args("-tp", "1000000000"),
    "pp-1e9": _vllm_args("-pp", "1000000000"),
    "dp-1e8-ep": _vllm_args("-dp", "100000000", "--enable-expert-parallel",
                            model="mistralai/Mixtral-8x7B-Instruct-v0.1"),
    "dp-local-huge": _vllm_args("-dp", "100000000", "--data-parallel-size-local", "99999999"),
    "gpu-request-1e8": _vllm_args("-tp", "4", gpus="100000000"),
    "gpu-request-huge-number": _vllm_args("-tp", "4", gpus="1e39"),
    # llama.cpp names one device per local GPU (facts/llama.py): the count must be bounded too
    "llama-gpu-request-1e8": _llama_args("-ngl", "99", gpus="100000000"),
    "nnodes-huge": _vllm_args("-tp", "8", "--nnodes", "1000000000", "--node-rank", "0"),
    "max-model-len-huge": _vllm_args("--max-model-len", "100000000000000000000000000000"),
    "max-num-seqs-huge": _vllm_args("--max-num-seqs", "10000000000000", "--max-model-len",
                                    "1000000000000"),
    "gpu-mem-util-nan": _vllm_args("--gpu-memory-utilization", "nan"),
    "gpu-mem-util-inf": _vllm_args("--gpu-memory-utilization", "inf"),
    "compilation-config-deep": _vllm_args("--compilation-config",
                                          "[" * 100_000 + "]" * 100_000),
    "speculative-config-deep": _vllm_args("--speculative-config",
                                          '{"a":' * 20_000 + "1" + "}" * 20_000),
    "hf-overrides-deep": _vllm_args("--hf-overrides", '{"a":' * 20_000 + "1" + "}" * 20_000),
    "json-suffix-huge": _vllm_args("--compilation-config", '{"max_capture_size": 99999999999T}'),
    "ts-minus-one": _sh(LLAMA + "-ngl 99 -ts -1,1"),
    "ts-nan": _sh(LLAMA + "-ngl 99 -ts nan,1"),
    "ts-inf": _sh(LLAMA + "-ngl 99 -ts inf,inf"),
    "ts-1e39": _sh(LLAMA + "-ngl 99 -ts 1e39,1e39"),
    "ts-1e26": _sh(LLAMA + "-ngl 99 -ts 1e26,1"),
    "ts-many": _sh(LLAMA + "-ngl 99 -ts " + ",".join(["1"] * 100_000)),
    "ngl-huge": _sh(LLAMA + "-ngl 99999999999999999999 -c 99999999999999"),
    "llama-parallel-huge": _sh(LLAMA + "-np 1000000000 -c 1000000000"),
    "rpc-many": _sh(LLAMA + "--rpc " + ",".join(
        f"10.0.{i // 250}.{i % 250}:50052" for i in range(20_000))),
    "node-gpu-zero": _vllm_args("-tp", "8", "--nnodes", "2", "--node-rank", "0", gpus="0"),
    # reporting and parsing
    "many-findings-one-line": many_findings_one_line,
    "many-unknown-flags": many_unknown_flags,
    "many-unknown-flags-no-model": many_unknown_flags_no_model,
    "many-launches": many_launches,
    "long-word": long_word,
    "long-word-quoted-var": long_word_quoted_var,
    "long-yaml-scalar": long_yaml_scalar,
    "long-word-escapes": _long_shell(lambda n: '"' + '\\"' * (n // 2) + '"'),
    "long-ansi-escapes": _long_shell(lambda n: "$'" + "\\n" * (n // 2) + "'"),
    "long-param-default": _long_shell(lambda n: "${x:-" + "a" * n + "}"),
    "long-word-expansions": _long_shell(lambda n: "m" + "$x" * (n // 2), prelude="x=ab\n"),
    "long-word-unknown-expansions": _long_shell(lambda n: "m" + "$HOME" * (n // 5)),
    "long-folded-blank-lines": long_folded_blank_lines,
    # an unclosed double quote over many `$(…)`/`${…}`: the grammar's DQ regex backtracks
    # exponentially (14 repetitions took 76 s); shell._dq_end finds its end in linear time
    "dq-fallback-backtracking": _long_shell(lambda n: '"' + "$(a) ${b} " * (n // 10) + "$("),
    "many-broken-continuations": many_broken_continuations,
    "many-launches-one-gpu": many_launches_one_gpu,
    "many-assignments-then-commands": many_assignments_then_commands,
    "assignments-between-launches": assignments_between_launches,
    "diff-of-many-fixes": diff_of_many_fixes,
    "launches-json-many-variables": launches_of_a_script_with_many_variables,
    "kubeai-models-of-many-bad-flags": kubeai_models_of_many_bad_flags,
    "documents-of-many-launch-words": documents_of_many_launch_words,
    "many-stray-arguments": _words_script(lambda n: "vllm serve m " + "ab " * (n // 3) + "\n"),
    "many-short-commands": _words_script(
        lambda n: "vllm serve meta-llama/Llama-3.1-8B-Instruct\n" + "a\n" * (n // 2)),
    "many-words-one-command": _words_script(
        lambda n: "vllm serve meta-llama/Llama-3.1-8B-Instruct\necho " + "ab " * (n // 3)),
    "many-array-elements": _words_script(
        lambda n: "args=( " + "ab " * (n // 3) + ')\nvllm serve m "${args[@]}"\n'),
    "many-launches-full-size": _words_script(lambda n: (
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --port 8000 -tp 1\n") * (n // 62)),
    "blank-runs-in-sarif-names": blank_runs_in_sarif_names,
    "long-fence-info-string": long_fence_info_string,
    "unclosed-template-actions": unclosed_template_actions,
    "many-installer-words": many_installer_words,
    "quoted-unclosed-parameters": _long_shell(lambda n: '"' + "${" * n + '"'),
    "compose-nested-defaults": compose_nested_defaults,
    "many-pip-installs": many_pip_installs,
    "many-gpu-count-fixes": many_gpu_count_fixes,
    "many-inference-services": many_inference_services,
    "many-autoselected-inference-services": many_autoselected_inference_services,
    "many-compose-services": many_compose_services,
    "services-selecting-many-launches": _services_before_launches(""),
    "llmisvcs-naming-many-configs": llmisvcs_naming_many_configs,
    "stack-mounts-and-volumes": stack_mounts_and_volumes,
    "stack-shared-env-beside-many-entries": stack_shared_env_beside_many_entries,
    "services-selecting-many-loopback-launches": _services_before_launches("--host 127.0.0.1"),
    # 9.5 MiB of small parts: a launch each (read up to bounds.MAX_LAUNCHES), a YAML node each
    # (a document is composed up to bounds.MAX_YAML_NODES), or neither (documents that name
    # the engine and launch nothing: read to the end)
    "many-documents-of-launches": _full_file("deploy.yaml", _documents(
        lambda i: deployment(["meta-llama/Llama-3.1-8B-Instruct", "-tp", "2"]).replace(
            "name: hostile", f"name: engine-{i}"))),
    "many-documents-naming-the-engine": _full_file(
        "services.yaml", _documents(lambda i: _SERVICE.format(i=i))),
    "many-compose-services-full-size": _full_file("compose.yaml", lambda n: "services:\n" + "".join(
        f"  engine-{i}:\n    image: vllm/vllm-openai:v0.30.0\n"
        f"    command: [meta-llama/Llama-3.1-8B-Instruct, -tp, '2']\n" for i in range(n // 112))),
    "many-fences": _full_file("README.md", lambda n: (
        "```bash\nvllm serve meta-llama/Llama-3.1-8B-Instruct -tp 2\n```\n\n") * (n // 62)),
    # blocks that name the engine and launch nothing (read up to bounds.MAX_MARKDOWN_BLOCKS;
    # each YAML block's loader was also kept alive by its own cycle: 36 s, 935 MiB)
    "many-yaml-fences-naming-the-engine": _full_file("README.md", lambda n: (
        "```yaml\nimage: vllm/vllm-openai:v0.30.0\nargs: [--port, \"8000\"]\n```\n\n") * (n // 68)),
    "many-shell-fences-naming-the-engine": _full_file("README.md", lambda n: (
        "```bash\necho vllm serve is great\n```\n\n") * (n // 38)),
    "many-yaml-here-documents": _full_file("run.sh", lambda n: (
        "kubectl apply -f - <<EOF\napiVersion: v1\nkind: Service\nmetadata: {name: vllm}\nEOF\n")
        * (n // 80)),
    # Dockerfile stages: each FROM looked for its parent among every stage before it (9.5 MiB
    # of 210,000 stages took over 40 s)
    "many-dockerfile-stages": _full_file("Dockerfile", lambda n: (
        f"FROM {VLLM_IMAGE} AS s\nRUN echo a\n") * (n // 45)),
    # a Dockerfile of 1.6 million instructions, of one instruction over 1.9 million lines, of
    # exec-form arrays of 1.9 million elements: every instruction was kept with its map
    # (686 MiB), each element built character by character and read twice (19.5 s, 993 MiB)
    "many-dockerfile-instructions": _full_file("Dockerfile", lambda n: (
        f"FROM {VLLM_IMAGE}\n" + "RUN a\n" * (n // 6))),
    "many-dockerfile-continuation-lines": _full_file("Dockerfile", lambda n: (
        f"FROM {VLLM_IMAGE}\nRUN a" + " \\\n a" * (n // 5))),
    "long-exec-form-entrypoint": _full_file("Dockerfile", lambda n: (
        f'FROM {VLLM_IMAGE}\nENTRYPOINT ["vllm", "serve", "m"' + ', "a"' * (n // 5) + "]\n")),
    "long-exec-form-cmd": _full_file("Dockerfile", lambda n: (
        f'FROM {VLLM_IMAGE}\nCMD ["m"' + ', "a"' * (n // 5) + "]\n")),
    # a chain of stages, each built from the one before and setting a variable: each stage
    # copied the ENV (and COPYs) it inherits (past 120 s and 24 GiB)
    "chained-dockerfile-stages": _full_file("Dockerfile", lambda n: f"FROM {VLLM_IMAGE} AS s0\n"
                                            + "".join(f"ENV A{i}=1\nFROM s{i - 1} AS s{i}\n"
                                                      for i in range(1, n // 40))),
    # each relative WORKDIR made the path one component longer, normalised whole again
    # (quadratic: 100,000 took 15 s, 9.5 MiB over 120 s)
    "many-relative-workdirs": _full_file("Dockerfile", lambda n: (
        f"FROM {VLLM_IMAGE}\n" + "WORKDIR a\n" * (n // 10))),
    # a value that doubles on each line (2^41 characters from a 300-byte script: over 9 GiB);
    # a value longer than bounds.MAX_VALUE_CHARS is unknown where it is expanded
    "doubling-variable": _sh("x=ab\n" + "x=$x$x\n" * 40 + "vllm serve $x"),
    "doubling-quoted-variable": _sh("x=ab\n" + 'x="$x $x"\n' * 40 + "vllm serve $x"),
    # `a+=(x)` copied the whole array each time (9.5 MiB of appends: over 40 s)
    "many-array-appends": _full_file("run.sh", lambda n: "a+=(x)\n" * (n // 7)
                                     + 'vllm serve m "${a[@]}"\n'),
    # libyaml refuses `repo:tag` in a flow mapping: it reads the text with the `:` in a
    # stand-in (yamlsrc._read_refused_colons), up to bounds.MAX_YAML_NODES ...
    "flow-mapped-compose-services": _full_file("compose.yaml", lambda n: "services:\n" + "".join(
        f"  s{i}: {{image: vllm/vllm-openai:v0.30.0, command: [serve, m]}}\n"
        for i in range(n // 64))),
    # ... or, with a tag that holds a `:` (a stand-in there breaks it) and a `!` in a plain
    # scalar (taken for a tag: its `:` left alone), the pure composer reads it, up to
    # yamlsrc.PURE_MAX_NODES (40+ s and 735 MiB before)
    "flow-mapped-compose-services-with-a-tag": _full_file("compose.yaml", lambda n: (
        "services:\n" + "".join(
            f"  s{i}: {{labels: !t:x [hi !u:v], image: vllm/vllm-openai:v0.30.0, "
            "command: [serve, m]}\n" for i in range(n // 87)))),
    # a compose command of `${A}` references: each unknown one was kept with its place (9.5 s,
    # 620 MiB); they spend the file's word budget (bounds.MAX_SHELL_WORDS)
    "compose-many-references": _full_file("compose.yaml", lambda n: (
        f"services:\n  s:\n    image: {VLLM_IMAGE}\n    command: vllm serve m"
        + " ${A}" * (n // 5) + "\n")),
    # within the budget, each word of the command looked through all of its references (4,000
    # took over 30 s); sources/commandline.WordComposer finds a word's by bisection
    "compose-references-within-the-budget": _full_file("compose.yaml", lambda n: (
        f"services:\n  s:\n    image: {VLLM_IMAGE}\n    command: vllm serve m"
        + " a${A}" * min(n // 6, 200_000) + "\n")),
    # suppressions: each finding looked through every directive, each file-wide directive
    # marked every other (over 120 s), and each stale one was a finding of its own
    "many-stale-suppressions": _full_file("run.sh", lambda n: (
        "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 3  # mgpu-lint: disable=MG999\n"
        * 1000 + "# mgpu-lint: disable=MG102\n" * max(0, n // 27 - 3000))),
    "many-file-wide-suppressions": _full_file("run.sh", lambda n: (
        "# mgpu-lint: disable-file=MG102,MG103\n" * (n // 40)
        + "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 3\n" * 1000)),
    # each finding looked through every object's `mgpu-lint/ignore` annotation (24 s)
    "many-annotated-objects": _full_file("x.yaml", lambda n: "---\n".join(
        deployment(["meta-llama/Llama-3.1-70B-Instruct", "-tp", "3"]).replace(
            "name: hostile", f"name: e{i}") for i in range(min(1000, n // 2000))) + "".join(
        f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}, annotations: "
        "{mgpu-lint/ignore: MG102}}\ndata: {a: b}\n" for i in range(n // 125))),
    # each blank or comment line ended an empty command again (10 million newlines: 22 s)
    "many-blank-lines": _full_file("run.sh", lambda n: "vllm serve m\n" + "\n" * n),
    "many-comment-lines": _full_file("run.sh", lambda n: "vllm serve m\n" + "#\n" * (n // 2)),
    # every value set is kept for the launches after it: ever longer values (1.6 GB) or many
    # copies of a long one (over 4 GB) are past bounds.MAX_ENV_CHARS
    "growing-variable": _sh("C='vllm serve m'\n" + 'C="$C -tp 3"\n' * 25_000 + "eval $C"),
    "many-copies-of-a-long-value": _sh("x=ab\n" + "x=$x$x\n" * 16 + "".join(
        f"y{i}=$x\n" for i in range(100_000)) + "vllm serve m"),
    "diff-of-fixes-on-every-line": diff_of_fixes_on_every_line,
    "configuration-with-full-tables": configuration_with_full_tables,
    "gitignore-of-wildcard-patterns": _files_under_gitignore(
        lambda i: f"*q{i}*\n", 100_000, 2_000),
    "gitignore-of-literal-patterns": _files_under_gitignore(
        lambda i: f"build{i}/*.tmp\n", 60_000, 2_000),
    # every GPU mention of the paragraph before a block was kept as a place (550 MiB)
    "long-paragraph-of-gpu-mentions": _full_file("README.md", lambda n: (
        "8×H200 " * (n // 9) + "\n\n```bash\nvllm serve meta-llama/Llama-3.1-8B-Instruct\n```\n")),
    # each value is at most 128 KiB, but a word or a launch of many references to one was not
    # bounded (a 1 MB script: 4 GB, MemoryError; campaign seed 36)
    "many-references-to-a-long-value-in-one-word": _sh(
        "x=ab\n" + "x=$x$x\n" * 16 + 'echo "' + "$x" * 40_000 + '"\nvllm serve m'),
    "many-words-of-a-long-value": _sh(
        "x=ab\n" + "x=$x$x\n" * 16 + "vllm serve m" + " $x" * 100_000),
    "yaml-flow-list-of-short-words": _full_file("compose.yaml", lambda n: (
        "services:\n  s:\n    image: vllm/vllm-openai:v0.30.0\n    command: ["
        + "a," * (n // 2) + "a]\n")),
    # a pod template of 200 containers listed 20,000 times through an alias (72 KB): each
    # listing was read again, 4 million containers (past 100 s); each reading now counts the
    # template's nodes against the visit bound (MG001 where it is passed)
    "aliased-pod-template-of-many-containers": _full_file("deploy.yaml", lambda n: (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - {name: c, image: 'vllm/vllm-openai:v0.30.0', "
        "command: [vllm, serve, m]}\nx: &p {template: {spec: {containers: ["
        + ", ".join(f"{{name: c{i}, image: busybox, command: [sh, -c, 'echo {i}']}}"
                    for i in range(200))
        + "]}}}\ngroups: [" + "*p, " * (n // 475) + "*p]\n")),
    # an LLMInferenceServiceConfig of 30,000 args that are each a Go-template action (1 MB):
    # each word looked through every action of the config (41 s); kserve.TemplateActions
    "llmisvc-config-of-many-template-args": _full_file("config.yaml", lambda n: (
        "apiVersion: serving.kserve.io/v1alpha2\nkind: LLMInferenceServiceConfig\n"
        "metadata: {name: cfg}\nspec:\n  template:\n    containers:\n    - name: main\n"
        "      image: vllm/vllm-openai:v0.10.2\n"
        "      command: [vllm, serve, meta-llama/Llama-3.1-8B-Instruct]\n      args:\n"
        + "      - '{{ .Spec.Model.Name }}'\n" * (n // 330))),
    # serveConfigV2 is YAML in a string, composed on its own: one of too many nodes was
    # dropped without the MG001 the file's own documents get
    "rayservice-serve-config-of-many-nodes": _full_file("rayservice.yaml", lambda n: (
        "apiVersion: ray.io/v1\nkind: RayService\nmetadata: {name: llm}\nspec:\n"
        "  serveConfigV2: |\n    applications:\n"
        "    - import_path: ray.serve.llm:build_openai_app\n      args:\n        llm_configs:\n"
        "        - model_loading_config: {model_id: meta-llama/Llama-3.1-8B-Instruct}\n"
        "          engine_kwargs: {tensor_parallel_size: 3}\n"
        "          filler: [" + "a," * (n // 2) + "a]\n")),
    "yaml-block-list-of-short-words": _full_file("deploy.yaml", lambda n: deployment(
        ["meta-llama/Llama-3.1-8B-Instruct"]).replace(
            "          args:\n", "          args:\n" + "            - a\n" * (n // 16), 1)),
}
