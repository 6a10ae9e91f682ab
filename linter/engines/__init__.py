"""Engine adapters: a Launch's words → a typed Invocation plus parse findings, and what the
rest of the linter may ask of each engine (``adapter.py``).

``ENGINES`` maps ``Launch.engine`` to its adapter; each engine's walker lives in its own module
(vllm.py and its demo-server variant vllm_demo.py, llamacpp.py, rpc.py, sglang.py,
sglang_router.py) and reads the flag catalogs (catalog.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import llamacpp, rpc, sglang, sglang_router, vllm, vllm_demo
from .adapter import Engine
from .invocation import Invocation, ModelRef, OptionValue, Setting

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..findings import Finding
    from ..launch import Launch

__all__ = ["ENGINES", "Engine", "Invocation", "ModelRef", "OptionValue", "Setting",
           "parse_launch", "release_for"]

ENGINES: dict[str, Engine] = {e.name: e for e in (vllm.ENGINE, vllm_demo.ENGINE, llamacpp.ENGINE,
                                                  rpc.ENGINE, sglang.ENGINE,
                                                  sglang_router.ENGINE)}


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


def parse_launch(launch: Launch, version: str | None = None,
                 needed: Mapping[str, tuple[str, ...]] | None = None
                 ) -> tuple[Invocation, list[Finding]]:
    """Parse one launch's arguments against its engine's flag catalog.

    ``version`` is the target-version: it applies when the launch pins no release (see
    ``release_for``); without either, vLLM 0.30.0 is assumed.  ``needed`` maps each setting to
    the rules that read it (MG009 names the rules an unresolved value skips); by default the
    rule table's declarations.  Findings are MG004–MG009 and MG013–MG016.
    """
    engine = ENGINES[launch.engine]
    if needed is None:
        # the one place the engines look at the rules: which settings they declare they read
        from ..rules import settings_read

        needed = settings_read(engine)
    return engine.parse(launch, release_for(launch, version)[0], needed)
