"""Memory: weights, KV cache, LoRA buffers, llama.cpp devices (MG3xx) (see rules/__init__.py for the table of all rules)."""

from __future__ import annotations

from .registry import Rule

RULES: list[Rule] = []
