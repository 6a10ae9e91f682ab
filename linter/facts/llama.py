"""llama.cpp launch facts several rules read: the devices a launch splits over and whether
``--fit`` chooses the split (llama.cpp master 3f545bec, 2026-08-22; reference/engines/
llama-notes.md §4: src/llama.cpp llama_prepare_model_devices, common/fit.cpp)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..engines.adapter import LLAMA_ARGS
from ..engines.llamacpp import FALSEY
from ..findings import Related
from ..sizing.llamacpp import device_names
from ..records import dataclass

if TYPE_CHECKING:
    from ..deployment import Deployment


@dataclass(frozen=True)
class LlamaDevices:
    """The devices llama.cpp splits over, in its order (RPC first unless `-dev` names them)."""

    names: tuple[str, ...]
    rpc: int  # RPC devices among them (one per --rpc server when -dev is not given)
    complete: bool  # every device is counted: a -dev list, or a stated local GPU count
    certain: bool  # complete and resting on no assumption (no RPC server of unknown size)
    origin: str  # in words, for messages
    related: tuple[Related, ...]


def llama_devices(d: Deployment) -> LlamaDevices | None:
    """llama-server's device list, or None when nothing states it.

    Without `-dev`: one device per `--rpc` server (an RPC server exposes every GPU of its
    machine; one each is assumed) followed by the local GPUs the launch gets.
    """
    if not d.adapter.has(LLAMA_ARGS):
        return None
    dev = d.inv.device
    if dev.given:
        if not dev.known or dev.span is None:
            return None
        names = tuple(str(v) for v in dev.value or ())
        if names == ("none",):
            names = ()
        spelling = dev.winner.spelling if dev.winner is not None else "-dev"
        return LlamaDevices(names, sum(n.startswith("RPC") for n in names), True, True,
                            f"{spelling} {','.join(names) or 'none'}",
                            (Related(d.source, dev.span, "the device list"),))
    rpc = d.inv.rpc
    if rpc.given and not rpc.known:
        return None
    servers = len(rpc.value or ()) if rpc.given else 0
    request = d.gpu.request if d.gpu is not None else None
    local = request.count if request is not None else None
    if request is not None and request.beyond_bounds:
        return None  # one device name per GPU: 10^8 GPUs in one container would not end
    if local is None and servers == 0:
        return None
    related: list[Related] = []
    parts: list[str] = []
    if servers:
        parts.append(f"{servers} RPC server(s), assuming one device each")
        if rpc.span is not None:
            related.append(Related(d.source, rpc.span, "RPC servers (first in the device list)"))
    if local is not None and request is not None:
        parts.append(f"{local} local GPU(s) from {request.origin}")
        if request.span is not None:
            related.append(Related(d.source, request.span, f"{local} GPU(s)"))
    return LlamaDevices(tuple(device_names(servers, local or 0, gpu_backend(d))), servers,
                        local is not None, local is not None and servers == 0,
                        " and ".join(parts), tuple(related))


def gpu_backend(d: Deployment) -> str:
    """The local GPU backend's device prefix: ggml-cuda names devices CUDA<i>, ROCm<i> on HIP."""
    request = d.gpu.request if d.gpu is not None else None
    return "ROCm" if request is not None and request.vendor == "amd" else "CUDA"


def fit_active(d: Deployment) -> bool:
    """llama.cpp's --fit rewrites -ngl/-ts unless the launch sets either or turns it off
    (common/fit.cpp; DECISIONS "Engine facts").  ``-fit`` takes llama.cpp's truthy/falsey
    words (common/arg.cpp is_falsey); its default is on."""
    inv = d.inv
    off = inv.fit.known and str(inv.fit.value).lower() in FALSEY
    return not (off or inv.n_gpu_layers.given or inv.tensor_split.given)
