"""Mixture-of-experts grouping (MG4xx).

vLLM's MoE layers treat tp × dp (× pcp) GPUs as one group (FusedMoEParallelConfig.make,
vllm/model_executor/layers/fused_moe/config.py, vLLM 0.30.0): without `--enable-expert-parallel`
every expert is split that many ways; with it each GPU holds whole experts (vLLM
vllm/model_executor/layers/fused_moe/config.py FusedMoEParallelConfig.make, 0.30.0).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from mgpu_lint.deployment import Deployment
from mgpu_lint.findings import Finding, Related, Severity
from mgpu_lint.sizing.display import fixed, percent
from mgpu_lint.sizing.parallel import expert_load_imbalance, experts_per_rank, moe_grouping

if TYPE_CHECKING:
    from mgpu_lint.catalog.knowledge import ModelShape
    from mgpu_lint.engines import Setting
    from mgpu_lint.resolve import Layout
    from mgpu_lint.source import Span

from mgpu_lint.engines.adapter import VLLM_ARGS
from mgpu_lint.policy import EPLB_GROUP

from .registry import Rule, rule
from .text import model_name

# An illustrative run: token copies per device with the two hot experts on device 0
ILLUSTRATIVE_LOADS = [34, 8, 10, 12]


def _moe_shape(d: Deployment) -> tuple[Layout, ModelShape] | None:
    """The layout and the model's shape of a vLLM launch, when both are known."""
    lay = d.layout
    if lay is None or not lay.known or d.model is None \
            or d.model.shape is None:
        return None
    return lay, d.model.shape


def _ep_enabled(d: Deployment) -> bool | None:
    ep = d.inv.enable_expert_parallel
    return bool(ep.value) if ep.known else None


def _spelling(setting: Setting, canonical: str) -> str:
    """The flag as the user wrote it, else its canonical long name."""
    return setting.winner.spelling if setting.winner is not None else canonical


def _redundant(d: Deployment) -> int | None:
    """`num_redundant_experts` of --eplb-config (0 when not given; None when unreadable).
    EPLBConfig is a pydantic model, so "32" is coerced like 32 (vllm/config/parallel.py)."""
    cfg = d.inv.eplb_config
    if not cfg.given:
        return 0
    if not cfg.known or not isinstance(cfg.value, dict):
        return None
    value = cfg.value.get("num_redundant_experts", 0)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _group_math(lay: Layout, group: int) -> str:
    pcp = f" × pcp {lay.pcp.value}" if lay.pcp.value > 1 else ""
    return f"MoE group = tp {lay.tp.value} × dp {lay.dp.value}{pcp} = {group} GPUs"


def _group_span(d: Deployment, lay: Layout) -> Span:
    """The parallel size that makes the group (dp when it is the larger, else tp)."""
    if lay.dp.span is not None and (lay.tp.span is None or lay.dp.value > lay.tp.value):
        return lay.dp.span
    return lay.tp.span or d.program_span


@rule("MG401", "moe-experts-sliced", Severity.INFO,
      "a MoE model over several GPUs without expert parallelism: every expert is sliced",
      needs={VLLM_ARGS},
      reads=("model", "tensor_parallel_size", "data_parallel_size", "enable_expert_parallel"))
def moe_experts_sliced(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds MoE models served over tp × dp > 1 GPUs without
    `--enable-expert-parallel`.

    Why is this bad? vLLM's MoE layers treat all tp × dp (× pcp) GPUs as
    one group (FusedMoEParallelConfig.make, vLLM 0.30.0). Without expert parallelism each
    expert's matrices are split that many ways — `-tp 8` or `-tp 1 -dp 8`: "TP=8: every expert
    split 8 ways", each expert becoming 8 small matrix products plus an all-reduce; with
    `--enable-expert-parallel` each GPU holds whole experts (1/8 of them) and tokens travel by
    all-to-all to the GPUs that hold their experts.

    Use instead: try `--enable-expert-parallel` for large expert counts and measure; for
    small groups slicing can be fine.
    """
    found = _moe_shape(d)
    if found is None or not found[1].is_moe:
        return
    lay, shape = found
    ep = _ep_enabled(d)
    grouping = moe_grouping(lay.tp.value, lay.dp.value, False, lay.pcp.value)
    if ep is None or ep or grouping.group <= 1:
        return
    per_rank = experts_per_rank(shape.experts, grouping.group)
    whole = f"{per_rank[0]}" if per_rank[0] == per_rank[-1] else \
        f"{per_rank[-1]}-{per_rank[0]}"
    yield moe_experts_sliced.finding(
        f"{model_name(d)} has {shape.experts} experts and no --enable-expert-parallel: its MoE "
        f"layers run as {grouping.summary}",
        d.source, _group_span(d, lay),
        math=(_group_math(lay, grouping.group),
              (f"with expert parallelism: {shape.experts} experts / EP {grouping.group} = "
              f"{whole} whole experts per GPU")),
        hint=f"compare with --enable-expert-parallel (each GPU then holds {whole} whole "
             "experts)",
        data={"experts": shape.experts, "group": grouping.group},
    )


@rule("MG402", "expert-parallel-on-dense", Severity.ERROR,
      "--enable-expert-parallel on a model without experts",
      needs={VLLM_ARGS}, reads=("model", "enable_expert_parallel"),
      given=("enable_expert_parallel",))
def expert_parallel_on_dense(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds `--enable-expert-parallel` on a dense model.

    Why is this bad? vLLM refuses to start: "Number of experts in the model must be greater
    than 0 when expert parallelism is enabled." (vllm/config/model.py,
    _verify_with_expert_parallelism, vLLM 0.30.0).

    Use instead: drop the flag for dense models.
    """
    found = _moe_shape(d)
    if found is None or found[1].is_moe:
        return
    ep = d.inv.enable_expert_parallel
    if not (ep.given and ep.known and ep.value):
        return
    flag = _spelling(ep, "--enable-expert-parallel")
    yield expert_parallel_on_dense.finding(
        f"{flag} on {model_name(d)}, which has no experts: vLLM refuses to start (\"Number of "
        "experts in the model must be greater than 0 when expert parallelism is enabled\")",
        d.source, ep.flag_span or d.program_span, hint=f"remove {flag}",
    )


@rule("MG403", "experts-not-divisible", Severity.WARNING,
      "the expert count does not divide by the expert-parallel size",
      needs={VLLM_ARGS},
      reads=("tensor_parallel_size", "data_parallel_size", "enable_expert_parallel",
          "enable_eplb", "eplb_config"), on=("enable_expert_parallel",))
def experts_not_divisible(d: Deployment) -> Iterator[Finding]:
    """
    What it does: with `--enable-expert-parallel`, checks the experts (plus redundant experts
    from `--eplb-config`) against the EP size tp × dp (× pcp).

    Why is this bad? vLLM places experts // ep on each rank and gives the remainder to the
    first ranks (expert_map_manager.py determine_expert_map, vLLM 0.30.0): uneven placement
    makes the fuller GPUs the slowest in every MoE layer (warning). With `--enable-eplb` vLLM
    refuses to start: "EPLB currently only supports even distribution of experts across
    ranks" (fused_moe/layer.py; the count includes the redundant experts) (error).

    Use instead: an EP size that divides the experts, or redundant experts that make the total
    divisible.
    """
    found = _moe_shape(d)
    if found is None or not found[1].is_moe or not _ep_enabled(d):
        return
    lay, shape = found
    redundant = _redundant(d)
    if redundant is None:
        return
    experts = shape.experts + redundant
    group = moe_grouping(lay.tp.value, lay.dp.value, True, lay.pcp.value).group
    if group <= 1 or experts % group == 0:
        return
    eplb = d.inv.enable_eplb
    error = bool(eplb.known and eplb.value)
    per_rank = experts_per_rank(experts, group)
    counted = f"{shape.experts} + {redundant} redundant = {experts}" if redundant else \
        f"{experts}"
    fuller = sum(1 for n in per_rank if n == per_rank[0])
    even = [n for n in range(group, 0, -1) if experts % n == 0 and n < group]
    yield experts_not_divisible.finding(
        f"{counted} experts over an EP group of {group}: "
        + (f"{_spelling(eplb, '--enable-eplb')} requires an even split, vLLM refuses to start"
           if error else
           f"{fuller} rank(s) hold {per_rank[0]} experts and {group - fuller} hold "
           f"{per_rank[-1]}; the fuller ones set the pace of every MoE layer"),
        d.source, _group_span(d, lay),
        math=(_group_math(lay, group),
              f"{experts} experts / EP {group} = {experts / group:g}"),
        hint=(f"set num_redundant_experts to {redundant + group - experts % group} in "
              f"--eplb-config ({experts + group - experts % group} = "
              f"{(experts + group - experts % group) // group} × {group}), or " if error else
              "") + (f"choose tp × dp that divides {experts} (e.g. {even[0]})" if even else
                     "choose tp × dp that divides the experts"),
        related=(Related(d.source, eplb.flag_span, "EPLB on"),)
        if error and eplb.flag_span is not None else (),
        data={"experts": experts, "redundant": redundant, "ep": group, "per_rank": per_rank},
        severity=Severity.ERROR if error else Severity.WARNING,
    )


@rule("MG404", "eplb-recommended", Severity.INFO,
      "a large expert-parallel group without --enable-eplb",
      needs={VLLM_ARGS},
      reads=("tensor_parallel_size", "data_parallel_size", "enable_expert_parallel", "enable_eplb"),
      on=("enable_expert_parallel",))
def eplb_recommended(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds expert parallelism over 8 or more GPUs without `--enable-eplb`.

    Why is this bad? Routing is uneven: some experts are hot. Each MoE
    layer waits for the busiest GPU, so the layer time follows the maximum load, not the mean:
    in an illustrative run device 0 holds the two popular experts and processes 34 token copies
    against a mean of 16 (imbalance 2.13), so the layer runs at less than half the speed of a
    balanced one. EPLB records expert load over a window and moves and replicates hot experts
    (`num_redundant_experts`) at run time.

    Use instead: `--enable-eplb` (with `--eplb-config '{"num_redundant_experts": N}'`).
    """
    found = _moe_shape(d)
    if found is None or not found[1].is_moe or not _ep_enabled(d):
        return
    lay, _ = found
    group = moe_grouping(lay.tp.value, lay.dp.value, True, lay.pcp.value).group
    eplb = d.inv.enable_eplb
    if group < EPLB_GROUP or not eplb.known or eplb.value:
        return
    imbalance = expert_load_imbalance(ILLUSTRATIVE_LOADS)
    mean = sum(ILLUSTRATIVE_LOADS) / len(ILLUSTRATIVE_LOADS)
    yield eplb_recommended.finding(
        f"expert parallelism over {group} GPUs without --enable-eplb: each MoE layer waits for "
        "the GPU with the hottest experts",
        d.source, d.inv.enable_expert_parallel.flag_span or d.program_span,
        math=(_group_math(lay, group),
              (f"e.g. token copies per device {', '.join(map(str, ILLUSTRATIVE_LOADS))}: "
               f"busiest {max(ILLUSTRATIVE_LOADS)} / mean "
              f"{mean:g} = imbalance {fixed(imbalance, 2)}: the layer runs at "
              f"{percent(1 / imbalance)} of a balanced layer's speed")),
        hint="add --enable-eplb",
        data={"ep": group},
    )


@rule("MG405", "moe-dp-lockstep", Severity.INFO,
      "a MoE model with data parallelism: engines run in lockstep",
      needs={VLLM_ARGS}, reads=("tensor_parallel_size", "data_parallel_size"))
def moe_dp_lockstep(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds MoE models served with `-dp` > 1.

    Why is this bad? With data parallelism the MoE layers still span all
    dp × tp GPUs, so the dp engines step together (vLLM's DPEngineCoreProc, which asserts the
    model is MoE): an engine with no requests runs dummy batches to keep the collective
    operations in step, and the slowest engine sets everyone's pace.

    Use instead: it is the intended layout for large MoE models (DP attention + EP); know that
    idle replicas are not free, and route load evenly.
    """
    found = _moe_shape(d)
    if found is None or not found[1].is_moe:
        return
    lay, _ = found
    if lay.dp.value <= 1:
        return
    group = moe_grouping(lay.tp.value, lay.dp.value, bool(_ep_enabled(d)), lay.pcp.value)
    yield moe_dp_lockstep.finding(
        f"{model_name(d)} is a MoE model with dp {lay.dp.value}: the {lay.dp.value} "
        "engines run their MoE layers in lockstep; idle engines run dummy batches",
        d.source, lay.dp.span or d.program_span,
        math=(_group_math(lay, group.group) + f": {group.summary}",),
        related=(Related(d.source, lay.tp.span, f"tp {lay.tp.value}"),)
        if lay.tp.span is not None else (),
        data={"dp": lay.dp.value, "group": group.group},
    )


RULES: list[Rule] = [moe_experts_sliced, expert_parallel_on_dense, experts_not_divisible,
                     eplb_recommended, moe_dp_lockstep]
