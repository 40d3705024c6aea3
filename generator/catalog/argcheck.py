"""A curated deployment's arguments checked at load: every flag exists in its build's vocabulary,
every value has the type the engine's parser takes, and the knobs the planner reads make sense.

`recipegen validate` refuses what `generate` would otherwise write into a launch script (and
what the planner could not read back): `--tensor-parallel-size: eight`, `"0"`,
`--gpu-memory-utilization: lots` or `"7.5"`.
"""

from __future__ import annotations

from . import knobs
from .schema import Deployment, Engine
from .schema.engine import Build
from .schema.records import field_names
from .vocabulary import check_arg, shipped, vocabulary


def deployment_arg_problems(dep: Deployment, engine: Engine, build: Build) -> list[tuple[str, str]]:
    """(field path, message) for each argument of `dep` the engine would refuse or the planner misread."""
    spelled = {
        getattr(engine.flags, name): name for name in field_names(type(engine.flags)) if getattr(engine.flags, name)
    }
    vocab = vocabulary(build.cli_reference) if build.cli_reference in shipped() else None
    problems: list[tuple[str, str]] = []
    for index, arg in enumerate(dep.args):
        if vocab is not None:
            refused = check_arg(vocab, arg.flag, arg.value)
            if refused is not None:
                part, message = refused
                problems.append((f"args[{index}].{part}", f"{message} (checked against {build.cli_reference})"))
                continue
        knob = spelled.get(arg.flag)
        if knob is not None:
            problem = knobs.problem(knob, arg.flag, arg.value)
            if problem is not None:
                problems.append((f"args[{index}].value", problem))
    return problems
