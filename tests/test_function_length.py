"""No function in workflow/babeleval is longer than 60 lines (signature, docstring and body)."""

import ast

from conftest import ROOT

LIMIT = 60


def test_no_function_over_sixty_lines():
    long = []
    for path in sorted((ROOT / "workflow/babeleval").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > LIMIT:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {length} lines")
    assert not long, "\n".join(long)
