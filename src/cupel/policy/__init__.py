"""Policies: a pipeline's configuration as a value, named presets, and policy files.

``Policy`` (:mod:`cupel.policy.policy`), the presets ``chat``, ``code_review``, ``rag``,
``document_qa``, ``tool_use``, ``long_running`` and ``debugging`` (:mod:`cupel.policy.presets`), and
TOML/JSON policy files (:mod:`cupel.policy.files`, with their component types in
:mod:`cupel.policy.registry`, durations in :mod:`cupel.policy.durations` and
:class:`PolicyFileError` in :mod:`cupel.policy.errors`). See ``docs/policies.md``. Every public name is
imported from its module on first use (``_LAZY``), so selecting with a preset loads neither the
policy-file readers nor the registry.
"""

from cupel._lazy import lazy_exports

TYPE_CHECKING = False  # typing itself is not imported: see cupel/__init__.py
if TYPE_CHECKING:
    from cupel.policy.chat_settings import CHAT_STRATEGIES, ChatSettings, ChatStrategy, ToolResultClearing
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
    "ToolResultClearing",
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

#: Public names imported on first use: name -> module. Add new exports here (and to __all__).
_LAZY: dict[str, str] = {
    "CHAT_STRATEGIES": "cupel.policy.chat_settings",
    "ChatSettings": "cupel.policy.chat_settings",
    "ChatStrategy": "cupel.policy.chat_settings",
    "ToolResultClearing": "cupel.policy.chat_settings",
    "format_duration": "cupel.policy.durations",
    "parse_duration": "cupel.policy.durations",
    "PolicyFileError": "cupel.policy.errors",
    "FORMAT_VERSION": "cupel.policy.files",
    "MissingTomlReaderError": "cupel.policy.files",
    "PolicyFormat": "cupel.policy.files",
    "dump_policy": "cupel.policy.files",
    "load_policy": "cupel.policy.files",
    "loads_policy": "cupel.policy.files",
    "policy_from_dict": "cupel.policy.files",
    "policy_schema": "cupel.policy.files",
    "policy_to_dict": "cupel.policy.files",
    "save_policy": "cupel.policy.files",
    "Policy": "cupel.policy.policy",
    "UnknownPresetError": "cupel.policy.presets",
    "chat": "cupel.policy.presets",
    "code_review": "cupel.policy.presets",
    "debugging": "cupel.policy.presets",
    "document_qa": "cupel.policy.presets",
    "get_preset": "cupel.policy.presets",
    "long_running": "cupel.policy.presets",
    "preset_description": "cupel.policy.presets",
    "preset_names": "cupel.policy.presets",
    "rag": "cupel.policy.presets",
    "tool_use": "cupel.policy.presets",
    "register_placer": "cupel.policy.registry",
    "register_scorer": "cupel.policy.registry",
    "register_slicer": "cupel.policy.registry",
    "registered_types": "cupel.policy.registry",
    "unregister_placer": "cupel.policy.registry",
    "unregister_scorer": "cupel.policy.registry",
    "unregister_slicer": "cupel.policy.registry",
}

__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)
