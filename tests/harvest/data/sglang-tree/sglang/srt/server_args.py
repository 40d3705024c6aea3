# Shape of SGLang's ServerArgs: a dataclass whose defaults add_argument refers to.
import argparse
import dataclasses


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    tp_size: int = 1
    mem_fraction_static: float | None = None

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", "--model", type=str, required=True)
        parser.add_argument("--tp-size", "--tensor-parallel-size", type=int, default=ServerArgs.tp_size)
        parser.add_argument("--mem-fraction-static", type=float, default=ServerArgs.mem_fraction_static)
        parser.add_argument("--tool-call-parser", type=str, choices=["auto"] + _tool_call_parser_choices())
        parser.add_argument("--kv-cache-dtype", type=str, default="auto", choices=["auto", "fp8_e5m2", "fp8_e4m3"])
