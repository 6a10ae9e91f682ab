"""Plausibility bounds on numbers that drive a loop or an allocation.

A value outside these ranges is not a deployment anyone runs: the rules that would loop or
allocate per GPU, rank, layer or expert on it stay silent, and the value gets its own finding
(MG006) where it was written.  The bounds are orders of magnitude above every real model and
cluster (the largest catalogued models have < 200 layers, < 400 experts, < 2^21 hidden width;
the largest clusters < 2^17 GPUs), so no real value is refused.
"""

from __future__ import annotations

import math
from typing import Any

MAX_GPUS = 1 << 20  # any GPU count, parallel size or product of them (ranks, world size)
MAX_GPUS_PER_NODE = 1024  # the --gpus-per-node option (the largest nodes have 8 to 72)
MAX_LAYERS = 1 << 16
MAX_EXPERTS = 1 << 16
MAX_WIDTH = 1 << 24  # hidden size, FFN width, head dimension, vocabulary
MAX_HEADS = 1 << 16
MAX_TOKENS = 1 << 40  # context lengths, positions, batch tokens
MAX_SPLIT = 1e30  # a -ts/--tensor-split proportion (float32 sums stay finite below ~3e38)
MAX_PARAMS = 1e16

# What one file may cost.  Past either, reading stops there with an MG001 warning at the place
# (runner.extract_file): the largest real scripts have a few ten thousand words and the largest
# real files (a rendered catalog chart, a docs page of examples) well under a hundred launches,
# and each word costs microseconds and each launch up to a millisecond to read and check, so a
# 10 MiB file of `a a a …` (5 million words) would take over a minute, and one of 13,000
# Deployments 15 s.
# words lexed from one file's shell text (scripts, `sh -c`, a Dockerfile's ENV …) and of its
# Dockerfile exec-form arrays
MAX_SHELL_WORDS = 250_000
MAX_LAUNCHES = 1_000  # launches of one file that are checked
# Nodes of one YAML document that are composed (yamlsrc.compose_documents): each costs about
# 270 bytes and, as a word of a command, 10 us; 9.5 MiB of `command: [a,a,…]` is 5 million nodes
# (50 s, 2.5 GiB before this bound).  The largest real documents (a big chart's values, a
# catalog) have a few ten thousand.
MAX_YAML_NODES = 250_000
# ... and of all of one file's YAML (its documents, its Markdown blocks, a RayService's inner
# config; yamlsrc.compose_documents spends ReadBudget.yaml_nodes as each document is composed):
# the C composer makes about 3 us of each node, so thirteen documents of 240,000 flow items
# each (9.4 MiB) took 13.7 s to compose, and 32 s / 824 MiB as the args of thirteen launches.
# Real files hold a few ten thousand (a 3.5 MB install manifest, CRDs left out: 60,000).
MAX_FILE_YAML_NODES = 500_000
# Code blocks of one Markdown file that are read (sources/markdown.py): each costs a tenth of a
# millisecond or more even when it launches nothing (a YAML block is composed, a shell block
# lexed); 9.5 MiB of 150,000 blocks that name the engine took 36 s.  The longest real docs pages
# have a few hundred.
MAX_MARKDOWN_BLOCKS = 10_000
# Lines of a Dockerfile's instructions that are read (sources/dockerfile.py; comment and blank
# lines between them are not counted): each costs a few microseconds, so 9.5 MiB of 1.6 million
# `RUN a` took 8 s, one RUN of 1.9 million continuation lines 5 s.  The longest real Dockerfiles
# have a few hundred lines.
MAX_DOCKERFILE_LINES = 100_000
# Characters of a path in a Dockerfile's image (its WORKDIR, where a COPY puts a file) that is
# known; a longer one is not.  Linux refuses a path of PATH_MAX (4096) bytes or more, its
# terminating NUL counted, as a system call's argument (ENAMETOOLONG;
# include/uapi/linux/limits.h), so no file of an image has a longer one.
MAX_PATH_CHARS = 4095


# Characters of one variable's value that a reference expands to (shell.py _expand); a longer
# value is unknown there.  `x=$x$x` forty times doubles a two-letter value to 2^41 characters
# (a 300-byte script ran out of 9 GiB of memory).  Linux refuses one argument longer than
# 128 KiB (MAX_ARG_STRLEN, include/uapi/linux/binfmts.h), so no launch's word is longer.
MAX_VALUE_CHARS = 1 << 17
# Characters of variable values one file's scripts keep (each value a launch may see is kept
# with its change, linter/script_env.py); past them a value set is unknown.  `C="$C -tp 3"`
# 25,000 times kept 1.5 GB of ever longer values.  Real scripts keep well under a megabyte.
MAX_ENV_CHARS = 1 << 24
# Characters one file's shell texts expand variables to (linter/shell.py _expand); past them a
# reference is unknown.  Each value is at most MAX_VALUE_CHARS, but 30,000 references to a
# 128 KiB value inside one quoted word (a 1 MB script) made a 4 GB word.
MAX_EXPANDED_CHARS = 1 << 24


# Side files one run keeps parsed (safeio.memo), so that launches naming the same file read it
# once: a 3.2 MiB GGUF header beside 1,000 launches, or a 0.75 MiB --config, was read and parsed
# 1,000 times (over 120 s).  A parsed value takes a few times its file's bytes (a YAML list of
# 130,000 items: 0.75 MiB of text, about 10 MiB of values); real runs name a few dozen side
# files of a few KiB.  The language server's cache kept across lints (safeio.SideCache) has the
# same bounds: it holds the side files of the documents open in one editor.
SIDE_CACHE_ENTRIES = 1_024
SIDE_CACHE_BYTES = 32 << 20  # bytes of the files (a GGUF file: of its header) the values came from
# Bytes of side files one file's launches may have read, each file counted once however many
# launches name it (safeio.memo).  A side file that would pass the total is not read, nor any
# other after the total is spent (MG001 at the first, side_cut_findings; a --config not read
# leaves the launch's settings unknown).  1,000 launches naming 1,000 different 0.9 MiB
# configs are 0.9 GB of YAML, which the loader reads at up to 4 s a MiB (a flow list of
# 300,000 one-letter names, PyYAML's scalars; 36 s for 12 of them): 1 MiB, a config at its
# own limit (vllm_config.CONFIG_MAX_BYTES), is 4 s at worst.  A real file's launches name a
# few configs, config.json files or Dockerfiles of a few KiB, and a GGUF header or a few
# (3-10 MiB each, counted at a sixteenth: the header reader takes 0.05 s a MiB).
SIDE_BYTES_PER_FILE = 1 << 20
# Values (scalars, lists, mappings) a --config may hold to be read (vllm_config): the loader
# takes about 12 us a value (a flow list of 300,000 one-letter names: 3.7 s).  Real configs
# hold a few dozen keys and lists of at most a few hundred items (cudagraph capture sizes).
MAX_CONFIG_VALUES = 10_000
GGUF_BYTES_PER_SIDE_BYTE = 16


def launches_full(count: int) -> bool:
    """True once a file's readers have found more launches than are checked: a reader of many
    parts (YAML documents, compose services, Markdown blocks) stops there, and
    runner.extract_file reports MG001 at the first launch left out."""
    return count > MAX_LAUNCHES
# configs merged under LLMInferenceServices in one run (sources._join_base_refs): a service's
# baseRefs name a few; each merge reads a config's spec again, so 2,000 services naming 300
# configs each in 9.5 MiB made 600,000 merges (15 s)
MAX_BASE_REF_MERGES = 20_000
# .gitignore patterns that apply to one path, its own directory's and its parents' together
# (discover.walk): real files hold tens to a few hundred; a pattern with wildcards at both ends
# (`*x*`) is tried on every path (0.3 µs each), so 100,000 of them over 100 files took 14 s and
# 5,000 over 5,000 files 7.6 s.  Past it, the later patterns (of the deeper files) are not read.
MAX_GITIGNORE_PATTERNS = 1_000

# entries of one table or list of the configuration ([per-file-ignores], [images], [models],
# [gpus], exclude, extend-exclude): each is tried for every file or launch, and real
# configurations hold a few dozen
MAX_CONFIG_ENTRIES = 1_000

# findings of one code that one launch's words get one by one, and ways in from outside (Services,
# published ports) one launch's exposure findings list one by one; the rest are summed up in one
MAX_FINDINGS_PER_CODE = 100
# findings of one code that one file lists one by one (runner.lint, after suppressions), the rest
# summed up in one: 1,000 launches of 220 bad flags each are 203,000 findings even at 100 of a
# code per launch (4 MB of input; SARIF of them 130 MB, 14.5 s / 486 MiB).  Real files have
# a few of a code; a finding that stands for others (a launch's summary) counts as those.
MAX_FINDINGS_PER_FILE_CODE = 1_000


class ReadBudget:
    """The shell words a file may still have lexed (``split_commands`` counts them, and
    sources/dockerfile.py the words of exec-form arrays), the YAML nodes it may still have
    composed (``yamlsrc.compose_documents``), and the place in the file where they
    ran out (None until they do); the bytes of side files its launches may still have read
    (``SIDE_BYTES_PER_FILE``, spent by safeio.memo), the side files already counted, and where
    the first one was refused (offsets, its name)."""

    __slots__ = ("words", "cut", "reported", "what", "side_bytes", "side_seen", "side_cut",
                 "side_reported", "env_chars", "expanded_chars", "yaml_nodes")

    def __init__(self) -> None:
        self.words = MAX_SHELL_WORDS
        self.env_chars = MAX_ENV_CHARS  # of variable values the file's scripts may still keep
        self.expanded_chars = MAX_EXPANDED_CHARS  # its references may still expand to
        self.yaml_nodes = MAX_FILE_YAML_NODES  # its YAML may still compose (below 0: none)
        self.cut: int | None = None
        self.reported = False
        # what the budget counted when it ran out, for the finding
        self.what = "words"
        self.side_bytes = SIDE_BYTES_PER_FILE
        self.side_seen: set[tuple[int, int]] = set()  # (device, inode)
        self.side_cut: tuple[int, int, str] | None = None
        self.side_reported = False


def cut_findings(source: Any) -> list[Any]:
    """The MG001 warning where ``source``'s budget of shell words ran out, once."""
    budget = source.budget
    if budget.cut is None or budget.reported:
        return []
    budget.reported = True
    from .findings import Finding, Severity
    from .source import Span

    return [Finding(
        "MG001", Severity.WARNING,
        f"reading stops here: this file's commands have more than {MAX_SHELL_WORDS:,} "
        f"{budget.what} (no deployment's scripts come close), so the rest of it is not checked",
        source, Span(budget.cut, min(budget.cut + 1, len(source.text))),
        hint="lint the part of the file that launches the engine on its own",
    )]


def side_cut_findings(source: Any) -> list[Any]:
    """The MG001 warning at the first side file ``source``'s launches name that is not read
    because their side files passed SIDE_BYTES_PER_FILE, once."""
    budget = source.budget
    if budget.side_cut is None or budget.side_reported:
        return []
    budget.side_reported = True
    from .findings import Finding, Severity
    from .source import Span

    start, end, name = budget.side_cut
    end = min(end, len(source.text))  # a model's place may come from another file's text
    start = min(start, end)
    return [Finding(
        "MG001", Severity.WARNING,
        f"{name} is not read: the side files this file's launches name would pass "
        f"{SIDE_BYTES_PER_FILE:,} bytes (no deployment's come close), so it and the side files "
        "first named after it are not read, and what they set is unknown",
        source, Span(start, end),
        hint="lint the launches that name many large side files in parts",
    )]


def plausible_int(value: Any, upper: int, lower: int = 0) -> bool:
    """An int (not bool) in [lower, upper]."""
    return isinstance(value, int) and not isinstance(value, bool) and lower <= value <= upper


def plausible_float(value: Any, upper: float, lower: float = 0.0) -> bool:
    """A finite number in [lower, upper]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        v = float(value)
    except OverflowError:
        return False
    return math.isfinite(v) and lower <= v <= upper


def shape_problem(shape: Any) -> str | None:
    """Why a model shape (knowledge.ModelShape, from a config.json or a GGUF header) is not
    plausible, else None."""
    checks = (
        ("layers", MAX_LAYERS, 1), ("hidden", MAX_WIDTH, 1), ("heads", MAX_HEADS, 1),
        ("kv_heads", MAX_HEADS, 1), ("head_dim", MAX_WIDTH, 1), ("experts", MAX_EXPERTS, 0),
        ("experts_per_token", MAX_EXPERTS, 0), ("shared_experts", MAX_EXPERTS, 0),
        ("sliding_layers", MAX_LAYERS, 0),
    )
    for name, upper, lower in checks:
        if not plausible_int(getattr(shape, name), upper, lower):
            return f"{name} {getattr(shape, name)} outside {lower}..{upper}"
    optional = (("intermediate", MAX_WIDTH), ("vocab", MAX_WIDTH), ("max_positions", MAX_TOKENS),
                ("moe_layers", MAX_LAYERS), ("kv_lora_rank", MAX_WIDTH),
                ("qk_rope_head_dim", MAX_WIDTH), ("sliding_window", MAX_TOKENS))
    for name, upper in optional:
        v = getattr(shape, name, None)
        if v is not None and not plausible_int(v, upper):
            return f"{name} {v} outside 0..{upper}"
    if shape.experts_per_token > max(shape.experts, 0) and shape.experts:
        return f"experts_per_token {shape.experts_per_token} > experts {shape.experts}"
    for name in ("params", "active_params", "vision_params"):
        v = getattr(shape, name, None)
        if v is not None and not plausible_float(v, MAX_PARAMS):
            return f"{name} {v} outside 0..{MAX_PARAMS:g}"
    if not plausible_float(shape.weight_bits, 64.0):
        return f"weight_bits {shape.weight_bits} outside 0..64"
    return None


# A configured GPU's numbers: the largest cards hold under 300 GB at under 10 TB/s, links carry
# under 2 TB/s, and dense BF16 is under 10,000 TFLOP/s; a thousand times more is still accepted.
MAX_GPU_MEMORY_GB = 1e6
MAX_GPU_RATE = 1e7  # TB/s, TFLOP/s, GB/s of a link


def gpu_problem(gpu: Any) -> str | None:
    """Why a GPU entry (knowledge.GpuSpec, from the configuration) is not plausible, else None:
    every memory, bandwidth and compute figure is a finite number in range."""
    checks = (("memory_gb", MAX_GPU_MEMORY_GB), ("cuda_memory_gib", MAX_GPU_MEMORY_GB),
              ("bandwidth_tbs", MAX_GPU_RATE), ("bf16_tflops", MAX_GPU_RATE),
              ("nvlink_gbs_per_direction", MAX_GPU_RATE),
              ("bridge_gbs_per_direction", MAX_GPU_RATE),
              ("pcie_gbs_per_direction", MAX_GPU_RATE))
    for name, upper in checks:
        v = getattr(gpu, name, None)
        if v is not None and not plausible_float(v, upper):
            return f"{name} {v} outside 0..{upper:g}"
    return None


HUGE_INT = 1 << 62  # what a count that overflowed to infinity is reported as


def ceil_int(x: float) -> int:
    """``math.ceil`` that does not raise on infinities (→ ±HUGE_INT) or NaN (→ 0)."""
    if math.isnan(x):
        return 0
    if math.isinf(x):
        return HUGE_INT if x > 0 else -HUGE_INT
    return math.ceil(x)


def floor_int(x: float) -> int:
    """``math.floor`` that does not raise on infinities (→ ±HUGE_INT) or NaN (→ 0)."""
    if math.isnan(x):
        return 0
    if math.isinf(x):
        return HUGE_INT if x > 0 else -HUGE_INT
    return math.floor(x)
