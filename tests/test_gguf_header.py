"""Our GGUF header reader against files written by the reference writer (gguf-py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mgpu_lint.catalog.gguf_header import GgufError, read_header
from mgpu_lint.cli import main

gguf = pytest.importorskip("gguf")
np = pytest.importorskip("numpy")


def write_tiny(path: Path) -> None:
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("Tiny-Llama-Test")
    w.add_block_count(4)
    w.add_embedding_length(64)
    w.add_head_count(8)
    w.add_head_count_kv(2)
    w.add_context_length(4096)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
    w.add_token_list([f"t{i}" for i in range(100)])
    w.add_tensor("token_embd.weight", np.zeros((100, 64), dtype=np.float32))
    for i in range(4):
        w.add_tensor(f"blk.{i}.attn_q.weight", np.zeros((64, 64), dtype=np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def test_header_shape_and_exact_size(tmp_path: Path) -> None:
    p = tmp_path / "tiny.gguf"
    write_tiny(p)
    h = read_header(str(p))
    assert h.architecture == "llama"
    assert h.arch_value("block_count") == 4
    assert h.arch_value("attention.head_count_kv") == 2
    assert h.file_type == "Q8_0"
    assert h.tensors == 5
    assert h.params == 100 * 64 + 4 * 64 * 64
    assert h.weight_bytes == 100 * 64 * 4 + 4 * 64 * 64 * 2
    assert h.metadata["tokenizer.ggml.tokens"] == 100  # arrays are kept as their length


def test_not_gguf_and_truncated(tmp_path: Path) -> None:
    bad = tmp_path / "x.gguf"
    bad.write_bytes(b"NOPE" + b"\0" * 20)
    with pytest.raises(GgufError):
        read_header(str(bad))
    good = tmp_path / "t.gguf"
    write_tiny(good)
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(good.read_bytes()[:60])
    with pytest.raises(GgufError):
        read_header(str(cut))


def test_launch_reads_a_gguf_beside_the_manifest(tmp_path: Path, capsys) -> None:
    write_tiny(tmp_path / "tiny.gguf")
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\nllama-server -m ./tiny.gguf -ngl 99 --port 8080\n")
    main(["--no-color", "--select", "MG010", str(script)])
    assert "MG010" not in capsys.readouterr().out
    (tmp_path / "other.sh").write_text("#!/bin/sh\nllama-server -m ./missing.gguf -ngl 99\n")
    main(["--no-color", "--select", "MG010", str(tmp_path / "other.sh")])
    assert "MG010" in capsys.readouterr().out
