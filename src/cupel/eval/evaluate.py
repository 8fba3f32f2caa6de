"""evaluate(cases, policies, budgets): run every policy and baseline on every case at every budget.

It returns an :class:`~cupel.eval.result.EvalResult`: one run per (case, selector, budget), aggregated on
demand. Selectors are the policies, in the order given, then the baselines ``recent``, ``random`` and
``oracle``.
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

from cupel.chat import INDICES_KEY, message_token_counts, messages_to_items, to_messages
from cupel.errors import CupelError, CupelTypeError, InvalidConfigurationError
from cupel.eval.baselines import oracle_knapsack, random_units, recent_items, recent_messages
from cupel.eval.cases import EvalCase
from cupel.eval.metrics import CaseMetrics, case_metrics, interchangeable
from cupel.eval.result import BASELINES, EvalResult, Run
from cupel.eval.validity import transcript_problems
from cupel.model import ContextBudget, ContextItem
from cupel.pipeline import Pipeline
from cupel.policy import Policy
from cupel.tokens.base import CounterLike

__all__ = ["PolicyLike", "evaluate", "resolve_policies"]

PolicyLike = Policy | Pipeline | str
"""A Policy, a Pipeline, a preset name, or a policy file path (``.toml`` / ``.json``)."""


def _label_for(policy: object, position: int) -> str:
    return policy if isinstance(policy, str) else f"policy{position + 1}"


def _pipeline(policy: object) -> Pipeline:
    from cupel.policy import get_preset, load_policy

    if isinstance(policy, Pipeline):
        return policy
    if isinstance(policy, Policy):
        return Pipeline.from_policy(policy)
    if isinstance(policy, str):
        if Path(policy).suffix.lower() in (".toml", ".json"):
            return Pipeline.from_policy(load_policy(Path(policy)))
        return Pipeline.from_policy(get_preset(policy))
    raise CupelTypeError(f"policies: expected a Policy, Pipeline, preset name or policy file, got {policy!r}")


def resolve_policies(policies: Mapping[str, PolicyLike] | Sequence[PolicyLike]) -> dict[str, Pipeline]:
    """Label -> pipeline. A sequence's strings label themselves (a file by its stem); others are numbered."""
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
    resolved: dict[str, Pipeline] = {}
    for label, policy in named:
        if label in resolved or label in BASELINES:
            raise InvalidConfigurationError(
                f"policies: the label {label!r} is used twice or names a baseline"
            )
        resolved[label] = _pipeline(policy)
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


def _run_policy(prepared: _Prepared, pipeline: Pipeline, budget: ContextBudget) -> CaseMetrics:
    start = time.perf_counter()
    try:
        chosen = pipeline.run(prepared.items, budget)
        window, messages = prepared.window(chosen)
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
    if name == "random":
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


def _chronological(items: Sequence[ContextItem]) -> list[int]:
    """Oldest first by timestamp when every item has one; otherwise the given order."""
    if all(item.timestamp is not None for item in items):
        return sorted(range(len(items)), key=lambda n: (items[n].timestamp, n))
    return list(range(len(items)))


@dataclass(frozen=True, slots=True)
class _Task:
    """One case's work. ``policies`` holds pipelines, or policy-file dicts when sent to a worker process."""

    case: EvalCase
    policies: Mapping[str, Pipeline] | tuple[tuple[str, str], ...]
    budgets: tuple[ContextBudget, ...]
    counter: CounterLike | None
    seed: int


@functools.lru_cache(maxsize=64)
def _pipeline_from_json(text: str) -> Pipeline:
    from cupel.policy import policy_from_dict

    return Pipeline.from_policy(policy_from_dict(json.loads(text)))


def _pipelines(task: _Task) -> Mapping[str, Pipeline]:
    if isinstance(task.policies, Mapping):
        return task.policies
    return {label: _pipeline_from_json(text) for label, text in task.policies}


def _portable(pipelines: Mapping[str, Pipeline]) -> tuple[tuple[str, str], ...]:
    """Policies as policy-file JSON, which worker processes rebuild (pipelines themselves do not pickle)."""
    from cupel.policy import policy_to_dict

    portable = []
    for label, pipeline in pipelines.items():
        try:
            portable.append((label, json.dumps(policy_to_dict(Policy.from_pipeline(pipeline)))))
        except CupelError as error:
            raise InvalidConfigurationError(
                f"jobs > 1 needs policies a policy file can express; {label!r} cannot ({error}); use jobs=1"
            ) from None
    return tuple(portable)


def _evaluate_case(task: _Task) -> list[Run]:
    prepared = _prepare(task.case, task.counter)
    runs: list[Run] = []
    for budget in task.budgets:
        for label, pipeline in _pipelines(task).items():
            runs.append(Run(task.case.id, label, budget.max_tokens, _run_policy(prepared, pipeline, budget)))
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
    progress: Callable[[int, int], None] | None = None,
) -> EvalResult:
    """Run ``policies`` and the baselines on ``cases`` at each budget (docs/eval.md).

    ``policies``: preset names, policy files, Policies or Pipelines (or a label -> policy mapping).
    ``budgets``: token counts (``n`` means ``ContextBudget(n, n)``) or ContextBudgets. ``counter`` costs
    chat messages (chars/4 by default). ``seed`` drives the random baseline and the bootstrap;
    ``jobs`` > 1 evaluates cases in worker processes with identical results. ``progress(done, total)``
    is called after each case.
    """
    case_list = tuple(cases)
    for position, case in enumerate(case_list):
        if not isinstance(case, EvalCase):
            raise CupelTypeError(f"cases[{position}] must be an EvalCase, got {type(case).__name__}")
    if not case_list:
        raise InvalidConfigurationError("cases: no cases to evaluate")
    pipelines = resolve_policies(policies)
    budget_list = tuple(_budget(budget) for budget in budgets)
    if not budget_list:
        raise InvalidConfigurationError("budgets: give at least one budget")
    labels = [budget.max_tokens for budget in budget_list]
    if len(set(labels)) != len(labels):
        raise InvalidConfigurationError(f"budgets: each budget needs a different max_tokens, got {labels}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise InvalidConfigurationError(f"jobs must be an int >= 1, got {jobs!r}")
    policies_for_tasks: Mapping[str, Pipeline] | tuple[tuple[str, str], ...] = pipelines
    if jobs > 1 and len(case_list) > 1:
        policies_for_tasks = _portable(pipelines)
    tasks = [_Task(case, policies_for_tasks, budget_list, counter, seed) for case in case_list]
    runs: list[Run] = []
    for done, case_runs in enumerate(_map(tasks, jobs), start=1):
        runs.extend(case_runs)
        if progress is not None:
            progress(done, len(tasks))
    return EvalResult(tuple(pipelines), tuple(labels), case_list, tuple(runs), seed, resamples)
