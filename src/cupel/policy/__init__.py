"""Policies: a pipeline's configuration as a value, named presets, and policy files.

``Policy`` (:mod:`cupel.policy.policy`), the presets ``chat``, ``code_review``, ``rag``,
``document_qa``, ``tool_use``, ``long_running`` and ``debugging`` (:mod:`cupel.policy.presets`), and
TOML/JSON policy files (:mod:`cupel.policy.files`, with their component types in
:mod:`cupel.policy.registry`, durations in :mod:`cupel.policy.durations` and
:class:`PolicyFileError` in :mod:`cupel.policy.errors`). See ``docs/policies.md``.
"""

from cupel.policy.chat_settings import CHAT_STRATEGIES, ChatSettings, ChatStrategy
from cupel.policy.durations import format_duration, parse_duration
from cupel.policy.errors import PolicyFileError
from cupel.policy.files import (
    FORMAT_VERSION,
    MissingTomlReaderError,
    PolicyFormat,
    dump_policy,
    load_policy,
    loads_policy,
    policy_from_dict,
    policy_schema,
    policy_to_dict,
    save_policy,
)
from cupel.policy.policy import Policy
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
from cupel.policy.registry import (
    register_placer,
    register_scorer,
    register_slicer,
    registered_types,
    unregister_placer,
    unregister_scorer,
    unregister_slicer,
)

__all__ = [
    "CHAT_STRATEGIES",
    "FORMAT_VERSION",
    "ChatSettings",
    "ChatStrategy",
    "MissingTomlReaderError",
    "Policy",
    "PolicyFileError",
    "PolicyFormat",
    "UnknownPresetError",
    "chat",
    "code_review",
    "debugging",
    "document_qa",
    "dump_policy",
    "format_duration",
    "get_preset",
    "load_policy",
    "loads_policy",
    "long_running",
    "parse_duration",
    "policy_from_dict",
    "policy_schema",
    "policy_to_dict",
    "preset_description",
    "preset_names",
    "rag",
    "register_placer",
    "register_scorer",
    "register_slicer",
    "registered_types",
    "save_policy",
    "tool_use",
    "unregister_placer",
    "unregister_scorer",
    "unregister_slicer",
]
