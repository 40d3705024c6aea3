# Shape of SGLang's retired options: argparse actions that stop the launch or warn, help text and code that say so.
import argparse

from sglang.srt.arg_groups.argparse_actions import DeprecatedAction, DeprecatedStoreTrueAction


class DeprecatedRaiseAction(argparse.Action):
    def __init__(self, option_strings, dest, nargs=0, **kwargs):
        super().__init__(option_strings, dest, nargs=nargs, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        raise ValueError(self.help)


class ServerArgs:
    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--attention-backend", type=str, choices=["flashinfer", "flashmla", "triton"])
        parser.add_argument("--sampling-backend", type=str, choices=["flashinfer", "pytorch"])
        parser.add_argument("--swa-full-tokens-ratio", type=float, default=0.8)
        parser.add_argument("--cuda-graph-backend", type=str, choices=["full", "disabled"])
        parser.add_argument("--smg-grpc-mode", action="store_true")
        parser.add_argument(
            "--enable-flashinfer-mla",
            action=DeprecatedRaiseAction,
            help="This argument will be deprecated soon! Please use '--attention-backend flashinfer' instead.",
        )
        parser.add_argument(
            "--enable-flashmla",
            action=DeprecatedAction,
            error_message="--enable-flashmla was removed; use --attention-backend flashmla.",
        )
        parser.add_argument(
            "--prefill-round-robin-balance",
            action=DeprecatedAction,
            help="Note: --prefill-round-robin-balance is deprecated now.",
        )
        parser.add_argument(
            "--disable-cuda-graph",
            action=DeprecatedStoreTrueAction,
            new_flag="--cuda-graph-backend=disabled",
            help="Deprecated. Use --cuda-graph-backend=disabled instead.",
        )
        parser.add_argument(
            "--hybrid-kvcache-ratio",
            type=float,
            help="Note: --hybrid-kvcache-ratio is deprecated now. Please use --no-such-ratio instead.",
        )
        parser.add_argument(
            "--disable-flashinfer-sampling",
            action=DeprecatedAction,
            help="This argument will be deprecated soon! Please use '--sampling-backend pytroch' instead.",
        )
        parser.add_argument("--grpc-mode", action="store_true")
        parser.add_argument("--allow-deprecated-formats", action="store_true", help="Load deprecated formats too.")
