"""vLLM LoRA: adapter buffers, ranks and flags without --enable-lora (MG306-MG308).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mgpu_lint.catalog import knowledge
from mgpu_lint.deployment import Deployment
from mgpu_lint.engines.adapter import VLLM_ARGS
from mgpu_lint.facts.vllm_memory import (
    LORA_BYTES_PER_VALUE,
    LORA_RANKS,
    vllm_budget,
    weights_verdict,
)
from mgpu_lint.findings import Finding, Related, Severity
from mgpu_lint.policy import LORA_INFO_SHARE, LORA_WARN_SHARE
from mgpu_lint.sizing import lora as lora_sizing
from mgpu_lint.sizing.display import gb, percent, size

from .registry import Rule, rule
from .text import model_span, setting_related

# LoRAConfig fields (vLLM 0.30.0 vllm/config/lora.py): ignored unless --enable-lora builds it.
LORA_CONFIG_KEYS = ("max_loras", "max_lora_rank", "max_cpu_loras", "lora_dtype",
                    "fully_sharded_loras", "lora_target_modules", "default_mm_loras",
                    "enable_tower_connector_lora", "specialize_active_lora",
                    "enable_mixed_moe_lora_format", "enable_moe_shared_loras")



@rule("MG306", "lora-reservation", Severity.INFO,
      "GPU memory reserved for --max-loras × --max-lora-rank adapters",
      needs={VLLM_ARGS}, reads=("max_loras", "max_lora_rank"))
def lora_reservation(d: Deployment) -> Iterator[Finding]:
    """
    What it does: computes the adapter buffers vLLM allocates on every GPU when LoRA is on:
    max_loras × max_lora_rank slots on every adapted layer, sharded as vLLM shards them under
    tensor parallelism, plus the embedding and logits slots where the model class has them
    (create_lora_weights, vllm/lora/layers/*.py, 0.30.0), whatever adapters are loaded. Info
    when the flags are set; a warning when the buffers take over 10% of the KV budget.

    Why is this bad? For Llama 3.1 8B, --max-loras 4 --max-lora-rank 64
    reserves 1.48 GB (1.38 GiB) per GPU that the KV cache does not get. Serving 20 variants as one base
    plus rank-16 adapters needs 17.7 GB, against 321.2 GB as merged models. Reservations under
    1% of the KV budget (vLLM's default single rank-16 slot) are not reported.

    Use instead: a --max-lora-rank equal to the largest adapter's rank and --max-loras equal to
    the distinct adapters one batch needs.
    """
    b = vllm_budget(d)
    inv = d.inv
    if b is None or inv.enable_lora.value is not True or not b.lora_known or \
            weights_verdict(b)[0] is not None:
        return  # without room for the KV cache the weights are MG301's finding
    g = b.gpu
    reserved = g.lora
    room = g.usable - g.weights if g.kv_memory_bytes is None else g.kv_memory_bytes
    if b.real is not None and b.real.budget.lora:
        # vLLM's own budget: the slots it allocates while loading (linter/sizing/vllm_budget.py
        # lora_stage_bytes), against the KV budget it would have without them
        r = b.real.budget
        reserved = float(r.lora)
        room = float(r.kv_budget if r.kv_from_flag else r.kv_budget + r.lora)
    if room <= 0:
        return
    share = reserved / room
    warn = share > LORA_WARN_SHARE
    if not warn and (share < LORA_INFO_SHARE or not (inv.max_loras.given or
                                                       inv.max_lora_rank.given)):
        return
    loras, rank = inv.max_loras.int_value, inv.max_lora_rank.int_value
    modules = knowledge.lora_modules(b.shape)
    if modules is None or loras is None or rank is None:
        return
    adapter = lora_sizing.lora_bytes(rank, modules, b.shape.layers, LORA_BYTES_PER_VALUE)
    math_lines = list(b.lines())
    if reserved != g.lora:
        math_lines.append(f"vLLM's slots (qkv/o/gate_up/down sharded by tp, the embedding and "
                          f"logits slots where the model class has them): {gb(reserved, 2)}")
    math_lines.append(f"LoRA share of the KV budget: {gb(reserved, 2)} / {gb(room)} = "
                      f"{percent(share)}")
    math_lines.append(f"one rank-{rank} adapter: {size(adapter)}")
    served = inv.lora_modules.value if inv.lora_modules.known else None
    count = len(served) if isinstance(served, list) else 0
    extra: dict[str, Any] = {"lora_share": share, "adapter_bytes": adapter,
                             "lora_reserved_bytes": reserved}
    if count > 1:
        base = b.weights_total
        shared = lora_sizing.base_plus_adapters_bytes(count, base, adapter)
        merged = lora_sizing.merged_models_bytes(count, base)
        math_lines.append(f"{count} adapters from one base: {gb(base)} + {count} × {size(adapter)} "
                          f"(rank {rank}) = {gb(shared)}; as merged models {gb(merged)}")
        extra.update(variants=count, base_plus_adapters_bytes=shared, merged_bytes=merged)
    flags = f"{d.inv.spelling(inv.max_loras)} {loras} × {d.inv.spelling(inv.max_lora_rank)} {rank}"
    setting = inv.max_lora_rank if inv.max_lora_rank.given else inv.max_loras \
        if inv.max_loras.given else inv.enable_lora
    span = setting.span or model_span(d)
    if warn:
        message = (f"{flags} reserve {gb(reserved, 2)} per GPU for LoRA buffers, "
                   f"{percent(share)} of the {gb(room)} the KV cache would get")
        severity = Severity.WARNING
    else:
        message = (f"{flags} reserve {gb(reserved, 2)} per GPU for LoRA buffers "
                   f"({percent(share)} of the KV budget), whatever adapters are loaded")
        severity = Severity.INFO
    yield lora_reservation.finding(message, d.source, span,
                  hint=f"set {d.inv.spelling(inv.max_lora_rank)} to the largest adapter's rank and "
                       f"{d.inv.spelling(inv.max_loras)} to the adapters one batch needs",
                  math=tuple(math_lines), related=setting_related(d, inv.max_loras),
                  data=b.data(**extra), severity=severity)


@rule("MG307", "lora-rank-invalid", Severity.ERROR,
      "--max-lora-rank not among the ranks vLLM accepts",
      needs={VLLM_ARGS}, reads=("max_lora_rank",), given=("max_lora_rank",))
def lora_rank_invalid(d: Deployment) -> Iterator[Finding]:
    """
    What it does: checks --max-lora-rank against the ranks vLLM supports: 1, 8, 16, 32, 64,
    128, 256, 320, 512 in 0.30.0 (MaxLoRARanks, vllm/config/lora.py); older releases accepted a
    subset (LoRAConfig.__post_init__ possible_max_ranks, e.g. 8–64, later 8–256), checked only
    with --enable-lora.

    Why is this bad? vLLM rejects the value ("argument --max-lora-rank: invalid choice: 24
    (choose from 1, 8, 16, 32, 64, 128, 256, 320, 512)"): the server does not start. The rank is
    a buffer size, not the adapters' rank: round up to the next supported value.

    Use instead: the smallest supported rank at or above your largest adapter's rank.
    """
    setting = d.inv.max_lora_rank
    rank = setting.int_value
    if rank is None or not setting.given or setting.span is None:
        return
    spec = d.inv.catalog.by_key.get(setting.key)
    listed = spec is not None and spec.choices is not None
    allowed = tuple(int(c) for c in spec.choices if isinstance(c, int)) if listed and spec \
        else LORA_RANKS
    if not listed and d.inv.enable_lora.value is not True:
        return  # older releases check the rank only when LoRA is on
    if rank in allowed:
        return
    larger = [r for r in allowed if r > rank]
    hint = f"use {larger[0]}" if larger else f"use at most {allowed[-1]}"
    yield lora_rank_invalid.finding(
                  f"{d.inv.spelling(setting)} {rank} is not a rank vLLM {d.inv.version} accepts "
                  f"({', '.join(map(str, allowed))}): the server does not start",
                  d.source, setting.span, hint=hint, data={"rank": rank,
                                                           "allowed": list(allowed)})


@rule("MG308", "lora-without-enable", Severity.ERROR,
      "LoRA flags without --enable-lora",
      needs={VLLM_ARGS}, given=("lora_modules", *LORA_CONFIG_KEYS))
def lora_without_enable(d: Deployment) -> Iterator[Finding]:
    """
    What it does: finds LoRA flags on a vLLM launch that does not turn LoRA on.

    Why is this bad? vLLM builds its LoRA configuration only with --enable-lora
    (vllm/engine/arg_utils.py, 0.30.0; no flag implies it). --lora-modules then asks for
    adapters the engine cannot load: the server fails at start-up with "LoRA is not enabled.
    Use --enable-lora to enable LoRA." (vllm/v1/worker/lora_model_runner_mixin.py) — an error.
    The other LoRA flags (--max-loras, --max-lora-rank, --max-cpu-loras, --lora-dtype …) are
    silently ignored — a warning: whoever wrote them expects LoRA to be on.

    Use instead: add --enable-lora, or remove the LoRA flags.
    """
    inv = d.inv
    if not inv.enable_lora.known or inv.enable_lora.value is True:
        return
    modules = inv.lora_modules
    enable = inv.long_name(inv.enable_lora.key)
    if modules.given and modules.flag_span is not None:
        yield lora_without_enable.finding(
                      f"{d.inv.spelling(modules)} without {enable}: vLLM cannot load the adapters "
                      "and fails at start-up (\"LoRA is not enabled\")",
                      d.source, modules.flag_span, hint=f"add {enable}")
    keys = [k for k in LORA_CONFIG_KEYS if k in inv.catalog.by_key]
    ignored = [s for s in (inv.setting(k) for k in keys)
               if s.given and s.flag_span is not None and s.value is not False]
    if ignored and not modules.given:
        names = ", ".join(d.inv.spelling(s) for s in ignored)
        yield lora_without_enable.finding(
                      f"{names} without {enable}: vLLM ignores "
                      f"{'it' if len(ignored) == 1 else 'them'} (LoRA is off)",
                      d.source, ignored[0].flag_span,
                      hint=f"add {enable}, or remove the LoRA flags",
                      related=tuple(Related(d.source, s.flag_span, d.inv.spelling(s))
                                    for s in ignored[1:] if s.flag_span is not None),
                                    severity=Severity.WARNING)


RULES: list[Rule] = [lora_reservation, lora_rank_invalid, lora_without_enable]
