"""Strict pydantic models for the four catalog kinds."""

from .common import Source
from .deployment import Arg, Deployment, EnvVar
from .engine import Build, Defect, Engine, Kernel, WeightFormat
from .hardware import Hardware
from .model import Model, Variant

__all__ = [
    "Arg",
    "Build",
    "Defect",
    "Deployment",
    "Engine",
    "EnvVar",
    "Hardware",
    "Kernel",
    "Model",
    "Source",
    "Variant",
    "WeightFormat",
]
