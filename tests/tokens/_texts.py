"""Text generators shared by the differential token tests and the token benchmark."""

from __future__ import annotations

import base64
import random

_PIECES = (
    "hello",
    " world",
    "The",
    " QUICK",
    "fox's",
    " they'LL",
    " we've",
    "don'T",
    "12345678",
    " 3.14159",
    "\n",
    "\r\n",
    "\n\n\n",
    "\t",
    "   ",
    "  \n  ",
    "!!",
    " ...",
    "/path/to/file.py",
    '{"key": [1, 2]}',
    "<|endoftext|>",
    "日本語のテキスト",
    "お誕生日おめでとう",
    "中文字符",
    "Привет",
    " мир",
    "مرحبا",
    "שלום",
    "ελληνικά",
    "नमस्ते",
    "한국어",
    "🙂",
    "👩‍💻",
    "e\u0301",
    "\u0301\u0302",
    "ǅungla",
    "ſtraße",
    "\u00a0",
    "\u3000",
    "\u2028",
    "x\u200bx",
    "ÀÉÎÕÜ",
    "\x00\x07",
    "def f(x):\n    return x * 2\n",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "--------------------------------",
    "ACGTTGCAACGTAGCTAGCTAGGATCCGATCGATGCTAGCTAGC",
)


def varied_texts(count: int, seed: int = 17) -> list[str]:
    """``count`` strings mixing scripts, whitespace, digits, punctuation, contractions and emoji."""
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        parts = rng.choices(_PIECES, k=rng.randint(1, 30))
        if rng.random() < 0.3:
            parts.append("".join(chr(rng.randint(0x20, 0x2FFF)) for _ in range(rng.randint(1, 40))))
        texts.append("".join(parts))
    return texts


def base64_blob(size: int, seed: int = 17) -> str:
    """``size`` characters of base64 (the shape of an inlined binary attachment)."""
    raw = random.Random(seed).randbytes(size * 3 // 4 + 3)
    return base64.b64encode(raw).decode("ascii")[:size]


def mixed_scripts(size: int, seed: int = 17) -> str:
    """About ``size`` characters of mixed-script prose, code and numbers."""
    rng = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        part = rng.choice(_PIECES)
        parts.append(part)
        total += len(part)
    return "".join(parts)[:size]


def runs() -> dict[str, str]:
    """Long unbroken runs: the inputs on which a naive BPE merge is quadratic."""
    rng = random.Random(17)
    return {
        "a * 20000": "a" * 20000,
        "- * 10000": "-" * 10000,
        "space * 10000": " " * 10000,
        "newline * 5000": "\n" * 5000,
        "digits * 20000": "7" * 20000,
        "DNA 20 KB": "".join(rng.choice("ACGT") for _ in range(20000)),
        "CJK * 5000": "語" * 5000,
        "emoji * 2000": "🙂" * 2000,
        "hex 20 KB": rng.randbytes(10000).hex(),
    }
