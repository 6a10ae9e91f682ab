"""Mixture-of-experts grouping (MG4xx).

vLLM's MoE layers treat tp × dp (× pcp) GPUs as one group (FusedMoEParallelConfig.make,
vllm/model_executor/layers/fused_moe/config.py, vLLM 0.30.0): without `--enable-expert-parallel`
every expert is split that many ways; with it each GPU holds whole experts (lesson, Example 13).
"""

from __future__ import annotations

from typing import Iterator

from mgpu_lint.deployment import Deployment
from mgpu_lint.findings import Finding, Related, Severity
from mgpu_lint.launch import VLLM
from mgpu_lint.sizing.parallel import experts_per_rank, moe_grouping

from .registry import Rule, rule


def _model_name(d: Deployment) -> str:
    """The model as the launch names it (the catalog shape may be a sibling checkpoint)."""
    return d.model.ref.rstrip("/").rsplit("/", 1)[-1] if d.model is not None else "the model"

EPLB_GROUP = 8  # DECISIONS: an EP group of 8 or more without EPLB gets MG404


def _moe(d: Deployment):  # type: ignore[no-untyped-def]
    lay = d.layout
    if d.engine != VLLM or lay is None or not lay.known or d.model is None:
        return None
    return lay


def _ep_enabled(d: Deployment) -> bool | None:
    ep = d.inv.enable_expert_parallel
    return bool(ep.value) if ep.known else None


def _redundant(d: Deployment) -> int | None:
    cfg = d.inv.eplb_config
    if not cfg.given:
        return 0
    if not cfg.known or not isinstance(cfg.value, dict):
        return None
    value = cfg.value.get("num_redundant_experts", 0)
    return value if isinstance(value, int) else None


@rule("MG401", "moe-experts-sliced", Severity.INFO,
      "a MoE model over several GPUs without expert parallelism: every expert is sliced")
def moe_experts_sliced(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds MoE models served over tp × dp > 1 GPUs without
    `--enable-expert-parallel`.

    Why is this bad? (lesson, Example 13) vLLM's MoE layers treat all tp × dp GPUs as one
    group. Without expert parallelism each expert's matrices are split that many ways, so
    every token's few active experts touch every GPU with thin matrix slices; with
    `--enable-expert-parallel` each GPU holds whole experts (1/(tp×dp) of them) and tokens
    travel to the GPUs that hold their experts.

    Use instead: try `--enable-expert-parallel` for large expert counts and measure; for
    small groups slicing can be fine.
    """
    lay = _moe(d)
    if lay is None or d.model.shape is None or not d.model.shape.is_moe:  # type: ignore[union-attr]
        return
    ep = _ep_enabled(d)
    grouping = moe_grouping(lay.tp.value, lay.dp.value, bool(ep), lay.pcp.value)
    if ep is None or ep or grouping.group <= 1:
        return
    shape = d.model.shape  # type: ignore[union-attr]
    span = lay.tp.span or lay.dp.span or d.program_span
    yield Finding(
        "MG401", Severity.INFO,
        f"{_model_name(d)} has {shape.experts} experts and no --enable-expert-parallel: its MoE "
        f"layers run as {grouping.summary}",
        d.source, span,
        math=(f"MoE group = tp {lay.tp.value} × dp {lay.dp.value} = {grouping.group} GPUs",),
        hint="compare with --enable-expert-parallel (each GPU then holds "
             f"{shape.experts // grouping.group} whole experts)",
    )


@rule("MG402", "expert-parallel-on-dense", Severity.ERROR,
      "--enable-expert-parallel on a model without experts")
def expert_parallel_on_dense(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds `--enable-expert-parallel` on a dense model.

    Why is this bad? vLLM refuses to start: "Number of experts in the model must be greater
    than 0 when expert parallelism is enabled." (vllm/config/model.py,
    _verify_with_expert_parallelism, vLLM 0.30.0).

    Use instead: drop the flag for dense models.
    """
    lay = _moe(d)
    if lay is None or d.model.shape is None or d.model.shape.is_moe:  # type: ignore[union-attr]
        return
    ep = d.inv.enable_expert_parallel
    if not (ep.given and ep.known and ep.value):
        return
    yield Finding(
        "MG402", Severity.ERROR,
        f"--enable-expert-parallel on {_model_name(d)}, which has no experts: vLLM "  # type: ignore[union-attr]
        "refuses to start",
        d.source, ep.flag_span or d.program_span, hint="remove --enable-expert-parallel",
    )


@rule("MG403", "experts-not-divisible", Severity.WARNING,
      "the expert count does not divide by the expert-parallel size")
def experts_not_divisible(d: Deployment) -> Iterator[Finding]:
    """
    What it does: with `--enable-expert-parallel`, checks the experts (plus redundant experts
    from `--eplb-config`) against the EP size tp × dp (× pcp).

    Why is this bad? vLLM places experts // ep on each rank and gives the remainder to the
    first ranks (expert_map_manager.py): uneven placement makes the fuller GPUs the slowest
    (warning). With `--enable-eplb` vLLM refuses to start: "EPLB currently only supports even
    distribution of experts across ranks" (error).

    Use instead: an EP size that divides the experts, or redundant experts that make the total
    divisible.
    """
    lay = _moe(d)
    if lay is None or d.model.shape is None or not d.model.shape.is_moe:  # type: ignore[union-attr]
        return
    if not _ep_enabled(d):
        return
    redundant = _redundant(d)
    if redundant is None:
        return
    experts = d.model.shape.experts + redundant  # type: ignore[union-attr]
    group = moe_grouping(lay.tp.value, lay.dp.value, True, lay.pcp.value).group
    if group <= 1 or experts % group == 0:
        return
    eplb = d.inv.enable_eplb
    error = bool(eplb.known and eplb.value)
    per_rank = experts_per_rank(experts, group)
    with_redundant = f" ({redundant} redundant)" if redundant else ""
    yield Finding(
        "MG403", Severity.ERROR if error else Severity.WARNING,
        f"{experts} experts{with_redundant} over an EP group of {group}: "
        + ("--enable-eplb requires an even split, vLLM refuses to start" if error else
           f"ranks hold {max(per_rank)} or {min(per_rank)} experts, the fuller ones set the pace"),
        d.source, lay.tp.span or lay.dp.span or d.program_span,
        math=(f"{experts} experts / EP {group} = {experts / group:g}",),
        hint="choose tp × dp that divides the experts",
    )


@rule("MG404", "eplb-recommended", Severity.INFO,
      "a large expert-parallel group without --enable-eplb")
def eplb_recommended(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds expert parallelism over 8 or more GPUs without `--enable-eplb`.

    Why is this bad? (lesson, Example 8) Routing is uneven: some experts are hot. Each MoE
    layer waits for the busiest GPU, so the layer time follows the maximum load, not the mean
    (the lesson's example: max/mean 1.5 costs a third of the group's throughput). EPLB moves
    and replicates hot experts at run time.

    Use instead: `--enable-eplb` (with `--eplb-config '{"num_redundant_experts": N}'`).
    """
    lay = _moe(d)
    if lay is None or d.model.shape is None or not d.model.shape.is_moe:  # type: ignore[union-attr]
        return
    if not _ep_enabled(d):
        return
    group = moe_grouping(lay.tp.value, lay.dp.value, True, lay.pcp.value).group
    eplb = d.inv.enable_eplb
    if group < EPLB_GROUP or not eplb.known or eplb.value:
        return
    yield Finding(
        "MG404", Severity.INFO,
        f"expert parallelism over {group} GPUs without --enable-eplb: each MoE layer waits for "
        "the GPU with the hottest experts",
        d.source, d.inv.enable_expert_parallel.flag_span or d.program_span,
        hint="add --enable-eplb",
    )


@rule("MG405", "moe-dp-lockstep", Severity.INFO,
      "a MoE model with data parallelism: engines run in lockstep")
def moe_dp_lockstep(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds MoE models served with `-dp` > 1.

    Why is this bad? With data parallelism the MoE layers still span all dp × tp GPUs, so the
    dp engines step together: an engine with no requests runs dummy batches to keep the
    collective operations in step, and the slowest engine sets everyone's pace.

    Use instead: it is the intended layout for large MoE models (DP attention + EP); know that
    idle replicas are not free, and route load evenly.
    """
    lay = _moe(d)
    if lay is None or d.model.shape is None or not d.model.shape.is_moe:  # type: ignore[union-attr]
        return
    if lay.dp.value <= 1:
        return
    yield Finding(
        "MG405", Severity.INFO,
        f"{_model_name(d)} is a MoE model with dp {lay.dp.value}: the {lay.dp.value} "  # type: ignore[union-attr]
        "engines run their MoE layers in lockstep; idle engines run dummy batches",
        d.source, lay.dp.span or d.program_span,
        related=(Related(d.source, lay.tp.span, f"tp {lay.tp.value}"),)
        if lay.tp.span is not None else (),
    )


RULES: list[Rule] = [moe_experts_sliced, expert_parallel_on_dense, experts_not_divisible,
                     eplb_recommended, moe_dp_lockstep]
