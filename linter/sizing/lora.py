"""LoRA adapter sizes and vLLM's GPU reservation for them (rank × Σ(in + out) × layers)."""

from __future__ import annotations

from collections.abc import Mapping


def lora_params_per_rank_per_layer(modules: Mapping[str, tuple[int, int]]) -> int:
    """Σ (in + out) over the adapted modules of one layer: A is rank × in, B is out × rank."""
    return sum(i + o for i, o in modules.values())


def lora_params(rank: int, modules: Mapping[str, tuple[int, int]], layers: int) -> int:
    """Adapter parameters: rank × Σ(in + out) × layers."""
    return rank * lora_params_per_rank_per_layer(modules) * layers


def lora_bytes(rank: int, modules: Mapping[str, tuple[int, int]], layers: int,
               bytes_per_value: float = 2.0) -> float:
    """Adapter bytes (BF16: 2 bytes per parameter)."""
    return lora_params(rank, modules, layers) * bytes_per_value


def lora_reservation_bytes(max_loras: int, max_lora_rank: int,
                           modules: Mapping[str, tuple[int, int]], layers: int,
                           bytes_per_value: float = 2.0) -> float:
    """GPU memory vLLM reserves for adapters on every GPU: max_loras × max_lora_rank slots,
    whatever is loaded (create_lora_weights)."""
    return float(max_loras) * max_lora_rank * lora_params_per_rank_per_layer(modules) * layers \
        * bytes_per_value


def merged_models_bytes(variants: int, base_bytes: float) -> float:
    """Memory for ``variants`` fine-tuned models merged into full copies."""
    return variants * base_bytes


def base_plus_adapters_bytes(variants: int, base_bytes: float, adapter_bytes: float) -> float:
    """Memory for one base model plus one adapter per variant."""
    return base_bytes + variants * adapter_bytes
