"""Paths into a policy document and the value checks that report problems at them."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ParamSpec, TypeVar

from cupel._floats import to_float
from cupel.errors import CupelError
from cupel.model import ContextKind
from cupel.policy.errors import PolicyFileError

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _key(path: str, key: str) -> str:
    part = key if _BARE_KEY.fullmatch(key) else json.dumps(key, ensure_ascii=False)
    return f"{path}.{part}" if path else part


def _index(path: str, index: int) -> str:
    return f"{path}[{index}]"


def _show(value: object) -> str:
    """A value as the document spells it, for "got ..." in messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int) and abs(value) >= 10**24:
        return f"an integer of {len(str(abs(value)))} digits"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, list | tuple):
        return "an array"
    return type(value).__name__


def _table(value: object, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise PolicyFileError(path, f"must be a table, got {_show(value)}")
    return value


def _array(value: object, path: str) -> Sequence[Any]:
    if not isinstance(value, list | tuple):
        raise PolicyFileError(path, f"must be an array, got {_show(value)}")
    return value


def _string(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise PolicyFileError(path, f"must be a string, got {_show(value)}")
    return value


def _boolean(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        raise PolicyFileError(path, f"must be true or false, got {_show(value)}")
    return value


def _number(
    value: object,
    path: str,
    *,
    minimum: float | None = None,
    above: float | None = None,
    maximum: float | None = None,
) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PolicyFileError(path, f"must be a number, got {_show(value)}")
    number = to_float(value)
    if not math.isfinite(number):
        raise PolicyFileError(path, f"must be a finite number, got {_show(value)}")
    if above is not None and not number > above:
        raise PolicyFileError(path, f"must be > {above:g}, got {_show(value)}")
    if minimum is not None and number < minimum:
        raise PolicyFileError(path, f"must be >= {minimum:g}, got {_show(value)}")
    if maximum is not None and number > maximum:
        raise PolicyFileError(path, f"must be <= {maximum:g}, got {_show(value)}")
    return number


def _integer(value: object, path: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PolicyFileError(path, f"must be an integer, got {_show(value)}")
    if value < minimum:
        bound = "> 0" if minimum == 1 else f">= {minimum}"
        raise PolicyFileError(path, f"must be {bound}, got {_show(value)}")
    return value


def _kind(value: object, path: str) -> ContextKind:
    text = _string(value, path)
    if not text.strip():
        raise PolicyFileError(path, f"must be a non-blank kind name, got {_show(value)}")
    return ContextKind(text)


def _check_keys(table: Mapping[str, Any], path: str, allowed: Iterable[str], what: str) -> None:
    allowed_keys = tuple(allowed)
    for key in table:
        if key not in allowed_keys:
            known = ", ".join(allowed_keys)
            raise PolicyFileError(_key(path, str(key)), f"unknown key for {what}; allowed keys: {known}")


def _required(table: Mapping[str, Any], path: str, key: str) -> Any:
    if key not in table:
        raise PolicyFileError(_key(path, key), "required")
    return table[key]


_P = ParamSpec("_P")
_T = TypeVar("_T")


def _construct(path: str, build: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
    """Run a library constructor; its validation message is reported at ``path``."""
    try:
        return build(*args, **kwargs)
    except PolicyFileError:
        raise
    except (CupelError, TypeError, ValueError) as error:
        raise PolicyFileError(path, str(error)) from None
