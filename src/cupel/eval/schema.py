"""The JSON Schema of one case record (a line of a case JSON Lines file); docs/eval.md explains it."""

from __future__ import annotations

from typing import Any

__all__ = ["CASE_SCHEMA"]


def _gold_entry(key: str, reference: dict[str, Any]) -> dict[str, Any]:
    """A gold entry: a bare reference, or ``{key: reference, "weight": w}``."""
    return {
        "oneOf": [
            reference,
            {
                "type": "object",
                "properties": {key: reference, "weight": {"type": "number", "exclusiveMinimum": 0}},
                "required": [key],
                "additionalProperties": False,
            },
        ]
    }


_GOLD_INDEX = _gold_entry("index", {"type": "integer", "minimum": 0})
_GOLD_ID = _gold_entry("id", {"type": "string", "minLength": 1})

CASE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://github.com/cupel/pycupel/eval-case.schema.json",
    "title": "cupel evaluation case",
    "description": "Candidates (a chat transcript or context items), the gold evidence a correct "
    "answer needs, an optional question and tags.",
    "type": "object",
    "properties": {
        "id": {"type": "string", "minLength": 1, "description": "unique within the file"},
        "tags": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "description": "task type etc.",
        },
        "question": {"type": "string", "description": "what the answer is about (informational)"},
        "answer": {"description": "the expected answer (informational, not scored)"},
        "provider": {"enum": ["openai", "anthropic"], "description": "chat format; default openai"},
        "messages": {
            "type": "array",
            "minItems": 1,
            "items": {"type": "object", "properties": {"role": {"type": "string"}}, "required": ["role"]},
            "description": "an OpenAI- or Anthropic-style transcript",
        },
        "items": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "minLength": 1},
                    "content": {"type": "string", "minLength": 1},
                    "tokens": {"type": "integer", "description": "counted with the tokenizer when absent"},
                },
                "required": ["id", "content"],
                "description": "a context item in cupel's JSON form plus an id",
            },
        },
        "gold": {
            "type": "array",
            "minItems": 1,
            "description": "message indices (messages) or item ids (items)",
        },
    },
    "required": ["id", "gold"],
    "additionalProperties": False,
    "oneOf": [
        {
            "required": ["messages"],
            "properties": {"gold": {"items": _GOLD_INDEX}},
            "not": {"required": ["items"]},
        },
        {
            "required": ["items"],
            "properties": {"gold": {"items": _GOLD_ID}},
            "not": {"required": ["messages"]},
        },
    ],
}
