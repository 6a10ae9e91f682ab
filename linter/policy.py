"""mgpu-lint's own thresholds, in one place: where a rule draws the line between silent, info,
warning and error.  Each is a judgement (DECISIONS.md gives the product's answers), not an
engine fact; engine facts (defaults, limits) come from the engine's catalog per release
(``Invocation.default``) or cite the engine's source beside the code that uses them.
"""

from __future__ import annotations

# Input limits (MG001): files larger than this are not read (configurable: max-file-size).
MAX_FILE_BYTES = 10 * 1024 * 1024

# MG305: --gpu-memory-utilization above this leaves too little of the card outside vLLM's pool.
UTILIZATION_WARN = 0.95

# MG306: LoRA buffers above this share of the KV budget are a warning; below the info share
# (vLLM's default single rank-16 slot) they are not worth a note.
LORA_WARN_SHARE = 0.10
LORA_INFO_SHARE = 0.01

# MG201: tensor parallel over PCIe is a warning when, at decode batch 64, the all-reduce time
# exceeds this share of the weight-read time.
PCIE_WARN_SHARE = 0.25

# MG404 (DECISIONS): an expert-parallel group of this many GPUs or more without EPLB.
EPLB_GROUP = 8

# MG701 (DECISIONS): a "large" /dev/shm is at least 1 GiB (or has no size limit).
SHM_MIN_BYTES = 1 << 30

# Language server: at most this many diagnostics are published for one document (errors first,
# then warnings, then the rest, each in position order), plus one that says how many more there
# are; the command line reports them all.  Building and sending 16,000 diagnostics for one 200 KB
# line took longer than the 1 s the server has to answer (issue 20), and no editor lists that
# many usefully.  Microsoft's sample language server caps the same way (vscode-extension-samples
# lsp-sample: `maxNumberOfProblems`, 100 in its package.json settings and server.ts defaults).
LSP_MAX_DIAGNOSTICS = 1000

# SARIF fingerprints: a source line up to this long is part of each key as it is (normalised), a
# longer one as its SHA-256, so 16,000 findings on one 200 KB line hash 200 KB once, not 16,000
# times; lines of ordinary files keep the fingerprints they had.
FINGERPRINT_LINE_CHARS = 1024

# Objects allocated between young collections of the cyclic garbage collector in the language
# server and the command line (the interpreter's default is 700): a lint of a 200 KB document
# allocates millions, and with the default every tenth young collection walked the older
# generation too, which holds the catalogs and the open documents' findings: about a quarter of
# such a lint's time (in the server), 2.7% of the instructions of a lint of 1,000 manifests.  A
# young collection still runs every GC_YOUNG allocations, so cycles are freed and memory stays
# bounded.
GC_YOUNG = 100_000
