"""Evidence recall on LoCoMo conversations: the selectors a chat user can run, with the question.

Usage: ``python benchmarks/locomo_dev.py [PATH] [--budgets 1000,2000,4000,8000] [--selectors a,b]
[--limit N] [--json]``. PATH defaults to ``../shared/data/locomo/locomo-dev.json`` beside the
repository (CC BY-NC: read from there, never copied). Every question with usable evidence becomes one
case: the whole history before it, then the question as the last user message (``load_locomo``; the
questions it cannot use are counted and printed). Tokens are cl100k (tiktoken), each message costed as
``select_messages`` costs it; a budget covers the question too. For each selector and budget it prints
the mean evidence recall (share of evidence turns kept) and the all-gold rate (share of questions
with every evidence turn kept), and whether each kept window is a valid conversation.

Selectors:

- ``bm25``: the question, then the other messages greedily by BM25 score against it (the
  ``cupel eval`` baseline; RelevanceScorer's BM25), each kept if it still fits.
- ``recent``: the newest messages that fit, starting on a user message (LangChain's ``trim_messages``).
- ``chat``, ``long_running``: ``select_messages(messages, budget, policy, query=None)``: the "no query"
  floor of the presets.
- ``chat+q``, ``long_running+q``: the same with ``query=`` the question.
- ``chat+auto``: ``select_messages(messages, budget, policy)``, the default ``query="auto"`` (the
  latest user message: here the question).
- ``chat@W``: the ``chat`` preset plus a ``RelevanceScorer()`` term of weight ``W`` (``chat@5+auto``).
- ``relevance+q:STRATEGY``: a policy of RelevanceScorer alone, greedy, through ``select_messages``
  with that strategy (``turns``, ``messages``).
- ``bm25:OPTIONS``: BM25-greedy with other settings (``k1=0.9/b=0.4``, ``nostem``, ``nostop``,
  ``n=3`` and ``nw=0.5``: RelevanceScorer's ``neighbors`` and ``neighbor_weight``), another
  ranking (``a=0.5``: by ``score / tokens**0.5``) or hybrid scores (``w=0.5`` with HashingEmbedder).
- Any ``POLICY[@W][+q|+auto][:STRATEGY[:RECENT_SHARE]]``: a preset (or ``relevance``), with or
  without the question, a strategy and a ``recent_share`` (``chat+q:turns:0.25``).

A preset selector runs warm, one ``ChatSession`` across the questions (as a running chat holds one);
``/cold`` at the end of its name runs it without (``chat+auto/cold``). Both select the same.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cupel import ContextItem, Policy
from cupel.chat import ChatSession, message_token_counts, select_messages
from cupel.eval.baselines import bm25_units, recent_messages
from cupel.eval.cases import EvalCase
from cupel.eval.loaders import load_locomo, locomo_skipped
from cupel.eval.validity import transcript_problems
from cupel.placers import ChronologicalPlacer
from cupel.policy import get_preset
from cupel.scorers import CompositeScorer, RelevanceScorer
from cupel.slicers import GreedySlice
from cupel.tokens import counter_from_name

DEFAULT_PATH = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"
Selector = Callable[[EvalCase, list[int], int], tuple[list[int], bool]]


def _relevance_only() -> Policy:
    return Policy(RelevanceScorer(), GreedySlice(), ChronologicalPlacer())


def _chat_selector(
    policy: Policy, *, query: str, strategy: str | None, share: float | None, counter: Any, cold: bool
) -> Selector:
    """``query``: ``"q"`` (the question), ``"auto"`` (select_messages's default) or ``""`` (None);
    ``cold``: no session, every call reads, counts and searches afresh."""

    # The questions of one conversation share its messages, the history growing question by question:
    # a session counts each text once and searches only new turns (the selection is the same without).
    session = None if cold else ChatSession()

    def run(case: EvalCase, tokens: list[int], budget: int) -> tuple[list[int], bool]:
        assert case.messages is not None
        asked = case.question if query == "q" else "auto" if query == "auto" else None
        selection = select_messages(
            list(case.messages),
            budget,
            policy,
            counter,
            strategy=strategy,  # type: ignore[arg-type]
            recent_share=share,
            query=asked,
            session=session,
        )
        positions = {id(message): index for index, message in enumerate(case.messages)}
        kept = [positions[id(message)] for message in selection.messages]
        return kept, not transcript_problems(selection.messages, case.provider)

    return run


def _bm25(case: EvalCase, tokens: list[int], budget: int) -> tuple[list[int], bool]:
    assert case.messages is not None and case.question is not None
    texts = [str(message.get("content", "")) for message in case.messages]
    last = len(texts) - 1
    kept = [last, *bm25_units(case.question, texts[:last], tokens[:last], budget - tokens[last])]
    return sorted(kept), True


class _CachedEmbedder:
    """An embedder that embeds each text once: a conversation's texts repeat for every question."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder
        self.vectors: dict[str, list[float]] = {}

    def __call__(self, texts: list[str]) -> list[list[float]]:
        for text in texts:
            if text not in self.vectors:
                self.vectors[text] = self.embedder.embed_one(text)
        return [self.vectors[text] for text in texts]


def _bm25_variant(options: str) -> Selector:
    """``bm25:OPTIONS``, separated by ``/``: ``k1=X``, ``b=X``, ``nostem``, ``nostop`` (BM25 settings),
    ``n=N``, ``nw=X`` (``neighbors``, ``neighbor_weight``), ``a=X`` (rank by ``score / tokens**a``;
    0 is by score), ``w=X`` (hybrid with HashingEmbedder)."""
    from cupel.assembly.embedding import HashingEmbedder

    settings: dict[str, Any] = {}
    exponent = 0.0
    for option in filter(None, options.split("/")):
        name, _, value = option.partition("=")
        if name in ("k1", "b"):
            settings[name] = float(value)
        elif name == "n":
            settings["neighbors"] = int(value)
        elif name == "nw":
            settings["neighbor_weight"] = float(value)
        elif name in ("nostem", "nostop"):
            settings["stemming" if name == "nostem" else "stop_words"] = False
        elif name == "a":
            exponent = float(value)
        elif name == "w":
            settings.update(embedder=_CachedEmbedder(HashingEmbedder()), semantic_weight=float(value))
        else:
            raise SystemExit(f"bm25 option {option!r}: expected k1=, b=, nostem, nostop, n=, nw=, a= or w=")

    def run(case: EvalCase, tokens: list[int], budget: int) -> tuple[list[int], bool]:
        assert case.messages is not None and case.question is not None
        last = len(case.messages) - 1
        items = [ContextItem(str(message.get("content", "")), 1) for message in case.messages[:last]]
        scores = RelevanceScorer(case.question, **settings).score_all(items)
        order = sorted(
            range(last), key=lambda unit: (-scores[unit] / max(tokens[unit], 1) ** exponent, -unit)
        )
        kept, used = [last], tokens[last]
        for unit in order:
            if used + tokens[unit] <= budget:
                used += tokens[unit]
                kept.append(unit)
        return sorted(kept), True

    return run


def _recent(case: EvalCase, tokens: list[int], budget: int) -> tuple[list[int], bool]:
    assert case.messages is not None
    roles = [str(message.get("role")) for message in case.messages]
    return recent_messages(roles, tokens, budget), True


DEFAULT_SELECTORS = (
    "bm25",
    "recent",
    "chat",
    "long_running",
    "chat+q",
    "long_running+q",
    "relevance+q:turns",
    "relevance+q:messages",
)


def selector(name: str, counter: Any) -> Selector:
    """``bm25``, ``recent``, or ``POLICY[@W][+q|+auto][:STRATEGY[:RECENT_SHARE]]`` (POLICY: a preset
    or ``relevance``; ``@W`` adds a relevance term of weight W; ``+q`` passes the question as the
    query, ``+auto`` the default ``query="auto"``, neither ``query=None``)."""
    if name == "bm25":
        return _bm25
    if name.startswith("bm25:"):
        return _bm25_variant(name.removeprefix("bm25:"))
    if name == "recent":
        return _recent
    cold = name.endswith("/cold")
    head, _, rest = name.removesuffix("/cold").partition(":")
    strategy, _, share = rest.partition(":")
    policy_name, _, flag = head.partition("+")
    policy_name, _, weight = policy_name.partition("@")
    policy = _relevance_only() if policy_name == "relevance" else get_preset(policy_name)
    if weight:
        terms = list(policy.scorer.entries) if isinstance(policy.scorer, CompositeScorer) else []
        terms = terms or [(policy.scorer, 1.0)]
        policy = policy.replace(scorer=CompositeScorer([*terms, (RelevanceScorer(), float(weight))]))
    if flag not in ("", "q", "auto"):
        raise SystemExit(f"selector {name!r}: expected +q or +auto after the policy")
    return _chat_selector(
        policy,
        query=flag,
        strategy=strategy or None,
        share=float(share) if share else None,
        counter=counter,
        cold=cold,
    )


def measure(
    cases: Sequence[EvalCase], chosen: dict[str, Selector], budgets: Sequence[int], counter: Any
) -> dict[str, dict[int, dict[str, float]]]:
    totals = {name: {budget: [0.0, 0.0, 0.0] for budget in budgets} for name in chosen}
    for done, case in enumerate(cases, start=1):
        if done % 100 == 0:
            print(f"{done}/{len(cases)} questions", file=sys.stderr, flush=True)
        assert case.messages is not None
        tokens = message_token_counts(list(case.messages), counter=counter)
        gold = set(case.gold)
        for name, selector in chosen.items():
            for budget in budgets:
                kept, valid = selector(case, tokens, budget)
                found = len(gold.intersection(kept))
                row = totals[name][budget]
                row[0] += found / len(gold)
                row[1] += found == len(gold)
                row[2] += valid
    count = len(cases)
    return {
        name: {
            budget: {"recall": row[0] / count, "all_gold": row[1] / count, "valid": row[2] / count}
            for budget, row in by_budget.items()
        }
        for name, by_budget in totals.items()
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("path", nargs="?", default=str(DEFAULT_PATH))
    parser.add_argument("--budgets", default="1000,2000,4000,8000")
    parser.add_argument("--selectors", default="", help="comma-separated names (default: all)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions (0: all)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    path = Path(args.path)
    if not path.exists():
        print(f"{path}: not found (the LoCoMo dev split is read from beside the repository)", file=sys.stderr)
        return 2
    counter = counter_from_name("cl100k_base")
    cases = load_locomo(path)
    skipped = locomo_skipped(json.loads(path.read_text(encoding="utf-8")), str(path))
    if args.limit:
        cases = cases[: args.limit]
    budgets = [int(value) for value in args.budgets.split(",")]
    names = [name for name in args.selectors.split(",") if name] or list(DEFAULT_SELECTORS)
    results = measure(cases, {name: selector(name, counter) for name in names}, budgets, counter)
    if args.json:
        print(json.dumps({"questions": len(cases), "skipped": skipped, "results": results}, indent=2))
        return 0
    print(f"{len(cases)} questions; skipped: {skipped or 'none'}")
    header = " | ".join(f"R@{budget // 1000}k" for budget in budgets)
    gold_header = " | ".join(f"all@{budget // 1000}k" for budget in budgets)
    print(f"| selector | {header} | {gold_header} | valid |")
    print("|---" * (2 * len(budgets) + 2) + "|")
    for name, by_budget in results.items():
        recall = " | ".join(f"{by_budget[budget]['recall']:.3f}" for budget in budgets)
        all_gold = " | ".join(f"{by_budget[budget]['all_gold']:.3f}" for budget in budgets)
        valid = min(by_budget[budget]["valid"] for budget in budgets)
        print(f"| `{name}` | {recall} | {all_gold} | {valid:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
