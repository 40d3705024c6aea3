# Shape of SGLang's FunctionCallParser: a class-level name -> detector map.
from typing import Dict, Type


class FunctionCallParser:
    ToolCallParserEnum: Dict[str, Type[BaseFormatDetector]] = {
        "deepseekv3": DeepSeekV3Detector,
        "llama3": Llama32Detector,
        "qwen25": Qwen25Detector,
    }
