"""All of mgpu-lint's arithmetic: small pure functions, one per quantity, each named after what it
computes and tested against golden numbers (tests/test_sizing.py). Rules and `plan` call these;
nothing else computes sizes.

Modules: memory (weights, KV cache, GPUs needed), timing (read and compute times), parallel
(world size, MoE grouping, pipeline share, experts), interconnect (all-reduce traffic and time),
layout (GPUs needed with a 40% KV reserve, TP/PP/DP choice), llamacpp (layer split), lora,
operations (cold start), display (Java-style half-up rounding).
"""
