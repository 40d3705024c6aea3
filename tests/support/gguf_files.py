"""Real GGUF files, written with llama.cpp's own writer (the `gguf` package, gguf-py): small models whose
header carries the keys llama.cpp reads, with tensors of the stated ggml types (zeros: the bytes are
real, the values do not matter to a planner)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, GGUFWriter


@dataclass(frozen=True)
class Shape:
    arch: str = "qwen3"
    layers: int = 6
    hidden: int = 512
    heads: int = 8
    kv_heads: int = 2
    head_dim: int = 64
    ffn: int = 1024
    vocab: int = 5000  # more than the reader keeps: only the count is read
    context: int = 32768
    experts: int = 0
    experts_used: int = 0
    sliding_window: int = 0
    # hybrids: KV heads per layer (0: a recurrent layer, whose ssm_* / shortconv tensors replace attention's)
    # and the extra `{arch}.*` keys llama.cpp reads for them (ssm.conv_kernel, shortconv.l_cache, …)
    kv_per_layer: tuple[int, ...] = ()
    arch_keys: tuple[tuple[str, int], ...] = ()


def _tensor(writer: GGUFWriter, name: str, rows: int, cols: int, kind: GGMLQuantizationType, depth: int = 0) -> None:
    """A rows × cols matrix (depth of them for experts) stored as `kind`."""
    if kind in (GGMLQuantizationType.F32, GGMLQuantizationType.F16):
        dtype = np.float32 if kind == GGMLQuantizationType.F32 else np.float16
        writer.add_tensor(name, np.zeros((depth, rows, cols) if depth else (rows, cols), dtype=dtype))
        return
    block, size = GGML_QUANT_SIZES[kind]
    row_bytes = cols // block * size
    data = np.zeros((depth, rows, row_bytes) if depth else (rows, row_bytes), dtype=np.uint8)
    writer.add_tensor(name, data, raw_dtype=kind)


def write_gguf(
    path: Path,
    shape: Shape = Shape(),
    kind: GGMLQuantizationType = GGMLQuantizationType.Q4_K,
    split_max_tensors: int = 0,
) -> list[Path]:
    """Write the model to `path` (split into parts of at most `split_max_tensors` tensors when given);
    return the files written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    s = shape
    w = GGUFWriter(str(path), s.arch, split_max_tensors=split_max_tensors)
    w.add_name("Tiny Test Model")
    w.add_block_count(s.layers)
    w.add_embedding_length(s.hidden)
    w.add_context_length(s.context)
    w.add_head_count(s.heads)
    w.add_head_count_kv(list(s.kv_per_layer) if s.kv_per_layer else s.kv_heads)
    for key, value in s.arch_keys:
        w.add_uint32(f"{s.arch}.{key}", value)
    w.add_key_length(s.head_dim)
    w.add_value_length(s.head_dim)
    w.add_feed_forward_length(s.ffn)
    if s.sliding_window:
        w.add_sliding_window(s.sliding_window)
    if s.experts:
        w.add_expert_count(s.experts)
        w.add_expert_used_count(s.experts_used)
        w.add_expert_feed_forward_length(s.ffn)
    w.add_token_list([f"t{i}" for i in range(s.vocab)])
    f32 = GGMLQuantizationType.F32
    _tensor(w, "token_embd.weight", s.vocab, s.hidden, GGMLQuantizationType.Q8_0)
    for i in range(s.layers):
        q, kv = s.heads * s.head_dim, s.kv_heads * s.head_dim
        if s.kv_per_layer and s.kv_per_layer[i] == 0:
            _tensor(w, f"blk.{i}.ssm_in.weight", 2 * s.hidden, s.hidden, kind)
            _tensor(w, f"blk.{i}.ssm_out.weight", s.hidden, 2 * s.hidden, kind)
        else:
            _tensor(w, f"blk.{i}.attn_q.weight", q, s.hidden, kind)
            _tensor(w, f"blk.{i}.attn_k.weight", kv, s.hidden, kind)
            _tensor(w, f"blk.{i}.attn_v.weight", kv, s.hidden, kind)
            _tensor(w, f"blk.{i}.attn_output.weight", s.hidden, q, kind)
        w.add_tensor(f"blk.{i}.attn_norm.weight", np.zeros(s.hidden, dtype=np.float32))
        if s.experts:
            _tensor(w, f"blk.{i}.ffn_gate_inp.weight", s.experts, s.hidden, f32)
            for part in ("gate", "up"):
                _tensor(w, f"blk.{i}.ffn_{part}_exps.weight", s.ffn, s.hidden, kind, s.experts)
            _tensor(w, f"blk.{i}.ffn_down_exps.weight", s.hidden, s.ffn, kind, s.experts)
        else:
            _tensor(w, f"blk.{i}.ffn_gate.weight", s.ffn, s.hidden, kind)
            _tensor(w, f"blk.{i}.ffn_up.weight", s.ffn, s.hidden, kind)
            _tensor(w, f"blk.{i}.ffn_down.weight", s.hidden, s.ffn, kind)
    w.add_tensor("output_norm.weight", np.zeros(s.hidden, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    if not split_max_tensors:
        return [path]
    return sorted(path.parent.glob(path.name[: -len(".gguf")] + "-*-of-*.gguf"))
