"""The lines engines print at start-up, read as text (no catalog): which engine and version, the model, the
GPU and its compute capability, the parallel layout, the kernels chosen, the KV-cache budget, the command.

Each reader is a list of patterns tried in order; the first that matches wins. The patterns are the engines'
own wordings (vLLM, SGLang, llama.cpp and its ik_llama.cpp fork, KTransformers); log_facts.py resolves what
they find against the catalog.
"""

from __future__ import annotations

import re
from itertools import islice

from ..bounds import MAX_GPUS
from ..frozen import frozen

FIRST = 50  # the first few hits of a reader are what the run said; a log repeats them

# (engine id in the catalog, the fork or front end the log shows, its sign); the first sign found wins,
# so a fork is tried before the engine it comes from.
ENGINE_SIGNS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("ktransformers", "KTransformers", re.compile(r"ktransformers|--kt-(?:weight-path|cpuinfer|method)|kt_kernel")),
    ("llama.cpp", "ik_llama.cpp", re.compile(r"ik_llama|fused_up_gate|fused_moe_up_gate|\bser\s+= -?\d|mla_attn\s+=")),
    (
        "vllm",
        "vLLM",
        re.compile(
            r"vllm|EngineCore|APIServer pid|llm_engine\.py|RayWorkerWrapper|worker_base\.py|multiproc_executor|"
            r"gpu_model_runner|kv_cache_utils\.py|AttentionBackendEnum|PyNcclCommunicator|Available KV cache memory|"
            r"\] non-default args: \{",
            re.IGNORECASE,
        ),
    ),
    ("sglang", "SGLang", re.compile(r"sglang|launch_server|server_args=ServerArgs\(", re.IGNORECASE)),
    (
        "llama.cpp",
        "llama.cpp",
        re.compile(
            r"llama_model_load|llama-server|ggml_cuda_init|llama_model_loader|llm_load_|print_info: |"
            r"ggml_|ggml-cuda|GGML_"
        ),
    ),
)
# a log from one of these front ends also shows the failures of the engine it runs on
RUNS_ON = {"ktransformers": ("ktransformers", "sglang")}
FLAVORS = {"vllm": "vLLM", "sglang": "SGLang", "llama.cpp": "llama.cpp", "ktransformers": "KTransformers"}

VERSIONS: dict[str, tuple[re.Pattern[str], ...]] = {
    "vllm": (
        re.compile(r"LLM engine \(v(\d+\.\d+\.\d+[\w.+-]*)\)"),
        re.compile(r"vLLM (?:API server )?[Vv]ersion\s*:?\s*v?(\d+\.\d+\.\d+[\w.+-]*)"),
        re.compile(r"vllm/vllm-openai:v(\d+\.\d+\.\d+)"),
        re.compile(r"█ +version (\d+\.\d+\.\d+[\w.+-]*)"),  # the start-up banner of newer releases
        re.compile(r"\bvllm(?:==|:\s*[Vv]?| v)(\d+\.\d+\.\d+)", re.IGNORECASE),
    ),
    "sglang": (
        re.compile(r"lmsysorg/sglang:v(\d+\.\d+\.\d+)"),
        re.compile(r"\bsglang(?:==|:\s*v?| version:?\s*v?| v)(\d+\.\d+\.\d+[\w.+-]*)", re.IGNORECASE),
    ),
    "llama.cpp": (
        re.compile(r"build: (\d+ \([0-9a-f]{7,}\))"),
        re.compile(r"version: (\d+ \([0-9a-f]{7,}\))"),
        re.compile(r"\bbuild (\d+ \([0-9a-f]{7,}\)) with"),  # common_params_print_info in newer builds
    ),
    "ktransformers": (re.compile(r"\bktransformers(?:==| v|:\s*v?| version:?\s*v?)(\d+\.\d+\.\d+[\w.+-]*)", re.I),),
}
MODEL_FIELDS = (
    re.compile(r"\bmodel='([^']+)'"),
    re.compile(r"\bmodel_path='([^']+)'"),
    re.compile(r"--model(?:-path|_path)?[ =]+['\"]?([^\s'\"\\]+)"),
    re.compile(r"\b(?:vllm|sglang) serve\s+([^\s\\-][^\s\\]*)"),
    re.compile(r"Starting to load model ([^\s.]+(?:\.[^\s.]+)*?)\.{0,3}$", re.MULTILINE),
    re.compile(r"loading model '([^']+)'"),
    re.compile(r"\bmodel=([^\s,']+)"),
    re.compile(r"(?:^|\s)-m\s+(\S+\.gguf)\b", re.MULTILINE),
    re.compile(r"\"--model(?:-path)?\",\s*\"([^\"]+)\""),
    re.compile(r"(?:with model|failed to load model,) '([^']+)'"),
)
_ARCHITECTURE = (
    re.compile(r"Resolved architecture: (\w+)"),
    re.compile(r"<class 'vllm\.model_executor\.models\.\w+\.(\w+)'>"),
    re.compile(r"\barchitectures?[=:]\s*\[?'?(\w+(?:ForCausalLM|ForConditionalGeneration|Model))"),
    re.compile(r"(?:print_info|llm_load_print_meta): arch\s+= (\S+)"),
    re.compile(r"unknown model architecture: '([^']+)'"),
    re.compile(r"GGUF model with architecture (\S+?) is not supported"),
)
_SERVED = (
    re.compile(r"served_model_name=\[?'?([^',)\]\s]+)"),
    re.compile(r"--served-model-name[ =]+['\"]?([^\s'\"\\]+)"),
    re.compile(r"\"--served-model-name\",\s*\"([^\"]+)\""),
)
# the GPU's name as each engine prints it; the run's own GPU, never one named in a requirement
GPU_FIELDS = (
    re.compile(r"Device \d+: ((?:NVIDIA |Tesla |Quadro )?[^,\n]+), compute capability"),
    re.compile(r"GPU [\d,\-]+: ((?:NVIDIA|Tesla|Quadro) [^\n(]+)"),
    re.compile(r"GPU:\s*(?:\d+\s*[x×]\s*)?(NVIDIA [^\n(,]+)"),
    re.compile(r"Your ((?:NVIDIA |Tesla |Quadro )?[\w -]+?) GPU has compute capability"),
    re.compile(r"Device name: ?((?:NVIDIA|Tesla) [^\n,]+)"),
    re.compile(r"Found GPU\d+ ((?:NVIDIA|Tesla) .+?) which is of cuda capability"),
)
GENERIC_GPU = re.compile(
    r"((?:NVIDIA|Tesla) [A-Z][\w-]*(?: [\w-]+){0,3}|\b(?:GeForce )?RTX (?:PRO )?\d{4}(?: Ti| D)?\b|\bRTX A\d{4}\b)"
)
# lines that name a GPU or capability the run needs, not the one it has
REQUIREMENT = re.compile(
    r"only supported|supported on|requires?\b|required|[Mm]inimum|[Mm]in capability|at least|need(?:s|ed)?\b|"
    r"not supported",
)
# (pattern, how the capability is written: "dotted" 8.6, "packed" 86 / 120, "pair" (12, 0))
_CAPABILITY = (
    (re.compile(r"Current capability: (\d{2,3})"), "packed"),
    (re.compile(r"has compute capability (\d+\.\d+)"), "dotted"),
    (re.compile(r"compute capability:?\s*(\d+\.\d+)", re.IGNORECASE), "dotted"),
    (re.compile(r"Compute Capability: (\d+\.\d+)"), "dotted"),
    (re.compile(r"which is of cuda capability (\d+\.\d+)"), "dotted"),
    (re.compile(r"device capability:?\s*(\d+\.\d+)", re.IGNORECASE), "dotted"),
    (re.compile(r"device capability:?\s*(\d{2,3})(?![.\d])", re.IGNORECASE), "packed"),
    (re.compile(r"(?:device capability|Compute Capability)[:=]?\s*\((\d+), ?(\d+)\)", re.IGNORECASE), "pair"),
)
_SM_TOKEN = re.compile(r"\b[Ss][Mm]_?(\d{2,3})[a-z]?\b")
_TP = re.compile(
    r"tensor_parallel_size=(\d+)|--tensor-parallel-size[ =](\d+)|\btp_size=(\d+)|--tp(?:-size)?[ =](\d+)|"
    r"--tensor_parallel[ =](\d+)|\s-tp[ =](\d+)"
)
_PP = re.compile(r"pipeline_parallel_size=(\d+)|--pipeline-parallel-size[ =](\d+)|\bpp_size=(\d+)|\s-pp[ =](\d+)")
_NODES = re.compile(r"nnodes=(\d+)|--nnodes[ =](\d+)|(\d+) nodes?\b|--num-nodes[ =](\d+)")
_MEM_UTIL = re.compile(r"gpu[_-]memory[_-]utilization[=: ]+['\"]?(\d*\.\d+|\d+)")
# (kind, pattern): the kernels a run chose, as it logs them
_BACKENDS = (
    ("attention", re.compile(r"Using (?:AttentionBackendEnum\.)?([A-Z][A-Z0-9_]{2,}) (?:attention )?backend")),
    (
        "attention",
        re.compile(r"Using (Flash ?Attention|FlashInfer|XFormers|Triton MLA|FlashMLA|Torch SDPA)\b[\w ]*backend"),
    ),
    ("attention", re.compile(r"attention_backend='(\w+)'")),
    ("moe", re.compile(r"\[(?:mxfp4|fused_moe|fp8|modelopt)\.py:\d+\] Using (\w+) backend")),
    ("moe", re.compile(r"Using (\w+) (?:MoE|moe) (?:backend|kernel)")),
    ("moe", re.compile(r"moe_runner_backend='(\w+)'")),
    ("gemm", re.compile(r"(?:Using|Selected) (\w+(?:Kernel|MM\w*)) for (\w+)")),
    ("gemm", re.compile(r"leveraging the (Marlin) kernel")),
)
# the KV-cache budget lines: (name, pattern, unit)
_KV = (
    ("available_gib", re.compile(r"Available KV cache memory: (-?[\d.]+) GiB")),
    ("available_gib", re.compile(r"memory reserved for KV Cache is (-?[\d.]+) ?GiB", re.IGNORECASE)),
    ("tokens", re.compile(r"GPU KV cache size: ([\d,]+) tokens")),
    ("tokens", re.compile(r"KV Cache is allocated\. #tokens: (\d+)")),
    ("tokens", re.compile(r"max_total_num_tokens=(\d+)")),
    ("gpu_blocks", re.compile(r"# GPU blocks: (\d+)")),
    ("concurrency", re.compile(r"Maximum concurrency for [\d,]+ tokens per request: ([\d.]+)x")),
    (
        "context",
        re.compile(
            r"max_seq_len=(\d+)|max_model_len=(\d+)|"
            r"--max-model-len[ =]['\"]?(\d+)|context_length=(\d+)"
        ),
    ),
    ("context", re.compile(r"n_ctx\s+= (\d+)|--ctx-size[ =](\d+)|\s-c (\d+)")),
    ("kv_mib", re.compile(r"KV self size\s*=\s*([\d.]+) MiB")),
)
_COMMAND_START = re.compile(
    r"((?:docker run|podman run|vllm serve|python3? -m (?:vllm\.entrypoints\.openai\.api_server|sglang\.launch_server)"
    r"|sglang serve|(?:\S*/)?llama-server|ktransformers --)\b.*)$"
)

_COMMAND_WORDS = ("run ", "serve", "python", "llama-server", "ktransformers --")


@frozen
class RawFacts:
    engine: str | None
    flavor: str | None  # what the log shows: vLLM, SGLang, llama.cpp, ik_llama.cpp, KTransformers
    version: str | None
    model_texts: tuple[str, ...]
    architecture: str | None
    served_name: str | None
    gpu_texts: tuple[str, ...]
    capability: str | None  # dotted, e.g. "8.6"
    tp: int | None
    pp: int | None
    nodes: int | None
    memory_utilization: float | None
    backends: tuple[tuple[str, str], ...]  # (kind, name) in the order the log chose them
    kv: tuple[tuple[str, float], ...]  # the KV-cache budget as the log states it
    command: str | None
    ignored: tuple[str, ...] = ()  # stated numbers out of bounds, not used


def _first(patterns: tuple[re.Pattern[str], ...], text: str) -> str | None:
    for pattern in patterns:
        m = pattern.search(text)
        if m:
            return next(g for g in m.groups() if g)
    return None


def _int(pattern: re.Pattern[str], text: str, what: str, ignored: list[str]) -> int | None:
    """A count the log states (TP, PP, nodes), bounded as --gpus is: a size no node has is not read, and said."""
    m = pattern.search(text)
    if not m:
        return None
    digits = next(g for g in m.groups() if g)
    if len(digits) <= 6 and 1 <= int(digits) <= MAX_GPUS:
        return int(digits)
    shown = digits if len(digits) <= 20 else f"a {len(digits)}-digit number"
    ignored.append(f"the log's {what} size {shown} is out of range (1 to {MAX_GPUS:,}); not used")
    return None


def _own_lines(text: str) -> str:
    """The lines that may name the run's own GPU: not the ones that state a requirement."""
    return "\n".join(line for line in text.split("\n") if not REQUIREMENT.search(line))


def capability(text: str) -> str | None:
    """The run's compute capability in every wording the engines print, dotted (8.6, 12.0)."""
    for pattern, how in _CAPABILITY:
        m = pattern.search(text)
        if m is None:
            continue
        if how == "dotted":
            return m.group(1)
        if how == "pair":
            return f"{int(m.group(1))}.{int(m.group(2))}"
        packed = m.group(1)
        return f"{packed[:-1]}.{packed[-1]}"
    m = _SM_TOKEN.search(_own_lines(text))
    if m:
        packed = m.group(1)
        return f"{packed[:-1]}.{packed[-1]}"
    return None


def command_line(lines: list[str]) -> str | None:
    """The engine command the log echoes (a shell line, with its backslash continuations)."""
    for number, line in enumerate(lines):
        if not any(word in line for word in _COMMAND_WORDS):
            continue
        m = _COMMAND_START.search(line.strip().lstrip("+$# "))
        if m is None:
            continue
        parts = [m.group(1).rstrip()]
        follow = number + 1
        while parts[-1].endswith("\\") and follow < len(lines):
            parts[-1] = parts[-1][:-1].rstrip()
            parts.append(lines[follow].strip())
            follow += 1
        return " ".join(p for p in parts if p).strip()
    return None


def read_lines(text: str) -> RawFacts:
    ignored: list[str] = []
    found = next(((engine, flavor) for engine, flavor, sign in ENGINE_SIGNS if sign.search(text)), None)
    engine, flavor = found if found else (None, None)
    version = _first(VERSIONS.get(engine or "", ()), text)
    if version is None and engine == "ktransformers":
        version = _first(VERSIONS["sglang"], text)  # KTransformers serves through its SGLang fork
    models = tuple(dict.fromkeys(m.group(1) for p in MODEL_FIELDS for m in islice(p.finditer(text), FIRST)))
    own = _own_lines(text)
    gpus = [m.group(1).strip() for p in GPU_FIELDS for m in islice(p.finditer(text), FIRST)]
    gpus += [m.group(1).strip() for m in islice(GENERIC_GPU.finditer(own), FIRST)]
    util = _MEM_UTIL.search(text)
    backends: list[tuple[int, str, str]] = []
    for kind, pattern in _BACKENDS:
        for m in islice(pattern.finditer(text), FIRST):
            backends.append((m.start(), kind, m.group(1)))
    kv: dict[str, float] = {}
    for name, pattern in _KV:
        if name in kv:
            continue
        stated = pattern.search(text)
        if stated:
            kv[name] = float(next(g for g in stated.groups() if g).replace(",", ""))
    return RawFacts(
        engine=engine,
        flavor=flavor,
        version=version,
        model_texts=models,
        architecture=_first(_ARCHITECTURE, text),
        served_name=_first(_SERVED, text),
        gpu_texts=tuple(dict.fromkeys(gpus)),
        capability=capability(text),
        tp=_int(_TP, text, "tensor-parallel", ignored),
        pp=_int(_PP, text, "pipeline-parallel", ignored),
        nodes=_int(_NODES, text, "node-count", ignored),
        memory_utilization=float(util.group(1)) if util else None,
        backends=tuple(dict.fromkeys((kind, name) for _, kind, name in sorted(backends))),
        kv=tuple(kv.items()),
        command=command_line(text.split("\n")),
        ignored=tuple(ignored),
    )
