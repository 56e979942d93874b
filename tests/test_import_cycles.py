"""No import circle among the project's modules: a static check (``ast``) over every import, local ones included.

A circle (``a`` imports ``b`` imports ``a``) works only while one side imports lazily or late, and breaks
the day someone moves an import to the top; the layout keeps dependencies flowing one way instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Folder -> the dotted name it installs as (pyproject.toml's package-dir).
PACKAGES = {"melee_agent": "melee_agent", "manager": "melee_agent.manager", "workers": "melee_agent.workers",
            "configs": "melee_agent.configs"}


def project_modules() -> dict[str, Path]:
    """Every project module's dotted name -> its file."""
    modules: dict[str, Path] = {}
    for folder, dotted in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join([dotted, *parts])] = path
    return modules


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports anywhere in its file (a package's import means its ``__init__``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            # `from pkg import mod` names the module; `from mod import thing` names the module holding it.
            targets = [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_cycles() -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), each sorted; the list sorted."""
    modules = project_modules()
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in graph:
        if v not in index:
            visit(v)
    return sorted(groups)


def test_the_checker_sees_imports_of_every_form():
    modules = project_modules()
    assert "melee_agent.manager.app" in modules and "melee_agent.workers.worker" in modules
    # `from package import module`, `from module import name`, and a local import inside a function
    assert {"melee_agent.rl.replay", "melee_agent.rl.model", "melee_agent.rl.captured_step"} <= \
        imports_of("melee_agent.rl.learner", modules["melee_agent.rl.learner"], modules)


def test_no_import_cycles() -> None:
    cycles = import_cycles()
    assert cycles == [], "import circles (move the shared part into a module both can import):\n" + \
        "\n".join(" <-> ".join(c) for c in cycles)
