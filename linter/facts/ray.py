"""Whether Ray is in play for a vLLM launch and where its GPUs come from (DECISIONS "Ray"):
read by the GPU-count rules (MG101, MG110) and the start-up rules."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..deployment import Deployment


# vllm/v1/executor/ray_utils.py PG_WAIT_TIMEOUT (1800 in every sampled release, 0.10.2-0.33.0)
RAY_PG_WAIT_S = 1800


@lru_cache(maxsize=8)
def _mentions(text: str, *needles: str) -> bool:
    """Whether ``text`` contains one of ``needles``: once per text, not once per launch (a
    script's launches all search the whole script; 20,000 launches searched 24 GB)."""
    return any(n in text for n in needles)


def ray_backed(d: Deployment) -> bool:
    """GPUs come from a Ray cluster, not from the container that runs the command: the Ray
    executor is chosen, the pod belongs to a KubeRay group, or the pod itself starts Ray
    (`ray start`, vLLM's multi-node-serving.sh) before serving."""
    backend = d.inv.distributed_executor_backend
    if d.context.ray_cluster or (backend.known and backend.value == "ray") or (
            d.inv.data_parallel_backend.known and d.inv.data_parallel_backend.value == "ray"):
        return True
    span = d.context.object_span
    text = d.source.text[span.start:span.end] if span is not None else d.source.text
    return _mentions(text, "ray start", "multi-node-serving.sh")


def local_ray(d: Deployment) -> bool:
    """The Ray executor with no Ray cluster around it (no KubeRay object, no `ray start` or
    multi-node-serving.sh, no RAY_ADDRESS): ``ray.init(address=None)`` starts a local Ray on
    this pod's or machine's GPUs (vllm/v1/executor/ray_utils.py initialize_ray_cluster, vLLM
    0.30.0), so the pod's GPUs are all there is (DECISIONS "Ray")."""
    backend = d.inv.distributed_executor_backend
    dpb = d.inv.data_parallel_backend
    chosen = (backend.known and backend.value == "ray") or (dpb.known and dpb.value == "ray")
    if not chosen or d.context.ray_cluster or "RAY_ADDRESS" in d.launch.env:
        return False
    span = d.context.object_span
    text = d.source.text[span.start:span.end] if span is not None else d.source.text
    return not _mentions(text, "ray start", "multi-node-serving.sh", "RAY_ADDRESS")
