"""``cupel eval``: measure how much gold evidence each policy keeps at each budget, against baselines."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from cupel.cli._common import (
    CliError,
    add_comparison_arguments,
    add_tokenizer_argument,
    parse_budget,
    resolve_counter,
    resolve_policy,
)
from cupel.errors import CupelError

DEFAULT_BUDGETS = (200, 400, 800)
"""Budgets used when none is given: they make the shipped cases' selection decisions matter."""


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "eval",
        help="measure gold-evidence recall of policies on labelled cases, against baselines",
        description=(
            "Run each policy and the baselines (most-recent window, seeded random, oracle knapsack) on "
            "labelled cases at each budget and report gold recall, all-gold rate, middle-third exposure, "
            "budget use, chat validity and time, with 95% bootstrap confidence intervals. Without "
            "CASES the hand-written cases shipped with cupel are used."
        ),
    )
    parser.add_argument(
        "cases",
        nargs="*",
        metavar="CASES",
        help="case JSONL files, LongMemEval or LoCoMo JSON files, or 'shipped' (the default)",
    )
    add_comparison_arguments(
        parser,
        policy_default="default every preset",
        budget_default=f"default {', '.join(map(str, DEFAULT_BUDGETS))}",
    )
    add_tokenizer_argument(parser)
    parser.add_argument("--generate", type=int, default=0, metavar="N", help="add N generated sessions")
    parser.add_argument("--tag", action="append", metavar="TAG", help="only cases with this tag (repeatable)")
    parser.add_argument(
        "--format", choices=("text", "json", "html", "markdown"), default="text", help="report format"
    )
    parser.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE (default stdout)")
    parser.add_argument(
        "--jobs", type=int, default=1, metavar="N", help="worker processes (cases in parallel)"
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the random baseline, bootstrap, generator"
    )
    parser.add_argument("--resamples", type=int, default=1000, metavar="N", help="bootstrap resamples")
    parser.add_argument(
        "--strategy",
        choices=("turns", "last", "messages"),
        help="run chat cases with this select_messages strategy (default: each policy's own)",
    )
    parser.add_argument("--no-timings", action="store_true", help="leave selection times out (stable output)")
    parser.add_argument("--schema", action="store_true", help="print the case JSON Schema and exit")
    parser.set_defaults(handler=run)


def _load(sources: list[str], counter: Any) -> list[Any]:
    from cupel.eval.loaders import load_any, shipped_cases

    cases: list[Any] = []
    for source in sources:
        if source == "shipped":
            cases += shipped_cases(counter)
            continue
        path = Path(source)
        if not path.is_file():
            raise CliError(f"{source}: no such file")
        try:
            cases += load_any(path, counter)
        except UnicodeDecodeError as error:
            raise CliError(f"{source}: not UTF-8 text ({error.reason} at byte {error.start})") from None
        except OSError as error:
            raise CliError(f"{source}: cannot read ({error.strerror})") from None
    return cases


def run(args: argparse.Namespace) -> int:
    from cupel.eval import BASELINES, evaluate
    from cupel.eval.cases import CaseFormatError
    from cupel.eval.generator import generate_cases
    from cupel.eval.schema import CASE_SCHEMA

    if args.schema:
        sys.stdout.write(json.dumps(CASE_SCHEMA, indent=2) + "\n")
        return 0
    for option, value, least in (
        ("--jobs", args.jobs, 1),
        ("--generate", args.generate, 0),
        ("--resamples", args.resamples, 0),
    ):
        if value < least:
            raise CliError(f"{option} must be at least {least}, got {value}")
    budgets = [parse_budget(spec) for spec in args.budget or map(str, DEFAULT_BUDGETS)]
    if len({budget.max_tokens for budget in budgets}) != len(budgets):
        raise CliError("--budget: each budget needs a different maximum")
    from cupel.policy import preset_names

    specs = args.policy or list(preset_names())
    policies: dict[str, Any] = {}
    for spec in specs:
        name, policy = resolve_policy(spec)
        if name in policies:
            raise CliError(f"--policy: {name!r} is given twice")
        if name in BASELINES:
            raise CliError(f"--policy: {name!r} is the name of a baseline; rename the file")
        policies[name] = policy
    counter = resolve_counter(args.tokenizer)
    try:
        cases = _load(args.cases or (["shipped"] if not args.generate else []), counter)
        if args.generate:
            cases += generate_cases(args.generate, args.seed)
    except CaseFormatError as error:
        raise CliError(str(error)) from None
    if args.tag:
        cases = [case for case in cases if any(tag in case.tags for tag in args.tag)]
        if not cases:
            raise CliError(f"--tag: no case has the tag(s) {', '.join(args.tag)}")
    ids = [case.id for case in cases]
    if len(set(ids)) != len(ids):
        duplicate = next(case_id for case_id in ids if ids.count(case_id) > 1)
        raise CliError(f"case id {duplicate!r} appears in more than one input")
    from cupel.cli._progress import Progress

    progress = Progress(len(cases)) if sys.stderr.isatty() and len(cases) > 1 else None
    try:
        result = evaluate(
            cases,
            policies,
            budgets,
            counter=counter,
            seed=args.seed,
            resamples=args.resamples,
            jobs=args.jobs,
            strategy=args.strategy,
            progress=None if progress is None else lambda done, total: progress.advance(),
        )
    except CupelError as error:
        raise CliError(str(error)) from None
    finally:
        if progress is not None:
            progress.close()
    text = _render(result, args.format, timings=not args.no_timings)
    if args.output is None:
        sys.stdout.write(text)
        return 0
    from cupel._atomic import write_atomic

    try:
        write_atomic(Path(args.output), text)
    except OSError as error:
        raise CliError(f"--output {args.output}: cannot write ({error.strerror or error})") from None
    except UnicodeEncodeError as error:
        raise CliError(f"--output {args.output}: not written, not valid Unicode ({error.reason})") from None
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


def _render(result: Any, output: str, *, timings: bool) -> str:
    from cupel.eval.report import render_json, render_markdown, render_text

    if output == "json":
        return render_json(result, timings=timings)
    if output == "markdown":
        return render_markdown(result)
    if output == "html":
        from cupel.cli._eval_html import render_eval_html

        return render_eval_html(result)
    return render_text(result, timings=timings)
