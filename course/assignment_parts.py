"""An assignment's Python parts (checks.py, probes.py, corpus.py, ...), loaded from its folder by path,
and the given cells of its notebook, run as a module.

Assignment folders are not a package: the machinery finds them (course.paths) and
loads what it needs from them under private module names.
"""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

import nbformat

from course import paths


@cache
def load_module(path: Path) -> ModuleType:
    """The Python file at `path`, loaded once, under a private module name."""
    name = f"_course_{path.parent.name}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickle look their module up by name
    spec.loader.exec_module(module)
    return module


def part(assignment: str, name: str) -> ModuleType:
    """`assignments/<assignment>/<name>.py` as a module (e.g. part(a, "checks").CHECKS)."""
    return load_module(paths.assignment_dir(assignment) / f"{name}.py")


@cache
def given_cells(assignment: str, *cell_ids: str) -> ModuleType:
    """The instructor notebook's given cells `cell_ids`, run in order as one module, here.

    A check can judge with the notebook's own rules (a task's examples, its pass rule), so that the rule a
    student reads and runs is the grader's. These cells are the instructor's (source/), trusted code; each
    must import what it needs itself.
    """
    cells = {cell.metadata.get("nbgrader", {}).get("grade_id"): cell.source
             for cell in nbformat.read(paths.source_notebook(assignment), as_version=4).cells}
    module = ModuleType(f"_course_{assignment}_given_{'_'.join(cell_ids)}".replace("-", "_"))
    sys.modules[module.__name__] = module  # dataclasses look their module up by name
    for cell_id in cell_ids:
        exec(compile(cells[cell_id], f"<{assignment}: cell {cell_id}>", "exec"), module.__dict__)
    return module
