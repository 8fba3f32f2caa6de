# ruff: noqa: E501  (hand-written case text reads best one message a line)
"""Long, realistic tool outputs that a context window usually does not need (hand-written templates)."""

from __future__ import annotations


def pip_install(packages: list[tuple[str, str]]) -> str:
    lines = []
    for name, version in packages:
        lines.append(f"Collecting {name}=={version}")
        lines.append(f"  Downloading {name.replace('-', '_')}-{version}-py3-none-any.whl (1{len(name)}4 kB)")
    for name, version in packages:
        lines.append(
            f"Requirement already satisfied: typing-extensions>=4.6 in ./.venv/lib/python3.12/site-packages (from {name}=={version})"
        )
    lines.append("Installing collected packages: " + ", ".join(name for name, _ in packages))
    lines.append("Successfully installed " + " ".join(f"{name}-{version}" for name, version in packages))
    return "\n".join(lines)


def kubectl_pods(service: str, count: int, bad: str | None = None) -> str:
    lines = ["NAME                                   READY   STATUS    RESTARTS      AGE"]
    for n in range(count):
        name = f"{service}-7d9f8c6b5-{'abcdefghjkmnpqrstuvwxyz'[n % 23]}{n:02d}x{(n * 7) % 10}"
        status = "Running"
        restarts = "0"
        if bad is not None and n == count // 2:
            status, restarts = bad, "14 (2m ago)"
        lines.append(
            f"{name:<39}{'1/1' if status == 'Running' else '0/1':<8}{status:<10}{restarts:<14}{3 + n % 5}d"
        )
    return "\n".join(lines)


def pytest_run(module: str, names: list[str], failure: str | None = None) -> str:
    lines = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.12.3, pytest-8.2.1, pluggy-1.5.0",
        f"collected {len(names)} items",
        "",
    ]
    for name in names:
        lines.append(f"tests/{module}::{name} PASSED")
    if failure:
        lines.append(f"tests/{module}::{failure} FAILED")
    lines.append("")
    summary = f"{len(names)} passed" + (", 1 failed" if failure else "")
    lines.append(f"======================== {summary} in 4.{len(names) % 10}1s ========================")
    return "\n".join(lines)


def access_log(path: str, count: int, status: int = 200) -> str:
    lines = []
    for n in range(count):
        ip = f"10.4.{n % 7}.{(n * 37) % 250 + 3}"
        ms = 20 + (n * 13) % 180
        lines.append(
            f'{ip} - - [14/Mar/2025:09:{n % 60:02d}:{(n * 17) % 60:02d} +0000] "GET {path}?page={n % 9} HTTP/1.1" '
            f'{status} {512 + n * 31} "-" "Mozilla/5.0" rt={ms / 1000:.3f}'
        )
    return "\n".join(lines)


def file_listing(root: str, names: list[str]) -> str:
    lines = [f"{root}:"]
    for n, name in enumerate(names):
        lines.append(f"-rw-r--r--  1 dev  staff  {1200 + n * 317:>6} Mar 11 10:{n % 60:02d} {name}")
    return "\n".join(lines)


def json_rows(kind: str, count: int) -> str:
    rows = []
    for n in range(count):
        rows.append(
            f'{{"id": "{kind}_{1000 + n}", "status": "{["active", "paused", "active", "archived"][n % 4]}", '
            f'"owner": "{["ana", "raj", "li", "sam", "eve"][n % 5]}@example.com", "updated_at": "2025-03-{1 + n % 28:02d}T08:{n % 60:02d}:00Z"}}'
        )
    return "[\n  " + ",\n  ".join(rows) + "\n]"
