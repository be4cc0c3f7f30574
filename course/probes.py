"""Load an assignment's probe module and run it on a notebook's code.

The probe module ships with the release (students call it from the notebook's
last cell), but grading always loads the instructor's copy from source/.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import warnings
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import ModuleType

import nbformat
import numpy as np

from course import paths


@cache
def load_module(path: Path) -> ModuleType:
    """A probe module loaded from `path`, under a private module name."""
    spec = importlib.util.spec_from_file_location(f"_course_probes_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_probes(assignment: str) -> ModuleType:
    """The instructor's probe module of `assignment`."""
    return load_module(paths.probes_file(assignment))


@contextlib.contextmanager
def quiet() -> Iterator[io.StringIO]:
    """Capture stdout, stderr and warnings (progress bars, student prints)."""
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield sink


def run_one(assignment: str, check_id: str, ns: dict) -> tuple[dict[str, np.ndarray] | None, str | None]:
    """(outputs, None) if the probe ran, (None, 'ErrorType: message') if the student's code raised."""
    probes = load_probes(assignment)
    with quiet():
        try:
            return probes.run_probe(check_id, ns), None
        except Exception as error:  # student code may raise anything
            return None, f"{type(error).__name__}: {error}"


def graded_program(assignment: str, submitted: nbformat.NotebookNode) -> list[tuple[str, str]]:
    """The code a probe needs, as (cell id, source) in notebook order.

    Given definition cells (`setup-*`) come from the instructor's notebook, so
    edits to them count for nothing, as in nbgrader; answer cells come from
    the submission, matched by their nbgrader grade_id.
    """
    answers = {}  # by grade_id, or by cell id where a student's editor dropped the nbgrader metadata
    for cell in submitted.cells:
        if cell.cell_type == "code":
            key = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") or cell.get("id")
            answers.setdefault(key, cell.source)
    program = []
    for cell in nbformat.read(paths.source_notebook(assignment), as_version=4).cells:
        meta = cell.metadata.get("nbgrader", {})
        grade_id = meta.get("grade_id", "")
        if cell.cell_type != "code":
            continue
        if grade_id.startswith("setup-"):
            program.append((grade_id, cell.source))
        elif meta.get("solution") and grade_id in answers:
            program.append((grade_id, answers[grade_id]))
    return program


def execute_program(program: list[tuple[str, str]], workdir: Path) -> tuple[dict, dict[str, str]]:
    """Run each cell in one namespace, in `workdir`; returns (namespace, error by cell id)."""
    ns: dict = {"__name__": "__main__"}
    errors: dict[str, str] = {}
    previous = Path.cwd()
    os.chdir(workdir)
    try:
        for cell_id, source in program:
            with quiet():
                try:
                    exec(compile(source, f"<cell {cell_id}>", "exec"), ns)
                except BaseException as error:  # SystemExit and KeyboardInterrupt included
                    errors[cell_id] = f"{type(error).__name__}: {error}"
    finally:
        os.chdir(previous)
    return ns, errors
