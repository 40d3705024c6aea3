"""The catalog kinds as frozen records (records.py), validated strictly by pydantic where recipes are read."""

from .common import Source
from .deployment import Arg, Deployment, EnvVar
from .engine import Build, Defect, Engine, Kernel, WeightFormat
from .fingerprint import Fingerprint
from .hardware import Hardware
from .model import Model, QuantGroup, Variant
from .survey import Survey

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
    "QuantGroup",
    "Source",
    "Survey",
    "Variant",
    "WeightFormat",
]
