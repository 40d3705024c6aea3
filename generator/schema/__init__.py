"""Strict pydantic models for the catalog kinds."""

from .common import Source
from .deployment import Arg, Deployment, EnvVar
from .engine import Build, Defect, Engine, Kernel, WeightFormat
from .fingerprint import Fingerprint
from .hardware import Hardware
from .model import Model, Variant

__all__ = [
    "Arg",
    "Build",
    "Defect",
    "Deployment",
    "Engine",
    "EnvVar",
    "Fingerprint",
    "Hardware",
    "Kernel",
    "Model",
    "Source",
    "Variant",
    "WeightFormat",
]
