"""All of mgpu-lint's arithmetic: small pure functions, one per quantity, each named after what it
computes and tested against the numbers the lesson prints. Rules and `plan` call these; nothing
else computes sizes.

Modules: memory (weights, KV cache, GPUs needed), timing (read and compute times), parallel
(world size, MoE grouping, pipeline share, experts), interconnect (all-reduce traffic and time),
layout (Example 14's choice), llamacpp (layer split), lora, operations (cold start), display
(rounding as the lesson prints).
"""
