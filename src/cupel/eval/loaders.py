"""Loaders for LongMemEval- and LoCoMo-style files, and one entry point that tells the formats apart.

LongMemEval (Wu et al., ICLR 2025): a JSON array of instances with ``question_id``, ``question_type``,
``question``, ``answer``, ``question_date``, ``haystack_session_ids``, ``haystack_dates``,
``haystack_sessions`` (sessions of ``{role, content, has_answer?}`` turns) and ``answer_session_ids``.
Gold is the turns marked ``has_answer``; without marks, every turn of the answer sessions.

LoCoMo (Maharana et al., ACL 2024): a JSON array of samples with ``sample_id``, ``conversation``
(``speaker_a``, ``speaker_b``, ``session_N`` lists of ``{speaker, dia_id, text, blip_caption?}`` and
``session_N_date_time``) and ``qa`` (``{question, answer, evidence: ["D1:3", ...], category}``). Each
question with evidence becomes one case; gold is its evidence turns.

In both, the question is appended as the last user message (pinned by chat selection, never gold).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from cupel import _input
from cupel.eval.cases import (
    CaseFormatError,
    EvalCase,
    _case_from_dict,
    case_from_dict,
    read_case_text,
    read_cases,
)
from cupel.tokens.base import CounterLike

__all__ = [
    "load_any",
    "load_locomo",
    "load_longmemeval",
    "locomo_cases",
    "locomo_skipped",
    "longmemeval_cases",
    "shipped_cases",
    "shipped_cases_path",
]

_SESSION = re.compile(r"^session_(\d+)$")
_LONGMEMEVAL_ROLES = ("user", "assistant", "system")


def _fail(where: str, message: str) -> CaseFormatError:
    return CaseFormatError(f"{where}: {message}")


def _records(data: object, where: str) -> list[Mapping[str, Any]]:
    records = [data] if isinstance(data, Mapping) else data
    if not isinstance(records, list) or not all(isinstance(record, Mapping) for record in records):
        raise _fail(where, "expected a JSON array of objects")
    return records


def longmemeval_cases(data: object, source: str = "longmemeval") -> list[EvalCase]:
    """Cases from parsed LongMemEval JSON; instances without any evidence (abstention) are skipped."""
    cases: list[EvalCase] = []
    for number, record in enumerate(_records(data, source)):
        where = f"{source}[{number}]"
        sessions = record.get("haystack_sessions")
        if not isinstance(sessions, list) or not all(isinstance(session, list) for session in sessions):
            raise _fail(where, "haystack_sessions must be a list of sessions (lists of turns)")
        session_ids = record.get("haystack_session_ids") or [None] * len(sessions)
        answer_sessions = set(record.get("answer_session_ids") or ())
        messages: list[dict[str, Any]] = []
        marked: list[int] = []
        in_answer_session: list[int] = []
        for session_id, session in zip(session_ids, sessions, strict=False):
            for turn in session:
                if not isinstance(turn, Mapping) or not isinstance(turn.get("content"), str):
                    raise _fail(where, "every turn must be an object with string 'role' and 'content'")
                role = turn.get("role", "user")
                if role not in _LONGMEMEVAL_ROLES:
                    raise _fail(where, f"a turn's role must be user, assistant or system, got {role!r}")
                messages.append({"role": role, "content": turn["content"]})
                if turn.get("has_answer"):
                    marked.append(len(messages) - 1)
                if session_id is not None and session_id in answer_sessions:
                    in_answer_session.append(len(messages) - 1)
        gold = marked or in_answer_session
        question = record.get("question")
        if not gold or not isinstance(question, str):
            continue
        date = record.get("question_date")
        messages.append({"role": "user", "content": f"({date}) {question}" if date else question})
        question_type = record.get("question_type")
        tags = ["longmemeval", *([question_type] if isinstance(question_type, str) else [])]
        case_id = str(record.get("question_id", f"longmemeval-{number}"))
        case_record = {"id": case_id, "tags": tags, "question": question, "messages": messages, "gold": gold}
        # Plain-text turns with checked roles: chat selection reads them, no need to convert them twice.
        cases.append(_case_from_dict(case_record, where, None, check_transcript=False))
    return cases


def _turn_text(turn: Mapping[str, Any]) -> str:
    text = f"{turn.get('speaker', '?')}: {turn.get('text', '')}"
    caption = turn.get("blip_caption")
    return f"{text} [shares a photo: {caption}]" if isinstance(caption, str) and caption else text


def locomo_cases(data: object, source: str = "locomo") -> list[EvalCase]:
    """Cases from parsed LoCoMo JSON: one per question with at least one evidence turn found."""
    return [case for case, _ in _locomo_questions(data, source) if case is not None]


def locomo_skipped(data: object, source: str = "locomo") -> dict[str, int]:
    """How many LoCoMo questions :func:`locomo_cases` could not use, by reason (none: an empty dict)."""
    skipped: dict[str, int] = {}
    for case, reason in _locomo_questions(data, source):
        if case is None:
            skipped[reason] = skipped.get(reason, 0) + 1
    return dict(sorted(skipped.items()))


#: Evidence ids are separated by ``;``, ``,`` or white space (all three occur in the release).
_EVIDENCE_SEPARATOR = re.compile(r"[\s;,]+")


def _locomo_questions(data: object, source: str) -> Iterator[tuple[EvalCase | None, str]]:
    """Each question as a case, or None with the reason it cannot be used."""
    for number, record in enumerate(_records(data, source)):
        where = f"{source}[{number}]"
        conversation = record.get("conversation")
        if not isinstance(conversation, Mapping):
            raise _fail(where, "conversation must be an object with session_N lists")
        sessions = sorted(
            (int(match.group(1)), value)
            for key, value in conversation.items()
            if (match := _SESSION.match(key)) and isinstance(value, list)
        )
        messages: list[dict[str, Any]] = []
        by_dia: dict[str, int] = {}
        # Whoever speaks first is the user, so every transcript opens with a user message (a chat
        # request must); in some conversations speaker_b opens.
        opener = next(
            (turn.get("speaker") for _, turns in sessions for turn in turns if isinstance(turn, Mapping)),
            None,
        )
        for session, turns in sessions:
            when = conversation.get(f"session_{session}_date_time")
            for turn in turns:
                if not isinstance(turn, Mapping):
                    raise _fail(where, f"session_{session} turns must be objects")
                text = _turn_text(turn)
                if when and turn is turns[0]:
                    text = f"[{when}] {text}"
                role = "user" if turn.get("speaker") == opener else "assistant"
                messages.append({"role": role, "content": text})
                if isinstance(turn.get("dia_id"), str):
                    by_dia[turn["dia_id"].strip()] = len(messages) - 1
        sample = str(record.get("sample_id", f"locomo-{number}"))
        for position, qa in enumerate(record.get("qa") or ()):
            if not isinstance(qa, Mapping) or not isinstance(qa.get("question"), str):
                yield None, "no question text"
                continue
            refs = [
                part
                for entry in qa.get("evidence") or ()
                if isinstance(entry, str)
                for part in _EVIDENCE_SEPARATOR.split(entry)
                if part
            ]
            gold = sorted({by_dia[ref] for ref in refs if ref in by_dia})
            if not gold:
                yield None, "no evidence listed" if not refs else "no evidence id names a turn"
                continue
            category = qa.get("category")
            # Published descriptions of the category numbers disagree, so the tag keeps the number.
            tags = ["locomo", *([f"category-{category}"] if category is not None else [])]
            record_messages = [*messages, {"role": "user", "content": qa["question"]}]
            case_record = {
                "id": f"{sample}-q{position + 1}",
                "tags": tags,
                "question": qa["question"],
                "messages": record_messages,
                "gold": gold,
            }
            # The loader wrote this transcript (plain user/assistant text): no need to check it again.
            case = _case_from_dict(case_record, f"{where}.qa[{position}]", None, check_transcript=False)
            yield case, ""


def _read_json(path: Path, text: str | None = None) -> Any:
    """The file's JSON by :func:`cupel._input.loads_json` (RFC 8259, nesting limit)."""
    try:
        return _input.loads_json(read_case_text(path) if text is None else text, str(path))
    except _input.InputError as error:
        raise CaseFormatError(str(error)) from None


def load_longmemeval(path: str | Path) -> list[EvalCase]:
    """Cases from a LongMemEval-style JSON file (e.g. ``longmemeval_oracle.json``)."""
    path = Path(path)
    return longmemeval_cases(_read_json(path), str(path))


def load_locomo(path: str | Path) -> list[EvalCase]:
    """Cases from a LoCoMo-style JSON file (e.g. ``locomo10.json``)."""
    path = Path(path)
    return locomo_cases(_read_json(path), str(path))


def load_any(path: str | Path, counter: CounterLike | None = None) -> list[EvalCase]:
    """Cases from a case JSON Lines file, a JSON array of cases, or a LongMemEval- or LoCoMo-style file."""
    path = Path(path)
    text = read_case_text(path)
    if path.suffix.lower() == ".jsonl" or not text.lstrip().startswith("["):
        return read_cases(text, str(path), counter)
    data = _read_json(path, text)
    first = data[0] if isinstance(data, list) and data else None
    if isinstance(first, Mapping) and "haystack_sessions" in first:
        return longmemeval_cases(data, str(path))
    if isinstance(first, Mapping) and "conversation" in first and "qa" in first:
        return locomo_cases(data, str(path))
    if isinstance(data, list) and all(isinstance(record, Mapping) for record in data):
        return [case_from_dict(record, f"{path}[{n}]", counter) for n, record in enumerate(data)]
    raise _fail(str(path), "not a case file, LongMemEval or LoCoMo file")


def shipped_cases_path() -> Path:
    """The hand-written cases shipped with cupel."""
    return Path(__file__).resolve().parent / "data" / "cases.jsonl"


def shipped_cases(counter: CounterLike | None = None) -> list[EvalCase]:
    """The 45 hand-written cases (chat, agent/tool use, RAG, code review) shipped with cupel."""
    return read_cases(read_case_text(shipped_cases_path()), "shipped cases", counter)
