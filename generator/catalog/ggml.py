"""ggml's tensor types: the bits each stores per weight (a block of weights with its scales), read by the GGUF
header reader (checkpoint) and by a GGUF file's size estimate from its quantization name (plan)."""

from __future__ import annotations

import re

# ggml type id -> (name, elements per block, bytes per block): ggml's own table, as gguf-py publishes it
# (GGML_QUANT_SIZES in https://github.com/ggml-org/llama.cpp/blob/master/gguf-py/gguf/constants.py)
GGML_TYPES: dict[int, tuple[str, int, int]] = {
    0: ("F32", 1, 4),
    1: ("F16", 1, 2),
    2: ("Q4_0", 32, 18),
    3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22),
    7: ("Q5_1", 32, 24),
    8: ("Q8_0", 32, 34),
    9: ("Q8_1", 32, 40),
    10: ("Q2_K", 256, 84),
    11: ("Q3_K", 256, 110),
    12: ("Q4_K", 256, 144),
    13: ("Q5_K", 256, 176),
    14: ("Q6_K", 256, 210),
    15: ("Q8_K", 256, 292),
    16: ("IQ2_XXS", 256, 66),
    17: ("IQ2_XS", 256, 74),
    18: ("IQ3_XXS", 256, 98),
    19: ("IQ1_S", 256, 50),
    20: ("IQ4_NL", 32, 18),
    21: ("IQ3_S", 256, 110),
    22: ("IQ2_S", 256, 82),
    23: ("IQ4_XS", 256, 136),
    24: ("I8", 1, 1),
    25: ("I16", 1, 2),
    26: ("I32", 1, 4),
    27: ("I64", 1, 8),
    28: ("F64", 1, 8),
    29: ("IQ1_M", 256, 56),
    30: ("BF16", 1, 2),
    34: ("TQ1_0", 256, 54),
    35: ("TQ2_0", 256, 66),
    39: ("MXFP4", 32, 17),
    40: ("NVFP4", 64, 36),
    41: ("Q1_0", 128, 18),
}


# llama-quantize's file types (QUANT_OPTIONS in tools/quantize/quantize.cpp): bits per weight where the tool
# states them, else its file size for Llama-3-8B (8,030,261,248 parameters; "G" is GiB) turned into bits per
# weight — the whole file, its K-quant mixes of higher types for some tensors and the embedding included.
QUANTIZE_SOURCE = (
    "https://github.com/ggml-org/llama.cpp/blob/03161a4eb9a2ec66ef97789f347c5a28279f06ea/tools/quantize/quantize.cpp"
)
_LLAMA3_8B = 8_030_261_248
_STATED_BPW = {
    "Q1_0": 1.125, "Q2_0": 2.25, "IQ2_XXS": 2.06, "IQ2_XS": 2.31, "IQ2_S": 2.5, "IQ2_M": 2.7, "IQ1_S": 1.56,
    "IQ1_M": 1.75, "TQ1_0": 1.69, "TQ2_0": 2.06, "IQ3_XXS": 3.06, "IQ3_S": 3.44, "IQ3_M": 3.66, "IQ3_XS": 3.3,
    "IQ4_NL": 4.5, "IQ4_XS": 4.25, "F16": 16.0, "BF16": 16.0,
}  # fmt: skip
_LLAMA3_8B_GIB = {
    "Q4_0": 4.34, "Q4_1": 4.78, "Q5_0": 5.21, "Q5_1": 5.65, "Q2_K": 2.96, "Q2_K_S": 2.96, "Q3_K_S": 3.41,
    "Q3_K_M": 3.74, "Q3_K_L": 4.03, "Q4_K_S": 4.37, "Q4_K_M": 4.58, "Q5_K_S": 5.21, "Q5_K_M": 5.33, "Q6_K": 6.14,
    "Q8_0": 7.96,
}  # fmt: skip
FILE_BPW: dict[str, float] = _STATED_BPW | {k: v * 2**30 * 8 / _LLAMA3_8B for k, v in _LLAMA3_8B_GIB.items()}
_ALIASES = {"Q3_K": "Q3_K_M", "Q4_K": "Q4_K_M", "Q5_K": "Q5_K_M"}  # the tool's own aliases

# the quantization a GGUF file name carries (Q4_K_M, UD-Q4_K_XL, IQ2_M, q4_0, BF16)
FILE_TYPE = re.compile(
    r"(?i)(?<![A-Z0-9])(T?I?Q\d_(?:K|0|1|NL|XXS|XS|S|M)(?:_(?:XXS|XS|S|M|L|XL))?|BF16|F16)(?![A-Z0-9])"
)


def file_type_bits(file_name: str) -> tuple[str, float, str] | None:
    """A GGUF file's bits per weight from the quantization its name carries: (the file type, its bits per weight,
    how it was read). A mix llama-quantize does not list (Unsloth's UD-…_XL) is read as the tool's _M or _L mix
    of the same type, and said; None where the name carries no file type the tool knows."""
    found = FILE_TYPE.search(file_name.rsplit("/", 1)[-1])
    if found is None:
        return None
    name = _ALIASES.get(found.group(1).upper(), found.group(1).upper())
    if name in FILE_BPW:
        return name, FILE_BPW[name], f"llama-quantize's {name}"
    for mix in ("_L", "_M"):
        near = re.sub(r"_(?:XL|XXL)$", mix, name)
        if near != name and near in FILE_BPW:
            return name, FILE_BPW[near], f"{name} is not one of llama-quantize's types: read as its {near}"
    return None
