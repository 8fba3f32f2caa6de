"""The chat package's shape: few modules, no state in module globals, one walk through the stages."""

from __future__ import annotations
import __future__

import functools
import importlib
import pkgutil
import sys
import threading
import types
from collections.abc import Callable
from datetime import datetime, timezone
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any, TypeVar

import pytest

import cupel.chat
from cupel.chat import ChatSession, select_messages

CHAT = Path(cupel.chat.__file__).parent

#: The stage each module of the read → units and turns → choose → render path belongs to.
STAGES = {
    "cupel.chat.parse": "read",
    "cupel.chat.read": "read",
    "cupel.chat.langchain": "read",  # LangChain's reader
    "cupel.chat.units": "units",
    "cupel.chat.choose": "choose",
    "cupel.chat.choose_units": "choose",
    "cupel.chat.render": "render",
}


def _modules() -> list[types.ModuleType]:
    names = [f"cupel.chat.{info.name}" for info in pkgutil.iter_modules([str(CHAT)])]
    return [cupel.chat, *(importlib.import_module(name) for name in names)]


def test_the_package_has_at_most_15_modules() -> None:
    assert len(list(CHAT.glob("*.py"))) <= 15


# Values a module may hold at top level: none of them can change.
_IMMUTABLE = (
    str,
    bytes,
    int,
    float,
    bool,
    type(None),
    tuple,
    frozenset,
    type,
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MappingProxyType,
    attrgetter,
    itemgetter,
    TypeVar,
    datetime,
    timezone,
    __future__._Feature,
)


def _mutable(value: object) -> bool:
    if isinstance(value, dict | list | set | bytearray) or hasattr(value, "cache_info"):
        return True
    if isinstance(value, type(threading.Lock())):
        return True
    if isinstance(value, _IMMUTABLE) or callable(value):
        return False
    # Typing constructs (aliases, unions) and frozen records are values too; anything else is state.
    if type(value).__module__ in ("typing", "types"):
        return False
    params = getattr(type(value), "__dataclass_params__", None)
    return not (params is not None and params.frozen)


def test_no_module_holds_mutable_state() -> None:
    found = [
        f"{module.__name__}.{name}: {type(value).__name__}"
        for module in _modules()
        for name, value in vars(module).items()
        if not name.startswith("__") and _mutable(value)
    ]
    assert found == []


def test_the_check_finds_module_state() -> None:
    assert _mutable({}) and _mutable([]) and _mutable(functools.cache(len)) and _mutable(threading.Lock())
    assert not _mutable(types.MappingProxyType({})) and not _mutable(("a",)) and not _mutable(len)


def _walk(run: Callable[[], Any]) -> list[str]:
    """The stages the selection enters from outside the stages (the front end), in order, each
    consecutive run of one stage counted once."""
    entered: list[str] = []

    def profile(frame: types.FrameType, event: str, arg: object) -> None:
        if event != "call":
            return
        stage = STAGES.get(frame.f_globals.get("__name__", ""))
        caller = frame.f_back
        caller_name = caller.f_globals.get("__name__", "") if caller is not None else ""
        if caller_name.startswith("cupel.scorers."):
            return  # a batch column the choose stage's scoring call asks for: part of choosing
        caller_stage = STAGES.get(caller_name)
        if stage is not None and caller_stage is None and (not entered or entered[-1] != stage):
            entered.append(stage)

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return entered


def _agent(size: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are terse."}]
    for turn in range(size):
        messages.append({"role": "user", "content": f"question {turn} " + "word " * (turn % 7)})
        calls = [{"id": f"c{turn}", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        messages.append({"role": "tool", "tool_call_id": f"c{turn}", "content": "result " * (turn % 5)})
        messages.append({"role": "assistant", "content": f"answer {turn}"})
    messages.append({"role": "user", "content": "and now?"})
    return messages


@pytest.mark.parametrize("langchain", [False, True])
def test_select_messages_walks_read_units_choose_render_once_each(langchain: bool) -> None:
    messages: list[Any] = _agent(12)
    select: Callable[..., Any] = select_messages
    if langchain:
        pytest.importorskip("langchain_core")
        from tests.chat.equality_cases import to_langchain

        from cupel.chat.langchain import select_messages as select

        messages = to_langchain(messages)
    assert _walk(lambda: select(messages, 150)) == ["read", "units", "choose", "render"]
    session = ChatSession()
    assert _walk(lambda: select(messages, 150, session=session)) == ["read", "units", "choose", "render"]
