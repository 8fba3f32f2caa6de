"""cupel._frozen.dataclass behaves as dataclasses.dataclass(slots=True) does for the records it builds."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from cupel import _frozen
from cupel.chat import ChatOptions
from cupel.policy import ChatSettings, Policy, tool_use
from cupel.tokens import FunctionCounter, HeuristicCounter


def _pair(frozen: bool) -> tuple[type, type]:
    def body() -> dict[str, object]:
        return {
            "__annotations__": {"name": "str", "size": "int", "tags": "list[str]"},
            "size": 3,
            "tags": None,
            "__post_init__": lambda self: None,
        }

    real_body, twin_body = body(), body()
    real_body["tags"] = dataclasses.field(default_factory=list)
    twin_body["tags"] = _frozen.field(default_factory=list)
    real = dataclasses.dataclass(frozen=frozen, slots=True)(type("Thing", (), real_body))
    twin = _frozen.dataclass(frozen=frozen, slots=True)(type("Thing", (), twin_body))
    return real, twin


@pytest.mark.parametrize("frozen", [True, False])
def test_the_twin_matches_a_real_dataclass(frozen: bool) -> None:
    real, twin = _pair(frozen)
    for cls in (real, twin):
        first, second = cls("a"), cls("a", 3, [])
        assert first == second and first != cls("b")
        assert first.tags == [] and first.tags is not cls("a").tags  # one new list per record
        assert [f.name for f in dataclasses.fields(cls)] == ["name", "size", "tags"]
        assert dataclasses.replace(first, size=5) == cls("a", 5)
        assert dataclasses.asdict(first) == {"name": "a", "size": 3, "tags": []}
        assert not hasattr(first, "__dict__")
        assert copy.deepcopy(first) == first
    assert repr(twin("a", 4, ["x"])) == repr(real("a", 4, ["x"]))
    assert twin.__match_args__ == real.__match_args__
    if frozen:
        assert hash(twin("a", 3, ("x",))) == hash(real("a", 3, ("x",))) == hash(("a", 3, ("x",)))
        with pytest.raises(dataclasses.FrozenInstanceError):
            twin("a").name = "b"  # type: ignore[attr-defined]
    else:
        assert twin.__hash__ is None and real.__hash__ is None
        record = twin("a")
        record.size = 9  # type: ignore[attr-defined]
        assert record == twin("a", 9)
    with pytest.raises(TypeError):
        twin()


def test_public_records_keep_value_semantics_pickling_and_validation() -> None:
    for record in (ChatSettings(strategy="last"), ChatOptions(part_costs={"image": 3}), HeuristicCounter(3)):
        assert pickle.loads(pickle.dumps(record)) == record
        assert hash(record) == hash(copy.copy(record))
    assert dataclasses.replace(ChatSettings(), recent_share=1).recent_share == 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        ChatSettings().strategy = "last"  # type: ignore[misc]
    with pytest.raises(Exception, match="must be callable"):
        FunctionCounter(3)  # type: ignore[arg-type]
    policy = tool_use()
    assert Policy.from_pipeline(policy.build_pipeline()) == policy.replace(chat=None)
    assert repr(policy).startswith("Policy(scorer=CompositeScorer(")


def test_a_real_dataclass_can_subclass_a_record() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Bytes(HeuristicCounter):
        unit: str = "utf8_bytes"

    counter = Bytes()
    assert (counter.chars_per_token, counter.unit) == (4, "utf8_bytes")
    assert counter == Bytes() and counter != HeuristicCounter(unit="utf8_bytes")
    assert [f.name for f in dataclasses.fields(counter)] == ["chars_per_token", "unit"]


def test_a_mutable_record_sets_its_fields_through_its_own_setattr_as_a_dataclass_does() -> None:
    def logged(cls_name: str, decorate: object, seen: list[str]) -> type:
        def setattr_(self: object, name: str, value: object) -> None:
            seen.append(name)
            object.__setattr__(self, name, value)

        body = {"__annotations__": {"name": "str", "size": "int"}, "size": 0, "__setattr__": setattr_}
        return decorate(type(cls_name, (), body))  # type: ignore[operator,no-any-return]

    real_seen: list[str] = []
    twin_seen: list[str] = []
    real = logged("Real", dataclasses.dataclass(slots=True), real_seen)
    twin = logged("Twin", _frozen.dataclass(slots=True), twin_seen)
    assert real("a").size == twin("a").size == 0
    assert real_seen == twin_seen == ["name", "size"]


def test_a_map_made_on_read_equals_the_eager_one_and_makes_its_dict_once() -> None:
    made: list[int] = []

    def make(key: int) -> dict[str, object]:
        made.append(key)
        return {"key": key, "twice": (key, key)}

    maps = _frozen.made_on_read(make, range(3, 6), 3)
    assert made == []  # nothing made until read
    eager = [_frozen.ReadOnlyMap(make(key)) for key in range(3, 6)]
    made.clear()
    assert maps == eager and all(isinstance(each, _frozen.ReadOnlyMap) for each in maps)
    assert [hash(each) for each in maps] == [hash(each) for each in eager]
    assert [dict(each) for each in maps] == [dict(each) for each in eager]
    assert made == [3, 4, 5]  # once each, kept
    for each in maps:
        assert repr(each) == repr(dict(each)) and len(each) == 2 and "key" in each
        copied = pickle.loads(pickle.dumps(each))
        assert type(copied) is _frozen.ReadOnlyMap and copied == each
        assert copy.copy(each) == each and copy.deepcopy(each) == each
        with pytest.raises(TypeError):
            each["key"] = 0  # type: ignore[index]
        with pytest.raises(AttributeError, match="no attribute 'other'"):
            each.other  # type: ignore[attr-defined]  # noqa: B018
    assert made == [3, 4, 5]
    fresh = _frozen.made_on_read(make, [7], 1)[0]
    assert fresh.get("key") == 7 and list(fresh) == ["key", "twice"]
