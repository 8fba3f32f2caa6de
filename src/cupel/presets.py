"""The policy presets, as ``cupel.presets.chat()`` etc. (see :mod:`cupel.policy.presets`)."""

from __future__ import annotations

from cupel.policy.presets import (
    UnknownPresetError,
    chat,
    code_review,
    debugging,
    document_qa,
    get_preset,
    long_running,
    preset_description,
    preset_names,
    rag,
    tool_use,
)

__all__ = [
    "UnknownPresetError",
    "chat",
    "code_review",
    "debugging",
    "document_qa",
    "get_preset",
    "long_running",
    "preset_description",
    "preset_names",
    "rag",
    "tool_use",
]
