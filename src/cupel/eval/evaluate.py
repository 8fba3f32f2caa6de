"""evaluate(cases, policies, budgets): run every policy and baseline on every case at every budget.

It returns an :class:`~cupel.eval.result.EvalResult`: one run per (case, selector, budget), aggregated on
demand. Selectors are the policies, in the order given, then the baselines ``recent``, ``bm25``,
``random`` and ``oracle``.

What users run is what is measured: item cases go through ``pipeline.run(items, budget, query=...)``,
chat cases through ``select_messages`` with each policy's own chat settings (``strategy`` overrides
its strategy). Both get the case's query (:func:`case_query`), chat cases as ``select_messages``'s
``query``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cupel.chat import INDICES_KEY, message_token_counts, messages_to_items, select_messages, to_messages
from cupel.errors import CupelError, CupelTypeError, InvalidConfigurationError
from cupel.eval.baselines import bm25_units, oracle_knapsack, random_units, recent_items, recent_messages
from cupel.eval.cases import EvalCase
from cupel.eval.metrics import CaseMetrics, case_metrics, interchangeable
from cupel.eval.result import BASELINES, EvalResult, Run
from cupel.eval.validity import transcript_problems
from cupel.model import ContextBudget, ContextItem
from cupel.pipeline import Pipeline
from cupel.policy import ChatSettings, Policy
from cupel.tokens.base import CounterLike

__all__ = ["PolicyLike", "case_query", "evaluate", "resolve_policies"]

PolicyLike = Policy | Pipeline | str
"""A Policy, a Pipeline, a preset name, or a policy file path (``.toml`` / ``.json``)."""


def _label_for(policy: object, position: int) -> str:
    return policy if isinstance(policy, str) else f"policy{position + 1}"


@dataclass(frozen=True, slots=True)
class _Selector:
    """A policy as evaluation runs it: its pipeline, and the chat settings chat cases run with."""

    pipeline: Pipeline
    chat: ChatSettings


def _selector(policy: object) -> _Selector:
    from cupel.policy import get_preset, load_policy

    if isinstance(policy, Pipeline):
        return _Selector(policy, ChatSettings())
    if isinstance(policy, str):
        is_file = Path(policy).suffix.lower() in (".toml", ".json")
        policy = load_policy(Path(policy)) if is_file else get_preset(policy)
    if isinstance(policy, Policy):
        return _Selector(Pipeline.from_policy(policy), policy.chat or ChatSettings())
    raise CupelTypeError(f"policies: expected a Policy, Pipeline, preset name or policy file, got {policy!r}")


def case_query(case: EvalCase) -> str | None:
    """The query a case is selected for: its question; for a chat case without one, the text of the
    latest user message (the question the model must answer)."""
    if case.question is not None or case.messages is None:
        return case.question
    for message in reversed(case.messages):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return str(message["content"])
    return None


def resolve_policies(policies: Mapping[str, PolicyLike] | Sequence[PolicyLike]) -> dict[str, Pipeline]:
    """Label -> pipeline. A sequence's strings label themselves (a file by its stem); others are numbered."""
    return {label: selector.pipeline for label, selector in _resolve_selectors(policies).items()}


def _resolve_selectors(policies: Mapping[str, PolicyLike] | Sequence[PolicyLike]) -> dict[str, _Selector]:
    if isinstance(policies, str):
        policies = [policies]
    if isinstance(policies, Mapping):
        named = list(policies.items())
    else:
        named = []
        for position, policy in enumerate(policies):
            label = _label_for(policy, position)
            if isinstance(policy, str) and Path(policy).suffix.lower() in (".toml", ".json"):
                label = Path(policy).stem
            named.append((label, policy))
    if not named:
        raise InvalidConfigurationError("policies: give at least one policy")
    resolved: dict[str, _Selector] = {}
    for label, policy in named:
        if label in resolved or label in BASELINES:
            raise InvalidConfigurationError(
                f"policies: the label {label!r} is used twice or names a baseline"
            )
        resolved[label] = _selector(policy)
    return resolved


def _budget(value: object) -> ContextBudget:
    if isinstance(value, ContextBudget):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise CupelTypeError(f"budgets: expected an int or a ContextBudget, got {value!r}")
    if value <= 0:
        raise InvalidConfigurationError(f"budgets: a budget must be > 0 tokens, got {value}")
    return ContextBudget(value, value)


# ---- one case --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A case as units: ``items`` (what pipelines select), each unit's element indices, element tokens."""

    case: EvalCase
    items: list[ContextItem]
    unit_elements: list[tuple[int, ...]]
    tokens: list[int]
    positions: dict[int, int]  # id(item or message) -> element
    canon: list[int]  # element -> the first element with identical content (duplicates are interchangeable)
    gold: dict[int, float]  # gold by canonical element

    def window(self, chosen: Sequence[ContextItem]) -> tuple[list[int], Any]:
        """Element indices in the order the model sees them, and the chat messages (or None)."""
        if self.case.messages is None:
            return [self.positions[id(item)] for item in chosen], None
        messages = to_messages(chosen)
        return [self.positions[id(message)] for message in messages], messages


def _prepare(case: EvalCase, counter: CounterLike | None) -> _Prepared:
    if case.messages is not None:
        messages = case.messages
        items = messages_to_items(messages, counter=counter)
        units = [tuple(item.metadata[INDICES_KEY]) for item in items]
        tokens = message_token_counts(messages, counter=counter)
        positions = {id(message): index for index, message in enumerate(messages)}
        canon, gold = interchangeable(messages, case.gold, chat=True)
    else:
        assert case.items is not None
        items = list(case.items)
        units = [(n,) for n in range(len(items))]
        tokens = [item.tokens for item in items]
        positions = {id(item): index for index, item in enumerate(items)}
        canon, gold = interchangeable(items, case.gold, chat=False)
    return _Prepared(case, items, units, tokens, positions, canon, gold)


def _score(
    prepared: _Prepared, window: list[int], messages: Any, budget: ContextBudget, seconds: float
) -> CaseMetrics:
    valid = None if messages is None else not transcript_problems(messages, prepared.case.provider)
    canonical = [prepared.canon[element] for element in window]
    return case_metrics(
        canonical, prepared.tokens, prepared.gold, budget.target_tokens, valid=valid, seconds=seconds
    )


def _run_policy(prepared: _Prepared, selector: _Selector, budget: ContextBudget, task: _Task) -> CaseMetrics:
    case = prepared.case
    query = case_query(case)
    start = time.perf_counter()
    try:
        if case.messages is None:
            chosen = selector.pipeline.run(prepared.items, budget, query=query)
            window, messages = prepared.window(chosen)
        else:
            chat = selector.chat
            selection = select_messages(
                list(case.messages),
                budget,
                selector.pipeline,
                task.counter,
                query=query,
                strategy=task.strategy or chat.strategy,  # type: ignore[arg-type]  # evaluate checks it
                keep_first_turn=chat.keep_first_turn,
                recent_share=chat.recent_share,
                start_on=chat.start_on,
                clear_tool_results=chat.clear_tool_results,
            )
            messages = selection.messages
            # A cleared tool result is a new message without its content: it counts as not kept.
            positions = prepared.positions
            window = [positions[id(message)] for message in messages if id(message) in positions]
    except CupelError as error:
        seconds = time.perf_counter() - start
        failed = case_metrics([], prepared.tokens, prepared.gold, budget.target_tokens, seconds=seconds)
        valid = None if prepared.case.messages is None else 0.0
        return dataclasses.replace(failed, error=str(error), valid=valid)
    return _score(prepared, window, messages, budget, time.perf_counter() - start)


def _run_baseline(prepared: _Prepared, name: str, budget: ContextBudget, seed: int) -> CaseMetrics:
    case, limit = prepared.case, budget.target_tokens
    start = time.perf_counter()
    if name == "recent" and case.messages is not None:
        roles = [str(message.get("role")) for message in case.messages]
        window = recent_messages(roles, prepared.tokens, limit)
        messages: Any = [case.messages[index] for index in window]
        return _score(prepared, window, messages, budget, time.perf_counter() - start)
    if name == "recent":
        window = recent_items(_chronological(prepared.items), prepared.tokens, limit)
        return _score(prepared, window, None, budget, time.perf_counter() - start)
    unit_tokens = [sum(prepared.tokens[e] for e in elements) for elements in prepared.unit_elements]
    if name == "bm25":
        units = _bm25_baseline(prepared, unit_tokens, limit)
    elif name == "random":
        units = random_units(unit_tokens, limit, zlib.crc32(f"{seed}:{case.id}:{limit}".encode()))
    else:
        values = {
            unit: sum(prepared.gold.get(element, 0.0) for element in elements)
            for unit, elements in enumerate(prepared.unit_elements)
        }
        units = oracle_knapsack(unit_tokens, values, limit)
    window, messages = prepared.window([prepared.items[unit] for unit in units])
    # The oracle is a bound on recall, not a context anyone would send: its validity is not scored.
    return _score(
        prepared, window, None if name == "oracle" else messages, budget, time.perf_counter() - start
    )


def _bm25_baseline(prepared: _Prepared, unit_tokens: list[int], limit: int) -> list[int]:
    """Greedy by BM25 score against the case's query; a chat case's last unit (the question) first."""
    query = case_query(prepared.case) or ""
    texts = [item.content for item in prepared.items]
    if prepared.case.messages is None or not texts:
        return bm25_units(query, texts, unit_tokens, limit)
    last = len(texts) - 1
    if unit_tokens[last] > limit:
        return bm25_units(query, texts[:last], unit_tokens[:last], limit)
    return [*bm25_units(query, texts[:last], unit_tokens[:last], limit - unit_tokens[last]), last]


def _chronological(items: Sequence[ContextItem]) -> list[int]:
    """Oldest first by timestamp when every item has one; otherwise the given order."""
    if all(item.timestamp is not None for item in items):
        return sorted(range(len(items)), key=lambda n: (items[n].timestamp, n))
    return list(range(len(items)))


@dataclass(frozen=True, slots=True)
class _Task:
    """One case's work. ``policies`` holds pipelines, or policy-file dicts when sent to a worker process."""

    case: EvalCase
    policies: Mapping[str, _Selector] | tuple[tuple[str, str], ...]
    budgets: tuple[ContextBudget, ...]
    counter: CounterLike | None
    seed: int
    strategy: str | None = None


@functools.lru_cache(maxsize=64)
def _selector_from_json(text: str) -> _Selector:
    from cupel.policy import policy_from_dict

    return _selector(policy_from_dict(json.loads(text)))


def _selectors(task: _Task) -> Mapping[str, _Selector]:
    if isinstance(task.policies, Mapping):
        return task.policies
    return {label: _selector_from_json(text) for label, text in task.policies}


def _portable(selectors: Mapping[str, _Selector]) -> tuple[tuple[str, str], ...]:
    """Policies as policy-file JSON, which worker processes rebuild (pipelines themselves do not pickle)."""
    from cupel.policy import policy_to_dict

    portable = []
    for label, selector in selectors.items():
        try:
            policy = Policy.from_pipeline(selector.pipeline).replace(chat=selector.chat)
            portable.append((label, json.dumps(policy_to_dict(policy))))
        except CupelError as error:
            raise InvalidConfigurationError(
                f"jobs > 1 needs policies a policy file can express; {label!r} cannot ({error}); use jobs=1"
            ) from None
    return tuple(portable)


def _evaluate_case(task: _Task) -> list[Run]:
    prepared = _prepare(task.case, task.counter)
    runs: list[Run] = []
    for budget in task.budgets:
        for label, selector in _selectors(task).items():
            metrics = _run_policy(prepared, selector, budget, task)
            runs.append(Run(task.case.id, label, budget.max_tokens, metrics))
        for name in BASELINES:
            metrics = _run_baseline(prepared, name, budget, task.seed)
            runs.append(Run(task.case.id, name, budget.max_tokens, metrics))
    return runs


def _map(tasks: Sequence[_Task], jobs: int) -> Iterator[list[Run]]:
    if jobs == 1 or len(tasks) < 2:
        yield from map(_evaluate_case, tasks)
        return
    import os
    from concurrent.futures import ProcessPoolExecutor

    workers = min(jobs, len(tasks), os.cpu_count() or 1)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        # map() yields in input order: the result is the same whatever the worker count.
        yield from pool.map(_evaluate_case, tasks, chunksize=max(1, len(tasks) // (workers * 4)))


def evaluate(
    cases: Iterable[EvalCase],
    policies: Mapping[str, PolicyLike] | Sequence[PolicyLike],
    budgets: Iterable[int | ContextBudget],
    *,
    counter: CounterLike | None = None,
    seed: int = 0,
    resamples: int = 1000,
    jobs: int = 1,
    strategy: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> EvalResult:
    """Run ``policies`` and the baselines on ``cases`` at each budget (docs/eval.md).

    ``policies``: preset names, policy files, Policies or Pipelines (or a label -> policy mapping).
    ``budgets``: token counts (``n`` means ``ContextBudget(n, n)``) or ContextBudgets. ``counter`` costs
    chat messages (chars/4 by default). ``seed`` drives the random baseline and the bootstrap;
    ``jobs`` > 1 evaluates cases in worker processes with identical results. ``strategy``
    (``"turns"``, ``"last"``, ``"messages"``) runs every chat case with that ``select_messages``
    strategy instead of each policy's own. ``progress(done, total)`` is called after each case.
    """
    case_list = tuple(cases)
    for position, case in enumerate(case_list):
        if not isinstance(case, EvalCase):
            raise CupelTypeError(f"cases[{position}] must be an EvalCase, got {type(case).__name__}")
    if not case_list:
        raise InvalidConfigurationError("cases: no cases to evaluate")
    selectors = _resolve_selectors(policies)
    if strategy is not None and strategy not in ("turns", "last", "messages"):
        raise InvalidConfigurationError(f"strategy must be turns, last or messages, got {strategy!r}")
    budget_list = tuple(_budget(budget) for budget in budgets)
    if not budget_list:
        raise InvalidConfigurationError("budgets: give at least one budget")
    labels = [budget.max_tokens for budget in budget_list]
    if len(set(labels)) != len(labels):
        raise InvalidConfigurationError(f"budgets: each budget needs a different max_tokens, got {labels}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise InvalidConfigurationError(f"jobs must be an int >= 1, got {jobs!r}")
    policies_for_tasks: Mapping[str, _Selector] | tuple[tuple[str, str], ...] = selectors
    if jobs > 1 and len(case_list) > 1:
        policies_for_tasks = _portable(selectors)
    tasks = [_Task(case, policies_for_tasks, budget_list, counter, seed, strategy) for case in case_list]
    runs: list[Run] = []
    for done, case_runs in enumerate(_map(tasks, jobs), start=1):
        runs.extend(case_runs)
        if progress is not None:
            progress(done, len(tasks))
    return EvalResult(tuple(selectors), tuple(labels), case_list, tuple(runs), seed, resamples)
