"""Helpers shared by the repository's tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat

from course import paths

ASSIGNMENT = "transformer_fundamentals"


def nbgrader(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the venv's nbgrader from the repository root (where nbgrader_config.py is)."""
    exe = Path(sys.executable).with_name("nbgrader")
    full_env = {**os.environ, "PATH": f"{exe.parent}{os.pathsep}{os.environ['PATH']}", **(env or {})}
    return subprocess.run([str(exe), *args, "--log-level=WARN"], cwd=paths.ROOT, env=full_env,
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
