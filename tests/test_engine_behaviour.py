"""What the engine does, row by row: a launch, where it runs, what vLLM or llama.cpp does with it,
the source that proves it, and the findings that must (and must not) follow.

Each row was read in the engine's source (vLLM wheels 0.10.2, 0.15.1, 0.20.2, 0.25.1, 0.30.0,
0.33.0; llama.cpp master; SGLang wheels 0.4.10.post2 and 0.5.5).  ``expect`` maps a code to the
severity it must have; ``absent`` lists codes that must not appear (the engine stops earlier, or does not check this).  A row's
``files`` put the launch into a file of that name (a Kubernetes manifest, a compose file);
otherwise the command is linted with ``--command`` and ``release`` as ``--target-version``.
Add a row for every engine fact a rule implements.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from mgpu_lint.cli import main

LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
MOE = "Qwen/Qwen3-30B-A3B"
# a Deployment running vLLM's demo server with a readiness probe on {path}
_DEMO_POD = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d}}\nspec:\n  selector: "
            "{{matchLabels: {{app: d}}}}\n  template:\n    metadata: {{labels: {{app: d}}}}\n"
            "    spec:\n      containers:\n      - name: d\n        image: "
            "vllm/vllm-openai:v0.9.2\n        command: [python3, -m, "
            "vllm.entrypoints.api_server, --model, " + LLAMA + "]\n        "
            "readinessProbe: {{httpGet: {{path: {path}, port: 8000}}}}\n        resources: "
            "{{limits: {{nvidia.com/gpu: 1}}}}\n")


@dataclass(frozen=True)
class Behaviour:
    name: str
    command: str  # the launch (or, with `files`, the name of the file that holds it)
    does: str  # what the engine does with it
    source: str  # file and function in the engine's source, and the releases read
    expect: dict[str, str] = field(default_factory=dict)  # code -> severity
    absent: tuple[str, ...] = ()
    release: str | None = "0.30.0"  # --target-version (None: nothing pins the release)
    files: dict[str, str] = field(default_factory=dict)  # name -> text (the launch's context)


# Qwen2.5-72B in bf16 at tp 2 on H100s, without --mem-fraction-static (SGLang's default)
SGL_72B_TP2 = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: sgl\nspec:\n  "
               "template:\n    spec:\n      nodeSelector: {{nvidia.com/gpu.product: "
               "NVIDIA-H100-80GB-HBM3}}\n      containers:\n        - name: server\n          "
               "image: lmsysorg/sglang:{tag}\n          command: [\"python3\", \"-m\", "
               "\"sglang.launch_server\", \"--model-path\", \"Qwen/Qwen2.5-72B-Instruct\", "
               "\"--tp\", \"2\"]\n          resources:\n            limits: "
               "{{nvidia.com/gpu: 2}}\n")


TABLE: list[Behaviour] = [
    # ------------------------------------------------------------ data parallel
    Behaviour("dp-local-above-dp", f"vllm serve {MOE} -dp 2 -dpl 4 --enable-expert-parallel",
              "ValueError: data_parallel_size_local (4) must be <= data_parallel_size (2)",
              "vllm/config/parallel.py ParallelConfig._validate_parallel_config (0.10.2-0.33.0)",
              {"MG801": "error"}),
    Behaviour("dp-rank-out-of-range", f"vllm serve {MOE} -dp 2 --data-parallel-rank 2 -ep",
              "ValueError: data_parallel_rank (2) must be in the range [0, 2)",
              "vllm/config/parallel.py ParallelConfig.__post_init__ (0.10.2-0.33.0)",
              {"MG802": "error"}, ("MG812",)),
    Behaviour("dp-rank-in-range", f"vllm serve {MOE} -dp 2 --data-parallel-rank 1 -ep",
              "starts rank 1 of 2 (external load balancing of a MoE model)",
              "vllm/engine/arg_utils.py create_engine_config (0.30.0)",
              {}, ("MG802", "MG812")),
    Behaviour("external-lb-dense", f"vllm serve {LLAMA} -dp 2 --data-parallel-rank 0",
              "ValueError: Non-MoE models do not support external data parallel mode",
              "vllm/engine/arg_utils.py create_engine_config (0.25.1-0.33.0)",
              {"MG812": "error"}),
    Behaviour("external-lb-dense-0.20", f"vllm serve {LLAMA} -dp 2 --data-parallel-rank 0",
              "starts: 0.20.2 has no dense-model check",
              "vllm/engine/arg_utils.py create_engine_config (0.20.2)",
              {}, ("MG812",), release="0.20.2"),
    Behaviour("external-lb-one-engine", f"vllm serve {MOE} --data-parallel-external-lb -ep",
              "ValueError: data_parallel_external_lb can only be set when data_parallel_size > 1",
              "vllm/config/parallel.py ParallelConfig._validate_parallel_config (0.15.1-0.33.0)",
              {"MG812": "error"}),
    Behaviour("external-lb-one-engine-unpinned",
              f"vllm serve {MOE} --data-parallel-external-lb -ep",
              "refused from 0.15.1; nothing says which release runs",
              "vllm/config/parallel.py (0.15.1-0.33.0; absent in 0.10.2)",
              {"MG812": "warning"}, release=None),
    Behaviour("hybrid-lb-without-dpl", f"vllm serve {MOE} -dp 4 -dph -ep",
              "ValueError: `--data-parallel-hybrid-lb` requires `--data-parallel-size-local`",
              "vllm/engine/arg_utils.py create_engine_config (0.15.1-0.33.0; assert to 0.25)",
              {"MG813": "error"}),
    Behaviour("headless-api-server-1",
              f"vllm serve {MOE} -dp 4 -dpl 2 -dpsr 2 -dpa 10.0.0.1 --headless -asc 1 -ep",
              "ValueError: --api-server-count=1 cannot be used with --headless",
              "vllm/entrypoints/cli/serve.py ServeSubcommand.cmd (0.15.1-0.33.0)",
              {"MG811": "error"}),
    Behaviour("headless-api-server-1-0.10",
              f"vllm serve {MOE} -dp 4 -dpl 2 -dpsr 2 -dpa 10.0.0.1 --headless -asc 1 -ep",
              "starts: 0.10.2 refuses only counts above 1 (run_headless)",
              "vllm/entrypoints/cli/serve.py run_headless (0.10.2)",
              {}, ("MG811",), release="0.10.2"),
    # ------------------------------------------------------------ executors
    Behaviour("nnodes-ray-executor",
              f"vllm serve {LLAMA} -tp 8 -pp 2 --nnodes 2 --node-rank 0 --master-addr 10.0.0.1 "
              "--distributed-executor-backend ray",
              "ValueError: nnodes > 1 can only be set when distributed executor backend is mp, "
              "uni or external_launcher.",
              "vllm/config/parallel.py ParallelConfig.__post_init__ (0.15.1-0.33.0)",
              {"MG803": "error"}, ("MG106",)),
    Behaviour("nnodes-ray-dp-backend",
              f"vllm serve {MOE} -dp 16 --nnodes 2 --node-rank 0 --master-addr 10.0.0.1 "
              "-dpb ray -ep",
              "ValueError: `--nnodes 2` requires `--data-parallel-backend mp`",
              "vllm/engine/arg_utils.py create_engine_config (0.15.1-0.33.0)",
              {"MG804": "error"}),
    Behaviour("pp-uni", f"vllm serve {LLAMA} -pp 2 --distributed-executor-backend uni",
              "NotImplementedError: Pipeline Parallelism without Ray distributed executor or "
              "multiprocessing executor or external launcher is not supported.",
              "vllm/engine/arg_utils.py EngineArgs._check_feature_supported (0.10.2-0.33.0)",
              {"MG809": "error"}),
    Behaviour("pp-mp", f"vllm serve {LLAMA} -pp 2 --distributed-executor-backend mp",
              "starts two pipeline stages in worker processes",
              "vllm/engine/arg_utils.py EngineArgs._check_feature_supported (0.30.0)",
              {}, ("MG809",)),
    Behaviour("nsight-mp", f"vllm serve {LLAMA} -tp 2 --ray-workers-use-nsight",
              "ValueError: Unable to use nsight profiling unless workers run with Ray.",
              "vllm/config/parallel.py ParallelConfig._verify_args (0.10.2-0.33.0)",
              {"MG810": "error"}),
    Behaviour("nsight-dp-ray", f"vllm serve {MOE} -dp 2 -dpb ray --ray-workers-use-nsight -ep",
              "the executor defaults to ray with --data-parallel-backend ray",
              "vllm/config/parallel.py ParallelConfig.__post_init__ (0.30.0)",
              {}, ("MG810",)),
    # ------------------------------------------------------------ MoE / EPLB
    Behaviour("eplb-without-ep", f"vllm serve {MOE} -tp 2 --enable-eplb",
              "ValueError: enable_expert_parallel must be True to use EPLB.",
              "vllm/config/parallel.py ParallelConfig._validate_parallel_config (0.10.2-0.33.0)",
              {"MG805": "error"}, ("MG806",)),
    Behaviour("eplb-one-gpu", f"vllm serve {MOE} -ep --enable-eplb",
              "ValueError: EPLB requires tensor, prefill-context, or data parallelism",
              "vllm/config/parallel.py ParallelConfig._validate_parallel_config (0.10.2-0.33.0)",
              {"MG806": "error"}, ("MG805",)),
    Behaviour("redundant-without-eplb",
              f"vllm serve {MOE} -tp 2 -ep --eplb-config.num_redundant_experts 8",
              "ValueError: num_redundant_experts is set to 8 but EPLB is not enabled.",
              "vllm/config/parallel.py ParallelConfig._validate_parallel_config (0.10.2-0.33.0)",
              {"MG807": "error"}),
    Behaviour("dcp-not-dividing-tp", f"vllm serve {LLAMA} -tp 4 -dcp 3",
              "ValueError: tp_size=4 must be divisible by dcp_size=3.",
              "vllm/config/parallel.py ParallelConfig._validate_parallel_config (0.20.2-0.33.0)",
              {"MG808": "error"}),
    Behaviour("dcp-not-dividing-tp-0.15", f"vllm serve {LLAMA} -tp 4 -dcp 3",
              "no such start-up check in 0.15.1", "vllm/config/parallel.py (0.15.1)",
              {}, ("MG808",), release="0.15.1"),
    # ------------------------------------------------------------ LoRA, scheduler
    Behaviour("max-loras-zero", f"vllm serve {LLAMA} --enable-lora --max-loras 0",
              "pydantic ValidationError: max_loras Input should be greater than or equal to 1",
              "vllm/config/lora.py LoRAConfig (0.15.1-0.33.0; a ValueError in 0.10.2)",
              {"MG814": "error"}),
    Behaviour("max-loras-zero-lora-off", f"vllm serve {LLAMA} --max-loras 0",
              "starts: LoRAConfig is built only with --enable-lora",
              "vllm/engine/arg_utils.py create_engine_config (0.30.0)", {}, ("MG814",)),
    Behaviour("cpu-loras-below", f"vllm serve {LLAMA} --enable-lora --max-loras 4 "
              "--max-cpu-loras 2",
              "ValueError: max_cpu_loras (2) must be >= max_loras (4).",
              "vllm/config/lora.py LoRAConfig._validate_lora_config (0.10.2-0.33.0)",
              {"MG815": "error"}),
    Behaviour("max-num-seqs-zero", f"vllm serve {LLAMA} --max-num-seqs 0",
              "pydantic ValidationError: max_num_seqs Input should be greater than or equal to 1",
              "vllm/config/scheduler.py SchedulerConfig (0.15.1-0.33.0)", {"MG816": "error"}),
    Behaviour("batched-tokens-below-seqs",
              f"vllm serve {LLAMA} --max-num-batched-tokens 128 --max-num-seqs 256",
              "ValueError: max_num_batched_tokens (128) must be greater than or equal to "
              "max_num_seqs (256).",
              "vllm/config/scheduler.py SchedulerConfig.verify_max_model_len (0.10.2-0.33.0)",
              {"MG817": "error"}),
    Behaviour("batched-tokens-seqs-defaulted", f"vllm serve {LLAMA} --max-num-batched-tokens 128",
              "starts: the default max_num_seqs is lowered to the token budget",
              "vllm/engine/arg_utils.py _set_default_max_num_seqs_and_batched_tokens_args "
              "(0.30.0)", {}, ("MG817",)),
    Behaviour("batched-tokens-below-len-no-chunking",
              f"vllm serve {LLAMA} --max-model-len 8192 --max-num-batched-tokens 4096 "
              "--no-enable-chunked-prefill",
              "ValueError: max_num_batched_tokens (4096) is smaller than max_model_len (8192).",
              "vllm/config/scheduler.py SchedulerConfig.verify_max_model_len (0.10.2-0.33.0)",
              {"MG817": "error"}),
    Behaviour("batched-tokens-below-len-chunking",
              f"vllm serve {LLAMA} --max-model-len 8192 --max-num-batched-tokens 4096",
              "starts: chunked prefill splits long prompts",
              "vllm/config/scheduler.py SchedulerConfig.verify_max_model_len (0.30.0)",
              {}, ("MG817",)),
    Behaviour("chunked-prefill-false-0.7", f"vllm serve {LLAMA} --enable-chunked-prefill=false",
              "starts with chunked prefill off: StoreBoolean, nargs='?'",
              "vllm/engine/arg_utils.py EngineArgs.add_cli_args (0.7.3)",
              {}, ("MG006", "MG004"), release="0.7.3"),
    Behaviour("chunked-prefill-false-pinned", f"vllm serve {LLAMA} --enable-chunked-prefill=false",
              "error: argument --enable-chunked-prefill: ignored explicit argument 'false'",
              "vllm/engine/arg_utils.py EngineArgs.add_cli_args, a bare flag (0.10.2-0.33.0)",
              {"MG006": "error"}),
    Behaviour("chunked-prefill-false-unpinned",
              f"vllm serve {LLAMA} --enable-chunked-prefill=false",
              "depends on the release: valid up to 0.7.3, an error from 0.8.5",
              "vllm/engine/arg_utils.py EngineArgs.add_cli_args (0.7.3, 0.30.0)",
              {"MG006": "warning"}, release=None),
    Behaviour("compilation-config-level-pinned", f"vllm serve {LLAMA} --compilation-config 3",
              "fails: the value is validated as a CompilationConfig JSON object",
              "vllm/config/compilation.py / arg_utils.py (0.30.0); config.py "
              "CompilationConfig.from_cli validate_json (0.9.2)", {"MG006": "error"}),
    Behaviour("compilation-config-level-unpinned", f"vllm serve {LLAMA} --compilation-config 3",
              "depends on the release: 0.8.5 reads a bare level, 0.9.2 and later refuse it",
              "vllm/config.py CompilationConfig.from_cli (0.8.5.post1, 0.9.2)",
              {"MG006": "warning"}, release=None),
    Behaviour("compilation-config-level-0.9.2", f"vllm serve {LLAMA} --compilation-config 3",
              "fails: argparse's type is TypeAdapter(CompilationConfig).validate_json",
              "vllm/engine/arg_utils.py get_kwargs parse_dataclass; vllm/config.py "
              "CompilationConfig.from_cli (0.9.2)", {"MG006": "error"}, release="0.9.2"),
    Behaviour("compilation-config-level-0.8.5", f"vllm serve {LLAMA} --compilation-config 3",
              "runs at compilation level 3 (from_cli takes a bare level)",
              "vllm/config.py CompilationConfig.from_cli (0.8.5.post1)", absent=("MG006",),
              release="0.8.5"),
    Behaviour("kv-transfer-config-not-object", f"vllm serve {LLAMA} --kv-transfer-config 5",
              "fails: a config class validates only a JSON object",
              "vllm/engine/arg_utils.py get_kwargs parse_dataclass (0.9.2, 0.33.0)",
              {"MG006": "error"}, release="0.10.2"),
    Behaviour("o-level-shorthand-0.9.2", f"vllm serve {LLAMA} -O3",
              "runs at compilation level 3: -O3 becomes -O.level=3 before argparse",
              "vllm/utils/__init__.py FlexibleArgumentParser.parse_args (0.9.2, 0.10.2)",
              absent=("MG006", "MG004"), release="0.9.2"),
    Behaviour("o-space-level-0.10.2", f"vllm serve {LLAMA} -O 3",
              "runs at compilation level 3: -O 3 becomes -O.level 3",
              "vllm/utils/__init__.py FlexibleArgumentParser.parse_args (0.10.2)",
              absent=("MG006", "MG005"), release="0.10.2"),
    Behaviour("o-level-shorthand-0.11.2", f"vllm serve {LLAMA} -O=3",
              "runs at compilation mode 3: -O=3 becomes -O.mode=3",
              "vllm/utils/argparse_utils.py FlexibleArgumentParser.parse_args (0.11.2)",
              absent=("MG006",), release="0.11.2"),
    # ------------------------------------------------------------ front end
    Behaviour("auto-tool-choice", f"vllm serve {LLAMA} --enable-auto-tool-choice",
              "TypeError: Error: --enable-auto-tool-choice requires --tool-call-parser",
              "vllm/entrypoints/launchers/cli_args.py validate_parsed_serve_args (0.30.0; "
              "openai/cli_args.py 0.10.2-0.25.1, common/cli_args.py 0.33.0)",
              {"MG818": "error"}),
    Behaviour("port-too-large", f"vllm serve {LLAMA} --port 80000",
              "OverflowError: bind(): port must be 0-65535",
              "vllm/entrypoints/launchers/launcher.py setup_server/create_server_socket (0.30.0)",
              {"MG819": "error"}),
    Behaviour("port-zero", f"vllm serve {LLAMA} --port 0",
              "binds a port the kernel picks", "vllm/entrypoints/launchers/launcher.py (0.30.0)",
              {"MG819": "warning"}),
    # ------------------------------------------------------------ memory
    Behaviour("gpu-util-one", f"vllm serve {LLAMA} --gpu-memory-utilization 1.0",
              "ValueError: Free memory on device ... on startup is less than desired GPU memory "
              "utilization (the CUDA context and NCCL already hold part of the card)",
              "vllm/v1/worker/utils.py request_memory from gpu_worker.py Worker.init_device "
              "(0.30.0; gpu_worker.py init_device in 0.10.2)", {"MG305": "error"}),
    Behaviour("gpu-util-high", f"vllm serve {LLAMA} --gpu-memory-utilization 0.97",
              "starts; 3% of the card is left for the CUDA context, NCCL and other processes "
              "(CUDA graphs are budgeted inside from 0.21)",
              "vllm/v1/worker/gpu_worker.py determine_available_memory (0.30.0)",
              {"MG305": "warning"}),
    # ------------------------------------------------------------ llama.cpp
    Behaviour("lora-scaled-two-words",
              "llama-server -m models/x.gguf --lora-scaled adapters/a.gguf 0.5",
              "error while handling argument \"--lora-scaled\": lora-scaled format: FNAME:SCALE",
              "common/arg.cpp --lora-scaled handler (llama.cpp master; two words until "
              "487674fbb, #18056)", {"MG006": "error"}, ("MG004",), release=None),
    Behaviour("lora-scaled-pair",
              "llama-server -m models/x.gguf --lora-scaled adapters/a.gguf:0.5,adapters/b.gguf:1",
              "loads two adapters at scales 0.5 and 1",
              "common/arg.cpp --lora-scaled handler (llama.cpp master)", {},
              ("MG004", "MG006"), release=None),
    # ------------------------------------------------------------ the model
    Behaviour("served-name-first", f"vllm serve --served-model-name api {LLAMA}",
              "ValueError: `model` should be provided as the first positional argument when "
              "using `vllm serve`",
              "vllm/utils/argparse_utils.py FlexibleArgumentParser.parse_args (0.20.2-0.33.0)",
              {"MG016": "error"}, ("MG301", "MG302", "MG303")),
    Behaviour("served-name-model-later", f"vllm serve -tp 2 {LLAMA} --served-model-name api",
              "ValueError: `model` should be provided as the first positional argument (only "
              "the first argument is looked at)",
              "vllm/utils/argparse_utils.py FlexibleArgumentParser.parse_args (0.30.0)",
              {"MG016": "error"}),
    Behaviour("served-name-after-model", f"vllm serve {LLAMA} --served-model-name api",
              "serves the model under the name api",
              "vllm/utils/argparse_utils.py FlexibleArgumentParser.parse_args (0.30.0)",
              {}, ("MG016",)),
    Behaviour("served-name-via-model-flag", f"vllm serve --model {LLAMA} --served-model-name api",
              "moves --model to the front (with a deprecation warning), then starts",
              "vllm/utils/argparse_utils.py FlexibleArgumentParser.parse_args (0.30.0)",
              {"MG008": "warning"}, ("MG016",)),
    Behaviour("no-model-at-all", "vllm serve --port 8000",
              "serves the default model (model_tag is optional)",
              "vllm/entrypoints/cli/serve.py ServeSubcommand.cmd (0.30.0)",
              {"MG016": "error"}),
    Behaviour("config-without-model", "run.sh",
              "ValueError: No model specified! Please specify model either as a positional "
              "argument or in a config file.",
              "vllm/utils/argparse_utils.py FlexibleArgumentParser._pull_args_from_config "
              "(0.10.2-0.33.0)", {"MG016": "error"},
              files={"run.sh": "#!/bin/sh\nvllm serve --config serve.yaml\n",
                     "serve.yaml": "tensor-parallel-size: 2\n"}),
    Behaviour("config-with-model", "run.sh",
              "takes the model from the config file",
              "vllm/utils/argparse_utils.py FlexibleArgumentParser._pull_args_from_config "
              "(0.30.0)", {}, ("MG016",),
              files={"run.sh": "#!/bin/sh\nvllm serve --config serve.yaml\n",
                     "serve.yaml": f"model: {LLAMA}\ntensor-parallel-size: 2\n"}),
    Behaviour("dockerfile-exec-entrypoint-only", "Dockerfile",
              "docker run IMAGE ARGS appends ARGS to an exec-form ENTRYPOINT: the model comes "
              "at run time",
              "Dockerfile reference, ENTRYPOINT exec form and 'Understand how CMD and "
              "ENTRYPOINT interact' (docker/docs)", {}, ("MG016",),
              files={"Dockerfile": 'FROM ubuntu:22.04\nENTRYPOINT ["python3", "-m", '
                                   '"vllm.entrypoints.openai.api_server"]\n'}),
    Behaviour("dockerfile-shell-entrypoint", "Dockerfile",
              "a shell-form ENTRYPOINT ignores CMD and run-time arguments: vLLM serves its "
              "default model", "Dockerfile reference, ENTRYPOINT shell form (docker/docs); "
              "vllm/engine/arg_utils.py EngineArgs.model default (0.30.0)",
              {"MG016": "error"},
              files={"Dockerfile": "FROM ubuntu:22.04\nENTRYPOINT python3 -m "
                                   "vllm.entrypoints.openai.api_server\n"}),
    Behaviour("image-entrypoint-repeated-vllm-serve", "compose.yaml",
              "the image runs `vllm serve vllm serve MODEL`: model_tag is `vllm`, the other "
              "two words are unrecognized arguments",
              "vllm/entrypoints/launchers/cli_args.py make_arg_parser (model_tag, nargs='?'); "
              "vllm/entrypoints/cli/main.py parse_args (0.30.0)",
              {"MG016": "error"}, ("MG004", "MG010"),
              files={"compose.yaml": "services:\n  llm:\n    image: vllm/vllm-openai:v0.30.0\n"
                                     f"    command: [vllm, serve, {LLAMA}]\n"}),
    Behaviour("image-entrypoint-repeated-python-m", "compose.yaml",
              "the api_server image runs `python3 -m …api_server python3 -m …api_server --model "
              "M`: `python3` is no option and no positional of that parser",
              "reference vllm-versions/README.md 'Entry points' (the api_server module takes "
              "no positional up to 0.9.2)", {"MG016": "error"}, ("MG004",),
              files={"compose.yaml": "services:\n  llm:\n    image: vllm/vllm-openai:v0.9.2\n"
                                     "    command: python3 -m vllm.entrypoints.openai.api_server"
                                     f" --model {LLAMA}\n"}),
    Behaviour("image-entrypoint-unknown-still-repeated", "compose.yaml",
              "whichever entrypoint the 0.15 image has, `vllm serve MODEL` after it is "
              "unrecognized arguments",
              "vllm/entrypoints/launchers/cli_args.py make_arg_parser (0.30.0); images.md "
              "(entrypoint of v0.10-v0.18 unknown)", {"MG016": "error"}, ("MG004",),
              files={"compose.yaml": "services:\n  llm:\n    image: vllm/vllm-openai:v0.15.1\n"
                                     f"    command: [vllm, serve, {LLAMA}]\n"}),
    Behaviour("built-image-entrypoint-repeated", "compose.yaml",
              "an image built FROM vllm/vllm-openai keeps its entrypoint: the service's "
              "`vllm serve MODEL` is appended to it",
              "compose-spec build.md; Dockerfile reference (ENTRYPOINT is inherited); "
              "make_arg_parser (0.30.0)", {"MG016": "error"}, ("MG004",),
              files={"compose.yaml": f"services:\n  llm:\n    build: .\n    command: [vllm, "
                                     f"serve, {LLAMA}]\n",
                     "Dockerfile": "FROM vllm/vllm-openai:v0.30.0\n"}),
    Behaviour("own-command-is-not-repeated", "compose.yaml",
              "with an image whose entrypoint is no engine, `vllm serve MODEL` is the command",
              "compose-spec services.md command (overrides the image's CMD)", {},
              ("MG016", "MG004"),
              files={"compose.yaml": "services:\n  llm:\n    image: python:3.12\n"
                                     f"    command: [vllm, serve, {LLAMA}]\n"}),
    # ------------------------------------------------------------ unknown flags stop argparse
    Behaviour("typo-tp", "vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-paralel-size 4",
              "exits: unrecognized arguments: --tensor-paralel-size 4 (no config is built, so "
              "tp is not 1 either)",
              "vllm/utils/argparse_utils.py FlexibleArgumentParser.parse_args -> argparse "
              "(0.30.0)", {"MG004": "error"}, ("MG101", "MG301", "MG302")),
    Behaviour("glued-tp", "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp4",
              "exits: unrecognized arguments: -tp4", "argparse via FlexibleArgumentParser (0.30.0)",
              {"MG004": "error"}, ("MG301",)),
    Behaviour("double-dash-tp", "vllm serve meta-llama/Llama-3.1-70B-Instruct --tp 4",
              "exits: unrecognized arguments: --tp 4", "argparse via FlexibleArgumentParser "
              "(0.30.0)", {"MG004": "error"}, ("MG301",)),
    Behaviour("plural-tp", "vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-sizes 4",
              "exits: unrecognized arguments", "argparse via FlexibleArgumentParser (0.30.0)",
              {"MG004": "error"}, ("MG301",)),
    Behaviour("typo-max-model-len", f"vllm serve {LLAMA} --max-model-length 200000",
              "exits: unrecognized arguments: --max-model-length 200000",
              "argparse via FlexibleArgumentParser (0.30.0)", {"MG004": "error"},
              ("MG302", "MG304")),
    Behaviour("british-gpu-util", "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 1 --gpu-memory-utilisation 0.5",
              "exits: unrecognized arguments: --gpu-memory-utilisation 0.5",
              "argparse via FlexibleArgumentParser (0.30.0)", {"MG004": "error"},
              ("MG301", "MG302", "MG303")),
    Behaviour("typo-expert-parallel", f"vllm serve {MOE} -tp 2 --enable-expert-paralel",
              "exits: unrecognized arguments: --enable-expert-paralel",
              "argparse via FlexibleArgumentParser (0.30.0)", {"MG004": "error"}, ("MG401",)),
    # ------------------------------------------------------------ vLLM's demo server
    Behaviour("demo-clean", f"python3 -m vllm.entrypoints.api_server --model {LLAMA} "
              "--host 127.0.0.1 --port 8001 --tensor-parallel-size 1 --log-level info",
              "starts the demo server (/health, /generate) on AsyncEngineArgs and its own "
              "options", "vllm/entrypoints/api_server.py __main__ (0.8.5.post1)",
              {}, ("MG004", "MG008", "MG016"), release="0.8.5"),
    Behaviour("demo-unknown-flag", f"python3 -m vllm.entrypoints.api_server --model {LLAMA} "
              "--tensor-paralel-size 2",
              "exits: unrecognized arguments: --tensor-paralel-size 2",
              "vllm/entrypoints/api_server.py __main__ -> FlexibleArgumentParser (0.10.2)",
              {"MG004": "error"}, ("MG101",), release="0.10.2"),
    Behaviour("demo-api-key", f"python3 -m vllm.entrypoints.api_server --model {LLAMA} "
              "--api-key secret",
              "exits: unrecognized arguments: --api-key secret (a front-end option of the "
              "OpenAI server only)",
              "vllm/entrypoints/api_server.py __main__; vllm/entrypoints/openai/cli_args.py "
              "(0.24.0)", {"MG004": "error"}, ("MG016",), release="0.24.0"),
    Behaviour("demo-served-model-name", f"python3 -m vllm.entrypoints.api_server --model {LLAMA} "
              "--served-model-name llama",
              "starts: --served-model-name is an engine argument (ModelConfig)",
              "vllm/engine/arg_utils.py EngineArgs.add_cli_args (0.24.0)",
              {}, ("MG004",), release="0.24.0"),
    Behaviour("demo-positional-model", f"python3 -m vllm.entrypoints.api_server {LLAMA}",
              "exits: unrecognized arguments (the demo's parser has no positional)",
              "vllm/entrypoints/api_server.py __main__ (0.10.2; the OpenAI module ignores it)",
              {"MG016": "error"}, release="0.10.2"),
    Behaviour("demo-module-absent", f"python3 -m vllm.entrypoints.api_server --model {LLAMA} "
              "--tensor-paralel-size 2",
              "exits: No module named vllm.entrypoints.api_server (before any option is read)",
              "the vllm 0.25.0, 0.25.1, 0.26.0, 0.33.0 wheels have no "
              "vllm/entrypoints/api_server.py", {"MG004": "error"}, ("MG016", "MG101"),
              release="0.25.1"),
    Behaviour("demo-unpinned", f"python3 -m vllm.entrypoints.api_server --model {LLAMA}",
              "runs only on vLLM 0.24 or earlier; nothing says which release runs",
              "vllm/entrypoints/api_server.py (0.6.6.post1-0.24.0; absent from 0.25.0)",
              {"MG004": "warning"}, ("MG016",), release=None),
    Behaviour("demo-ssl-refresh-0.7", f"python3 -m vllm.entrypoints.api_server --model {LLAMA} "
              "--enable-ssl-refresh",
              "exits: unrecognized arguments (the demo has --enable-ssl-refresh from the 0.8 "
              "line)", "vllm/entrypoints/api_server.py __main__ (0.7.3, 0.8.5.post1)",
              {"MG004": "error"}, release="0.7.3"),
    Behaviour("demo-probe-v1-models", "pod.yaml",
              "answers 404 to GET /v1/models: the kubelet's probe fails (200-399 passes)",
              "vllm/entrypoints/api_server.py routes /health (GET), /generate (POST) (0.9.2); "
              "Kubernetes pkg/probe/http DoHTTPProbe", {"MG706": "error"},
              files={"pod.yaml": _DEMO_POD.format(path="/v1/models")}),
    Behaviour("demo-probe-health", "pod.yaml", "answers 200 to GET /health",
              "vllm/entrypoints/api_server.py health (0.9.2)", {}, ("MG706", "MG702"),
              files={"pod.yaml": _DEMO_POD.format(path="/health")}),
    # ------------------------------------------------------------ bind address
    Behaviour('llama-image-binds-all', "deploy.yaml",
              'the llama.cpp image sets LLAMA_ARG_HOST=0.0.0.0: the LoadBalancer reaches the API',
              '.devops/cuda.Dockerfile server target (llama.cpp master)',
              {'MG605': 'warning'}, ('MG606',),
              files={"deploy.yaml": 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llama\nspec:\n  selector:\n    matchLabels: {app: llama}\n  template:\n    metadata:\n      labels: {app: llama}\n    spec:\n      containers:\n        - name: server\n          image: ghcr.io/ggml-org/llama.cpp:server-cuda\n          args: ["-m", "/models/x.gguf", "--port", "8080"]\n          resources:\n            limits: {nvidia.com/gpu: 1}\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: llama\nspec:\n  type: LoadBalancer\n  selector: {app: llama}\n  ports:\n    - port: 80\n      targetPort: 8080\n'}),
    Behaviour('llama-host-loopback-behind-lb', "deploy.yaml",
              "--host 127.0.0.1 overrides the image's LLAMA_ARG_HOST: the Service reaches nothing",
              'common/arg.cpp --host (set_env LLAMA_ARG_HOST; the command line wins)',
              {'MG606': 'warning'}, ('MG605',),
              files={"deploy.yaml": 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llama\nspec:\n  selector:\n    matchLabels: {app: llama}\n  template:\n    metadata:\n      labels: {app: llama}\n    spec:\n      containers:\n        - name: server\n          image: ghcr.io/ggml-org/llama.cpp:server-cuda\n          args: ["-m", "/models/x.gguf", "--host", "127.0.0.1", "--port", "8080"]\n          resources:\n            limits: {nvidia.com/gpu: 1}\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: llama\nspec:\n  type: LoadBalancer\n  selector: {app: llama}\n  ports:\n    - port: 80\n      targetPort: 8080\n'}),
    Behaviour('vllm-default-binds-all', "deploy.yaml",
              'vLLM binds (args.host or "", port): every interface',
              'vllm/entrypoints/launchers/launcher.py setup_server (0.30.0)',
              {'MG605': 'warning'}, ('MG606',),
              files={"deploy.yaml": 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llama\nspec:\n  selector:\n    matchLabels: {app: llama}\n  template:\n    metadata:\n      labels: {app: llama}\n    spec:\n      containers:\n        - name: server\n          image: vllm/vllm-openai:v0.30.0\n          args: ["meta-llama/Llama-3.1-8B-Instruct"]\n          resources:\n            limits: {nvidia.com/gpu: 1}\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: llama\nspec:\n  type: LoadBalancer\n  selector: {app: llama}\n  ports:\n    - port: 80\n      targetPort: 8000\n'}),
    Behaviour('vllm-localhost-behind-lb', "deploy.yaml",
              'vLLM binds localhost only: the Service reaches nothing',
              'vllm/entrypoints/launchers/launcher.py setup_server (0.30.0)',
              {'MG606': 'warning'}, ('MG605',),
              files={"deploy.yaml": 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llama\nspec:\n  selector:\n    matchLabels: {app: llama}\n  template:\n    metadata:\n      labels: {app: llama}\n    spec:\n      containers:\n        - name: server\n          image: vllm/vllm-openai:v0.30.0\n          args: ["meta-llama/Llama-3.1-8B-Instruct", "--host", "localhost"]\n          resources:\n            limits: {nvidia.com/gpu: 1}\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: llama\nspec:\n  type: LoadBalancer\n  selector: {app: llama}\n  ports:\n    - port: 80\n      targetPort: 8000\n'}),
    # ------------------------------------------------------------ SGLang (plain argparse)
    Behaviour("sglang-tp-prefix", f"python3 -m sglang.launch_server --model-path {LLAMA} --tp 8",
              "starts with tp 8: argparse's allow_abbrev resolves --tp to --tp-size, the only "
              "option with that prefix", "sglang/srt/server_args.py prepare_server_args "
              "(argparse.ArgumentParser()) and ServerArgs.add_cli_args (0.4.10.post2, 0.5.5)",
              {}, ("MG004", "MG013"), release=None),
    Behaviour("sglang-pp-prefix", f"python3 -m sglang.launch_server --model-path {LLAMA} --pp 2",
              "0.5.5 exits: ambiguous option: --pp could match --pp-size, "
              "--pp-max-micro-batch-size; 0.4.10.post2 reads it as --pp-size",
              "sglang/srt/server_args.py ServerArgs.add_cli_args (0.5.5 adds "
              "--pp-max-micro-batch-size)", {"MG004": "warning"}, release=None),
    Behaviour("sglang-underscore", f"python3 -m sglang.launch_server --model-path {LLAMA} "
              "--tp_size 2", "exits: unrecognized arguments: --tp_size 2 (plain argparse: no "
              "'_' to '-')", "sglang/srt/server_args.py prepare_server_args (0.4.10.post2, 0.5.5)",
              {"MG004": "error"}, release=None),
    Behaviour("sglang-no-model", "python3 -m sglang.launch_server --port 30000",
              "exits: the following arguments are required: --model-path/--model",
              "sglang/srt/server_args.py ServerArgs.add_cli_args (required=True)",
              {"MG016": "error"}, release=None),
    Behaviour("sglang-dp-attention", f"CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python3 -m "
              f"sglang.launch_server --model-path {MOE} --tp 8 --dp 8 --enable-dp-attention",
              "starts on 8 GPUs: dp attention splits the tp ranks (tp_size % dp_size == 0)",
              "sglang/srt/managers/data_parallel_controller.py launch_dp_attention_schedulers "
              "(0.5.5)", {}, ("MG101",), release=None),
    Behaviour("sglang-tp-past-visible-gpus", f"CUDA_VISIBLE_DEVICES=0,1,2,3 python3 -m "
              f"sglang.launch_server --model-path {LLAMA} --tp 8",
              "the scheduler of tp rank 4 calls set_device(4) and fails (invalid device ordinal)",
              "sglang/srt/entrypoints/engine.py _launch_subprocesses (gpu_id = base_gpu_id + "
              "tp rank) and model_executor/model_runner.py init_torch_distributed (0.4.10.post2, "
              "0.5.5; the same loop in managers/data_parallel_controller.py of 0.5.23)",
              {"MG101": "error"}, release=None),
    Behaviour("sglang-base-gpu-id-past-visible", f"CUDA_VISIBLE_DEVICES=0,1,2,3 python3 -m "
              f"sglang.launch_server --model-path {LLAMA} --tp 2 --base-gpu-id 3",
              "tp ranks take GPUs 3 and 4: the scheduler for GPU 4 fails",
              "sglang/srt/entrypoints/engine.py _launch_subprocesses (0.4.10.post2, 0.5.5)",
              {"MG101": "error"}, release=None),
    Behaviour("sglang-two-nodes-tp-split", f"CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python3 -m "
              f"sglang.launch_server --model-path {LLAMA} --tp 16 --nnodes 2 --node-rank 1 "
              "--dist-init-addr 10.0.0.1:20000",
              "each node runs tp 16 / 2 = 8 ranks on its GPUs 0-7",
              "sglang/srt/entrypoints/engine.py _launch_subprocesses (tp_size_per_node = "
              "tp_size // (nnodes // pp_size), 0.4.10.post2, 0.5.5)", {}, ("MG101",),
              release=None),
    Behaviour("sglang-dp-copies-unpinned", f"CUDA_VISIBLE_DEVICES=0,1,2,3 python3 -m "
              f"sglang.launch_server --model-path {LLAMA} --tp 4 --dp 2",
              "0.5.5 starts dp rank 1 at GPU 4 and fails; 0.5.23 replaced --dp placement "
              "(arg_groups/parallel_hook.py): with no release pinned nothing is said",
              "sglang/srt/managers/data_parallel_controller.py launch_dp_schedulers (0.5.5)",
              {}, ("MG101",), release=None),
    Behaviour("sglang-nodes-do-not-divide", f"python3 -m sglang.launch_server --model-path "
              f"{LLAMA} --tp 8 --nnodes 3 --node-rank 0 --dist-init-addr 10.0.0.1:20000",
              "AssertionError: tp_size must be divisible by number of nodes",
              "sglang/srt/server_args.py ServerArgs.check_server_args (0.4.10.post2, 0.5.5); "
              "arg_groups/validation_hook.py check_server_args (0.5.23)",
              {"MG820": "error"}, release=None),
    Behaviour("sglang-dp-replicas-two-nodes", f"python3 -m sglang.launch_server --model-path "
              f"{LLAMA} --tp 8 --dp 2 --nnodes 2 --node-rank 0 --dist-init-addr 10.0.0.1:2000",
              "AssertionError: multi-node data parallel is not supported unless dp attention!",
              "sglang/srt/server_args.py ServerArgs.check_server_args (0.4.10.post2, 0.5.5; "
              "0.5.23 keeps the refusal)", {"MG821": "error"}, release=None),
    Behaviour("sglang-two-nodes-no-address", f"python3 -m sglang.launch_server --model-path "
              f"{LLAMA} --tp 16 --nnodes 2 --node-rank 1",
              "each node initialises torch.distributed at tcp://127.0.0.1:<port>: the nodes "
              "never meet", "sglang/srt/model_executor/model_runner.py "
              "ModelRunner.init_torch_distributed (0.4.10.post2, 0.5.5)",
              {"MG823": "error"}, release=None),
    Behaviour("sglang-serve-positional-0.5.23", "deploy.yaml",
              "takes the first positional word as --model-path",
              "sglang/cli/serve.py _normalize_positional_model_path (0.5.23)",
              {}, ("MG016", "MG004"), release=None,
              files={"deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: sgl\nspec:\n  template:\n    spec:\n      containers:\n        - name: server\n          image: lmsysorg/sglang:v0.5.23\n          command: [\"sglang\", \"serve\", \"meta-llama/Llama-3.1-8B-Instruct\"]\n          readinessProbe: {httpGet: {path: /health, port: 30000}}\n          resources:\n            limits: {nvidia.com/gpu: 1}\n"}),
    Behaviour("sglang-serve-positional-0.5.5", "deploy.yaml",
              "Error: --model-path is required (the model is looked for only as --model-path)",
              "sglang/cli/utils.py get_model_path (0.5.5)",
              {"MG016": "error"}, release=None,
              files={"deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: sgl\nspec:\n  template:\n    spec:\n      containers:\n        - name: server\n          image: lmsysorg/sglang:v0.5.5-cu126\n          command: [\"sglang\", \"serve\", \"meta-llama/Llama-3.1-8B-Instruct\"]\n          readinessProbe: {httpGet: {path: /health, port: 30000}}\n          resources:\n            limits: {nvidia.com/gpu: 1}\n"}),
    Behaviour("sglang-static-pool-below-weights", f"python3 -m sglang.launch_server "
              "--model-path Qwen/Qwen3-32B --mem-fraction-static 0.5",
              "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static "
              "(the KV pool is what card × fraction leaves after 61 GiB of weights)",
              "sglang/srt/model_executor/model_runner.py profile_max_num_token and "
              "init_memory_pool (0.5.5); pool_configurator.py MemoryPoolConfig (0.5.23)",
              {"MG824": "warning"}, release=None),
    Behaviour("sglang-default-fraction-0.5.5", "deploy.yaml",
              "mem_fraction_static = round((81559 - 13568) / 81559, 3) = 0.834 on an H100: "
              "RuntimeError: Not enough memory (67.7 GiB of weights per GPU)",
              "sglang/srt/server_args.py ServerArgs._handle_gpu_memory_settings and "
              "model_executor/model_runner.py profile_max_num_token (0.5.5)",
              {"MG824": "error"}, release=None,
              files={"deploy.yaml": SGL_72B_TP2.format(tag="v0.5.5-cu126")}),
    Behaviour("sglang-default-fraction-0.4.10", "deploy.yaml",
              "mem_fraction_static = round((81559 - (9.5 + 2/2) x 1024) / 81559, 3) = 0.868: "
              "68.7 GiB for weights and KV cache, the 67.7 GiB of weights fit",
              "sglang/srt/server_args.py ServerArgs.__post_init__ (0.4.10.post2)",
              {}, ("MG824",), release=None,
              files={"deploy.yaml": SGL_72B_TP2.format(tag="v0.4.10.post2-cu126")}),
    Behaviour("sglang-max-total-tokens-below-context", "python3 -m sglang.launch_server "
              "--model-path Qwen/Qwen2.5-7B-Instruct --context-length 32768 "
              "--max-total-tokens 16384",
              "starts; max_req_len = min(32767, 16383): prompts of 16378 tokens or more are "
              "refused", "sglang/srt/model_executor/model_runner.py ModelRunner.init_memory_pool"
              " and managers/tp_worker.py TpModelWorker (0.5.5; 0.5.23 "
              "mem_cache/kv_cache_configurator.py _apply_token_constraints)",
              {"MG826": "warning"}, release=None),
    Behaviour("sglang-max-total-tokens-above-pool", "python3 -m sglang.launch_server "
              "--model-path Qwen/Qwen2.5-7B-Instruct --max-total-tokens 10000000",
              "max_total_tokens=10000000 is larger than the profiled value ... Use the "
              "profiled value instead.", "sglang/srt/model_executor/model_runner.py "
              "ModelRunner.init_memory_pool (0.5.5)", {}, ("MG826", "MG824"), release=None),
    Behaviour("sglang-max-total-tokens-too-small", "python3 -m sglang.launch_server "
              "--model-path Qwen/Qwen2.5-7B-Instruct --max-total-tokens 1",
              "AssertionError: Memory pool size is too small",
              "sglang/srt/managers/tp_worker.py TpModelWorker (0.4.10.post2, 0.5.5, 0.5.23)",
              {"MG826": "error"}, release=None),
    Behaviour("sglang-context-above-derived-0.5.5", "run.sh",
              "ValueError: User-specified context_length (65536) is greater than the derived "
              "context_length (32768) ... To allow overriding this maximum, set the env var "
              "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1",
              "sglang/srt/configs/model_config.py ModelConfig._derive_context_length and "
              "sglang/srt/utils/hf_transformers_utils.py get_context_length (0.5.5; 0.5.23 the "
              "same)",
              {"MG825": "error"}, release=None,
              files={"run.sh": "#!/bin/sh\ndocker run --gpus all lmsysorg/sglang:v0.5.5-cu126 "
                     "python3 -m sglang.launch_server --model-path ./m --context-length 65536\n",
                     "m/config.json": '{"model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064, "max_position_embeddings": 32768, "torch_dtype": "bfloat16"}'}),
    Behaviour("sglang-context-above-derived-allowed", "run.sh",
              "starts with the warning: User-specified context_length (65536) is greater than "
              "the derived context_length (32768). This may lead to incorrect model outputs",
              "sglang/srt/configs/model_config.py ModelConfig._derive_context_length (0.5.5: "
              "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN set)",
              {"MG825": "warning"}, release=None,
              files={"run.sh": "#!/bin/sh\ndocker run --gpus all -e "
                     "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 lmsysorg/sglang:v0.5.5-cu126 "
                     "python3 -m sglang.launch_server --model-path ./m --context-length 65536\n",
                     "m/config.json": '{"model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064, "max_position_embeddings": 32768, "torch_dtype": "bfloat16"}'}),
    Behaviour("sglang-context-within-derived", "run.sh",
              "context_len = the user's 32768 (not above the derived length)",
              "sglang/srt/configs/model_config.py ModelConfig._derive_context_length (0.5.5)",
              {}, ("MG825",), release=None,
              files={"run.sh": "#!/bin/sh\ndocker run --gpus all lmsysorg/sglang:v0.5.5-cu126 "
                     "python3 -m sglang.launch_server --model-path ./m --context-length 32768\n",
                     "m/config.json": '{"model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064, "max_position_embeddings": 32768, "torch_dtype": "bfloat16"}'}),
    Behaviour("sglang-default-loopback-behind-service", "deploy.yaml",
              "binds ServerArgs.host 127.0.0.1: the Service reaches nothing",
              "sglang/srt/server_args.py ServerArgs.host (0.4.10.post2, 0.5.5)",
              {"MG606": "warning"}, ("MG605",), release=None,
              files={"deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: sgl\nspec:\n  selector:\n    matchLabels: {app: sgl}\n  template:\n    metadata:\n      labels: {app: sgl}\n    spec:\n      containers:\n        - name: server\n          image: lmsysorg/sglang:v0.5.5-cu126\n          command: [\"python3\", \"-m\", \"sglang.launch_server\"]\n          args: [\"--model-path\", \"meta-llama/Llama-3.1-8B-Instruct\"]\n          readinessProbe: {httpGet: {path: /health, port: 30000}}\n          resources:\n            limits: {nvidia.com/gpu: 1}\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: sgl\nspec:\n  type: ClusterIP\n  selector: {app: sgl}\n  ports:\n    - port: 80\n      targetPort: 30000\n"}),
    Behaviour("sglang-host-all-loadbalancer", "deploy.yaml",
              "binds every interface without an API key behind a LoadBalancer",
              "sglang/srt/entrypoints/http_server.py launch_server (add_api_key_middleware only "
              "with --api-key, 0.5.5)", {"MG605": "warning"}, ("MG606",), release=None,
              files={"deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: sgl\nspec:\n  selector:\n    matchLabels: {app: sgl}\n  template:\n    metadata:\n      labels: {app: sgl}\n    spec:\n      containers:\n        - name: server\n          image: lmsysorg/sglang:v0.5.5-cu126\n          command: [\"python3\", \"-m\", \"sglang.launch_server\"]\n          args: [\"--model-path\", \"meta-llama/Llama-3.1-8B-Instruct\", \"--host\", \"0.0.0.0\"]\n          readinessProbe: {httpGet: {path: /health, port: 30000}}\n          resources:\n            limits: {nvidia.com/gpu: 1}\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: sgl\nspec:\n  type: LoadBalancer\n  selector: {app: sgl}\n  ports:\n    - port: 80\n      targetPort: 30000\n"}),
    # ------------------------------------------------------------ GPUs a launch gets
    Behaviour("tp4-dp2-on-4-gpus", f"CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve {LLAMA} -tp 4 -dp 2",
              "the world-size check passes (4 <= 4); DP rank 1 is given devices [4, 8): Error "
              "computing device indices for CUDA_VISIBLE_DEVICES",
              "vllm/v1/engine/utils.py get_physical_gpu_ids_for_local_dp_rank (0.25.1-0.33.0)",
              {"MG101": "error"}),
    Behaviour("ray-executor-without-cluster",
              f"CUDA_VISIBLE_DEVICES=0 vllm serve {LLAMA} -tp 8 --distributed-executor-backend ray",
              "ray.init() starts a local Ray on 1 GPU; the placement group of 8 GPUs is awaited "
              "for 1800 s, then ValueError: Cannot provide a placement group requiring 8 GPUs",
              "vllm/v1/executor/ray_utils.py initialize_ray_cluster, _wait_until_pg_ready "
              "(PG_WAIT_TIMEOUT 1800 in 0.10.2-0.33.0)", {"MG101": "error"}),
    Behaviour("ray-executor-joins-cluster",
              f"RAY_ADDRESS=10.0.0.1:6379 vllm serve {LLAMA} -tp 8 --distributed-executor-backend "
              "ray", "joins the Ray cluster at RAY_ADDRESS, whose GPUs the file does not state",
              "vllm/v1/executor/ray_utils.py initialize_ray_cluster (ray.init address)", {},
              ("MG101",)),
    # ------------------------------------------------------------ --max-model-len vs the model
    Behaviour("rope-scaling-flag-linear",
              "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 131072 "
              "--rope-scaling '{\"rope_type\": \"linear\", \"factor\": 2}'",
              "ValueError: User-specified max_model_len (131072) is greater than the derived "
              "max_model_len (32768 positions x linear factor 2 = 65536)",
              "vllm/config/__init__.py _get_and_verify_max_len (0.10.2)",
              {"MG304": "error"}, release="0.10.2"),
    Behaviour("rope-scaling-flag-linear-fits",
              "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 65536 "
              "--rope-scaling '{\"rope_type\": \"linear\", \"factor\": 2}'",
              "starts: 65536 is the derived limit",
              "vllm/config/__init__.py _get_and_verify_max_len (0.10.2)",
              {}, ("MG304",), release="0.10.2"),
    Behaviour("yarn-before-0.30",
              "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 131072 --hf-overrides "
              "'{\"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4, "
              "\"original_max_position_embeddings\": 32768}}'",
              "starts: up to 0.25.1 yarn's limit is original_max_position_embeddings x factor",
              "vllm/config/model.py _get_and_verify_max_len (0.15.1-0.25.1)",
              {}, ("MG304",), release="0.25.1"),
]


def _argv(b: Behaviour, tmp_path: Path) -> list[str]:
    args = ["--format", "json"]
    if b.release is not None:
        args += ["--target-version", b.release]
    if b.files:
        for name, text in b.files.items():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(text, encoding="utf-8")
        args.append(str(tmp_path / b.command))
    else:
        args += ["--command", b.command]
    return args


@pytest.mark.parametrize("b", TABLE, ids=[b.name for b in TABLE])
def test_engine_behaviour(b: Behaviour, tmp_path: Path,
                          capsys: pytest.CaptureFixture[str]) -> None:
    assert b.does and b.source, "every row says what the engine does and where"
    exit_code = main(_argv(b, tmp_path))
    out = json.loads(capsys.readouterr().out)
    assert exit_code in (0, 1)
    got = {}
    for f in out["findings"]:
        assert f["code"] != "MG000", f
        got.setdefault(f["code"], set()).add(f["severity"])
    for code, severity in b.expect.items():
        assert code in got, f"{b.name}: the engine {b.does!r} ({b.source}) but no {code}: {got}"
        assert severity in got[code], f"{b.name}: {code} is {got[code]}, expected {severity}"
    for code in b.absent:
        assert code not in got, f"{b.name}: {code} must not fire ({b.does}; {b.source})"


def test_table_names_are_unique() -> None:
    names = [b.name for b in TABLE]
    assert len(names) == len(set(names))
