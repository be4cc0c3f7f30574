"""Helpers shared by the repository's tests."""

from __future__ import annotations

import subprocess

import nbformat

from course import paths
from course.grading.grade_one import grading_env, nbgrader_command

ASSIGNMENT = "transformer_fundamentals"


def nbgrader(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the venv's nbgrader from the repository root (where nbgrader_config.py is)."""
    return subprocess.run(nbgrader_command(*args), cwd=paths.ROOT, env={**grading_env(), **(env or {})},
                          capture_output=True, text=True)


def grade_cells(nb: nbformat.NotebookNode, **flags) -> list[nbformat.NotebookNode]:
    """Cells whose nbgrader metadata has all of `flags` (e.g. grade=True, solution=False)."""
    return [c for c in nb.cells if all(c.metadata.get("nbgrader", {}).get(k, False) == v for k, v in flags.items())]


def between(source: str, begin: str, end: str) -> list[str]:
    """The lines strictly between marker lines containing `begin` and `end`."""
    inside, lines = False, []
    for line in source.splitlines():
        if begin in line:
            inside = True
        elif end in line:
            inside = False
        elif inside:
            lines.append(line)
    return lines
