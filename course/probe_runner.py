"""Run a notebook's code and an assignment's probes on it, each step bounded and quiet.

An assignment has two probe modules, each a registry `PROBES` of
{name: probe(namespace) -> dict of arrays}: probes.py (hidden, instructor-only:
the checks' evidence) and visible_probes.py (shipped: the visible inputs that
submission_log.json records). Both run in the grading sandbox
(course.grading.probe), and here for the instructor's reference data and the
grader-accuracy corpus.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import functools
import io
import os
import re
import signal
import sys
import warnings
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from types import ModuleType

import nbformat
import numpy as np

from course import notebook_cache, paths
from course.assignment_parts import load_module
from course.repair import repair

SKIPPED = "Skipped: it stopped the process that ran it in an earlier attempt"


def load_probes(assignment: str) -> ModuleType:
    """The hidden probe module of `assignment` (instructor-only)."""
    return load_module(paths.probes_file(assignment))


def load_visible_probes(assignment: str) -> ModuleType:
    """The visible probe module of `assignment` (shipped with the release)."""
    return load_module(paths.visible_probes_file(assignment))


@functools.cache
def visible_probe_names(assignment: str) -> frozenset[str]:
    """The names of the visible probes of `assignment`, read from their module's text (its PROBES, built from a tuple
    of the probe functions) without running it, which would import torch; loaded, where it is written another way."""
    module = ast.parse(paths.visible_probes_file(assignment).read_text())
    for node in module.body:
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "PROBES" for t in node.targets)
                and isinstance(node.value, ast.DictComp) and isinstance(node.value.generators[0].iter, ast.Tuple)):
            names = node.value.generators[0].iter.elts
            if all(isinstance(name, ast.Name) for name in names):
                return frozenset(name.id for name in names)
    return frozenset(load_visible_probes(assignment).PROBES)


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
    nbgrader's is (course.repair).
    """
    submitted = copy.deepcopy(submitted)
    repair(submitted, notebook_cache.shared(paths.release_dir(assignment) / f"{assignment}.ipynb"))
    return program_with(assignment, answers_of(submitted))


def solution_program(assignment: str) -> list[tuple[str, str]]:
    """The instructor notebook's own code a probe needs (its given definitions and its solutions), as
    graded_program gives a submission's. It needs no release: `make reference` runs before `make release`."""
    return program_with(assignment, answers_of(notebook_cache.shared(paths.source_notebook(assignment))))


def answers_of(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """The source of each code cell nbgrader knows, by grade_id."""
    return {cell.metadata["nbgrader"]["grade_id"]: cell.source
            for cell in notebook.cells if cell.cell_type == "code" and "nbgrader" in cell.metadata}


def program_with(assignment: str, answers: dict[str, str]) -> list[tuple[str, str]]:
    """The instructor notebook's given definition cells, and `answers` (by grade_id) in its answer cells' places."""
    program = []
    for cell in notebook_cache.shared(paths.source_notebook(assignment)).cells:
        meta = cell.metadata.get("nbgrader", {})
        grade_id = meta.get("grade_id", "")
        if cell.cell_type != "code":
            continue
        if grade_id.startswith("setup-"):
            program.append((grade_id, cell.source))
        elif meta.get("solution") and grade_id in answers:
            program.append((grade_id, answers[grade_id]))
    return program


class _LeftOut:
    """What `clue` gives while clues are left out: no output (course.grading.probe.plain_outputs drops it)."""

    def __repr__(self) -> str:
        return "LEFT_OUT"


LEFT_OUT = _LeftOut()
_clues_wanted = [True]


def clue(compute: Callable[[], object]):
    """compute(), an output that only names a mistake (a clue: a replay of the piece with a usual mistake, or a
    trusted re-computation of one), or LEFT_OUT while clues are left out (`leaving_clues_out`). A probe writes each
    `like_*` output as `out["like_x"] = clue(lambda: ...)`: graded outputs never depend on a clue, so a submission
    whose checks pass never pays for naming a mistake it does not make."""
    return compute() if _clues_wanted[-1] else LEFT_OUT


@contextlib.contextmanager
def leaving_clues_out() -> Iterator[None]:
    """Within it, `clue` computes nothing: the grader's first run of the probes (course.grading.probe), after which
    only the probes of the checks that failed run again, with their clues."""
    _clues_wanted.append(False)
    try:
        yield
    finally:
        _clues_wanted.pop()


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


def cell_file(cell_id: str) -> str:
    """The file name a cell's code is compiled under: its functions' code objects carry it (co_filename)."""
    return f"<cell {cell_id}>"


def _run_cell(cell_id: str, source: str, ns: dict) -> None:
    exec(compile(source, cell_file(cell_id), "exec"), ns)


# Probes run on the CPU, where the reference data were computed, whatever GPU the machine has: the notebooks pick
# CUDA when they see it, and a GPU's kernels round differently from the CPU's.
CPU_ONLY = {"CUDA_VISIBLE_DEVICES": ""}


def execute_program(program: list[tuple[str, str]], workdir: Path, ns: dict | None = None,
                    **options) -> tuple[dict, dict[str, str]]:
    """Run each cell in one namespace (a new one, or `ns` to go on in), in `workdir`, with no GPU visible (CPU_ONLY:
    this process's CUDA is hidden before the notebook first asks for it); returns (namespace, error by cell id).

    `options` are run_steps's: a time limit per cell, cells to skip, a call before each cell.
    """
    os.environ.update(CPU_ONLY)
    ns = {"__name__": "__main__"} if ns is None else ns
    cells = {cell_id: functools.partial(_run_cell, cell_id, source, ns) for cell_id, source in program}
    previous = Path.cwd()
    os.chdir(workdir)
    try:
        _, errors = run_steps(cells, **options)
    finally:
        os.chdir(previous)
    return ns, errors


def run_probes(module: ModuleType, ns: dict, prefix: str = "", only: Collection[str] | None = None,
               **options) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, str]]:
    """Every probe of `module` (or those named in `only`) on the namespace `ns`: (outputs by step id, error by step
    id).

    A probe's step id is `prefix` + its name. `options` are run_steps's (a time limit per probe,
    step ids to skip, a call before each). An error or a text output (an error a probe caught)
    that names one of the module's stand-ins (its STAND_INS: class name -> what to call it)
    names what it stands in for instead.
    """
    steps = {prefix + name: functools.partial(restoring_inputs, module, probe, ns) for name, probe in module.PROBES.items()
             if only is None or name in only}
    outputs, errors = run_steps(steps, **options)
    names = stand_ins(module)
    outputs = {step_id: {key: unnamed_in_text(value, names) for key, value in data.items()}
               if isinstance(data, dict) else data for step_id, data in outputs.items()}
    return outputs, {step_id: unnamed_stand_ins(error, names) for step_id, error in errors.items()}


def unnamed_in_text(value, stand_ins: dict[str, str]):
    """A probe output with the stand-ins' names replaced where it is text (a caught error), else as it is."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "U" and value.size == 1:
        return np.array(unnamed_stand_ins(str(value.ravel()[0]), stand_ins)).reshape(value.shape)
    return value


def module_tensors(module: ModuleType) -> list:
    """The tensors a probe module keeps at its top level, alone or in a dict, list or tuple: the probes' inputs.
    (An empty list where torch was never imported: no tensor exists then, and an assignment without torch is not
    made to load it, about a second.)"""
    torch = sys.modules.get("torch")
    if torch is None:
        return []
    found = []
    for value in vars(module).values():
        items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else [value]
        found += [item for item in items if isinstance(item, torch.Tensor)]
    return found


def restoring_inputs(module: ModuleType, probe: Callable, ns: dict) -> dict:
    """probe(ns), with gradients on and the module's input tensors put back as they were afterwards: code that
    changes its arguments in place (`logits /= t`) or turns gradients off for the whole program
    (`torch.set_grad_enabled(False)` outside a with) must not change what the next probe, or the next run of this
    one, is given."""
    inputs = module_tensors(module)
    saved = [tensor.clone() for tensor in inputs]
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_grad_enabled(True)
    try:
        return probe(ns)
    finally:
        if torch is not None:
            torch.set_grad_enabled(True)
        for tensor, value in zip(inputs, saved):
            if tensor.shape != value.shape or not tensor.equal(value):
                tensor.data = value  # the same object again holds the saved values (expanded tensors included)


def stand_ins(module: ModuleType) -> dict[str, str]:
    """A probe module's stand-in classes (its STAND_INS, if any): class name -> what a message calls it."""
    return getattr(module, "STAND_INS", {})


def unnamed_stand_ins(message: str, stand_ins: dict[str, str]) -> str:
    """`message` with each stand-in class name replaced by what it stands in for."""
    for name, shown in stand_ins.items():
        message = re.sub(rf"\b{name}\b", shown, message)
    return message
