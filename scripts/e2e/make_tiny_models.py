"""Make the end-to-end tests' tiny chat model, once per run: a Hugging Face checkpoint folder and its GGUF.

    python make_tiny_models.py OUT_DIR CONVERT_DIR

OUT_DIR/hf/tiny-chatml/    config.json, model.safetensors, tokenizer.json, tokenizer_config.json (ChatML template)
OUT_DIR/gguf/tiny-chatml/  tiny-chatml-F32.gguf, converted with CONVERT_DIR/convert_hf_to_gguf.py (llama.cpp's own)

The model is a Llama whose replies are fixed by its weights, so the engines' parsers meet real, deterministic
output: attention and MLP write nothing back (o_proj, down_proj = 0), so the logits depend only on the last
token, and lm_head maps each token of a script to the next one. The chat template ends the generation prompt
with a newline, or with <|tool_turn|> when tools are offered, and from there the model says
    <think>17 * 23 = 391</think>391<|im_end|>                                            (no tools)
    <tool_call>\n{"name": "get_weather", "arguments": {"city": "Beijing"}}\n</tool_call><|im_end|>   (tools)
The tokenizer is a byte-fallback BPE trained here on the repository's own text (no download); the script's
pieces are added tokens. Needs torch, transformers and tokenizers.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

NAME = "tiny-chatml"
THINK = "17 * 23 = 391"
ANSWER = "391"
CALL = '\n{"name": "get_weather", "arguments": {"city": "Beijing"}}\n'
SPECIAL = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|tool_turn|>"]
PLAIN = ["<think>", "</think>", "<tool_call>", "</tool_call>", THINK, ANSWER, CALL]

CHAT_TEMPLATE = """{%- if tools %}
{{- '<|im_start|>system\\n' }}
{%- if messages[0].role == 'system' %}{{- messages[0].content + '\\n\\n' }}{%- endif %}
{{- '# Tools\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>' }}
{%- for tool in tools %}{{- '\\n' }}{{- tool | tojson }}{%- endfor %}
{{- '\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within \
<tool_call></tool_call> XML tags:\\n<tool_call>\\n{"name": <function-name>, "arguments": <args-json-object>}\\n\
</tool_call><|im_end|>\\n' }}
{%- elif messages[0].role == 'system' %}
{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == 'user' %}
{{- '<|im_start|>user\\n' + message.content + '<|im_end|>\\n' }}
{%- elif message.role == 'assistant' %}
{{- '<|im_start|>assistant\\n' }}
{%- if message.reasoning_content %}{{- '<think>' + message.reasoning_content + '</think>' }}{%- endif %}
{%- if message.content %}{{- message.content }}{%- endif %}
{%- if message.tool_calls %}
{%- for tool_call in message.tool_calls %}
{%- if tool_call.function %}{%- set tool_call = tool_call.function %}{%- endif %}
{{- '<tool_call>\\n{"name": "' + tool_call.name + '", "arguments": ' }}
{%- if tool_call.arguments is string %}{{- tool_call.arguments }}
{%- else %}{{- tool_call.arguments | tojson }}{%- endif %}
{{- '}\\n</tool_call>' }}
{%- endfor %}
{%- endif %}
{{- '<|im_end|>\\n' }}
{%- elif message.role == 'tool' %}
{{- '<|im_start|>user\\n<tool_response>\\n' + message.content + '\\n</tool_response><|im_end|>\\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
{{- '<|im_start|>assistant\\n' }}
{%- if tools %}{{- '<|tool_turn|>' }}{%- endif %}
{%- endif %}"""


def corpus(repo: Path) -> list[str]:
    """Local text without newlines: a newline then has no token of its own and falls back to the byte <0x0A>,
    the same in Hugging Face's tokenizer and in llama.cpp's, so the prompt's last token is known."""
    lines: list[str] = []
    for path in [*sorted((repo / "docs").glob("*.md")), repo / "README.md"]:
        lines += [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    return lines


def tokenizer(repo: Path, out: Path) -> dict[str, int]:
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, trainers

    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Replace(" ", "▁")
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    bytes_ = [f"<0x{i:02X}>" for i in range(256)]
    trainer = trainers.BpeTrainer(vocab_size=700, special_tokens=["<unk>", "<s>", "</s>", *bytes_], show_progress=False)
    tok.train_from_iterator(corpus(repo), trainer)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL])
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in PLAIN])
    tok.save(str(out / "tokenizer.json"))
    vocab = tok.get_vocab()
    decoder = {
        str(vocab[t]): {
            "content": t,
            "lstrip": False,
            "normalized": False,
            "rstrip": False,
            "single_word": False,
            "special": t in SPECIAL or t in ("<unk>", "<s>", "</s>"),
        }
        for t in ["<unk>", "<s>", "</s>", *SPECIAL, *PLAIN]
    }
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "add_prefix_space": False,
        "add_bos_token": False,
        "add_eos_token": False,
        "bos_token": "<s>",
        "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>",
        "unk_token": "<unk>",
        "added_tokens_decoder": decoder,
        "chat_template": CHAT_TEMPLATE,
        "model_max_length": 2048,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return vocab


def model(out: Path, vocab: dict[str, int]) -> None:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    hidden = 128
    config = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=hidden,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=64,
        max_position_embeddings=2048,
        rms_norm_eps=1e-5,
        tie_word_embeddings=False,
        bos_token_id=vocab["<s>"],
        eos_token_id=vocab["<|im_end|>"],
        pad_token_id=vocab["<|endoftext|>"],
        torch_dtype="bfloat16",
    )
    torch.manual_seed(0)
    net = LlamaForCausalLM(config)
    script = [
        ("<0x0A>", "<think>"),
        ("<think>", THINK),
        (THINK, "</think>"),
        ("</think>", ANSWER),
        (ANSWER, "<|im_end|>"),
        ("<|tool_turn|>", "<tool_call>"),
        ("<tool_call>", CALL),
        (CALL, "</tool_call>"),
        ("</tool_call>", "<|im_end|>"),
    ]
    other = hidden - 1  # every token not in the script shares one direction, which ends the reply
    with torch.no_grad():
        for layer in net.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        net.model.norm.weight.fill_(1.0)
        emb = net.model.embed_tokens.weight
        emb.zero_()
        emb[:, other] = 1.0
        head = net.lm_head.weight
        head.zero_()
        for slot, (token, _) in enumerate(script):
            emb[vocab[token]].zero_()
            emb[vocab[token], slot] = 1.0
        for slot, (_, after) in enumerate(script):
            head[vocab[after], slot] = 6.0  # RMSNorm makes the one-hot 11.3 wide: a logit of 68 against 0
        head[vocab["<|im_end|>"], other] = 6.0
    net.to(torch.bfloat16).save_pretrained(str(out), safe_serialization=True)
    generation = {"bos_token_id": vocab["<s>"], "eos_token_id": vocab["<|im_end|>"], "do_sample": False}
    (out / "generation_config.json").write_text(json.dumps(generation), encoding="utf-8")


def main() -> None:
    out, convert = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    repo = Path(__file__).resolve().parents[2]
    hf = out / "hf" / NAME
    gguf = out / "gguf" / NAME
    hf.mkdir(parents=True, exist_ok=True)
    gguf.mkdir(parents=True, exist_ok=True)
    vocab = tokenizer(repo, hf)
    model(hf, vocab)
    target = gguf / f"{NAME}-F32.gguf"
    subprocess.run(
        [sys.executable, str(convert / "convert_hf_to_gguf.py"), str(hf), "--outtype", "f32", "--outfile", str(target)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    print(hf)
    print(target)


if __name__ == "__main__":
    main()
