# Shape of vLLM's vllm/tool_parsers/__init__.py (v0.33.0): a lazy name -> (module, class) table.
from vllm.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager

_TOOL_PARSERS_TO_REGISTER = {
    "deepseek_v3": (  # name
        "deepseekv3_tool_parser",  # filename
        "DeepSeekV3ToolParser",  # class_name
    ),
    "hermes": ("hermes_tool_parser", "Hermes2ProToolParser"),
}


def register_lazy_tool_parsers():
    for name, (file_name, class_name) in _TOOL_PARSERS_TO_REGISTER.items():
        ToolParserManager.register_lazy_module(name, f"vllm.tool_parsers.{file_name}", class_name)
