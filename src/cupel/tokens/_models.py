"""Which tiktoken encoding an OpenAI model uses: tiktoken's own map, or a copy of it.

With the ``tiktoken`` package installed its ``tiktoken.model`` tables are used as they are; the copy below
serves the pure-Python path and a test checks that it equals the installed tiktoken's.
"""

from __future__ import annotations

import importlib

from cupel.errors import CupelTypeError, InvalidConfigurationError

__all__ = ["MODEL_PREFIX_TO_ENCODING", "MODEL_TO_ENCODING", "encoding_for_model"]

#: Exact model names (tiktoken.model.MODEL_TO_ENCODING, tiktoken 0.14).
MODEL_TO_ENCODING: dict[str, str] = {
    "o1": "o200k_base",
    "o3": "o200k_base",
    "o4-mini": "o200k_base",
    "gpt-5": "o200k_base",
    "gpt-4.1": "o200k_base",
    "gpt-4o": "o200k_base",
    "gpt-4": "cl100k_base",
    "gpt-3.5-turbo": "cl100k_base",
    "gpt-3.5": "cl100k_base",
    "gpt-35-turbo": "cl100k_base",
    "davinci-002": "cl100k_base",
    "babbage-002": "cl100k_base",
    "text-embedding-ada-002": "cl100k_base",
    "text-embedding-3-small": "cl100k_base",
    "text-embedding-3-large": "cl100k_base",
    "text-davinci-003": "p50k_base",
    "text-davinci-002": "p50k_base",
    "text-davinci-001": "r50k_base",
    "text-curie-001": "r50k_base",
    "text-babbage-001": "r50k_base",
    "text-ada-001": "r50k_base",
    "davinci": "r50k_base",
    "curie": "r50k_base",
    "babbage": "r50k_base",
    "ada": "r50k_base",
    "code-davinci-002": "p50k_base",
    "code-davinci-001": "p50k_base",
    "code-cushman-002": "p50k_base",
    "code-cushman-001": "p50k_base",
    "davinci-codex": "p50k_base",
    "cushman-codex": "p50k_base",
    "text-davinci-edit-001": "p50k_edit",
    "code-davinci-edit-001": "p50k_edit",
    "text-similarity-davinci-001": "r50k_base",
    "text-similarity-curie-001": "r50k_base",
    "text-similarity-babbage-001": "r50k_base",
    "text-similarity-ada-001": "r50k_base",
    "text-search-davinci-doc-001": "r50k_base",
    "text-search-curie-doc-001": "r50k_base",
    "text-search-babbage-doc-001": "r50k_base",
    "text-search-ada-doc-001": "r50k_base",
    "code-search-babbage-code-001": "r50k_base",
    "code-search-ada-code-001": "r50k_base",
    "gpt2": "gpt2",
    "gpt-2": "gpt2",
}

#: Name prefixes, tried in this order (tiktoken.model.MODEL_PREFIX_TO_ENCODING, tiktoken 0.14).
MODEL_PREFIX_TO_ENCODING: dict[str, str] = {
    "o1-": "o200k_base",
    "o3-": "o200k_base",
    "o4-mini-": "o200k_base",
    "gpt-5": "o200k_base",
    "gpt-4.5-": "o200k_base",
    "gpt-4.1-": "o200k_base",
    "chatgpt-4o-": "o200k_base",
    "gpt-4o-": "o200k_base",
    "gpt-4-": "cl100k_base",
    "gpt-3.5-turbo-": "cl100k_base",
    "gpt-35-turbo-": "cl100k_base",
    "gpt-oss-": "o200k_harmony",
    "ft:gpt-4o": "o200k_base",
    "ft:gpt-4": "cl100k_base",
    "ft:gpt-3.5-turbo": "cl100k_base",
    "ft:davinci-002": "cl100k_base",
    "ft:babbage-002": "cl100k_base",
}


def _tables() -> tuple[dict[str, str], dict[str, str]]:
    try:
        model = importlib.import_module("tiktoken.model")
    except ImportError:
        return MODEL_TO_ENCODING, MODEL_PREFIX_TO_ENCODING
    return model.MODEL_TO_ENCODING, model.MODEL_PREFIX_TO_ENCODING


def _lookup(name: str, exact: dict[str, str], prefixes: dict[str, str]) -> str | None:
    # tiktoken.model.encoding_name_for_model's rule: an exact name first, then the first matching prefix.
    if name in exact:
        return exact[name]
    for prefix, encoding in prefixes.items():
        if name.startswith(prefix):
            return encoding
    return None


def encoding_for_model(model: str) -> str:
    """The encoding name an OpenAI model uses, as tiktoken maps it: ``"gpt-4o"`` -> ``"o200k_base"``.

    A provider prefix (``"openai/gpt-4o"``) and letter case are ignored when the name as given is not
    known. The name returned may be one that cannot be loaded offline (``"p50k_base"`` for
    ``"text-davinci-003"``); :class:`~cupel.tokens.TiktokenCounter` then says so.
    """
    if not isinstance(model, str):
        raise CupelTypeError(f"model must be a str, got {type(model).__name__}")
    exact, prefixes = _tables()
    bare = model.rsplit("/", 1)[-1].strip()
    for name in dict.fromkeys((model, bare, bare.lower())):
        found = _lookup(name, exact, prefixes)
        if found is not None:
            return found
    raise InvalidConfigurationError(
        f"no known tiktoken encoding for model {model!r}; pick the encoding by name instead: "
        "TiktokenCounter('o200k_base') for GPT-4o, GPT-4.1, GPT-5 and the o-series, "
        "TiktokenCounter('cl100k_base') for GPT-4, GPT-3.5 and text-embedding-3, "
        "TiktokenCounter('o200k_harmony') for gpt-oss"
    )
