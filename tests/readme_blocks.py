"""The README's checked examples: fenced blocks preceded by `<!-- readme-check: NAME -->`."""

from __future__ import annotations

import re

from conftest import ROOT

_MARKED = re.compile(r"<!-- readme-check: (?P<name>[\w-]+) -->\n```[\w-]*\n(?P<body>.*?)^```$", re.S | re.M)


def checked_block(name: str) -> str:
    """The text of the README block marked ``name`` (exactly one must exist)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    bodies = [match.group("body") for match in _MARKED.finditer(readme) if match.group("name") == name]
    assert len(bodies) == 1, f"README.md has {len(bodies)} blocks marked readme-check: {name}"
    return bodies[0]


def console_session(block: str) -> list[tuple[str, str]]:
    """``$ command`` lines of a console block, each with the output printed under it."""
    session: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            session.append((line[2:], []))
        else:
            assert session, f"output before any command: {line!r}"
            session[-1][1].append(line)
    return [(command, "".join(f"{line}\n" for line in output)) for command, output in session]
