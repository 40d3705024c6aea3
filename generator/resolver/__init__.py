"""The pure resolver: request in, ranked plans and reasoned rejections out."""

from .resolve import resolve
from .types import GATES, Candidate, Plan, Request, Resolution

__all__ = ["GATES", "Candidate", "Plan", "Request", "Resolution", "resolve"]
