# Shape of vLLM's FrontendArgs: the serve options are the dataclass's fields.
from dataclasses import dataclass


@dataclass
class FrontendArgs:
    host: str | None = None
    port: int = 8000
    enable_auto_tool_choice: bool = False
    tool_call_parser: str | None = None
    _private: int = 0
