# Shape of older releases (v0.8.5 vllm/entrypoints/openai/tool_parsers/*): a decorator per parser.
from vllm.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager


@ToolParserManager.register_module(["granite", "granite-20b-fc"])
class GraniteToolParser(ToolParser):
    pass
