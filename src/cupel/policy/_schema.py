"""Generate ``policy.schema.json`` from the registry, so the schema and the loader cannot disagree.

The built-in types, their parameters, the presets and the enumerations all come from the code that
reads policy files. Where the loader accepts other spellings (type and preset names in any letter
case, ``-`` for ``_``, surrounding spaces; ``overflow_strategy`` and ``scarcity`` in any letter case),
the schema accepts them too, and lists the canonical spellings first so that editors suggest them.

Regenerate the shipped file with ``python -m cupel.policy._schema``; a test checks that it is current.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from cupel._atomic import write_atomic
from cupel.model import OverflowStrategy
from cupel.policy._entries import _Registry
from cupel.policy._readers import COUNT_QUOTA_ENTRY, CURVES, DURATION, QUOTA_ENTRY, WEIGHT, caseless, spelled
from cupel.policy.chat_settings import (
    CHAT_STRATEGIES,
    DEFAULT_RECENT_SHARE,
    START_ON,
    ChatSettings,
    ToolResultClearing,
)
from cupel.policy.files import _CHAT_KEYS, _TOP_KEYS
from cupel.policy.policy import FORMAT_VERSION
from cupel.policy.presets import preset_names
from cupel.policy.registry import _PLACERS, _SCORERS, _SLICERS

__all__ = ["SCHEMA_PATH", "generate_schema", "schema_text"]

SCHEMA_PATH = Path(__file__).with_name("policy.schema.json")


def _component(registry: _Registry, *, weighted: bool) -> dict[str, dict[str, Any]]:
    """The definitions of one role: the union, one per built-in type, and the open custom entry."""
    role = registry.role
    entries = [entry for entry in (registry.get(name) for name in registry.names()) if entry is not None]
    builtins = [entry for entry in entries if entry.builtin]
    names = [entry.name for entry in builtins]
    plain = [entry.name for entry in builtins if not entry.required]
    weight = {"weight": {"$ref": "#/$defs/weight"}} if weighted else {}
    defs: dict[str, dict[str, Any]] = {
        role: {
            "oneOf": [
                {
                    "anyOf": [{"enum": plain}, caseless(plain), {"type": "string", "not": caseless(names)}],
                    "description": (
                        f'Shorthand for {{type = "<name>"}}: a {role} type without required parameters.'
                    ),
                },
                *({"$ref": f"#/$defs/{role}.{name}"} for name in names),
                {"$ref": f"#/$defs/{role}.custom"},
            ]
        }
    }
    for entry in builtins:
        defs[f"{role}.{entry.name}"] = {
            "type": "object",
            "properties": {"type": spelled([entry.name]), **weight, **(entry.params or {})},
            "required": ["type", *entry.required],
            "additionalProperties": False,
            "description": entry.description,
        }
    defs[f"{role}.custom"] = {
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"type": "string", "not": caseless(names)}, **weight},
        "description": (
            f"A custom {role} type registered with register_{role}(); its keys are passed to the factory."
        ),
    }
    return defs


def _curve() -> dict[str, Any]:
    return {
        "oneOf": [
            {
                "type": "object",
                "properties": {"type": spelled([name]), **params},
                "required": ["type", *params],
                "additionalProperties": False,
            }
            for name, params in CURVES.items()
        ]
    }


def _clearing() -> dict[str, Any]:
    """``chat.clear_tool_results``: ``true`` (the defaults), ``false``, or a table of its fields."""
    defaults = ToolResultClearing()
    return {
        "description": "Clear older tool results before dropping whole units (docs/chat.md).",
        "oneOf": [
            {"type": "boolean"},
            {
                "type": "object",
                "properties": {
                    "keep": {"type": "integer", "minimum": 0, "default": defaults.keep},
                    "placeholder": {"type": "string", "minLength": 1, "default": defaults.placeholder},
                    "exclude_tools": {"type": "array", "items": {"type": "string", "minLength": 1}},
                    "clear_at_least": {
                        "type": "integer",
                        "minimum": 0,
                        "default": defaults.clear_at_least,
                    },
                },
                "additionalProperties": False,
            },
        ],
        "default": False,
    }


def _chat() -> dict[str, Any]:
    """The ``chat`` table: how :func:`cupel.chat.select_messages` selects under this policy."""
    defaults = ChatSettings()
    properties: dict[str, Any] = {
        "strategy": {"enum": list(CHAT_STRATEGIES), "default": defaults.strategy},
        "keep_first_turn": {"type": "boolean", "default": defaults.keep_first_turn},
        "recent_share": {"type": "number", "minimum": 0, "maximum": 1, "default": DEFAULT_RECENT_SHARE},
        "start_on": {"enum": list(START_ON), "default": defaults.start_on},
        "clear_tool_results": _clearing(),
    }
    if tuple(properties) != _CHAT_KEYS:
        raise AssertionError(f"chat keys {tuple(properties)} differ from the loader's {_CHAT_KEYS}")
    return {
        "type": "object",
        "description": "Chat selection: strategy (turns, last, messages) and its options.",
        "properties": properties,
        "additionalProperties": False,
    }


def generate_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of policy documents, built from the registry's built-in types."""
    properties: dict[str, Any] = {
        "$schema": {"type": "string"},
        "version": {"const": FORMAT_VERSION, "description": "Policy file format version."},
        "extends": {
            **spelled(preset_names()),
            "description": "A preset to start from; every other key given replaces the preset's value.",
        },
        "scorers": {
            "type": "array",
            "minItems": 1,
            "items": {"$ref": "#/$defs/scorer"},
            "description": "One scorer, or two or more combined by a composite with their weights.",
        },
        "slicer": {"$ref": "#/$defs/slicer"},
        "placer": {"$ref": "#/$defs/placer"},
        "deduplication": {"type": "boolean", "default": True},
        "overflow_strategy": {
            **spelled((strategy.value for strategy in OverflowStrategy), dashes=False),
            "default": OverflowStrategy.THROW.value,
        },
        "chat": _chat(),
    }
    if tuple(properties) != _TOP_KEYS:
        raise AssertionError(f"schema keys {tuple(properties)} differ from the loader's {_TOP_KEYS}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"urn:cupel:policy:{FORMAT_VERSION}",
        "title": "cupel policy",
        "description": (
            "A cupel policy file (TOML or JSON): scorer, slicer, placer, deduplication and overflow "
            "strategy. See docs/policies.md."
        ),
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
        "if": {"not": {"required": ["extends"]}},
        "then": {"required": ["scorers", "slicer", "placer"]},
        "$defs": {
            "weight": WEIGHT,
            "duration": DURATION,
            "curve": _curve(),
            "quotaEntry": QUOTA_ENTRY,
            "countQuotaEntry": COUNT_QUOTA_ENTRY,
            **_component(_SCORERS, weighted=True),
            **_component(_SLICERS, weighted=False),
            **_component(_PLACERS, weighted=False),
        },
    }


def schema_text() -> str:
    """The generated schema as the shipped file spells it."""
    return json.dumps(generate_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else SCHEMA_PATH
    write_atomic(target, schema_text())
    print(f"wrote {target}")
