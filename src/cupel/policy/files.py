"""Policy files: one declarative schema, written as TOML or JSON (see ``docs/policies.md``).

A policy file is a table with the keys ``scorers``, ``slicer``, ``placer``, ``deduplication``,
``overflow_strategy`` and optionally ``chat`` (chat selection settings), ``extends`` (a preset
name), ``version`` (1) and ``$schema``.
Every component is a table with a ``type`` (or just the type name as a string). The JSON Schema
shipped as ``cupel/policy/policy.schema.json`` (:func:`policy_schema`) describes the same format.

Reading validates everything and names the offending place in the document:
``scorers[1].weight: must be > 0, got -1``. Writing (:func:`dump_policy`) emits the canonical form;
``load -> dump -> load`` gives an equal :class:`~cupel.policy.Policy`. The component types a file
can name, built-in and custom, live in :mod:`cupel.policy.registry`.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Mapping
from typing import Any, Literal

from cupel import (
    _input,
    scorers,  # packages whose members are imported on first use
)
from cupel._atomic import write_atomic
from cupel.errors import CupelError, CupelTypeError, InvalidConfigurationError
from cupel.model import OverflowStrategy
from cupel.policy._toml_writer import toml_dumps
from cupel.policy._values import (
    _array,
    _boolean,
    _check_keys,
    _construct,
    _integer,
    _number,
    _show,
    _string,
    _table,
)
from cupel.policy.chat_settings import ChatSettings, ToolResultClearing
from cupel.policy.errors import PolicyFileError
from cupel.policy.policy import FORMAT_VERSION, Policy, policy_to_dict
from cupel.policy.presets import UnknownPresetError, get_preset, preset_names
from cupel.policy.registry import (
    _PLACERS,
    _read_component,
    _read_scorers,
    _read_slicer,
    _Reader,
)
from cupel.protocols import Placer, TimeProvider

__all__ = [
    "FORMAT_VERSION",
    "MissingTomlReaderError",
    "PolicyFormat",
    "dump_policy",
    "load_policy",
    "loads_policy",
    "policy_from_dict",
    "policy_schema",
    "policy_to_dict",
    "save_policy",
]

PolicyFormat = Literal["toml", "json"]


class MissingTomlReaderError(CupelError, ImportError):
    """No TOML reader is installed (``pip install 'pycupel[toml]'``)."""


# --- whole policies -------------------------------------------------------------------------------

_TOP_KEYS = (
    "$schema",
    "version",
    "extends",
    "scorers",
    "slicer",
    "placer",
    "deduplication",
    "overflow_strategy",
    "chat",
)
_CHAT_KEYS = ("strategy", "keep_first_turn", "recent_share", "start_on", "clear_tool_results")
_CLEARING_KEYS = ("keep", "placeholder", "exclude_tools", "clear_at_least")


def _check_time_provider(time_provider: object) -> TimeProvider:
    if time_provider is None:
        return scorers.SystemTimeProvider()
    if not callable(getattr(time_provider, "now", None)):
        raise CupelTypeError(f"time_provider must have a now() method, got {time_provider!r}")
    result: TimeProvider = time_provider  # type: ignore[assignment]
    return result


def policy_from_dict(data: Mapping[str, Any], *, time_provider: TimeProvider | None = None) -> Policy:
    """Build a :class:`~cupel.policy.Policy` from a parsed policy document.

    Keys given override the preset named by ``extends`` key by key (``scorers`` replaces the whole
    scorer); without ``extends``, ``scorers``, ``slicer`` and ``placer`` are required and
    ``deduplication`` / ``overflow_strategy`` default to ``true`` / ``"throw"``. DecayScorers read
    ``time_provider`` (default: the system clock). Raises :class:`PolicyFileError`.
    """
    reader = _Reader(_check_time_provider(time_provider))
    depth = _nesting(data, "policy")
    root = _table(data, "")
    _check_keys(root, "", _TOP_KEYS, "a policy")
    if "$schema" in root:
        _string(root["$schema"], "$schema")
    if "version" in root:
        version = _integer(root["version"], "version", minimum=1)
        if version != FORMAT_VERSION:
            raise PolicyFileError(
                "version",
                f"unsupported policy file version {version}; this cupel reads version {FORMAT_VERSION}",
            )
    base: Policy | None = None
    if "extends" in root:
        name = _string(root["extends"], "extends")
        try:
            base = get_preset(name)
        except UnknownPresetError:
            raise PolicyFileError(
                "extends", f"unknown preset {_show(name)}; known presets: {', '.join(preset_names())}"
            ) from None

    def inherited(key: str, attribute: str) -> Any:
        if base is None:
            raise PolicyFileError(key, "required (or name a preset to start from with extends)")
        return getattr(base, attribute)

    scorer = (
        _read_scorers(root["scorers"], "scorers", reader)
        if "scorers" in root
        else inherited("scorers", "scorer")
    )
    slicer = (
        _read_slicer(root["slicer"], "slicer", reader) if "slicer" in root else inherited("slicer", "slicer")
    )
    placer: Placer
    if "placer" in root:
        placer, _ = _read_component(root["placer"], "placer", _PLACERS, reader)
    else:
        placer = inherited("placer", "placer")
    deduplication = base.deduplication if base is not None else True
    if "deduplication" in root:
        deduplication = _boolean(root["deduplication"], "deduplication")
    overflow = base.overflow_strategy if base is not None else OverflowStrategy.THROW
    if "overflow_strategy" in root:
        text = _string(root["overflow_strategy"], "overflow_strategy")
        try:
            overflow = OverflowStrategy(text.strip().lower())
        except ValueError:
            known = ", ".join(_show(strategy.value) for strategy in OverflowStrategy)
            raise PolicyFileError("overflow_strategy", f"must be one of {known}, got {_show(text)}") from None
    chat = base.chat if base is not None else None
    if "chat" in root:
        chat = _read_chat(root["chat"], chat)
    policy: Policy = _construct("", Policy, scorer, slicer, placer, deduplication, overflow, chat)
    if depth > _CANONICAL_MARGIN:
        # Written out, a string shorthand becomes a table: the canonical document must stay readable too.
        _nesting(policy_to_dict(policy), "policy")
    return policy


#: A document nested at most this deep has a canonical form within the nesting limit.
_CANONICAL_MARGIN = _input.MAX_JSON_DEPTH - 8


def _nesting(data: object, what: str) -> int:
    """The one nesting limit of every policy, whatever its format (:data:`cupel._input.MAX_JSON_DEPTH`)."""
    try:
        return _input.check_depth(data, "", what)
    except _input.InputError as error:
        raise PolicyFileError("", error.problem) from None


def _read_chat(value: object, base: ChatSettings | None) -> ChatSettings:
    """The ``chat`` table; keys not given keep the base preset's values (or the defaults)."""
    table = _table(value, "chat")
    _check_keys(table, "chat", _CHAT_KEYS, "chat settings")
    current = base or ChatSettings()
    settings: dict[str, Any] = {**current.to_dict(), "clear_tool_results": current.clear_tool_results}
    if "clear_tool_results" in table:
        settings["clear_tool_results"] = _read_clearing(table["clear_tool_results"])
    for key in ("strategy", "start_on"):
        if key in table:
            settings[key] = _string(table[key], f"chat.{key}")
    if "keep_first_turn" in table:
        settings["keep_first_turn"] = _boolean(table["keep_first_turn"], "chat.keep_first_turn")
    if "recent_share" in table:
        settings["recent_share"] = _number(
            table["recent_share"], "chat.recent_share", minimum=0.0, maximum=1.0
        )
    return _construct("chat", ChatSettings, **settings)


def _read_clearing(value: object) -> ToolResultClearing | None:
    """``chat.clear_tool_results``: ``true`` (the defaults), ``false``, or a table of its fields."""
    path = "chat.clear_tool_results"
    if isinstance(value, bool):
        return ToolResultClearing() if value else None
    if not isinstance(value, Mapping):
        raise PolicyFileError(path, f"must be true, false or a table, got {_show(value)}")
    _check_keys(value, path, _CLEARING_KEYS, "tool-result clearing")
    fields: dict[str, Any] = {}
    for key in ("keep", "clear_at_least"):
        if key in value:
            fields[key] = _integer(value[key], f"{path}.{key}", minimum=0)
    if "placeholder" in value:
        fields["placeholder"] = _string(value["placeholder"], f"{path}.placeholder")
    if "exclude_tools" in value:
        names = _array(value["exclude_tools"], f"{path}.exclude_tools")
        fields["exclude_tools"] = tuple(
            _string(name, f"{path}.exclude_tools[{index}]") for index, name in enumerate(names)
        )
    return _construct(path, ToolResultClearing, **fields)


# --- TOML and JSON text ---------------------------------------------------------------------------


def _check_format(format: object) -> PolicyFormat:
    if isinstance(format, str) and format.strip().lower() in ("toml", "json"):
        return "json" if format.strip().lower() == "json" else "toml"
    raise InvalidConfigurationError(f"format must be 'toml' or 'json', got {format!r}")


def _sniff(text: str) -> PolicyFormat:
    return "json" if text.lstrip("\ufeff \t\r\n").startswith("{") else "toml"


def _parse_toml(text: str) -> Any:
    try:
        module = importlib.import_module("tomli")
    except ImportError:
        try:
            module = importlib.import_module("tomllib")
        except ImportError:
            raise MissingTomlReaderError(
                "reading TOML policy files needs the tomli package: pip install 'pycupel[toml]'"
            ) from None
    try:
        _input.check_unicode(text, "")
        data = module.loads(text)
    except _input.InputError as error:
        raise PolicyFileError("", error.problem) from None
    except module.TOMLDecodeError as error:
        raise PolicyFileError("", f"invalid TOML: {error}") from None
    except RecursionError:  # the reader gave up before the limit could be measured
        raise PolicyFileError("", f"TOML nested deeper than {_input.MAX_JSON_DEPTH} levels") from None
    except ValueError as error:  # an integer beyond Python's digit limit
        raise PolicyFileError("", f"invalid TOML: {str(error).split(';')[0]}") from None
    _nesting(data, "TOML")
    return data


def _parse_json(text: str) -> Any:
    try:
        return _input.loads_json(text, "", object_pairs_hook=_input.unique_keys)
    except _input.InputError as error:
        raise PolicyFileError("", error.problem) from None


def loads_policy(
    text: str | bytes, format: PolicyFormat | None = None, *, time_provider: TimeProvider | None = None
) -> Policy:
    """Read a policy from TOML or JSON text; ``format=None`` takes JSON when the text starts with ``{``."""
    if isinstance(text, bytes):
        try:
            text = _input.decode_text(text, "")
        except _input.InputError as error:
            raise PolicyFileError("", error.problem) from None
    if not isinstance(text, str):
        raise CupelTypeError(f"text must be a str or bytes, got {type(text).__name__}")
    chosen = _sniff(text) if format is None else _check_format(format)
    data = _parse_json(text.lstrip("\ufeff")) if chosen == "json" else _parse_toml(text)
    return policy_from_dict(data, time_provider=time_provider)


def _is_file(text: str) -> bool:
    try:
        from pathlib import Path  # a policy named by its text or a file: not a preset

        return Path(text).is_file()
    except (OSError, ValueError):
        return False


def _looks_like_text(text: str) -> bool:
    stripped = text.strip()
    return "\n" in stripped or stripped.startswith("{") or "=" in stripped


def load_policy(
    path_or_text: str | bytes | os.PathLike[str],
    *,
    format: PolicyFormat | None = None,
    time_provider: TimeProvider | None = None,
) -> Policy:
    """Read a policy file, or policy text.

    A path-like is a file. A ``str`` is a file when it names an existing one, and policy text when it
    contains a newline, ``=`` or starts with ``{``; otherwise it is a file name (and a missing file
    raises ``FileNotFoundError``). ``bytes`` are text. Without ``format``, ``.json`` files are JSON,
    ``.toml`` files TOML, and anything else is sniffed (``{`` means JSON). Errors in the document
    raise :class:`PolicyFileError` naming the file and the place in it.
    """
    if isinstance(path_or_text, bytes):
        return loads_policy(path_or_text, format, time_provider=time_provider)
    if isinstance(path_or_text, str) and not _is_file(path_or_text) and _looks_like_text(path_or_text):
        return loads_policy(path_or_text, format, time_provider=time_provider)
    if not isinstance(path_or_text, str | os.PathLike):
        raise CupelTypeError(f"path_or_text must be a path or policy text, got {type(path_or_text).__name__}")
    from pathlib import Path

    path = Path(path_or_text)
    with path.open("rb") as handle:  # OSError (a missing file...) propagates as documented
        data = _input.read_stream(handle, str(path))
    try:
        text = _input.decode_text(data, str(path))
    except _input.InputError as error:
        raise PolicyFileError("", error.problem, source=str(path)) from None
    if format is None:
        suffix = path.suffix.lower()
        format = "json" if suffix == ".json" else "toml" if suffix == ".toml" else _sniff(text)
    try:
        return loads_policy(text, format, time_provider=time_provider)
    except PolicyFileError as error:
        raise error.with_source(str(path)) from None


def dump_policy(policy: Policy, format: PolicyFormat = "toml") -> str:
    """The policy as canonical TOML (default) or JSON text; :func:`loads_policy` reads it back equal."""
    chosen = _check_format(format)
    data = policy_to_dict(policy)
    if chosen == "json":
        return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    return toml_dumps(data)


def save_policy(policy: Policy, path: str | os.PathLike[str], *, format: PolicyFormat | None = None) -> None:
    """Write the policy to ``path`` (UTF-8) atomically; the format follows the suffix (``.json``), else TOML.

    The file is replaced in one step: on any failure an existing file is left as it was.
    """
    from pathlib import Path

    target = Path(path)
    chosen = (
        _check_format(format)
        if format is not None
        else ("json" if target.suffix.lower() == ".json" else "toml")
    )
    write_atomic(target, dump_policy(policy, chosen))


def policy_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of policy documents, shipped as ``policy.schema.json``."""
    from importlib import resources  # imported here: it costs more at start-up than loading a policy

    text = resources.files("cupel.policy").joinpath("policy.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
