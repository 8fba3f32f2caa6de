"""The relevance scorer in policy files: ``{type = "relevance", ...}``, read, written and checked."""

from __future__ import annotations

import re

import pytest

from cupel import CompositeScorer, RecencyScorer, RelevanceScorer
from cupel.errors import CupelTypeError
from cupel.policy import PolicyFileError, dump_policy, loads_policy, policy_from_dict, policy_to_dict

TAIL = 'slicer = "greedy"\nplacer = "chronological"\n'


def test_relevance_reads_with_and_without_parameters() -> None:
    plain = loads_policy('scorers = ["relevance"]\n' + TAIL)
    assert plain.scorer == RelevanceScorer()
    tuned = loads_policy(
        'scorers = [{type = "relevance", weight = 3, query = "flight", k1 = 0.9, b = 0.4, '
        "stemming = false, stop_words = false}, "
        '{type = "recency", weight = 1}]\n' + TAIL
    )
    assert tuned.scorer == CompositeScorer(
        [
            (RelevanceScorer("flight", k1=0.9, b=0.4, stemming=False, stop_words=False), 3.0),
            (RecencyScorer(), 1.0),
        ]
    )


def test_neighbors_read_from_a_policy_file() -> None:
    policy = loads_policy('scorers = [{type = "relevance", neighbors = 3, neighbor_weight = 0.25}]\n' + TAIL)
    assert policy.scorer == RelevanceScorer(neighbors=3, neighbor_weight=0.25)


@pytest.mark.parametrize(
    "scorer",
    [
        RelevanceScorer(),
        RelevanceScorer("tree nut allergy"),
        RelevanceScorer(k1=2.0, b=0.0, stemming=False),
        RelevanceScorer(neighbors=3),
        RelevanceScorer(neighbors=2, neighbor_weight=0.25),
    ],
)
def test_relevance_round_trips(scorer: RelevanceScorer) -> None:
    policy = loads_policy('scorers = ["relevance"]\n' + TAIL).replace(scorer=scorer)
    assert policy_from_dict(policy_to_dict(policy)) == policy
    assert loads_policy(dump_policy(policy)) == policy


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{type = "relevance", b = 2}', "scorers[0].b"),
        ('{type = "relevance", query = 3}', "scorers[0].query: must be a string"),
        ('{type = "relevance", stemming = "no"}', "scorers[0].stemming: must be true or false"),
        ('{type = "relevance", embedder = "x"}', "embedder"),
        ('{type = "relevance", neighbors = -1}', "scorers[0].neighbors"),
        ('{type = "relevance", neighbors = 1.5}', "scorers[0].neighbors"),
        ('{type = "relevance", neighbor_weight = 2}', "scorers[0].neighbor_weight"),
    ],
)
def test_bad_relevance_tables_are_named(text: str, message: str) -> None:
    with pytest.raises(PolicyFileError, match=re.escape(message)):
        loads_policy(f"scorers = [{text}]\n" + TAIL)


def test_an_embedder_cannot_be_written() -> None:
    policy = loads_policy('scorers = ["relevance"]\n' + TAIL).replace(
        scorer=RelevanceScorer(embedder=lambda texts: [[1.0] for _ in texts])
    )
    with pytest.raises(CupelTypeError, match="an embedder cannot be written to a policy file"):
        policy_to_dict(policy)
