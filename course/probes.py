"""Run a notebook's code and an assignment's probes on it, each step bounded and quiet.

An assignment has two probe modules, each a registry `PROBES` of
{name: probe(namespace) -> dict of arrays}: probes.py (hidden, instructor-only:
the checks' evidence) and visible_probes.py (shipped: the visible inputs that
submission_log.json records). Both run in the grading sandbox
(course.grading.probe), and here for the instructor's reference data and the
grader-accuracy corpus.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import io
import os
import re
import signal
import warnings
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from types import ModuleType

import nbformat
import numpy as np

from course import paths
from course.grading.repair import repair
from course.parts import load_module

SKIPPED = "Skipped: it stopped the process that ran it in an earlier attempt"


def load_probes(assignment: str) -> ModuleType:
    """The hidden probe module of `assignment` (instructor-only)."""
    return load_module(paths.probes_file(assignment))


def load_visible_probes(assignment: str) -> ModuleType:
    """The visible probe module of `assignment` (shipped with the release)."""
    return load_module(paths.visible_probes_file(assignment))


@contextlib.contextmanager
def quiet() -> Iterator[io.StringIO]:
    """Capture stdout, stderr and warnings (progress bars, student prints)."""
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield sink


def graded_program(assignment: str, submitted: nbformat.NotebookNode) -> list[tuple[str, str]]:
    """The code a probe needs, as (cell id, source) in notebook order.

    Given definition cells (`setup-*`) come from the instructor's notebook, so
    edits to them count for nothing, as in nbgrader; answer cells come from
    the submission, matched by grade_id once its structure is repaired as
    nbgrader's is (course.grading.repair).
    """
    submitted = copy.deepcopy(submitted)
    repair(submitted, nbformat.read(paths.release_dir(assignment) / f"{assignment}.ipynb", as_version=4))
    answers = {cell.metadata["nbgrader"]["grade_id"]: cell.source
               for cell in submitted.cells if cell.cell_type == "code" and "nbgrader" in cell.metadata}
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


class TimeLimitExceeded(BaseException):
    """Raised in student code that runs past its time limit (a BaseException: `except Exception` won't hide it)."""


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Interrupt the block with TimeLimitExceeded after `seconds` (main thread; None: no limit).

    The alarm fires again every second until the block ends, so code that swallows the first
    one is interrupted again. Python-level loops and sleeps stop; a hang inside one C call does
    not, and is left to the step's own wall clock.
    """
    if seconds is None:
        yield
        return

    def interrupt(signum, frame):
        raise TimeLimitExceeded(f"did not finish within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_steps(steps: dict[str, Callable[[], object]], *, limit: float | None = None, skip: Collection[str] = (),
              on_start: Callable[[str], None] = lambda step_id: None) -> tuple[dict[str, object], dict[str, str]]:
    """Run untrusted steps in order, quietly: (result by step id, 'ErrorType: message' by step id).

    Each step gets `limit` seconds; steps in `skip` are not run (their error says so);
    `on_start(step_id)` is called before each step runs. Nothing a step raises stops the others.
    """
    results: dict[str, object] = {}
    errors: dict[str, str] = {}
    for step_id, step in steps.items():
        if step_id in skip:
            errors[step_id] = SKIPPED
            continue
        on_start(step_id)
        with quiet():
            try:
                with time_limit(limit):
                    results[step_id] = step()
            except BaseException as error:  # SystemExit, KeyboardInterrupt and time limits included
                errors[step_id] = f"{type(error).__name__}: {error}"
    return results, errors


def _run_cell(cell_id: str, source: str, ns: dict) -> None:
    exec(compile(source, f"<cell {cell_id}>", "exec"), ns)


def execute_program(program: list[tuple[str, str]], workdir: Path, **options) -> tuple[dict, dict[str, str]]:
    """Run each cell in one namespace, in `workdir`; returns (namespace, error by cell id).

    `options` are run_steps's: a time limit per cell, cells to skip, a call before each cell.
    """
    ns: dict = {"__name__": "__main__"}
    cells = {cell_id: functools.partial(_run_cell, cell_id, source, ns) for cell_id, source in program}
    previous = Path.cwd()
    os.chdir(workdir)
    try:
        _, errors = run_steps(cells, **options)
    finally:
        os.chdir(previous)
    return ns, errors


def run_probes(module: ModuleType, ns: dict, prefix: str = "",
               **options) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, str]]:
    """Every probe of `module` on the namespace `ns`: (outputs by step id, error by step id).

    A probe's step id is `prefix` + its name. `options` are run_steps's (a time limit per probe,
    step ids to skip, a call before each). An error that names one of the module's stand-ins
    (its STAND_INS: class name -> what to call it) names what it stands in for instead.
    """
    steps = {prefix + name: functools.partial(probe, ns) for name, probe in module.PROBES.items()}
    outputs, errors = run_steps(steps, **options)
    return outputs, {step_id: unnamed_stand_ins(error, stand_ins(module)) for step_id, error in errors.items()}


def stand_ins(module: ModuleType) -> dict[str, str]:
    """A probe module's stand-in classes (its STAND_INS, if any): class name -> what a message calls it."""
    return getattr(module, "STAND_INS", {})


def unnamed_stand_ins(message: str, stand_ins: dict[str, str]) -> str:
    """`message` with each stand-in class name replaced by what it stands in for."""
    for name, shown in stand_ins.items():
        message = re.sub(rf"\b{name}\b", shown, message)
    return message
