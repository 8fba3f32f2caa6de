"""``cupel sensitivity``: which items swing between policies."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from cupel._plural import counted
from cupel.cli._chat import add_chat_arguments, chat_keywords
from cupel.cli._common import (
    CliError,
    add_budget_arguments,
    add_policy_argument,
    add_tokenizer_argument,
    load_candidates,
    parse_budget,
    resolve_counter,
    resolve_policy,
)
from cupel.cli._terminal import display_width, fit, ljust, terminal_safe
from cupel.cli.explain import preview


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "sensitivity",
        help="compare policies: which items are included by some and excluded by others",
        description=(
            "Run the same items through two or more policies and list the items that swing. A chat "
            "transcript is compared as `cupel select` trims it: by the chat strategy (the policy's, "
            "or --strategy), whole messages."
        ),
    )
    parser.add_argument("items", metavar="ITEMS", help="JSON/JSONL file, or - for stdin")
    add_budget_arguments(parser)
    add_policy_argument(parser, repeat=True)
    add_tokenizer_argument(parser)
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text: a table of the items that swing (default); json: each policy's included items and "
        "the swings",
    )
    parser.add_argument("--width", type=int, default=60, help="content preview width (default 60)")
    add_chat_arguments(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from cupel.analytics import policy_sensitivity

    if len(args.policy) < 2:
        raise CliError("give at least two --policy options to compare")
    budget = parse_budget(args.budget, args.reserve)
    variants = []
    labels: set[str] = set()
    for spec in args.policy:
        if args.policy.count(spec) > 1:
            raise CliError(f"--policy {spec} is given more than once; compare different policies")
        label, policy = resolve_policy(spec)
        if label in labels:
            label = spec
        labels.add(label)
        variants.append((label, policy))
    candidates = load_candidates(args.items, args.tokenizer)
    if candidates.messages is not None:
        items, report = _transcript_sensitivity(candidates.messages, budget, variants, args)
    else:
        assert candidates.items is not None
        items = candidates.items
        report = policy_sensitivity(items, budget, variants)
    if args.format == "json":
        payload = {
            "variants": [
                {"label": label, "included": [entry.item.content for entry in variant.included]}
                for label, variant in report.variants
            ],
            "diffs": [
                {
                    "content": diff.content,
                    "statuses": {label: status.value for label, status in diff.statuses},
                }
                for diff in report.diffs
            ],
        }
        sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        return 0
    labels_in_order = [label for label, _ in report.variants]
    lines = [
        f"{len(report.diffs)} of {counted(len(items), 'item')} "
        f"{'swings' if len(report.diffs) == 1 else 'swing'} between "
        f"{counted(len(labels_in_order), 'policy', 'policies')}",
        "",
    ]
    for label, variant in report.variants:
        lines.append(
            f"  {terminal_safe(label)}: {len(variant.included)} included, "
            f"{counted(variant.included_tokens, 'token', grouped=True)}"
        )
    if report.diffs:
        shown = [fit(terminal_safe(label), 40) for label in labels_in_order]
        column = max(8, *(display_width(label) for label in shown))
        lines += ["", "  " + "  ".join(ljust(label, column) for label in shown) + "  content"]
        for diff in report.diffs:
            marks = "  ".join(
                ljust("included" if str(status.value).lower() == "included" else "-", column)
                for _, status in diff.statuses
            )
            lines.append(f"  {marks}  {preview(diff.content, args.width)}")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _transcript_sensitivity(
    messages: list[Any], budget: Any, variants: list[tuple[str, Any]], args: argparse.Namespace
) -> Any:
    """What ``cupel select`` keeps of the transcript under each policy, diffed message by message."""
    from cupel.analytics import policy_sensitivity_from_reports
    from cupel.chat import messages_to_items, select_messages

    counter = resolve_counter(args.tokenizer)
    keywords = chat_keywords(args)
    reports = []
    for label, policy in variants:
        chosen = select_messages(messages, budget, policy=policy, counter=counter, **keywords)
        reports.append((label, chosen.report))
    units = list(messages_to_items(messages, counter=counter))
    return units, policy_sensitivity_from_reports(units, reports)
