"""Probe one submission: run every probe on its code's namespace, save plain data.

Normally the probes run in the jailed kernel that nbgrader has just run the
whole notebook in (`kernel_request`, sent by course.grading.nbgrader_hooks):
the student's code runs once. Where that run cannot finish (the kernel died,
or a probe killed it), a probe run of its own does the same: the grader
prepares a folder outside the sandbox (`prepare`): the program to run (the
instructor's given definition cells and the student's answer cells, in
notebook order) and a copy of the assignment's visible probe module
(course.probe_runner). Then, inside the sandbox, where the course's assignments,
source/ and reference data do not exist:

    python -m course.grading.probe FOLDER [--skip STEP ...] < probes.py

reads the hidden probe module from its standard input before any student code
runs and closes it (the hidden probes are never a file inside the jail), then
runs the program. Either way every probe runs under the per-cell time limit,
and FOLDER/outputs.npz gets arrays keyed 'check_id/output' for the hidden
probes, 'visible:probe/output' for the visible ones, which the judge compares
with submission_log.json, and the same of a second run of every probe,
'again:...' and 'visible-again:...', which shows code that keeps state between
calls; FOLDER/probe_report.json, the errors by cell and probe.
The judge reads those files in a process the student's code never ran in.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
from collections.abc import Collection
from pathlib import Path
from types import ModuleType

import nbformat
import numpy as np

from course import paths, untrusted
from course.grading import limits
from course.grading.sandbox import forbid_fork, remove_tree
from course.probe_runner import LEFT_OUT, execute_program, graded_program, leaving_clues_out, run_probes
from course.reference import to_bytes
from course.student_files.submission_log import to_numpy

PROGRAM, OUTPUTS, REPORT, CLUES = "program.json", "outputs.npz", "probe_report.json", "clues.npz"
VISIBLE = "visible_probes.py"
HIDDEN_MODULE, VISIBLE_MODULE = "_course_hidden_probes", "_course_visible_probes"
# Step ids and output keys: every probe runs twice, as code that keeps state between calls gives other outputs
# the second time. Hidden probes: 'check_id', then 'again:check_id'; visible ones: 'visible:name', 'visible-again:name'.
AGAIN_PREFIX, VISIBLE_PREFIX, VISIBLE_AGAIN_PREFIX = "again:", "visible:", "visible-again:"
HIDDEN_RUNS, VISIBLE_RUNS = ("", AGAIN_PREFIX), (VISIBLE_PREFIX, VISIBLE_AGAIN_PREFIX)
STEP_PREFIXES = (*HIDDEN_RUNS, *VISIBLE_RUNS)
PROGRESS = "progress.txt"  # the cell or probe now running


def prepare(assignment: str, notebook: Path, folder: Path) -> None:
    """Write the program and the visible probe module the sandboxed run needs into an empty `folder` (the hidden
    probes, paths.probes_file, are the run's standard input)."""
    remove_tree(folder)
    folder.mkdir(parents=True)
    program = graded_program(assignment, nbformat.read(notebook, as_version=4))
    (folder / PROGRAM).write_text(json.dumps(program))
    shutil.copyfile(paths.visible_probes_file(assignment), folder / VISIBLE)


def module_from_source(name: str, source: bytes) -> ModuleType:
    """A module made from `source`, under `name`, with no file behind it."""
    module = ModuleType(name)
    module.__file__ = f"<{name}>"
    sys.modules[name] = module  # dataclasses and pickle look their module up by name
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def take_standard_input() -> bytes:
    """All of standard input; then it is closed for good (/dev/null in its place)."""
    data = sys.stdin.buffer.read()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return data


def probe_folder(folder: Path, hidden_source: bytes, skip: Collection[str] = ()) -> dict:
    """Run the prepared program and all probes (the hidden ones made from `hidden_source`); write outputs.npz and
    probe_report.json.

    Each cell and each probe runs under the per-cell time limit; the one about to run is
    written to progress.txt first, so if it kills the process the grader knows which to
    `skip` when it tries again.
    """
    forbid_fork()
    program = [tuple(cell) for cell in json.loads((folder / PROGRAM).read_text())]
    ns, cell_errors = execute_program(program, folder, limit=limits.CELL_TIMEOUT_S, skip=skip,
                                      on_start=(folder / PROGRESS).write_text)
    return probe_namespace(ns, folder, hidden_source, (folder / VISIBLE).read_bytes(), skip, cell_errors)


def probe_namespace(ns: dict, folder: Path, hidden_source: bytes, visible_source: bytes, skip: Collection[str] = (),
                    cell_errors: dict[str, str] | None = None, clues: bool = True) -> dict:
    """Every probe, hidden and visible (made from their sources), run twice on the namespace `ns` of a run of the
    notebook's code; outputs.npz and probe_report.json written in `folder` (with `cell_errors`, that run's errors by
    cell). Each probe runs under the per-cell time limit, named in progress.txt while it runs. Without `clues`, the
    hidden probes leave their clues out (course.probe_tools.clue): `probe_clues` computes them for the checks that
    fail."""
    progress = folder / PROGRESS
    options = dict(limit=limits.CELL_TIMEOUT_S, skip=skip, on_start=progress.write_text)
    outputs, probe_errors = {}, {}
    hidden = module_from_source(HIDDEN_MODULE, hidden_source)
    with contextlib.nullcontext() if clues else leaving_clues_out():
        outputs, probe_errors = run_twice(hidden, ns, HIDDEN_RUNS, **options)
    found, failed = run_twice(module_from_source(VISIBLE_MODULE, visible_source), ns, VISIBLE_RUNS, **options)
    outputs.update(found)
    probe_errors.update(failed)
    progress.unlink()
    arrays, probe_errors = plain_outputs(outputs, probe_errors)
    (folder / OUTPUTS).write_bytes(npz_bytes(arrays))
    report = {"cell_errors": cell_errors or {}, "probe_errors": probe_errors}
    (folder / REPORT).write_text(json.dumps(report, indent=1))
    return report


def probe_clues(ns: dict, folder: Path, hidden_source: bytes, check_ids: Collection[str]) -> None:
    """The hidden probes of `check_ids` (checks that failed) run once more on `ns`, with their clues, into
    FOLDER/clues.npz; the judge takes only their clues from it, where their graded outputs are the first run's
    (course.grading.judge.with_clues)."""
    progress = folder / PROGRESS
    hidden = module_from_source(HIDDEN_MODULE, hidden_source)
    found, failed = run_probes(hidden, ns, only=check_ids, limit=limits.CELL_TIMEOUT_S, on_start=progress.write_text)
    progress.unlink()
    (folder / CLUES).write_bytes(npz_bytes(plain_outputs(found, failed)[0]))


def npz_bytes(outputs: dict[str, dict[str, np.ndarray]]) -> bytes:
    """Probe outputs by step id and key as an .npz file's bytes, keyed 'step_id/key'."""
    return to_bytes({f"{step_id}/{key}": value for step_id, data in outputs.items() for key, value in data.items()})


def kernel_request(folder: Path, call: str) -> str:
    """The code that, sent to the kernel that has just run the notebook, makes `call` (a call of this module's
    `probe_namespace` or `probe_clues`, on the notebook's namespace, `notebook`, and `folder`, `folder`): with this
    repository's course package, whatever the notebook's folder holds under that name, and in a namespace of its own,
    so that no name of the notebook's changes."""
    boot = ("import sys\n"
            f"sys.path.insert(0, {str(paths.ROOT)!r})\n"
            "for name in [name for name in sys.modules if name == 'course' or name.startswith('course.')]:\n"
            "    del sys.modules[name]\n"
            "from pathlib import Path\n"
            "from course.grading.probe import probe_clues, probe_namespace\n"
            f"folder = Path({str(folder)!r})\n"
            f"{call}\n")
    return f"__import__('builtins').exec({boot!r}, {{'notebook': get_ipython().user_ns}})"


def probes_request(folder: Path, hidden_source: bytes, visible_source: bytes) -> str:
    """The kernel's first run of the probes: every one, twice, the hidden ones without their clues."""
    return kernel_request(folder, f"probe_namespace(notebook, folder, {hidden_source!r}, {visible_source!r}, "
                                  "clues=False)")


def clues_request(folder: Path, hidden_source: bytes, check_ids: list[str]) -> str:
    """The kernel's second run, of the probes of the checks that failed, with their clues (`probe_clues`)."""
    return kernel_request(folder, f"probe_clues(notebook, folder, {hidden_source!r}, {check_ids!r})")


def plain_outputs(outputs: dict[str, dict], errors: dict[str, str]) -> tuple[dict[str, dict[str, np.ndarray]],
                                                                          dict[str, str]]:
    """The probes' outputs as arrays of numbers or text, by step id, and the errors by step id: a step whose values
    are not such arrays (ragged lists, functions, other objects: the judge loads no pickles) becomes an error."""
    arrays, errors = {}, dict(errors)
    for step_id, data in outputs.items():
        try:
            values = {key: to_numpy(value) for key, value in data.items() if value is not LEFT_OUT}
        except Exception as error:  # e.g. ragged lists; (the probe's own values are plain)
            errors[step_id] = f"TypeError: the piece returned values that are not arrays ({error})"
            continue
        if any(v.dtype == object for v in values.values()):
            errors[step_id] = "TypeError: the piece returned values that are not numbers or text"
        else:
            arrays[step_id] = values
    return arrays, errors


def run_twice(module: ModuleType, ns: dict, runs: tuple[str, str], **options) -> tuple[dict, dict[str, str]]:
    """Every probe of `module` on `ns`, run twice: (outputs, errors) by step id, `runs` giving the step-id
    prefixes of the first and the second run (the judge compares them). `options` are run_probes's."""
    outputs, errors = {}, {}
    for prefix in runs:
        found, failed = run_probes(module, ns, prefix=prefix, **options)
        outputs.update(found)
        errors.update(failed)
    return outputs, errors


def culprit(folder: Path) -> str | None:
    """What progress.txt in `folder` names as running when the run died (untrusted: check it is a known step)."""
    try:
        return untrusted.read_text(folder / PROGRESS, 200)
    except OSError:
        return None


def read_report(folder: Path) -> dict | None:
    """probe_report.json of a finished run (untrusted), or None if the run left no readable report and outputs."""
    try:
        report = json.loads(untrusted.read_text(folder / REPORT, 2**20))
    except (OSError, ValueError):
        return None
    if not os.path.lexists(folder / OUTPUTS):  # (a link there is not followed: read_probe_data refuses it)
        return None
    if not (isinstance(report, dict) and isinstance(report.get("cell_errors"), dict)):
        return None
    return {"cell_errors": {str(k): str(v) for k, v in report["cell_errors"].items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a folder made by prepare()")
    parser.add_argument("--skip", nargs="*", default=[], help="cells and probes not to run (they crashed before)")
    args = parser.parse_args()
    report = probe_folder(args.folder.resolve(), take_standard_input(), args.skip)
    print(f"probe errors: {len(report['probe_errors'])}, cell errors: {len(report['cell_errors'])}")


if __name__ == "__main__":
    main()
