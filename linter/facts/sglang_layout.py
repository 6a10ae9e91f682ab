"""SGLang's parallel layout: which GPUs of its node a launch uses (``Deployment.layout``).

SGLang does not follow vLLM's arithmetic.  One node's scheduler processes are started by
``_launch_subprocesses`` (sglang/srt/entrypoints/engine.py, 0.4.10.post2 and 0.5.5; the
same loop in sglang/srt/managers/data_parallel_controller.py ``launch_tensor_parallel_group``
of 0.5.23):

    nnodes_per_tp_group = max(nnodes // pp, 1);  tp_per_node = tp // nnodes_per_tp_group
    pp_per_node = max(pp // nnodes, 1)
    gpu_id = base_gpu_id + (pp_rank % pp_per_node) × tp_per_node + (tp_rank % tp_per_node) × gpu_id_step

and each scheduler calls ``set_device(gpu_id)`` first (sglang/srt/model_executor/
model_runner.py ``init_torch_distributed``), which raises when the index is past the GPUs the
process sees.  Data parallelism is where the releases part: without ``--enable-dp-attention``,
dp rank r starts at GPU r × tp × pp × gpu_id_step in 0.5.5 (data_parallel_controller.py
``launch_dp_schedulers``) but at r × tp × gpu_id_step in 0.4.10.post2; with it the dp ranks
live inside tp (``tp_size % dp_size == 0``, server_args.py ``_handle_data_parallelism``) and
use the same GPUs; 0.5.23 reads the flag as ``--attn-dp-size`` (sglang/srt/arg_groups/), still
inside tp.  So replicas (dp > 1 without dp attention) have a known layout only when the image
pins a release whose placement was read (0.4.10.post2, 0.5.5); dp attention and dp 1 have the
same arithmetic in all three.

Layouts SGLang refuses before it starts a scheduler — tp × pp not divisible by --nnodes
(``check_server_args``: "tp_size must be divisible by number of nodes"), dp across nodes
without dp attention, dp attention with tp not divisible by dp — are not known layouts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..records import dataclass
from ..resolve import Size, parallel_size

if TYPE_CHECKING:
    from ..engines.invocation import Invocation

# the releases whose data-parallel GPU placement was read (see the module docstring)
DP_RELEASES = ("0.4.10.post2", "0.5.5")


@dataclass(frozen=True)
class SGLangLayout:
    tp: Size
    pp: Size
    dp: Size
    nnodes: Size
    base_gpu_id: Size
    gpu_id_step: Size
    dp_attention: bool  # --enable-dp-attention with dp > 1 (dp 1 turns it off)
    known: bool
    pcp: Size = Size(1, False, None)  # SGLang has no prefill context parallelism

    @property
    def dp_local(self) -> Size:
        """Engines (tp × pp groups) on this node: dp without dp attention (one node), else 1."""
        return self.dp if self.dp.value > 1 and not self.dp_attention else Size(1, False, None)

    @property
    def world_size(self) -> int:
        return self.tp.value * self.pp.value

    def describe_world(self) -> str:
        return f"tp {self.tp.value} × pp {self.pp.value}"

    @property
    def nnodes_within_dp(self) -> int:
        return max(1, self.nnodes.value)

    @property
    def _per_node(self) -> tuple[int, int]:
        nnodes_per_tp_group = max(self.nnodes.value // self.pp.value, 1)
        return self.tp.value // nnodes_per_tp_group, max(self.pp.value // self.nnodes.value, 1)

    @property
    def gpus_used(self) -> int:
        """Distinct GPUs this node's schedulers take (gpu_id_step 1)."""
        tp_node, pp_node = self._per_node
        return self.dp_local.value * tp_node * pp_node

    @property
    def gpus_per_node(self) -> int:
        """GPUs the node must show: the highest index a scheduler sets + 1."""
        tp_node, pp_node = self._per_node
        step = self.gpu_id_step.value
        top = (pp_node - 1) * tp_node + (tp_node - 1) * step
        if self.dp_local.value > 1:
            top += (self.dp_local.value - 1) * self.world_size * step
        return self.base_gpu_id.value + top + 1

    @property
    def explicit_sizes(self) -> list[tuple[str, Size]]:
        return [(name, s) for name, s in (("tp", self.tp), ("pp", self.pp), ("dp", self.dp),
                                          ("base GPU", self.base_gpu_id),
                                          ("GPU step", self.gpu_id_step)) if s.given]

    # ---------------------------------------------------------------- what MG101 prints
    def needed_text(self) -> str:
        world = f"tp {self.tp.value}" + (f" × pp {self.pp.value}" if self.pp.value > 1 else "")
        if self.nnodes.value > 1:
            world += f" over {self.nnodes.value} nodes"
        if self.dp_local.value > 1:
            world = f"dp {self.dp_local.value} × {world} (data-parallel copies)"
        elif self.dp_attention:
            world += f" (dp {self.dp.value} attention inside tp)"
        if self.base_gpu_id.value:
            world += f" from GPU {self.base_gpu_id.value}"
        return world

    def formula(self) -> str:
        tp_node, pp_node = self._per_node
        parts = [f"tp per node {tp_node}"]
        if pp_node > 1:
            parts.append(f"pp per node {pp_node}")
        if self.dp_local.value > 1:
            parts.append(f"dp {self.dp_local.value}")
        used = " × ".join(parts)
        text = f"GPUs used on this node = {used} = {self.gpus_used}"
        if self.gpus_per_node != self.gpus_used:
            text += (f"; highest GPU index = base {self.base_gpu_id.value} + placement with "
                     f"step {self.gpu_id_step.value} = {self.gpus_per_node - 1}")
        return text

    def short_of(self, have: int) -> str:
        # with step 1 the indices are contiguous from base_gpu_id: the first one past the
        # visible GPUs is max(have, base)
        which = f"GPU {max(have, self.base_gpu_id.value)}" if self.gpu_id_step.value == 1 \
            else f"a GPU index past {have - 1}"
        return (f"the scheduler for {which} fails at start-up (set_device: invalid device "
                "ordinal, sglang/srt/model_executor/model_runner.py init_torch_distributed)")

    tp_flag = "--tp-size"

    def heads_refusal(self, heads: int, mla: bool) -> str | None:
        """SGLang's attention layers assert total_num_heads % tp_size == 0 while the model is
        built (sglang/srt/models/llama.py LlamaAttention, qwen2.py, qwen3.py; 0.5.5, 0.5.23);
        with dp attention (attention tp = tp / dp) or MLA the layers differ: None."""
        if self.dp_attention or mla:
            return None
        return ("SGLang fails while building the model (its attention layers assert "
                "total_num_heads % tp_size == 0: sglang/srt/models/llama.py, qwen2.py, qwen3.py)")

    def sizes(self) -> dict[str, int]:
        return {"tp": self.tp.value, "pp": self.pp.value, "dp": self.dp.value,
                "dp_local": self.dp_local.value, "pcp": 1}


def layout(inv: Invocation, pinned: str | None) -> SGLangLayout:
    # --tp-size/--pp-size/--dp-size keep argparse's dests tensor_parallel_size,
    # pipeline_parallel_size, data_parallel_size (ServerArgs.add_cli_args, 0.5.5)
    tp, ok1 = parallel_size(inv.tensor_parallel_size)
    pp, ok2 = parallel_size(inv.pipeline_parallel_size)
    dp, ok3 = parallel_size(inv.data_parallel_size)
    nnodes, ok4 = parallel_size(inv.nnodes)
    step, ok5 = parallel_size(inv.setting("gpu_id_step"))
    base, ok6 = parallel_size(inv.setting("base_gpu_id"), default=0, least=0)
    attention = inv.setting("enable_dp_attention")
    ok = all((ok1, ok2, ok3, ok4, ok5, ok6)) and attention.known
    dp_attention = bool(attention.value) and dp.value > 1
    world = tp.value * pp.value
    if world % nnodes.value:
        ok = False  # check_server_args refuses it
    if dp.value > 1:
        if dp_attention:
            # the dp ranks live inside tp in every release (0.5.23 turns the flag into
            # --attn-dp-size, arg_groups/parallel_hook.py _handle_deprecated_dp_attention);
            # _handle_data_parallelism asserts tp_size % dp_size == 0 (0.5.5)
            ok = ok and tp.value % dp.value == 0
        elif pinned not in DP_RELEASES:
            ok = False  # where replicas go was read only in these releases
        elif nnodes.value > 1:
            ok = False  # "multi-node data parallel is not supported unless dp attention!"
        elif pp.value > 1 and pinned != "0.5.5":
            ok = False  # 0.4.10.post2 offsets dp ranks by tp only: they overlap
    return SGLangLayout(tp, pp, dp, nnodes, base, step, dp_attention, ok)
