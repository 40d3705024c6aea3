"""A model's facts from its own files: the Hub edge (config.json, quantization config, safetensors headers,
never weights), local checkpoint folders, derivation of architecture facts by rule (architectures,
data/architectures.yaml), and names resolved offline (inference). anymodel picks catalog entry, inferred
name or derived checkpoint for `--model`.

May import: catalog, errors, frozen. The only package that talks to the Hugging Face Hub (hub.py).
"""
