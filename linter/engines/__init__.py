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

__all__ = ["Invocation", "ModelRef", "OptionValue", "Setting", "parse_launch", "release_for"]


def release_for(launch: Launch, target_version: str | None) -> tuple[str | None, str]:
    """The vLLM release a launch is checked against, and where it came from.

    Precedence (README "Configuration"): a release the file pins (an image tag such as
    ``vllm/vllm-openai:v0.8.5``, ``pip install vllm==0.8.5``) beats ``target-version`` (command
    line, then configuration), which beats the default.  A pin that names no release (``latest``,
    ``nightly``, a digest) gives way to ``target-version`` when one is set.
    """
    from ..images import version_key

    pin = launch.version_pin.value if launch.version_pin else None
    if pin is not None and version_key(pin):
        return pin, "pinned in the file"
    if target_version is not None:
        return target_version, "target-version"
    if pin is not None:
        return pin, "pinned in the file"
    return None, "default"


def parse_launch(launch: Launch, version: str | None = None) -> tuple[Invocation, list[Finding]]:
    """Parse one launch's arguments against its engine's flag catalog.

    ``version`` is the target-version: it applies when the launch pins no release (see
    ``release_for``); without either, vLLM 0.30.0 is assumed.  Findings are MG004–MG009 and
    MG013–MG016.
    """
    from ..launch import LLAMA_SERVER, RPC_SERVER

    if launch.engine == LLAMA_SERVER:
        from .llamacpp import parse_llama

        return parse_llama(launch)
    if launch.engine == RPC_SERVER:
        from .rpc import parse_rpc

        return parse_rpc(launch)
    from .vllm import parse_vllm

    return parse_vllm(launch, release_for(launch, version)[0])
