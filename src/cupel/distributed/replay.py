"""``replay``: run policies × budgets over logged sessions on Dask, with per-session rows and a summary."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cupel.distributed._extra import require
from cupel.distributed.inputs import DEFAULT_BLOCKSIZE, SessionsLike, session_partitions
from cupel.distributed.partition import COLUMNS, RawSession, ReplayPlan, replay_records
from cupel.distributed.summary import finish_summary, merge_partials, partial_summary
from cupel.errors import CupelTypeError
from cupel.model import ContextBudget
from cupel.policy import Policy, dump_policy, get_preset, load_policy, preset_names

__all__ = ["ReplayResult", "policy_documents", "replay"]

#: The order of the rows: by session, then policy and budget. Applied before any output is written.
SORT_KEY = ["session_id", "source", "line", "policy", "budget"]

PolicyLike = Policy | str
BudgetLike = ContextBudget | int | str | None


@dataclass(frozen=True)
class ReplayResult:
    """Per-session rows (a persisted Dask dataframe, one row per session × policy × budget) and the summary.

    Each partition is sorted by :data:`SORT_KEY`; :meth:`to_pandas` and the writers in
    :mod:`cupel.distributed.output` sort the whole result, so the output does not depend on the
    partitioning or the worker count.
    """

    results: Any
    summary: dict[str, Any]
    scheduler: Any = None

    def to_pandas(self) -> Any:
        """All rows as one pandas dataframe, sorted by session id, source, line, policy, budget."""
        frame = self.results.compute(scheduler=self.scheduler)
        return frame.sort_values(SORT_KEY, kind="stable").reset_index(drop=True)


def replay(
    sessions: SessionsLike,
    policies: Mapping[str, PolicyLike] | Sequence[PolicyLike],
    budgets: Iterable[BudgetLike] = (None,),
    *,
    client: Any = None,
    scheduler: Any = None,
    counter: Any = None,
    blocksize: int = DEFAULT_BLOCKSIZE,
) -> ReplayResult:
    """Replay every session under every policy × budget on Dask (docs/replay.md).

    ``sessions``: a Dask bag of JSON lines or session dicts, a Dask dataframe (a ``session`` column of
    JSON lines, or ``id``/``items``/``messages``/``budget``/``gold`` columns), or paths/globs of JSONL and
    Parquet files. ``policies``: presets, policy files or texts, or :class:`~cupel.policy.Policy` values
    (named by the mapping's keys); they travel to the workers as policy documents. ``budgets``:
    ``MAX[:TARGET]`` strings, token counts, :class:`~cupel.ContextBudget` values, or ``None`` for each
    session's own budget. ``client``: a ``dask.distributed.Client``; without one, ``scheduler`` (for
    example ``"processes"``) or Dask's default is used. ``counter`` counts chat message tokens.
    ``blocksize``: bytes of JSONL per partition (the unit of work and of memory on a worker).
    """
    dask = require("dask")
    dd = require("dask.dataframe")
    pandas = require("pandas")
    plan = ReplayPlan(policy_documents(policies), _budget_plan(budgets), counter)
    chosen = client if client is not None else scheduler
    parts = session_partitions(sessions, chosen, blocksize)
    meta = pandas.DataFrame({name: pandas.Series(dtype=dtype) for name, dtype in COLUMNS.items()})
    plan_key = dask.delayed(plan, pure=True)
    frames = [dask.delayed(_replay_partition, pure=True)(part, plan_key) for part in parts]
    if not frames:
        frames = [dask.delayed(_replay_partition, pure=True)([], plan_key)]
    with dask.config.set({"dataframe.convert-string": False}):
        results = dd.from_delayed(frames, meta=meta, verify_meta=False)
    if client is not None:
        results = client.persist(results)
    else:
        (results,) = dask.persist(results, scheduler=scheduler)
    partials = [dask.delayed(_partial, pure=True)(part) for part in results.to_delayed()]
    merged = dask.delayed(merge_partials, pure=True)(partials)
    (summary,) = dask.compute(merged, scheduler=chosen)
    return ReplayResult(results, finish_summary(summary), chosen)


def _replay_partition(part: list[RawSession], plan: ReplayPlan) -> Any:
    pandas = require("pandas")
    rows = replay_records(part, plan)
    frame = pandas.DataFrame(rows, columns=list(COLUMNS))
    return frame.astype(COLUMNS)


def _partial(frame: Any) -> dict[str, dict[str, Any]]:
    return partial_summary(frame.to_dict(orient="records"))


def policy_documents(
    policies: Mapping[str, PolicyLike] | Sequence[PolicyLike],
) -> tuple[tuple[str, str], ...]:
    """``(name, JSON policy document)`` for each policy, in the given order; names must be unique."""
    if isinstance(policies, str | Policy):
        policies = [policies]
    named: list[tuple[str, PolicyLike]]
    if isinstance(policies, Mapping):
        named = [(str(name), value) for name, value in policies.items()]
    else:
        named = [(_default_name(value, index), value) for index, value in enumerate(policies)]
    if not named:
        raise CupelTypeError("policies: expected at least one policy")
    names = [name for name, _ in named]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise CupelTypeError(f"policies: duplicate policy name {duplicates[0]!r}")
    return tuple((name, dump_policy(_as_policy(value), "json")) for name, value in named)


def _default_name(value: PolicyLike, index: int) -> str:
    if isinstance(value, str) and value in preset_names():
        return value
    if isinstance(value, str) and "\n" not in value and not value.lstrip().startswith("{"):
        from pathlib import Path

        return Path(value).stem
    return f"policy{index + 1}"


def _as_policy(value: PolicyLike) -> Policy:
    if isinstance(value, Policy):
        return value
    if isinstance(value, str):
        if value in preset_names():
            return get_preset(value)
        return load_policy(value)
    raise CupelTypeError(
        f"policies: expected a Policy, a preset name or a policy file, got {type(value).__name__}"
    )


def _budget_plan(budgets: Iterable[BudgetLike]) -> tuple[tuple[str, Mapping[str, Any] | None], ...]:
    plan: list[tuple[str, Mapping[str, Any] | None]] = []
    for value in budgets:
        budget = _as_budget(value)
        if budget is None:
            plan.append(("session", None))
            continue
        label = str(budget.max_tokens)
        if budget.target_tokens != budget.max_tokens:
            label += f":{budget.target_tokens}"
        if budget.output_reserve:
            label += f"-{budget.output_reserve}"
        plan.append((label, budget.to_dict()))
    if not plan:
        raise CupelTypeError("budgets: expected at least one budget (None for each session's own)")
    labels = [label for label, _ in plan]
    if len(set(labels)) != len(labels):
        raise CupelTypeError("budgets: the same budget is given twice")
    return tuple(plan)


def _as_budget(value: BudgetLike) -> ContextBudget | None:
    if value is None or isinstance(value, ContextBudget):
        return value
    if isinstance(value, bool):
        raise CupelTypeError(
            f"budgets: expected MAX[:TARGET], a token count or a ContextBudget, got {value!r}"
        )
    if isinstance(value, int):
        return ContextBudget(value, value)
    if isinstance(value, str):
        parts = value.split(":")
        if len(parts) > 2 or not all(part.strip().isdigit() for part in parts):
            raise CupelTypeError(f"budgets: expected MAX or MAX:TARGET as whole numbers, got {value!r}")
        maximum = int(parts[0])
        return ContextBudget(maximum, int(parts[1]) if len(parts) == 2 else maximum)
    raise CupelTypeError(
        f"budgets: expected MAX[:TARGET], a token count or a ContextBudget, got {type(value).__name__}"
    )
