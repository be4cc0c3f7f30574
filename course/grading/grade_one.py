"""Grade one submission: one step, one result record.

    python -m course.grading.grade_one ASSIGNMENT STUDENT

0. validate (a readable notebook of the right name and size) and note the
   structure repairs both paths will make (course.grading.repair);
1. nbgrader autograde (hidden tests restored, per-cell time limits, the kernel
   in bubblewrap) and nbgrader's feedback;
2. probe: the student's answer cells and the probes, in bubblewrap, where
   source/ and the checks do not exist; a run that dies is retried without
   the cell or probe it died in;
3. judge: the hidden pytest checks on the probe's data and the submission log;
4. a result record, build/results/<assignment>/<student>.json, written last
   and atomically, so a record on disk is always a finished grading.

Every step runs under a wall clock and memory and process caps
(course.grading.limits, course.grading.sandbox). Nothing here raises for a
bad submission: every failure becomes a status and a message in the record.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat

from course import paths
from course.grading import limits, probe, sandbox
from course.grading.repair import repair
from course.probes import SKIPPED

# "bwrap" (default): student code in the judge path runs in bubblewrap. "none": the instructor
# chose to grade without isolation on a machine that cannot run it; every record says so.
SANDBOX = os.environ.get("COURSE_SANDBOX", "bwrap")
RECORD_VERSION = 1
LOG_FLAGS = {  # hidden log test -> flag in the record
    "test_log_present": "log-missing",
    "test_log_matches_fresh_run": "log-differs-from-code",
    "test_log_sources_are_in_notebook": "log-code-not-in-notebook",
}


@dataclass
class Record:
    """Everything grading decided about one submission."""

    student: str
    assignment: str
    status: str = "ok"  # ok | invalid | timeout | crashed | forged | tampered
    messages: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    submission_sha256: str = ""
    nbgrader: dict = field(default_factory=dict)  # grade_id -> score, for autograded cells
    judge: dict = field(default_factory=dict)  # check_id -> {"passed", "message"}
    points: dict = field(default_factory=dict)  # check_id -> points awarded (judge path)
    max_points: dict = field(default_factory=dict)  # check_id -> points possible
    manual_pending: dict = field(default_factory=dict)  # grade_id -> points to grade by hand
    seconds: dict = field(default_factory=dict)
    version: int = RECORD_VERSION


def grade_cells(assignment: str) -> tuple[dict[str, int], dict[str, int]]:
    """Points of the autograded test cells and of the hand-graded answer cells, by grade_id."""
    auto, manual = {}, {}
    for cell in nbformat.read(paths.source_notebook(assignment), as_version=4).cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade"):
            (manual if meta.get("solution") else auto)[meta["grade_id"]] = meta["points"]
    return auto, manual


def submission_hash(folder: Path) -> str:
    """A digest of every file the student handed in (names and contents)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def grading_env() -> dict[str, str]:
    """The environment of grading steps: the venv's tools first, and `course` importable."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": str(paths.ROOT)}


def _run(cmd: list[str], timeout: int, log: Path, env: dict | None = None) -> tuple[int | None, float]:
    """Run a grading step under the sandbox's limits; (exit code or None on timeout, seconds)."""
    outcome = sandbox.limited_run(cmd, timeout=timeout, log=log, env={**grading_env(), **(env or {})}, cwd=paths.ROOT)
    return outcome.code, outcome.seconds


def nbgrader_command(*args: str) -> list[str]:
    """The venv's nbgrader with `args`."""
    return [str(Path(sys.executable).with_name("nbgrader")), *args, "--log-level=WARN"]


def nbgrader_scores(assignment: str, student: str) -> dict[str, float]:
    """Auto scores of the student's graded cells in the gradebook, by grade_id."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(paths.GRADEBOOK_URL, paths.COURSE_ID) as gradebook:
        try:
            submission = gradebook.find_submission(assignment, student)
        except MissingEntry:
            return {}
        return {g.name: float(g.auto_score or 0.0) for nb in submission.notebooks for g in nb.grades}


def parse_junit(path: Path) -> dict[str, tuple[bool, str]]:
    """(passed, message) by test name, from pytest's junit XML."""
    results = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        problem = case.find("failure") if case.find("failure") is not None else case.find("error")
        message = "" if problem is None else (problem.get("message") or problem.text or "").strip()
        message = message.removeprefix("Failed: ")  # pytest.fail's prefix
        results[case.get("name")] = (problem is None, message)
    return results


def validate(folder: Path, assignment: str) -> str | None:
    """Why the submission cannot be graded at all, or None."""
    notebook = folder / f"{assignment}.ipynb"
    size_mb = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20
    if size_mb > limits.SUBMISSION_MB:
        return (f"the submission is {size_mb:.0f} MB, more than the {limits.SUBMISSION_MB} MB allowed; hand in only "
                f"{notebook.name} and submission_log.json, with outputs no larger than the notebook makes.")
    if not notebook.exists():
        names = ", ".join(sorted(p.name for p in folder.glob("*.ipynb"))) or "none"
        return f"no notebook named {notebook.name} was submitted (notebooks found: {names})."
    try:
        nbformat.validate(nbformat.read(notebook, as_version=4))
    except Exception as error:  # unreadable JSON, wrong format, empty file
        return f"{notebook.name} is not a readable Jupyter notebook ({type(error).__name__}); re-download it from Jupyter."
    return None


def grade_one(assignment: str, student: str) -> Record:
    """Grade submitted/<student>/<assignment>/ and return its record."""
    folder = paths.submission_dir(student, assignment)
    work = paths.BUILD / "grading" / assignment / student
    work.mkdir(parents=True, exist_ok=True)
    auto_points, manual_points = grade_cells(assignment)
    record = Record(student, assignment, submission_sha256=submission_hash(folder), max_points=auto_points,
                    manual_pending=manual_points, points={check_id: 0 for check_id in auto_points})
    problem = validate(folder, assignment)
    if problem:
        record.status, record.messages = "invalid", [problem]
        return record
    repair_notes = repair(nbformat.read(folder / f"{assignment}.ipynb", as_version=4),
                          nbformat.read(paths.release_dir(assignment) / f"{assignment}.ipynb", as_version=4))
    if repair_notes:
        record.flags.append("cells-restored")
        record.messages += repair_notes
    autograde_step(record, work)
    jail = work / "sandbox"
    if probe_step(record, folder, jail) and judge_step(record, folder, jail, work):
        compare_paths(record)
    return record


def autograde_step(record: Record, work: Path) -> None:
    """nbgrader autograde with the kernel in bubblewrap, then nbgrader's feedback; fills record.nbgrader."""
    assignment, student = record.assignment, record.student
    autograded = paths.COURSE / "autograded" / student / assignment
    options, env, sockets = [], {}, None
    if SANDBOX != "none":
        options, env, sockets = sandbox.kernel_jail(work, workdir=autograded,
                                                    readable=[paths.ROOT / "course", paths.probes_file(assignment)])
    log = work / "autograde.log"
    code, record.seconds["nbgrader"] = _run(nbgrader_command("autograde", assignment, "--student", student, "--force", *options),
                                            limits.NOTEBOOK_TIMEOUT_S, log, env)
    if sockets:
        shutil.rmtree(sockets, ignore_errors=True)
    if code is None:
        set_status(record, "timeout")
        record.messages.append(f"Your notebook did not finish within {limits.NOTEBOOK_TIMEOUT_S} s under nbgrader, "
                               "so nbgrader could not score it; the hidden checks below judged your code instead.")
    elif code != 0:
        record.flags.append("nbgrader-failed")
        text = log.read_text(errors="replace")
        if "DeadKernelError" in text:
            set_status(record, "crashed")
            record.messages.append("The Python kernel died while nbgrader ran your notebook (a crash, os._exit, or "
                                   "too much memory), so nbgrader could not score it; the hidden checks below "
                                   "judged your code instead.")
        elif "CellTimeoutError" in text:
            set_status(record, "timeout")
            record.messages.append("A cell of your notebook ran past its time limit and could not be interrupted, "
                                   "so nbgrader could not score it; the hidden checks below judged your code instead.")
        else:
            record.messages.append("nbgrader could not grade your notebook; the hidden checks below judged your code "
                                   "instead, and the instructor has been told.")
    else:
        timed_out = cells_with_error(autograded / f"{assignment}.ipynb", "CellTimeoutError")
        if timed_out:
            set_status(record, "timeout")
            record.messages.append(f"Under nbgrader, cells {', '.join(timed_out)} ran past their time limit "
                                   f"({limits.CELL_TIMEOUT_S} s, {limits.LONG_CELL_TIMEOUT_S} s for training) "
                                   "and were interrupted.")
        _run(nbgrader_command("generate_feedback", assignment, "--student", student, "--force"),
             limits.FEEDBACK_TIMEOUT_S, work / "feedback.log")
        record.nbgrader = nbgrader_scores(assignment, student)


def cells_with_error(notebook: Path, error_name: str) -> list[str]:
    """Ids of the cells of an executed notebook that show the error `error_name`."""
    nb = nbformat.read(notebook, as_version=4)
    return [cell.get("id", "?") for cell in nb.cells if cell.cell_type == "code"
            and any(output.get("ename") == error_name for output in cell.outputs)]


def set_status(record: Record, status: str) -> None:
    """Record what went wrong; the first problem found is the status."""
    if record.status == "ok":
        record.status = status


def probe_command(jail: Path, skip: list[str] = ()) -> list[str]:
    """The probe of a prepared `jail` folder, in bubblewrap (where course/checks does not exist)."""
    command = [sys.executable, "-m", "course.grading.probe", str(jail), "--skip", *skip]
    if SANDBOX == "none":
        return command
    return sandbox.jail(command, workdir=jail, readable=[paths.ROOT / "course"], hidden=[paths.ROOT / "course" / "checks"])


def probe_step(record: Record, folder: Path, jail: Path) -> bool:
    """Run the answer cells and the probes in bubblewrap; False (and the reason) if that failed.

    A run that dies (os._exit, a crash, the memory cap) in some cell or probe is tried again
    without it, up to limits.PROBE_ATTEMPTS runs, so one broken piece costs only its own checks.
    """
    if SANDBOX == "none":
        record.flags.append("not-sandboxed")
    skip: list[str] = []
    record.seconds["probe"] = 0.0
    for _ in range(limits.PROBE_ATTEMPTS):
        probe.prepare(record.assignment, folder / f"{record.assignment}.ipynb", jail)
        outcome = sandbox.limited_run(probe_command(jail, skip), timeout=limits.PROBE_TIMEOUT_S,
                                      log=jail.parent / "probe.log", env=grading_env(), cwd=jail)
        record.seconds["probe"] += outcome.seconds
        if outcome.code == 0 and (jail / probe.OUTPUTS).exists():
            break
        reason = (f"did not finish within {limits.PROBE_TIMEOUT_S} s" if outcome.timed_out else
                  f"used more than {limits.MEMORY_MB} MB of memory" if outcome.out_of_memory else
                  "stopped the process that ran it (for example os._exit or a crash)")
        set_status(record, "timeout" if outcome.timed_out else "crashed")
        culprit = probe.culprit(jail)
        if culprit is None or culprit in skip:
            record.messages.append(f"Your code, run on the grader's inputs, {reason}; no hidden check could judge it.")
            return False
        skip.append(culprit)
        what = f"cell {culprit}" if culprit.startswith(("answer-", "setup-")) else f"the check {culprit}"
        record.messages.append(f"Your code, run on the grader's inputs, {reason} in {what}; it was left out "
                               "and the rest of your code was graded without it.")
    else:
        record.messages.append(f"Your code stopped the grader's process {limits.PROBE_ATTEMPTS} times; "
                               "no hidden check could judge it.")
        return False
    cell_errors = json.loads((jail / probe.REPORT).read_text())["cell_errors"]
    for cell_id, error in cell_errors.items():
        if error.startswith("TimeLimitExceeded"):
            set_status(record, "timeout")
            record.messages.append(f"Your cell {cell_id} did not finish within {limits.CELL_TIMEOUT_S} s on the "
                                   "grader's run (an endless loop or a long sleep?); the checks that need it cannot pass.")
        elif error != SKIPPED and "NotImplementedError" not in error:
            record.messages.append(f"Your cell {cell_id} raised {error}; the checks that need it cannot pass.")
    return True


def judge_step(record: Record, folder: Path, jail: Path, work: Path) -> bool:
    """The hidden pytest checks on the probe's data: points per check, and flags from the log tests."""
    junit = work / "judge.xml"
    code, record.seconds["judge"] = _run(
        [sys.executable, "-m", "pytest", "tests/hidden", "-q", "-p", "no:cacheprovider",
         f"--assignment={record.assignment}", f"--submission={folder}", f"--probe-dir={jail}", f"--junitxml={junit}"],
        limits.JUDGE_TIMEOUT_S, work / "judge.log")
    if code is None or not junit.exists():
        set_status(record, "crashed")
        record.messages.append("the hidden checks could not run; the instructor has been told.")
        return False
    for name, (passed, message) in parse_junit(junit).items():
        if name.startswith("test_check["):
            check_id = name[len("test_check["):-1]
            record.judge[check_id] = {"passed": passed, "message": message}
            record.points[check_id] = record.max_points[check_id] if passed else 0
        elif not passed:  # a log test: it raises a flag and costs no points
            record.flags.append(LOG_FLAGS[name])
            record.messages.append(message)
    if {"log-differs-from-code", "log-code-not-in-notebook"} & set(record.flags):
        set_status(record, "forged")
    return True


def compare_paths(record: Record) -> None:
    """Flag checks where nbgrader and the judge disagree; passing only inside the kernel is tampering."""
    if not record.nbgrader:
        return
    passed_in_kernel = {c for c in record.max_points if record.nbgrader.get(c, 0) > 0}
    passed_by_judge = {c for c, result in record.judge.items() if result["passed"]}
    if passed_in_kernel != passed_by_judge:
        record.flags.append("paths-disagree")
        record.messages.append("nbgrader and the hidden checks disagree on: "
                               f"{', '.join(sorted(passed_in_kernel ^ passed_by_judge))}; the instructor will review.")
    if passed_in_kernel - passed_by_judge:
        set_status(record, "tampered")


def write_record(record: Record) -> Path:
    """Write the record atomically: a reader never sees half a record."""
    path = paths.record_file(record.assignment, record.student)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(asdict(record), indent=1, sort_keys=True))
    os.replace(partial, path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignment", choices=paths.ASSIGNMENTS)
    parser.add_argument("student")
    args = parser.parse_args()
    record = grade_one(args.assignment, args.student)
    print(f"{args.student}: {record.status}, {sum(record.points.values())}/{sum(record.max_points.values())} "
          f"-> {write_record(record)}")


if __name__ == "__main__":
    main()
