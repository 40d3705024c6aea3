"""@frozen classes behave as frozen dataclasses: arguments, defaults, immutability, equality, copies."""

from __future__ import annotations

import dataclasses

import pytest

from recipegen.frozen import evolve, frozen


@frozen
class Point:
    x: int
    y: int = 0
    tags: list[str] = dataclasses.field(default_factory=list)


@frozen(kw_only=True)
class Named:
    name: str
    size: int = 1


def test_positional_and_keyword_arguments_defaults_and_factories():
    assert Point(1) == Point(x=1, y=0, tags=[])
    assert Point(1, 2).y == 2 and Point(1, y=3).y == 3
    a, b = Point(1), Point(1)
    assert a.tags == [] and a.tags is not b.tags  # a factory runs per instance
    assert Named(name="n").size == 1


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: Point(), "missing argument 'x'"),
        (lambda: Point(1, 2, [], 4), "positional"),
        (lambda: Point(1, x=2), "multiple values for x"),
        (lambda: Point(1, z=2), "unexpected keyword arguments 'z'"),
        (lambda: Named("n"), "positional"),
    ],
)
def test_wrong_arguments_are_refused_as_a_dataclass_would(make, message):
    with pytest.raises(TypeError, match=message):
        make()


def test_instances_are_frozen_equal_by_fields_and_hashable():
    p = Point(1, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 5  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del p.x  # type: ignore[misc]
    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(2, 1)
    assert Point(1, 2) != Named(name="n")  # another class is never equal
    assert hash(Named(name="n")) == hash(Named(name="n"))
    assert {Named(name="a"), Named(name="a"), Named(name="b")} == {Named(name="a"), Named(name="b")}
    assert repr(Point(1, 2)) == "Point(x=1, y=2, tags=[])"


def test_copies_replace_fields_and_refuse_unknown_ones():
    p = Point(1, 2, ["a"])
    assert evolve(p, y=5) == Point(1, 5, ["a"]) and p.y == 2
    assert dataclasses.replace(p, x=7) == Point(7, 2, ["a"])
    assert dataclasses.asdict(p) == {"x": 1, "y": 2, "tags": ["a"]}
    with pytest.raises(TypeError, match="no field z"):
        evolve(p, z=1)
