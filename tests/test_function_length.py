"""No function in the package over 100 lines: a function that long does more than one job.

Walks ``melee_agent/`` and the role folders that install inside it (``manager/``, ``workers/``) with
:mod:`ast`; a function's length is its ``def`` line to its last line, nested functions included.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("melee_agent", "manager", "workers")  # arena/cpu/ included: none of its functions is over
MAX_LINES = 100

#: Functions allowed over the limit, by file (relative to the repository) and qualified name, each with why.
#: An entry comes off as soon as its function is split (the second test below fails until it does).
ALLOWED: dict[tuple[str, str], str] = {
}


def long_functions(source: str, limit: int = MAX_LINES) -> list[tuple[str, int]]:
    """``(qualified name, lines)`` of each function in ``source`` longer than ``limit`` lines."""
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef) and child.end_lineno - child.lineno + 1 > limit:
                    found.append((name, child.end_lineno - child.lineno + 1))
                visit(child, name + ".")
            else:
                visit(child, prefix)  # functions defined under an if, a with, a try

    visit(ast.parse(source), "")
    return found


def package_long_functions() -> dict[tuple[str, str], int]:
    """Every function over the limit in the package's folders: ``(file, qualified name) -> lines``."""
    out: dict[tuple[str, str], int] = {}
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for name, n in long_functions(path.read_text(encoding="utf-8")):
                out[(rel, name)] = n
    return out


def test_no_function_in_the_package_is_over_100_lines_but_those_allowed():
    over = {k: n for k, n in package_long_functions().items() if k not in ALLOWED}
    assert not over, "split these (or name them in ALLOWED with why): " + ", ".join(
        f"{f}:{name} ({n} lines)" for (f, name), n in sorted(over.items()))


def test_the_allow_list_names_only_functions_still_over_the_limit():
    stale = set(ALLOWED) - set(package_long_functions())
    assert not stale, f"these are split (or gone): take them off ALLOWED: {sorted(stale)}"


def _function(name: str, lines: int, indent: str = "") -> str:
    """Source of a function ``lines`` long (its def line included)."""
    return f"{indent}def {name}():\n" + "".join(f"{indent}    x{i} = {i}\n" for i in range(lines - 1))


def test_the_walk_measures_methods_and_nested_functions():
    src = ("class A:\n" + _function("m", 100, "    ") + _function("short", 2)
           + "def outer():\n" + _function("inner", 100, "    "))
    assert long_functions(src) == [("outer", 101)]  # 100 lines is allowed; outer holds inner and its own def
    assert long_functions(src, limit=99) == [("A.m", 100), ("outer", 101), ("outer.inner", 100)]
