"""The part of an older SGLang launch that resolving ServerArgs never reaches (stdlib + that release only, imported
by sglang_probe.py inside the release's venv).

SGLang 0.5.3 and older (back to 0.4.x) pick the default attention backend, and refuse a non-MLA backend for an MLA
model, in `ModelRunner.model_specific_adjustment` (sglang/srt/model_executor/model_runner.py), which
`ModelRunner.__init__` calls after it has set the attributes the method reads and before it touches a GPU. So the
probe builds the ModelConfig the TP worker builds (`ModelConfig.from_server_args`) and runs the release's own
`ModelRunner.__init__` up to the end of that method, then stops it: every decision recorded is the release's code.
Those releases also name their `--attention-backend` choices only inside `ServerArgs.add_cli_args`, which is asked
for its parser, and ask `nvidia-smi` for the GPU's memory while ServerArgs resolves: a stand-in answers for the
simulated GPU.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import textwrap
from typing import Any


class StepUnavailable(Exception):
    """The probe cannot run the release's model-runner step (not the release's answer for a case)."""


class _Reached(Exception):
    """Raised right after model_specific_adjustment returns: the rest of ModelRunner.__init__ needs a real GPU."""


def _sets_default_backend(function: Any) -> bool:
    """Whether `function`'s own code sets `*.attention_backend` under an `*.attention_backend is None` test."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
            continue
        test = node.test
        asks_none = (
            isinstance(test.left, ast.Attribute)
            and test.left.attr == "attention_backend"
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Is)
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None
        )
        if asks_none and any(
            isinstance(target, ast.Attribute) and target.attr == "attention_backend"
            for inner in node.body
            for sub in ast.walk(inner)
            if isinstance(sub, ast.Assign)
            for target in sub.targets
        ):
            return True
    return False


def chooses_in_model_runner() -> bool:
    """True for a release whose ModelRunner picks the default attention backend (0.5.3 and older); 0.5.4 on pick
    it in ServerArgs, and their model_specific_adjustment sets none."""
    try:
        from sglang.srt.model_executor.model_runner import ModelRunner
    except ModuleNotFoundError as exc:
        if (exc.name or "").startswith("sglang.srt.model_executor"):  # a release without that module
            return False
        # a library the module imports is missing or too new for the release (an unpinned dependency): answering
        # without the step would record no default backend, and transformers' model-type check would go unasked
        raise StepUnavailable(f"the release's ModelRunner does not import here: {exc}") from exc
    method = getattr(ModelRunner, "model_specific_adjustment", None)
    return method is not None and _sets_default_backend(method)


def _runner_arguments(runner: Any, server_args: Any, model_config: Any) -> dict[str, Any]:
    """ModelRunner's constructor arguments for rank 0 of the launch the ServerArgs describe, by parameter name."""
    known = {
        "model_config": model_config,
        "mem_fraction_static": getattr(server_args, "mem_fraction_static", None),
        "gpu_id": 0,
        "tp_rank": 0,
        "tp_size": getattr(server_args, "tp_size", 1),
        "moe_ep_rank": 0,
        "moe_ep_size": getattr(server_args, "ep_size", 1),
        "pp_rank": 0,
        "pp_size": getattr(server_args, "pp_size", 1),
        "nccl_port": 0,  # nothing is opened before the step ends
        "server_args": server_args,
    }
    out: dict[str, Any] = {}
    for name, parameter in inspect.signature(runner.__init__).parameters.items():
        if name == "self" or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        if name in known:
            out[name] = known[name]
        elif parameter.default is parameter.empty:
            raise StepUnavailable(f"ModelRunner.__init__ takes a required {name!r} the probe does not know")
    return out


def model_runner_step(server_args: Any) -> None:
    """Run the release's `ModelRunner.__init__` for these ServerArgs until model_specific_adjustment has returned;
    its decisions land on `server_args`, its refusals propagate as raised."""
    from sglang.srt.configs.model_config import ModelConfig
    from sglang.srt.model_executor.model_runner import ModelRunner

    model_config = ModelConfig.from_server_args(server_args)
    original = ModelRunner.model_specific_adjustment

    def adjust_then_stop(self: Any) -> None:
        original(self)
        raise _Reached

    ModelRunner.model_specific_adjustment = adjust_then_stop  # type: ignore[method-assign]
    try:
        ModelRunner(**_runner_arguments(ModelRunner, server_args, model_config))
    except _Reached:
        return
    finally:
        ModelRunner.model_specific_adjustment = original  # type: ignore[method-assign]
    raise StepUnavailable("ModelRunner.__init__ returned without calling model_specific_adjustment")


def cli_backend_choices(server_args_class: Any) -> list[str]:
    """`--attention-backend`'s choices as the release's own `add_cli_args` declares them (0.5.0rc2 and the 0.4 line
    keep no ATTENTION_BACKEND_CHOICES list)."""
    parser = argparse.ArgumentParser(add_help=False)
    server_args_class.add_cli_args(parser)
    for action in parser._actions:
        if "--attention-backend" in action.option_strings:
            return list(action.choices or ())
    raise StepUnavailable("ServerArgs.add_cli_args declares no --attention-backend")
