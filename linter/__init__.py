"""mgpu-lint: static analysis of multi-GPU LLM inference server launches."""

__version__ = "0.1.0"
