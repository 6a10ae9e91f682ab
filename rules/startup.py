"""vLLM's own start-up refusals (MG8xx): argument combinations the engine rejects before it loads.

Each rule mirrors one check in vLLM's source and quotes its message; the comment beside it names
the file and function.  The checks were read in vLLM 0.30.0 and looked up in the wheels of 0.10.2,
0.15.1, 0.20.2, 0.25.1 and 0.33.0: ``SINCE`` holds the first of those releases that has each
check.  A launch whose catalog release is older stays silent (the check may not exist there).
A launch that pins no release (no image tag, pip pin or target-version) is judged as the default
release; where an older catalogued release accepts the same flags but lacks the check, the
finding is a warning that says which release it assumes (DECISIONS: a verdict resting on an
unknown engine version is at most a warning).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mgpu_lint.deployment import Deployment
from mgpu_lint.engines import Setting
from mgpu_lint.engines.adapter import VLLM_ARGS
from mgpu_lint.findings import Finding, Related, Severity
from mgpu_lint.source import Span
from mgpu_lint.versions import version_key

from .registry import Rule, rule

# The first sampled release (0.10.2, 0.15.1, 0.20.2, 0.25.1, 0.30.0, 0.33.0) whose source has the
# check; every later sampled release has it too.
SINCE: dict[str, str] = {
    "MG801": "0.10.2", "MG802": "0.10.2", "MG803": "0.15.1", "MG804": "0.15.1",
    "MG805": "0.10.2", "MG806": "0.10.2", "MG807": "0.10.2", "MG808": "0.20.2",
    "MG809": "0.10.2", "MG810": "0.10.2", "MG811": "0.10.2", "MG812": "0.15.1",
    "MG813": "0.15.1", "MG814": "0.10.2", "MG815": "0.10.2", "MG816": "0.15.1",
    "MG817": "0.10.2", "MG818": "0.10.2", "MG819": "0.10.2",
}
OLDEST_SAMPLED = "0.10.2"


def _release(d: Deployment) -> tuple[int, ...]:
    return version_key(d.inv.version)


def _applies(d: Deployment, code: str, since: str | None = None) -> bool:
    """The launch's release has the check (its catalog release is at least ``since``)."""
    return _release(d) >= version_key(since or SINCE[code])


def _pinned(d: Deployment) -> bool:
    return d.launch.version_pin is not None or bool(d.settings.target_version)


def _severity(d: Deployment, code: str, since: str | None = None) -> tuple[Severity, str]:
    """ERROR, or WARNING with an "assuming" clause when no release is pinned and older
    catalogued releases lack the check."""
    first = since or SINCE[code]
    if _pinned(d) or version_key(first) <= version_key(OLDEST_SAMPLED):
        return Severity.ERROR, ""
    return Severity.WARNING, (f" (assuming vLLM {d.inv.version}, as nothing pins the release; "
                              f"releases before {first} do not check this)")


def _int(s: Setting) -> int | None:
    v = s.value
    return v if s.known and isinstance(v, int) and not isinstance(v, bool) else None


def _on(s: Setting) -> bool:
    return bool(s.known and s.value is True)


def _given_int(s: Setting) -> int | None:
    return _int(s) if s.given else None


def _flag(d: Deployment, key: str, canonical: str) -> str:
    win = d.inv.setting(key).winner
    return win.spelling if win is not None else canonical


def _span(d: Deployment, *settings: Setting) -> Span:
    for s in settings:
        if s.span is not None:
            return s.span
    return d.program_span


def _rel(d: Deployment, s: Setting, text: str) -> tuple[Related, ...]:
    return (Related(d.source, s.span, text),) if s.span is not None else ()


def _size(d: Deployment, key: str) -> int | None:
    """A parallel size: the stated value, else the catalog default (None when broken)."""
    s = d.inv.setting(key)
    if not s.known:
        return None
    v = s.value if s.given else (s.value if s.value is not None else 1)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _is_moe(d: Deployment) -> bool | None:
    if d.model is None or d.model.shape is None:
        return None
    return d.model.shape.is_moe


# ---------------------------------------------------------------------------- data parallel

@rule("MG801", "dp-local-exceeds-dp", Severity.ERROR,
      "--data-parallel-size-local larger than --data-parallel-size",
      needs={VLLM_ARGS}, given=("data_parallel_size_local",))
def dp_local_exceeds_dp(d: Deployment) -> Iterator[Finding]:
    """
    What it does: compares `--data-parallel-size-local` (`-dpl`, engines on this node) with
    `--data-parallel-size` (`-dp`, engines in all).

    Why is this bad? A node cannot run more engines than exist: vLLM refuses to start with
    "data_parallel_size_local (4) must be <= data_parallel_size (2)"
    (vllm/config/parallel.py, ParallelConfig._validate_parallel_config; vLLM 0.10.2-0.33.0).

    Use instead: `-dpl` at most `-dp` (`-dp 4 -dpl 2` runs 2 of 4 engines on this node).
    """
    if not _applies(d, "MG801"):
        return
    local, dp = d.inv.data_parallel_size_local, d.inv.data_parallel_size
    n_local, n_dp = _given_int(local), _size(d, "data_parallel_size")
    if n_local is None or n_dp is None or n_local <= n_dp:
        return
    sev, assumed = _severity(d, "MG801")
    yield dp_local_exceeds_dp.finding(
        f"{_flag(d, 'data_parallel_size_local', '-dpl')} {n_local} is more than "
        f"{_flag(d, 'data_parallel_size', '--data-parallel-size')} {n_dp}: vLLM refuses to "
        f"start (\"data_parallel_size_local ({n_local}) must be <= data_parallel_size "
        f"({n_dp})\", vllm/config/parallel.py){assumed}",
        d.source, _span(d, local),
        hint=f"set -dp to the engines in all ({n_local} or more), or -dpl to at most {n_dp}",
        related=_rel(d, dp, f"data parallel size {n_dp}"), severity=sev,
    )


@rule("MG802", "dp-rank-out-of-range", Severity.ERROR,
      "--data-parallel-rank outside 0..dp-1",
      needs={VLLM_ARGS}, given=("data_parallel_rank", "data_parallel_start_rank"))
def dp_rank_out_of_range(d: Deployment) -> Iterator[Finding]:
    """
    What it does: checks `--data-parallel-rank` (`-dpr`) and `--data-parallel-start-rank`
    (`-dpsr`) against `--data-parallel-size`.

    Why is this bad? With dp > 1 vLLM refuses a rank outside [0, dp): "data_parallel_rank (2)
    must be in the range [0, 2)" (vllm/config/parallel.py, ParallelConfig.__post_init__;
    vLLM 0.10.2-0.33.0). The start rank becomes the rank of this node's first engine
    (vllm/engine/arg_utils.py, create_engine_config), so the same bound applies to it.

    Use instead: ranks 0 … dp-1, one per engine.
    """
    if not _applies(d, "MG802"):
        return
    dp = _size(d, "data_parallel_size")
    if dp is None or dp <= 1:
        return  # dp 1 with a rank is external load balancing without DP: MG812
    for key, name in (("data_parallel_rank", "data_parallel_rank"),
                      ("data_parallel_start_rank", "data_parallel_start_rank")):
        s = d.inv.setting(key)
        rank = _given_int(s)
        if rank is None or 0 <= rank < dp:
            continue
        sev, assumed = _severity(d, "MG802")
        yield dp_rank_out_of_range.finding(
            f"{_flag(d, key, '--' + key.replace('_', '-'))} {rank} is outside 0..{dp - 1} for "
            f"{dp} data-parallel engines: vLLM refuses to start (\"data_parallel_rank ({rank}) "
            f"must be in the range [0, {dp})\", vllm/config/parallel.py){assumed}",
            d.source, _span(d, s),
            hint=f"number the engines 0 … {dp - 1}",
            related=_rel(d, d.inv.data_parallel_size, f"data parallel size {dp}"),
            data={"rank": rank, "dp": dp, "setting": name}, severity=sev,
        )
        return


def _external_lb(d: Deployment) -> tuple[bool, Setting | None]:
    """vLLM's external DP load balancing: `--data-parallel-external-lb` or a
    `--data-parallel-rank` (vllm/engine/arg_utils.py create_engine_config:
    ``data_parallel_external_lb = self.data_parallel_external_lb or self.data_parallel_rank is
    not None``)."""
    ext = d.inv.setting("data_parallel_external_lb")
    rank = d.inv.data_parallel_rank
    if _on(ext):
        return True, ext
    if rank.given and rank.known and rank.value is not None:
        return True, rank
    return False, None


@rule("MG812", "external-dp-lb-invalid", Severity.ERROR,
      "external data-parallel load balancing where vLLM does not allow it",
      needs={VLLM_ARGS}, given=("data_parallel_rank",), on=("data_parallel_external_lb",))
def external_dp_lb_invalid(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds external data-parallel load balancing (`--data-parallel-external-lb`,
    or a `--data-parallel-rank`, which turns it on) with one engine, or on a dense model.

    Why is this bad? vLLM refuses both at start-up: with dp 1, "data_parallel_external_lb can
    only be set when data_parallel_size > 1" (vllm/config/parallel.py,
    ParallelConfig._validate_parallel_config; vLLM 0.15.1-0.33.0); on a model without experts,
    "Non-MoE models do not support external data parallel mode. For external load balancing,
    launch independent vLLM instances without --data-parallel-* arguments."
    (vllm/engine/arg_utils.py, create_engine_config; vLLM 0.25.1-0.33.0).

    Use instead: for a dense model, independent replicas without `--data-parallel-*` flags
    behind your load balancer; for a MoE model, `-dp` larger than 1 with one rank per launch.
    """
    if not _applies(d, "MG812"):
        return
    on, why = _external_lb(d)
    dp = _size(d, "data_parallel_size")
    if not on or why is None or dp is None:
        return
    written = why.winner.spelling if why.winner is not None else "--data-parallel-external-lb"
    if dp <= 1:
        sev, assumed = _severity(d, "MG812")
        yield external_dp_lb_invalid.finding(
            f"{written} turns on external data-parallel load balancing but the data-parallel "
            f"size is {dp}: vLLM refuses to start (\"data_parallel_external_lb can only be set "
            f"when data_parallel_size > 1\", vllm/config/parallel.py){assumed}",
            d.source, _span(d, why),
            hint="drop the --data-parallel-* flags for a single engine, or set -dp to the "
                 "number of engines", severity=sev,
        )
        return
    if _is_moe(d) is not False or not _applies(d, "MG812", "0.25.1"):
        return
    sev, assumed = _severity(d, "MG812", "0.25.1")
    name = d.model.ref.rstrip("/").rsplit("/", 1)[-1] if d.model is not None else "the model"
    yield external_dp_lb_invalid.finding(
        f"{written} with dp {dp} on {name}, a model without experts: vLLM refuses to start "
        "(\"Non-MoE models do not support external data parallel mode\", "
        f"vllm/engine/arg_utils.py create_engine_config){assumed}",
        d.source, _span(d, why),
        hint="run independent replicas without --data-parallel-* flags behind the load "
             "balancer",
        related=_rel(d, d.inv.data_parallel_size, f"data parallel size {dp}"), severity=sev,
    )


@rule("MG813", "hybrid-lb-without-dp-local", Severity.ERROR,
      "--data-parallel-hybrid-lb without --data-parallel-size-local",
      needs={VLLM_ARGS}, on=("data_parallel_hybrid_lb",))
def hybrid_lb_without_dp_local(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds `--data-parallel-hybrid-lb` (`-dph`) without
    `--data-parallel-size-local` (`-dpl`), on a single-node launch (no `--nnodes`, from which
    vLLM would infer it).

    Why is this bad? Hybrid load balancing needs to know how many engines run on this node:
    "`--data-parallel-hybrid-lb` requires `--data-parallel-size-local`. Set it to the number of
    data-parallel ranks on this node." (vllm/engine/arg_utils.py, create_engine_config; an
    assertion up to vLLM 0.25, a ValueError in 0.30.0; vLLM 0.15.1-0.33.0).

    Use instead: `-dpl N` with the engines on this node.
    """
    if not _applies(d, "MG813"):
        return
    hyb = d.inv.setting("data_parallel_hybrid_lb")
    nnodes = _size(d, "nnodes")
    on, _ = _external_lb(d)
    if not _on(hyb) or d.inv.data_parallel_size_local.given or on or nnodes is None \
            or nnodes > 1 or _on(d.inv.headless):
        return
    sev, assumed = _severity(d, "MG813")
    yield hybrid_lb_without_dp_local.finding(
        f"{_flag(d, 'data_parallel_hybrid_lb', '--data-parallel-hybrid-lb')} without "
        "--data-parallel-size-local: vLLM refuses to start (\"`--data-parallel-hybrid-lb` "
        "requires `--data-parallel-size-local`\", vllm/engine/arg_utils.py "
        f"create_engine_config){assumed}",
        d.source, _span(d, hyb), hint="add -dpl with the number of engines on this node",
        severity=sev,
    )


@rule("MG811", "headless-with-api-servers", Severity.ERROR,
      "--headless with --api-server-count",
      needs={VLLM_ARGS}, given=("api_server_count",))
def headless_with_api_servers(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds `--headless` with an explicit `--api-server-count` (`-asc`).

    Why is this bad? A headless node runs engines only, no API server. vLLM 0.15.1-0.33.0
    refuses any count above 0: "--api-server-count=1 cannot be used with --headless (no API
    servers are started in headless mode)." (vllm/entrypoints/cli/serve.py,
    ServeSubcommand.cmd); vLLM 0.10.2 refuses counts above 1 ("api_server_count can't be set in
    headless mode", run_headless).

    Use instead: drop `--api-server-count` on headless nodes.
    """
    if not _applies(d, "MG811") or not _on(d.inv.headless):
        return
    asc = d.inv.api_server_count
    n = _given_int(asc)
    if n is None or n <= 0:
        return
    if n == 1:
        if not _applies(d, "MG811", "0.15.1"):
            return
        sev, assumed = _severity(d, "MG811", "0.15.1")
    else:
        sev, assumed = _severity(d, "MG811")
    yield headless_with_api_servers.finding(
        f"{_flag(d, 'api_server_count', '--api-server-count')} {n} with --headless: vLLM "
        f"refuses to start (\"--api-server-count={n} cannot be used with --headless (no API "
        f"servers are started in headless mode)\", vllm/entrypoints/cli/serve.py){assumed}",
        d.source, _span(d, asc), hint="drop --api-server-count on headless nodes",
        related=_rel(d, d.inv.headless, "--headless"), severity=sev,
    )


# ---------------------------------------------------------------------------- executors

def _backend(d: Deployment) -> tuple[str | None, bool]:
    """The --distributed-executor-backend value and whether it is known."""
    s = d.inv.distributed_executor_backend
    if not s.known:
        return None, False
    return (str(s.value) if s.given and s.value is not None else None), True


@rule("MG803", "nnodes-with-ray-executor", Severity.ERROR,
      "--nnodes above 1 with an executor other than mp, uni or external_launcher",
      needs={VLLM_ARGS}, given=("nnodes",))
def nnodes_with_ray_executor(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds `--nnodes` above 1 with `--distributed-executor-backend ray` (or an
    executor class).

    Why is this bad? `--nnodes` is vLLM's own multi-node launch over torch distributed; Ray
    spans nodes by itself. vLLM refuses the mix: "nnodes > 1 can only be set when distributed
    executor backend is mp, uni or external_launcher." (vllm/config/parallel.py,
    ParallelConfig.__post_init__; vLLM 0.15.1-0.33.0).

    Use instead: either `--nnodes`/`--node-rank` with the default (mp) executor, or Ray
    without `--nnodes`.
    """
    if not _applies(d, "MG803"):
        return
    nn = d.inv.nnodes
    n = _given_int(nn)
    backend, known = _backend(d)
    if n is None or n <= 1 or not known or backend is None or \
            backend in ("mp", "uni", "external_launcher"):
        return
    sev, assumed = _severity(d, "MG803")
    be = d.inv.distributed_executor_backend
    yield nnodes_with_ray_executor.finding(
        f"--nnodes {n} with {_flag(d, 'distributed_executor_backend', '--distributed-executor-backend')} "
        f"{backend}: vLLM refuses to start (\"nnodes > 1 can only be set when distributed "
        f"executor backend is mp, uni or external_launcher.\", vllm/config/parallel.py){assumed}",
        d.source, _span(d, be),
        hint="drop --nnodes/--node-rank when Ray spans the nodes, or use the mp executor",
        related=_rel(d, nn, f"--nnodes {n}"), severity=sev,
    )


@rule("MG804", "nnodes-with-ray-dp-backend", Severity.ERROR,
      "--nnodes above 1 with --data-parallel-backend ray",
      needs={VLLM_ARGS}, given=("nnodes",))
def nnodes_with_ray_dp_backend(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds `--nnodes` above 1 with `--data-parallel-backend ray` (`-dpb ray`).

    Why is this bad? vLLM refuses it: "Invalid data-parallel launch options: `--nnodes 2`
    requires `--data-parallel-backend mp`; got `--data-parallel-backend ray`. Use the MP
    backend or set `--nnodes 1`." (vllm/engine/arg_utils.py, create_engine_config; vLLM
    0.15.1-0.33.0).

    Use instead: `-dpb ray` without `--nnodes` (Ray places the engines), or `--nnodes` with
    the mp backend.
    """
    if not _applies(d, "MG804"):
        return
    nn = d.inv.nnodes
    n = _given_int(nn)
    dpb = d.inv.data_parallel_backend
    if n is None or n <= 1 or not dpb.given or not dpb.known or dpb.value == "mp":
        return
    sev, assumed = _severity(d, "MG804")
    yield nnodes_with_ray_dp_backend.finding(
        f"--nnodes {n} with {_flag(d, 'data_parallel_backend', '--data-parallel-backend')} "
        f"{dpb.value}: vLLM refuses to start (\"`--nnodes {n}` requires "
        f"`--data-parallel-backend mp`\", vllm/engine/arg_utils.py "
        f"create_engine_config){assumed}",
        d.source, _span(d, dpb),
        hint="drop --nnodes when Ray places the engines, or use -dpb mp",
        related=_rel(d, nn, f"--nnodes {n}"), severity=sev,
    )


@rule("MG809", "pipeline-parallel-uni-executor", Severity.ERROR,
      "pipeline parallelism with the `uni` executor",
      needs={VLLM_ARGS}, given=("distributed_executor_backend",))
def pipeline_parallel_uni_executor(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds `-pp` above 1 with `--distributed-executor-backend uni`.

    Why is this bad? The uni executor runs one worker in the API process; pipeline stages need
    one worker each. vLLM refuses it: "Pipeline Parallelism without Ray distributed executor
    or multiprocessing executor or external launcher is not supported."
    (vllm/engine/arg_utils.py, EngineArgs._check_feature_supported; vLLM 0.10.2-0.33.0).

    Use instead: the default executor (mp), or ray.
    """
    if not _applies(d, "MG809"):
        return
    pp = _size(d, "pipeline_parallel_size")
    backend, known = _backend(d)
    if pp is None or pp <= 1 or backend != "uni":
        return
    sev, assumed = _severity(d, "MG809")
    yield pipeline_parallel_uni_executor.finding(
        f"pp {pp} with the uni executor: vLLM refuses to start (\"Pipeline Parallelism "
        "without Ray distributed executor or multiprocessing executor or external launcher is "
        f"not supported.\", vllm/engine/arg_utils.py _check_feature_supported){assumed}",
        d.source, _span(d, d.inv.distributed_executor_backend),
        hint="drop --distributed-executor-backend uni (the default is mp)",
        related=_rel(d, d.inv.pipeline_parallel_size, f"pp {pp}"), severity=sev,
    )


@rule("MG810", "nsight-without-ray", Severity.ERROR,
      "--ray-workers-use-nsight without the Ray executor",
      needs={VLLM_ARGS}, on=("ray_workers_use_nsight",))
def nsight_without_ray(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds `--ray-workers-use-nsight` on a launch whose executor is not Ray.

    Why is this bad? The flag profiles Ray workers; vLLM refuses it otherwise: "Unable to use
    nsight profiling unless workers run with Ray." (vllm/config/parallel.py,
    ParallelConfig._verify_args; vLLM 0.10.2-0.33.0). Without
    `--distributed-executor-backend` the executor is mp (or uni for one GPU), Ray only with
    `--data-parallel-backend ray` and more than one GPU (ParallelConfig.__post_init__).

    Use instead: `--distributed-executor-backend ray`, or `nsys profile vllm serve …`.
    """
    if not _applies(d, "MG810"):
        return
    ns = d.inv.setting("ray_workers_use_nsight")
    if not _on(ns):
        return
    backend, known = _backend(d)
    if not known or backend == "ray":
        return
    if backend is None:
        dpb = d.inv.data_parallel_backend
        sizes = [_size(d, k) for k in ("tensor_parallel_size", "pipeline_parallel_size",
                                       "prefill_context_parallel_size", "data_parallel_size")]
        if not dpb.known or any(s is None for s in sizes):
            return
        across = 1
        for s in sizes:
            across *= s or 1
        if dpb.value == "ray" and across > 1:
            return
        which = "mp" if across > 1 else "uni"
    else:
        which = backend
    sev, assumed = _severity(d, "MG810")
    yield nsight_without_ray.finding(
        f"{_flag(d, 'ray_workers_use_nsight', '--ray-workers-use-nsight')} but the executor "
        f"is {which}: vLLM refuses to start (\"Unable to use nsight profiling unless workers "
        f"run with Ray.\", vllm/config/parallel.py){assumed}",
        d.source, _span(d, ns),
        hint="add --distributed-executor-backend ray, or profile with `nsys profile`",
        severity=sev,
    )


# ---------------------------------------------------------------------------- MoE / EPLB

def _redundant(d: Deployment) -> tuple[int, Setting] | None:
    """num_redundant_experts: --eplb-config's key (0.10.2+), or the flag of 0.9.2-0.11.2."""
    cfg = d.inv.eplb_config
    if cfg.given and cfg.known and isinstance(cfg.value, dict):
        v: Any = cfg.value.get("num_redundant_experts", 0)
        if isinstance(v, str) and v.strip().isdigit():
            v = int(v)
        if isinstance(v, int) and not isinstance(v, bool) and v != 0:
            return v, cfg
    old = d.inv.setting("num_redundant_experts")
    n = _given_int(old)
    if n:
        return n, old
    return None


@rule("MG805", "eplb-without-expert-parallel", Severity.ERROR,
      "--enable-eplb without --enable-expert-parallel",
      needs={VLLM_ARGS}, on=("enable_eplb",))
def eplb_without_expert_parallel(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds `--enable-eplb` without `--enable-expert-parallel` (`-ep`).

    Why is this bad? EPLB moves whole experts between expert-parallel ranks; without EP there
    are none. vLLM refuses it: "enable_expert_parallel must be True to use EPLB."
    (vllm/config/parallel.py, ParallelConfig._validate_parallel_config; vLLM 0.10.2-0.33.0).

    Use instead: add `--enable-expert-parallel`, or drop `--enable-eplb`.
    """
    if not _applies(d, "MG805"):
        return
    eplb, ep = d.inv.enable_eplb, d.inv.enable_expert_parallel
    if not _on(eplb) or not ep.known or ep.value:
        return
    sev, assumed = _severity(d, "MG805")
    yield eplb_without_expert_parallel.finding(
        f"{_flag(d, 'enable_eplb', '--enable-eplb')} without --enable-expert-parallel: vLLM "
        "refuses to start (\"enable_expert_parallel must be True to use EPLB.\", "
        f"vllm/config/parallel.py){assumed}",
        d.source, _span(d, eplb),
        hint="add --enable-expert-parallel, or drop --enable-eplb", severity=sev,
    )


@rule("MG806", "eplb-without-parallelism", Severity.ERROR,
      "EPLB on a single GPU (no tensor, context or data parallelism)",
      needs={VLLM_ARGS}, on=("enable_eplb",))
def eplb_without_parallelism(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds `--enable-eplb` with expert parallelism on when tp × pcp × dp is 1.

    Why is this bad? The expert-parallel group spans the TP × PCP × DP ranks; with one rank
    there is nothing to balance. vLLM refuses it: "EPLB requires tensor, prefill-context, or
    data parallelism, but got TP=1, PCP=1, DP=1." (vllm/config/parallel.py,
    ParallelConfig._validate_parallel_config; vLLM 0.10.2-0.33.0).

    Use instead: drop `--enable-eplb` on one GPU, or add `-tp`/`-dp`.
    """
    if not _applies(d, "MG806"):
        return
    eplb, ep = d.inv.enable_eplb, d.inv.enable_expert_parallel
    if not _on(eplb) or not _on(ep):
        return
    tp, pcp, dp = (_size(d, k) for k in ("tensor_parallel_size",
                                         "prefill_context_parallel_size",
                                         "data_parallel_size"))
    if tp is None or pcp is None or dp is None or tp * pcp * dp > 1:
        return
    sev, assumed = _severity(d, "MG806")
    yield eplb_without_parallelism.finding(
        f"{_flag(d, 'enable_eplb', '--enable-eplb')} on one GPU (tp {tp} × pcp {pcp} × dp "
        f"{dp} = 1): vLLM refuses to start (\"EPLB requires tensor, prefill-context, or data "
        f"parallelism, but got TP={tp}, PCP={pcp}, DP={dp}.\", vllm/config/parallel.py){assumed}",
        d.source, _span(d, eplb),
        hint="drop --enable-eplb (and -ep) on one GPU, or add -tp or -dp", severity=sev,
    )


@rule("MG807", "redundant-experts-without-eplb", Severity.ERROR,
      "num_redundant_experts without --enable-eplb",
      needs={VLLM_ARGS}, given=("eplb_config", "num_redundant_experts"))
def redundant_experts_without_eplb(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds `num_redundant_experts` (in `--eplb-config`, or the older
    `--num-redundant-experts`) set to a non-zero value without `--enable-eplb`.

    Why is this bad? Redundant experts are copies that EPLB places; vLLM refuses them without
    EPLB: "num_redundant_experts is set to 8 but EPLB is not enabled. Either enable EPLB or
    unset num_redundant_experts." (vllm/config/parallel.py,
    ParallelConfig._validate_parallel_config; vLLM 0.10.2-0.33.0).

    Use instead: add `--enable-eplb`, or drop num_redundant_experts.
    """
    if not _applies(d, "MG807"):
        return
    eplb = d.inv.enable_eplb
    if not eplb.known or eplb.value:
        return
    found = _redundant(d)
    if found is None:
        return
    n, s = found
    sev, assumed = _severity(d, "MG807")
    yield redundant_experts_without_eplb.finding(
        f"num_redundant_experts is {n} without --enable-eplb: vLLM refuses to start "
        f"(\"num_redundant_experts is set to {n} but EPLB is not enabled\", "
        f"vllm/config/parallel.py){assumed}",
        d.source, _span(d, s), hint="add --enable-eplb, or drop num_redundant_experts",
        severity=sev,
    )


@rule("MG808", "dcp-does-not-divide-tp", Severity.ERROR,
      "tp not divisible by --decode-context-parallel-size",
      needs={VLLM_ARGS}, given=("decode_context_parallel_size",))
def dcp_does_not_divide_tp(d: Deployment) -> Iterator[Finding]:
    """
    What it does: checks `--decode-context-parallel-size` (`-dcp`) against `-tp` (and, with
    prefill context parallelism, against `-pcp`).

    Why is this bad? Decode context parallelism reuses the tensor-parallel ranks, so it must
    divide them: "tp_size=4 must be divisible by dcp_size=3." With `-pcp` above 1, DCP must be
    1, pcp or tp × pcp (vllm/config/parallel.py, ParallelConfig._validate_parallel_config;
    vLLM 0.20.2-0.33.0; the pcp form from 0.30.0).

    Use instead: a `-dcp` that divides `-tp`.
    """
    if not _applies(d, "MG808"):
        return
    dcp_s = d.inv.decode_context_parallel_size
    dcp = _given_int(dcp_s)
    tp, pcp = _size(d, "tensor_parallel_size"), _size(d, "prefill_context_parallel_size")
    if dcp is None or tp is None or pcp is None or dcp < 1:
        return
    sev, assumed = _severity(d, "MG808")
    if pcp == 1:
        if tp % dcp == 0:
            return
        yield dcp_does_not_divide_tp.finding(
            f"{_flag(d, 'decode_context_parallel_size', '-dcp')} {dcp} does not divide tp "
            f"{tp}: vLLM refuses to start (\"tp_size={tp} must be divisible by dcp_size="
            f"{dcp}.\", vllm/config/parallel.py){assumed}",
            d.source, _span(d, dcp_s), math=(f"tp {tp} / dcp {dcp} = {tp / dcp:g}",),
            hint="use a -dcp that divides -tp (" + ", ".join(
                str(k) for k in range(1, tp + 1) if tp % k == 0) + ")",
            related=_rel(d, d.inv.tensor_parallel_size, f"tp {tp}"), severity=sev,
        )
        return
    if not _applies(d, "MG808", "0.30.0"):
        return
    valid = sorted({1, pcp, tp * pcp})
    if dcp in valid:
        return
    sev, assumed = _severity(d, "MG808", "0.30.0")
    yield dcp_does_not_divide_tp.finding(
        f"{_flag(d, 'decode_context_parallel_size', '-dcp')} {dcp} with tp {tp} × pcp {pcp}: "
        "vLLM refuses to start (\"When PCP is enabled, DCP must be disabled, span the PCP axis, "
        f"or span the full TP x PCP axis\"; valid DCP sizes are {valid}, "
        f"vllm/config/parallel.py){assumed}",
        d.source, _span(d, dcp_s), hint=f"use -dcp {' or '.join(map(str, valid))}", severity=sev,
    )


# ---------------------------------------------------------------------------- LoRA

@rule("MG814", "max-loras-below-one", Severity.ERROR,
      "--max-loras 0 (or less) with LoRA on",
      needs={VLLM_ARGS}, given=("max_loras",))
def max_loras_below_one(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds `--max-loras` below 1 on a launch with `--enable-lora`.

    Why is this bad? The LoRA config needs at least one adapter slot: vLLM refuses the value
    when it builds LoRAConfig (pydantic `ge=1`: "Input should be greater than or equal to 1";
    vllm/config/lora.py, LoRAConfig; a ValueError "max_loras (0) must be >= 1" in 0.10.2).
    Without `--enable-lora` no LoRAConfig is built and the value is not checked.

    Use instead: `--max-loras 1` or more (the number of adapters in one batch).
    """
    if not _applies(d, "MG814") or not _on(d.inv.enable_lora):
        return
    s = d.inv.max_loras
    n = _given_int(s)
    if n is None or n >= 1:
        return
    sev, assumed = _severity(d, "MG814")
    yield max_loras_below_one.finding(
        f"{_flag(d, 'max_loras', '--max-loras')} {n}: vLLM refuses to start (LoRAConfig "
        f"max_loras: \"Input should be greater than or equal to 1\", vllm/config/lora.py)"
        f"{assumed}",
        d.source, _span(d, s), hint="use --max-loras 1 or more", severity=sev,
    )


@rule("MG815", "cpu-loras-below-max-loras", Severity.ERROR,
      "--max-cpu-loras below --max-loras",
      needs={VLLM_ARGS}, given=("max_cpu_loras",))
def cpu_loras_below_max_loras(d: Deployment) -> Iterator[Finding]:
    """
    What it does: compares `--max-cpu-loras` (adapters cached in CPU memory) with
    `--max-loras` (adapters on the GPU in one batch) on a launch with `--enable-lora`.

    Why is this bad? Every GPU adapter is also cached on the CPU: "max_cpu_loras (2) must be >=
    max_loras (4)." (vllm/config/lora.py, LoRAConfig._validate_lora_config; vLLM
    0.10.2-0.33.0). From 0.30.0 a value of 0 or less means "unset" (vllm/engine/arg_utils.py).

    Use instead: `--max-cpu-loras` at least `--max-loras`, or leave it out (it defaults to
    max_loras).
    """
    if not _applies(d, "MG815") or not _on(d.inv.enable_lora):
        return
    cpu = d.inv.max_cpu_loras
    n_cpu = _given_int(cpu)
    n_max = _int(d.inv.max_loras)
    if n_cpu is None or n_max is None or n_cpu < 1 or n_cpu >= n_max:
        return
    sev, assumed = _severity(d, "MG815")
    yield cpu_loras_below_max_loras.finding(
        f"{_flag(d, 'max_cpu_loras', '--max-cpu-loras')} {n_cpu} is below --max-loras "
        f"{n_max}: vLLM refuses to start (\"max_cpu_loras ({n_cpu}) must be >= max_loras "
        f"({n_max}).\", vllm/config/lora.py){assumed}",
        d.source, _span(d, cpu), hint=f"use --max-cpu-loras {n_max} or more, or leave it out",
        related=_rel(d, d.inv.max_loras, f"--max-loras {n_max}"), severity=sev,
    )


# ---------------------------------------------------------------------------- scheduler

@rule("MG816", "scheduler-limit-below-one", Severity.ERROR,
      "--max-num-seqs or --max-num-batched-tokens below 1",
      needs={VLLM_ARGS}, given=("max_num_seqs", "max_num_batched_tokens"))
def scheduler_limit_below_one(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds `--max-num-seqs` or `--max-num-batched-tokens` below 1.

    Why is this bad? A scheduler that may run no sequence or no token serves nothing; vLLM
    refuses the value when it builds SchedulerConfig (pydantic `ge=1`: "Input should be greater
    than or equal to 1"; vllm/config/scheduler.py, SchedulerConfig; vLLM 0.15.1-0.33.0). A
    stated value is kept as given (vllm/engine/arg_utils.py,
    _set_default_max_num_seqs_and_batched_tokens_args replaces only unset ones).

    Use instead: leave them out (vLLM picks defaults for the GPU) or give positive numbers.
    """
    if not _applies(d, "MG816"):
        return
    for key, canonical in (("max_num_seqs", "--max-num-seqs"),
                           ("max_num_batched_tokens", "--max-num-batched-tokens")):
        s = d.inv.setting(key)
        n = _given_int(s)
        if n is None or n >= 1:
            continue
        sev, assumed = _severity(d, "MG816")
        yield scheduler_limit_below_one.finding(
            f"{_flag(d, key, canonical)} {n}: vLLM refuses to start (SchedulerConfig {key}: "
            f"\"Input should be greater than or equal to 1\", vllm/config/scheduler.py)"
            f"{assumed}",
            d.source, _span(d, s), hint=f"leave {canonical} out, or give a positive number",
            severity=sev,
        )


def _chunked_prefill_off(d: Deployment) -> bool:
    s = d.inv.setting("enable_chunked_prefill")
    return bool(s.given and s.known and s.value is False)


@rule("MG817", "batched-tokens-too-small", Severity.ERROR,
      "--max-num-batched-tokens below --max-num-seqs, or below max-model-len without "
      "chunked prefill",
      needs={VLLM_ARGS}, given=("max_num_batched_tokens",))
def batched_tokens_too_small(d: Deployment) -> Iterator[Finding]:
    """
    What it does: compares a stated `--max-num-batched-tokens` with a stated `--max-num-seqs`,
    and, when chunked prefill is turned off (`--no-enable-chunked-prefill`), with the
    `--max-model-len`.

    Why is this bad? Each scheduled sequence needs at least one token of the step's budget:
    "max_num_batched_tokens (128) must be greater than or equal to max_num_seqs (256)."
    Without chunked prefill a whole prompt is one step: "max_num_batched_tokens (4096) is
    smaller than max_model_len (8192). This effectively limits the maximum sequence length to
    max_num_batched_tokens and makes vLLM reject longer sequences."
    (vllm/config/scheduler.py, SchedulerConfig.verify_max_model_len; vLLM 0.10.2-0.33.0).
    When `--max-num-seqs` is not stated vLLM lowers its default to the token budget
    (vllm/engine/arg_utils.py), so only two stated values can conflict.

    Use instead: a token budget at least the sequences (and the model length without chunked
    prefill), or leave one of them out.
    """
    if not _applies(d, "MG817"):
        return
    bt_s = d.inv.max_num_batched_tokens
    bt = _given_int(bt_s)
    if bt is None or bt < 1:
        return
    seqs_s = d.inv.max_num_seqs
    seqs = _given_int(seqs_s)
    mml_s = d.inv.max_model_len
    mml = _given_int(mml_s)
    sev, assumed = _severity(d, "MG817")
    flag = _flag(d, "max_num_batched_tokens", "--max-num-batched-tokens")
    # verify_max_model_len checks the model length first
    if mml is not None and mml > 0 and bt < mml and _chunked_prefill_off(d):
        yield batched_tokens_too_small.finding(
            f"{flag} {bt} is smaller than --max-model-len {mml} with chunked prefill off: "
            f"vLLM refuses to start (\"max_num_batched_tokens ({bt}) is smaller than "
            f"max_model_len ({mml})\", vllm/config/scheduler.py){assumed}",
            d.source, _span(d, bt_s),
            hint=f"raise {flag} to {mml} or more, lower --max-model-len, or keep chunked "
                 "prefill on",
            related=_rel(d, mml_s, f"--max-model-len {mml}"), severity=sev,
        )
        return
    if seqs is not None and seqs >= 1 and bt < seqs:
        yield batched_tokens_too_small.finding(
            f"{flag} {bt} is below --max-num-seqs {seqs}: vLLM refuses to start "
            f"(\"max_num_batched_tokens ({bt}) must be greater than or equal to max_num_seqs "
            f"({seqs}).\", vllm/config/scheduler.py){assumed}",
            d.source, _span(d, bt_s), hint=f"raise {flag} to {seqs} or more",
            related=_rel(d, seqs_s, f"--max-num-seqs {seqs}"), severity=sev,
        )


# ---------------------------------------------------------------------------- front end

@rule("MG818", "auto-tool-choice-without-parser", Severity.ERROR,
      "--enable-auto-tool-choice without --tool-call-parser",
      needs={VLLM_ARGS}, on=("enable_auto_tool_choice",))
def auto_tool_choice_without_parser(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds `--enable-auto-tool-choice` without `--tool-call-parser`.

    Why is this bad? Automatic tool calls are parsed out of the model's text by a named parser;
    vLLM refuses to start without one: "Error: --enable-auto-tool-choice requires
    --tool-call-parser" (vllm/entrypoints/launchers/cli_args.py validate_parsed_serve_args in
    0.30.0; vllm/entrypoints/openai/cli_args.py earlier, vllm/entrypoints/common/cli_args.py in
    0.33.0; vLLM 0.10.2-0.33.0).

    Use instead: add `--tool-call-parser NAME` (hermes, llama3_json, mistral, …) for the model.
    """
    if not _applies(d, "MG818"):
        return
    auto = d.inv.setting("enable_auto_tool_choice")
    parser = d.inv.setting("tool_call_parser")
    if not _on(auto) or not parser.known or (parser.given and parser.value):
        return
    sev, assumed = _severity(d, "MG818")
    yield auto_tool_choice_without_parser.finding(
        f"{_flag(d, 'enable_auto_tool_choice', '--enable-auto-tool-choice')} without "
        "--tool-call-parser: vLLM refuses to start (\"Error: --enable-auto-tool-choice "
        f"requires --tool-call-parser\", validate_parsed_serve_args){assumed}",
        d.source, _span(d, auto), hint="add --tool-call-parser with the model's parser",
        severity=sev,
    )


@rule("MG819", "port-out-of-range", Severity.ERROR,
      "a vLLM port outside 1-65535",
      needs={VLLM_ARGS}, given=("port", "data_parallel_rpc_port"))
def port_out_of_range(d: Deployment) -> Iterator[Finding]:
    """
    What it does: checks `--port` and `--data-parallel-rpc-port` (`-dpp`).

    Why is this bad? vLLM binds `(args.host or "", args.port)` before it loads the model
    (vllm/entrypoints/launchers/launcher.py, setup_server → create_server_socket); a port
    above 65535 or below 0 fails there ("bind(): port must be 0-65535", Python's socket
    module). `--port 0` binds a port the kernel picks, which no probe, Service or client
    knows (warning). The DP RPC port is validated by ParallelConfig (pydantic `ge=1,
    le=65535`, vllm/config/parallel.py; vLLM 0.10.2-0.33.0).

    Use instead: a fixed port in 1-65535 (8000 by default).
    """
    if not _applies(d, "MG819"):
        return
    port_s = d.inv.setting("port")
    port = _given_int(port_s)
    if port is not None and (port < 0 or port > 65535):
        sev, assumed = _severity(d, "MG819")
        yield port_out_of_range.finding(
            f"{_flag(d, 'port', '--port')} {port} is not a TCP port: vLLM fails when it binds "
            f"the API socket (\"bind(): port must be 0-65535\", "
            f"vllm/entrypoints/launchers/launcher.py create_server_socket){assumed}",
            d.source, _span(d, port_s), hint="use a port in 1-65535 (default 8000)", severity=sev,
        )
    elif port == 0:
        yield port_out_of_range.finding(
            f"{_flag(d, 'port', '--port')} 0: the kernel picks a free port at start-up, so no "
            "probe, Service or client knows where the API listens "
            "(vllm/entrypoints/launchers/launcher.py create_server_socket binds it as given)",
            d.source, _span(d, port_s), hint="use a fixed port (default 8000)",
            severity=Severity.WARNING,
        )
    rpc_s = d.inv.setting("data_parallel_rpc_port")
    rpc = _given_int(rpc_s)
    if rpc is not None and not 1 <= rpc <= 65535:
        sev, assumed = _severity(d, "MG819")
        yield port_out_of_range.finding(
            f"{_flag(d, 'data_parallel_rpc_port', '--data-parallel-rpc-port')} {rpc} is "
            "outside 1-65535: vLLM refuses to start (ParallelConfig data_parallel_rpc_port, "
            f"vllm/config/parallel.py){assumed}",
            d.source, _span(d, rpc_s), hint="use a port in 1-65535 (default 29550)", severity=sev,
        )


RULES: list[Rule] = [
    dp_local_exceeds_dp, dp_rank_out_of_range, nnodes_with_ray_executor,
    nnodes_with_ray_dp_backend, eplb_without_expert_parallel, eplb_without_parallelism,
    redundant_experts_without_eplb, dcp_does_not_divide_tp, pipeline_parallel_uni_executor,
    nsight_without_ray, headless_with_api_servers, external_dp_lb_invalid,
    hybrid_lb_without_dp_local, max_loras_below_one, cpu_loras_below_max_loras,
    scheduler_limit_below_one, batched_tokens_too_small, auto_tool_choice_without_parser,
    port_out_of_range,
]
