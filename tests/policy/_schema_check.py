"""A small JSON Schema (draft 2020-12) checker for the keywords policy.schema.json uses.

Just enough to check documents against the shipped schema without a third-party validator.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

SUPPORTED = {
    "$schema",
    "$id",
    "$ref",
    "$defs",
    "title",
    "description",
    "default",
    "type",
    "const",
    "enum",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "pattern",
    "oneOf",
    "not",
    "if",
    "then",
}


def _type_ok(value: Any, name: str) -> bool:
    if name == "object":
        return isinstance(value, Mapping)
    if name == "array":
        return isinstance(value, list | tuple)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    raise AssertionError(f"unsupported type {name}")


def errors(value: Any, schema: Mapping[str, Any], root: Mapping[str, Any], path: str = "") -> list[str]:
    """Every violation of ``schema`` by ``value``, as ``path: problem`` strings."""
    unknown = set(schema) - SUPPORTED
    assert not unknown, f"unsupported keywords {unknown}"
    found: list[str] = []
    if "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/$defs/")
        found += errors(value, root["$defs"][ref.removeprefix("#/$defs/")], root, path)
    if "type" in schema and not _type_ok(value, schema["type"]):
        return [*found, f"{path}: not {schema['type']}"]
    if "const" in schema and value != schema["const"]:
        found.append(f"{path}: not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{path}: not one of {schema['enum']}")
    if isinstance(value, Mapping):
        properties = schema.get("properties", {})
        for key in schema.get("required", ()):
            if key not in value:
                found.append(f"{path}.{key}: required")
        for key, item in value.items():
            if key in properties:
                found += errors(item, properties[key], root, f"{path}.{key}")
            elif schema.get("additionalProperties") is False:
                found.append(f"{path}.{key}: not allowed")
            elif isinstance(schema.get("additionalProperties"), Mapping):
                found += errors(item, schema["additionalProperties"], root, f"{path}.{key}")
    if isinstance(value, list | tuple):
        if len(value) < schema.get("minItems", 0):
            found.append(f"{path}: too few items")
        if "items" in schema:
            for index, item in enumerate(value):
                found += errors(item, schema["items"], root, f"{path}[{index}]")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            found.append(f"{path}: below minimum")
        if "maximum" in schema and value > schema["maximum"]:
            found.append(f"{path}: above maximum")
        if "exclusiveMinimum" in schema and not value > schema["exclusiveMinimum"]:
            found.append(f"{path}: not above exclusiveMinimum")
    if isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
        found.append(f"{path}: does not match {schema['pattern']}")
    if "oneOf" in schema:
        matches = sum(1 for option in schema["oneOf"] if not errors(value, option, root, path))
        if matches != 1:
            found.append(f"{path}: matches {matches} of oneOf")
    if "not" in schema and not errors(value, schema["not"], root, path):
        found.append(f"{path}: matches a 'not' schema")
    if "if" in schema and not errors(value, schema["if"], root, path):
        found += errors(value, schema.get("then", {}), root, path)
    return found


def validate(value: Any, schema: Mapping[str, Any]) -> list[str]:
    return errors(value, schema, schema)
