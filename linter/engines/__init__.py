"""Engine argument parsers: a Launch's words → a typed Invocation plus parse findings.

One entry point, ``parse_launch``; each engine's walker lives in its own module (vllm.py,
llamacpp.py, rpc.py) and reads the flag catalogs (catalog.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .invocation import Invocation, ModelRef, OptionValue, Setting

if TYPE_CHECKING:
    from ..findings import Finding
    from ..launch import Launch

__all__ = ["Invocation", "ModelRef", "OptionValue", "Setting", "parse_launch"]


def parse_launch(launch: Launch, version: str | None = None) -> tuple[Invocation, list[Finding]]:
    """Parse one launch's arguments against its engine's flag catalog.

    ``version`` overrides the vLLM release the launch pins (``launch.version_pin``); without
    either, vLLM 0.30.0 is assumed.  Findings are MG004–MG009 and MG013–MG016.
    """
    from ..launch import LLAMA_SERVER, RPC_SERVER

    if launch.engine == LLAMA_SERVER:
        from .llamacpp import parse_llama

        return parse_llama(launch)
    if launch.engine == RPC_SERVER:
        from .rpc import parse_rpc

        return parse_rpc(launch)
    from .vllm import parse_vllm

    return parse_vllm(launch, version)
