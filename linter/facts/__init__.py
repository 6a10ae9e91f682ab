"""Launch facts that more than one rule reads, each computed once per launch and reached
from the ``Deployment`` (``d.vllm_budget``, ``d.llama_devices`` …): the vLLM memory budget and
max model length (``vllm_memory.py``), llama.cpp's devices and ``--fit`` (``llama.py``).
Arithmetic stays in ``linter/sizing/``; the facts join it to settings, model and GPUs."""
