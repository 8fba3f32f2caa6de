"""Does tool-result clearing help the agent presets? Gold recall on the shipped agent cases, off and on.

Each agent case (``cupel eval --tag agent``'s) runs through ``select_messages`` with a preset, its
query as ``cupel eval`` gives it, at each budget, without and with ``clear_tool_results``. Gold
recall counts a gold message only when it is sent intact: a cleared tool result no longer carries its
evidence, so it counts as lost. Also the scripted agent loop of ``tests/integrations/test_agent_loops.py``
(a task, then one call with a ~100-token result per step, budget 500): how many of its calls the
window still shows, and whether the newest result is intact, at the last step.

    python benchmarks/bench_clearing.py [--json]
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from cupel.chat import select_messages
from cupel.errors import CupelError
from cupel.eval.evaluate import case_query
from cupel.eval.loaders import shipped_cases

PRESETS = ("tool_use", "long_running")
BUDGETS = (200, 400, 800)


def recall(case: Any, policy: str, budget: int, clear: bool) -> float:
    """Share of the case's gold weight sent intact (0 when the selection raises)."""
    messages = list(case.messages)
    try:
        query = case_query(case)
        selection = select_messages(messages, budget, policy, query=query, clear_tool_results=clear)
    except CupelError:
        return 0.0
    sent = set(map(id, selection.messages))
    total = sum(case.gold.values())
    return sum(weight for index, weight in case.gold.items() if id(messages[index]) in sent) / total


def agent_loop(policy: str, clear: bool, steps: int = 14, budget: int = 500) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a deploy agent."},
        {"role": "user", "content": "Fix the failing deploy. Find out why the pipeline fails."},
    ]
    for step in range(steps):
        call = {"id": f"c{step}", "type": "function", "function": {"name": "logs", "arguments": "{}"}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        result = f"step {step} log: " + "error retry timeout webhook " * 14
        messages.append({"role": "tool", "tool_call_id": f"c{step}", "content": result})
    selection = select_messages(messages, budget, policy, clear_tool_results=clear)
    sent = list(selection.messages)
    return {
        "calls_shown": sum(1 for message in sent if message.get("tool_calls")),
        "results_intact": sum(1 for message in sent if message.get("role") == "tool" and message in messages),
        "newest_intact": sent[-1] is messages[-1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    arguments = parser.parse_args()
    cases = [case for case in shipped_cases() if "agent" in case.tags and case.messages is not None]
    table: dict[str, Any] = {"cases": len(cases), "recall": {}, "loop": {}}
    for policy in PRESETS:
        for clear in (False, True):
            name = f"{policy}{' + clearing' if clear else ''}"
            table["recall"][name] = [
                round(sum(recall(case, policy, budget, clear) for case in cases) / len(cases), 3)
                for budget in BUDGETS
            ]
            table["loop"][name] = agent_loop(policy, clear)
    if arguments.json:
        print(json.dumps(table, indent=2))
        return
    print(f"gold recall, {table['cases']} agent cases, budgets {', '.join(map(str, BUDGETS))}")
    for name, values in table["recall"].items():
        print(f"  {name:28} {'  '.join(f'{value:.2f}' for value in values)}")
    print("agent loop (14 steps, budget 500): calls shown, results intact, newest intact")
    for name, loop in table["loop"].items():
        print(f"  {name:28} {loop['calls_shown']:3} {loop['results_intact']:3} {loop['newest_intact']}")


if __name__ == "__main__":
    main()
