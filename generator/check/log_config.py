"""The configuration an engine log prints about its own run, read as the flags it stands for.

Engines echo their configuration at start-up: vLLM its `non-default args: {...}` (older releases `args:
Namespace(...)`, wrappers `AsyncEngineArgs(...)`) and `Initializing a V1 LLM engine (v…) with config: k=v, …`,
SGLang its `server_args=ServerArgs(...)`, llama.cpp the KV-cache types, tensor overrides, offloaded layers and slots.
A defect that gives silent wrong output prints no error line, but the configuration it needs (KV dtype,
tensor-parallel size, speculative method, eager mode …) is there; config_defects.py matches it.

The text is untrusted: each printed configuration is read by one linear scan of at most MAX_CONFIG_CHARS characters
(quotes and brackets tracked by a counter, no regex over the body, no recursion), at most MAX_PAIRS pairs are kept,
values are cut to MAX_VALUE characters, and only keys the engine's own flag vocabulary knows become flags.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from ..frozen import frozen

MAX_CONFIG_CHARS = 32_768  # one printed configuration: SGLang's ServerArgs runs to about 10 KB
MAX_PAIRS = 512
MAX_VALUE = 512
MAX_SOURCES = 4  # configurations read per log: the first of each kind (a log repeats them per worker)

# (what the log calls it, the text before the body, the bracket that opens it: None for "to the end of the line")
_MARKERS: tuple[tuple[str, str, str | None], ...] = (
    ("vLLM's non-default args", "non-default args: {", "{"),
    ("vLLM's engine config", "with config: ", None),
    ("SGLang's server_args", "server_args=ServerArgs(", "("),
    ("the engine args", "EngineArgs(", "("),
    ("the parsed args", "args: Namespace(", "("),
)
_CLOSE = {"{": "}", "(": ")", "[": "]"}
_OPEN = frozenset(_CLOSE)
_SHUT = frozenset(_CLOSE.values())
# keys whose printed name is not the flag's (vLLM's engine line prints the resolved context as max_seq_len)
_RENAMED = {"max_seq_len": "max_model_len", "model_path": "model", "model_tag": "model"}
# keys read apart from the flags: the model (log_facts reads it), the dtype (what an `auto` KV cache stands for)
_NOT_FLAGS = frozenset({"model", "dtype", "tokenizer", "served_model_name", "host", "port"})
_EMPTY = frozenset({"None", "none", "null", "False", "false", "''", '""', "[]", "{}"})

# llama.cpp: the KV-cache line, tensor overrides onto the CPU, offloaded layers, server slots
_LLAMA_KV = re.compile(r"\bK \((\w{1,16})\): +[\d.]+ MiB, V \((\w{1,16})\): +[\d.]+ MiB")
_LLAMA_OVERRIDE = re.compile(r"buffer type overrid\w{0,3} to CPU")
_LLAMA_LAYERS = re.compile(r"offloaded (\d{1,5})/(\d{1,5}) layers to GPU")
_LLAMA_SLOTS = re.compile(r"n_slots = (\d{1,4})\b")
_VLLM_CONTEXT = re.compile(r"Using max model len (\d{1,9})\b")


@frozen
class LogConfig:
    """What the log's printed configuration says, as (key, value) pairs in the engine's own names."""

    pairs: tuple[tuple[str, str], ...]  # first value wins: the run states it once, workers repeat it
    sources: tuple[str, ...]  # which printed configurations were read
    dtype: str | None  # the model dtype the log prints (what vLLM's and SGLang's `auto` KV cache stands for)

    def value(self, key: str) -> str | None:
        return dict(self.pairs).get(key)


def _body(text: str, start: int, opener: str | None) -> str:
    """The printed configuration from `start`: to its closing bracket (nesting counted, quotes skipped), or to the end
    of the line; never more than MAX_CONFIG_CHARS."""
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    end = min(end, start + MAX_CONFIG_CHARS)
    if opener is None:
        return text[start:end]
    depth = 1
    for index, char in _unquoted(text, start, end):
        if char in _OPEN:
            depth += 1
        elif char in _SHUT:
            depth -= 1
            if depth == 0:
                return text[start:index]
    return text[start:end]  # cut (a log line wrapped, or longer than the cap): what was printed so far


def _unquoted(text: str, start: int, end: int) -> Iterator[tuple[int, str]]:
    """Each character of text[start:end] outside a quoted string, with its index (a backslash escapes inside quotes)."""
    quote, index = "", start
    while index < end:
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        else:
            yield index, char
        index += 1


def _items(body: str) -> Iterator[str]:
    """The top-level comma-separated items of a printed dict or call, quotes and brackets respected."""
    depth, begin = 0, 0
    for index, char in _unquoted(body, 0, len(body)):
        if char in _OPEN:
            depth += 1
        elif char in _SHUT:
            depth = max(0, depth - 1)
        elif char == "," and depth == 0:
            yield body[begin:index]
            begin = index + 1
    yield body[begin:]


def pairs_of(body: str) -> list[tuple[str, str]]:
    """`key=value` or `'key': value` items as (key, value text), quotes taken off a quoted scalar."""
    out: list[tuple[str, str]] = []
    for item in _items(body):
        if len(out) >= MAX_PAIRS:
            break
        m = re.match(r"\s*['\"]?([A-Za-z_]\w{0,63})['\"]?\s*(?:=|:)\s*", item)
        if m is None:
            continue
        value = item[m.end() :].strip()[:MAX_VALUE]
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out.append((_RENAMED.get(m.group(1), m.group(1)), value))
    return out


def _llama_pairs(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    kv = _LLAMA_KV.search(text)
    if kv:
        out += [("cache_type_k", kv.group(1)), ("cache_type_v", kv.group(2))]
    if _LLAMA_OVERRIDE.search(text):
        out.append(("override_tensor", "tensors=CPU"))  # what the log shows: some tensors kept in host RAM
    layers = _LLAMA_LAYERS.search(text)
    if layers and int(layers.group(1)) < int(layers.group(2)):
        out.append(("gpu_layers", layers.group(1)))
    slots = _LLAMA_SLOTS.search(text)
    if slots:
        out.append(("parallel", slots.group(1)))
    return out


def read_config(text: str, engine: str | None) -> LogConfig:
    """The configuration the log prints about its own run (empty when it prints none)."""
    pairs: dict[str, str] = {}
    sources: list[str] = []
    for name, marker, opener in _MARKERS:
        at = text.find(marker)
        if at < 0 or len(sources) >= MAX_SOURCES:
            continue
        found = pairs_of(_body(text, at + len(marker), opener))
        if found:
            sources.append(name)
            for key, value in found:
                pairs.setdefault(key, value)
    if engine == "llama.cpp":
        found = _llama_pairs(text)
        if found:
            sources.append("llama.cpp's KV-cache, offload and slot lines")
            for key, value in found:
                pairs.setdefault(key, value)
    if engine == "vllm" and "max_model_len" not in pairs:
        m = _VLLM_CONTEXT.search(text)
        if m:
            pairs["max_model_len"] = m.group(1)
    dtype = pairs.get("dtype")
    return LogConfig(tuple(pairs.items()), tuple(sources), _dtype_name(dtype))


def _dtype_name(value: str | None) -> str | None:
    name = (value or "").removeprefix("torch.").strip("'\"").lower()
    return {"bfloat16": "bfloat16", "bf16": "bfloat16", "float16": "float16", "half": "float16", "fp16": "float16"}.get(
        name
    )


def _speculative(value: str) -> str | None:
    """vLLM's printed speculative config (a dict, or `SpeculativeConfig(method=…, num_spec_tokens=…)`) as the JSON
    its --speculative-config flag takes; None when it names no method."""
    opener = value.find("{") if value.startswith("{") else value.find("(")
    if opener < 0:
        return None
    inner = dict(pairs_of(_body(value, opener + 1, value[opener])))
    method = inner.get("method")
    if not method or method in _EMPTY:
        return None
    config: dict[str, object] = {"method": method}
    tokens = inner.get("num_speculative_tokens") or inner.get("num_spec_tokens")
    if tokens and tokens.isdigit() and len(tokens) <= 4:
        config["num_speculative_tokens"] = int(tokens)
    return json.dumps(config)


def as_argv(config: LogConfig, known: frozenset[str], switches: frozenset[str]) -> list[str]:
    """The printed configuration as the engine's command-line arguments: each key the flag vocabulary knows (`known`,
    `switches` the ones without a value), with a scalar value; a default-looking empty value is left out."""
    argv: list[str] = []
    for key, value in config.pairs:
        if key in _NOT_FLAGS or value in _EMPTY:
            continue
        flag = "--" + key.replace("_", "-")
        if key == "speculative_config":
            spec = _speculative(value)
            if spec is not None and flag in known:
                argv += [flag, spec]
            continue
        if flag not in known or (value[:1] in "[{(" and value):
            continue
        if flag in switches:
            if value in ("True", "true"):
                argv.append(flag)
            continue
        if value in ("True", "true"):
            continue  # a switch the vocabulary types otherwise: not read
        if re.fullmatch(r"[\w.:+/=*|()\\-]{1,128}", value):
            argv += [flag, value]
    return argv


def words(config: LogConfig) -> str:
    """The configuration as the log printed it, in a few words (the knobs defects are scoped by)."""
    shown = (
        "kv_cache_dtype",
        "cache_type_k",
        "cache_type_v",
        "dtype",
        "quantization",
        "tensor_parallel_size",
        "tp_size",
        "pipeline_parallel_size",
        "pp_size",
        "data_parallel_size",
        "dp_size",
        "enable_expert_parallel",
        "decode_context_parallel_size",
        "enforce_eager",
        "disable_cuda_graph",
        "speculative_config",
        "speculative_algorithm",
        "speculative_num_steps",
        "max_model_len",
        "context_length",
        "max_num_seqs",
        "max_running_requests",
        "cpu_offload_gb",
        "override_tensor",
        "gpu_layers",
        "parallel",
    )
    values = dict(config.pairs)
    if "speculative_config" in values:
        values["speculative_config"] = _speculative(values["speculative_config"]) or "None"
    ones = {"pipeline_parallel_size", "pp_size", "data_parallel_size", "dp_size", "decode_context_parallel_size"}
    parts = [
        f"{key}={values[key]}"
        for key in shown
        if key in values and values[key] not in _EMPTY and not (key in ones and values[key] == "1")
    ]
    return ", ".join(parts)
