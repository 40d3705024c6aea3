"""A model's facts from its own files: the Hub edge (hub: config.json, quantization config, safetensors headers,
never weights), local checkpoint folders (folder), the typed result both readers give (files), derivation of a
model by rule (derive, from weightformat, sizes and layouts; configfields reads single config.json fields;
architectures holds the rules of data/architectures.yaml), and names resolved offline (inference). anymodel picks
catalog entry, inferred name or derived checkpoint for `--model`.

May import: catalog, errors, frozen. The only package that talks to the Hugging Face Hub, and hub.py the only
module in it that does (huggingface_hub is imported there only, lazily); folder.py reads local folders, no network.
"""
