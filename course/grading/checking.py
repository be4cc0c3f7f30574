"""The checks' verdicts on one submission: the probes' data, judged where no student code runs.

The student's code runs once per grading, in nbgrader's jailed kernel: after the notebook, the probes run in that
same kernel (course.grading.probe.kernel_request) and write their data into the submission's probe folder;
`judge_kernel_run`, in nbgrader's own process, judges them (course.grading.judge) and writes the record with the
verdicts, from which nbgrader's process stores the points. Where that run cannot give probe data (the kernel died in the notebook or in a
probe, a probe ran past its time, the notebook broke the probe's files), a probe run of its own gives them
(`probe_step`, which retries without the cell or probe that killed it), then the judge.

Hand-offs between the grader (course.grading.grade_one) and nbgrader's process, in the grading's work folder, named
by WORK_VARIABLE: the record so far (RECORD), and the record with the judge's verdicts (JUDGED), to which nbgrader's
process adds what the gradebook stored (course.grading.nbgrader_hooks.StoreJudgePoints).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import nbformat

from course import paths, untrusted
from course.grading import limits, probe, sandbox
from course.grading.judge import OUTPUTS_LIMIT, REPORT_LIMIT, judge, judge_checks, read_probe_data
from course.grading.record import Record, set_status
from course.probe_runner import SKIPPED, graded_program, load_visible_probes
from course.verdicts import OBSERVATIONS, checks_for

WORK_VARIABLE = "COURSE_GRADING_WORK"  # set only when the course's grader runs nbgrader (course.grading.grade_one)
RECORD, JUDGED = "record.json", "judged.json"
FIRST_RUN = "first-run"  # the probes' first run in the kernel, copied where the kernel cannot write (freeze_first_run)
NOT_NAMED_BY_CLUES = (*OBSERVATIONS, "state-between-calls")  # what a failing check's verdict says without clues
NOT_JUDGED = "no check could judge your code: see the messages at the top of your feedback"  # a record's judge is {}
# "bwrap" (default): student code runs in bubblewrap. "none": on a machine or container that cannot run it, without
# its namespaces; every record says so. Either way it runs as the jail's user, with no privilege
# (course.grading.sandbox.confined).
SANDBOX = os.environ.get("COURSE_SANDBOX", "bwrap")


def jail_folder(assignment: str, student: str) -> Path:
    """Where student code writes while one submission is graded: the kernel's folder and the probe's, given to the
    jail's user for the step and reclaimed after it (course.grading.sandbox); apart from the work folder, which holds
    the grader's own files."""
    return paths.BUILD / sandbox.JAIL_FOLDER / assignment / student


def probe_folder(assignment: str, student: str) -> Path:
    """Where the probes write their data (outputs.npz, probe_report.json), in the kernel or in a run of their own."""
    return jail_folder(assignment, student) / "probe"


def read_record(work: Path, name: str) -> Record:
    with open(work / name) as f:
        return Record(**json.load(f))


def write_record(record: Record, work: Path, name: str) -> None:
    (work / name).write_text(json.dumps(asdict(record)))


def judge_kernel_run(work: Path, notebook: nbformat.NotebookNode, probe_seconds: float | None) -> None:
    """In nbgrader's process, after the kernel ran the notebook and the probes (in `probe_seconds`; None if they did
    not finish): the record in `work` gets the notebook's cell errors, the judge's points and messages (the probes'
    first run in the kernel, as `freeze_first_run` kept it, with the clues of the second; or where the kernel left no
    data, a probe run of its own: `main`), written as JUDGED.
    (Runs nothing that forks in this process: nbgrader's has threads.)"""
    record = read_record(work, RECORD)
    submission = paths.submission_dir(record.student, record.assignment)
    probe_dir, first = probe_folder(record.assignment, record.student), work / FIRST_RUN
    sandbox.reclaim(probe_dir)  # the kernel is gone: what the jail's user may have left running can write there no more
    if probe_seconds is None or probe.read_report(first) is None:
        subprocess.run([sys.executable, "-m", "course.grading.checking", str(work)], env=sandbox.grading_env(),
                       cwd=paths.ROOT, check=True)
        return
    record.seconds["probe"] = probe_seconds
    record.messages += cell_error_messages(record, notebook_cell_errors(notebook))
    judge_step(record, submission, first, clues=probe_dir / probe.CLUES)
    write_record(record, work, JUDGED)


def freeze_first_run(probe_dir: Path, work: Path) -> bool:
    """Copy the probes' first run (outputs.npz, probe_report.json) out of the folder the kernel writes, into the work
    folder (FIRST_RUN), before the kernel is told anything of its verdicts: that copy is what the judge grades, whatever
    the kernel writes afterwards. False if they cannot be read (as untrusted files: no link, bounded)."""
    first = work / FIRST_RUN
    shutil.rmtree(first, ignore_errors=True)
    first.mkdir()
    try:
        for name, limit in ((probe.OUTPUTS, OUTPUTS_LIMIT), (probe.REPORT, REPORT_LIMIT)):
            (first / name).write_bytes(untrusted.read_bytes(probe_dir / name, limit))
    except OSError:
        return False
    return True


def failing_checks(assignment: str, work: Path) -> list[str]:
    """The checks whose outputs on the probes' first run in the kernel (without clues, as `freeze_first_run` kept it)
    are wrong, whose probes run again with their clues; not those that failed for an error, a stub or a second run
    that differs, which clues do not name; none if the data cannot be read (the judge then says so)."""
    try:
        outputs, errors = read_probe_data(work / FIRST_RUN)
    except Exception:  # written where student code runs: judge_step reports what is wrong with it
        return []
    return [check_id for check_id, check in judge_checks(assignment, outputs, errors).items()
            if not check["passed"] and check["mistake"] not in NOT_NAMED_BY_CLUES]


def notebook_cell_errors(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """'ErrorType: message' of each given or answer cell of an executed notebook that shows an error, by grade_id (a
    cell nbgrader interrupted at its time limit is told of apart, course.grading.grade_one)."""
    errors = {}
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        grade_id = meta.get("grade_id", "")
        if cell.cell_type != "code" or not (grade_id.startswith("setup-") or meta.get("solution")):
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error" and output.get("ename") != "CellTimeoutError":
                errors[grade_id] = f"{output.get('ename')}: {output.get('evalue')}"
                break
    return errors


def cell_error_messages(record: Record, errors: dict[str, str]) -> list[str]:
    """What the student is told of the errors their cells raised on the grader's run (`errors`, by cell id; a cell
    left unwritten, which raises NotImplementedError, is not an error to tell of); a timeout sets the status."""
    messages = []
    for cell_id, error in errors.items():
        if error == SKIPPED or "NotImplementedError" in error:
            continue
        if error.startswith("TimeLimitExceeded"):
            set_status(record, "timeout")
            messages.append(f"Your cell {cell_id} did not finish within {limits.CELL_TIMEOUT_S} s on the grader's "
                            "run (an endless loop or a long sleep?); the checks that need it cannot pass.")
        else:
            said = error if error == f"PermissionError: {sandbox.FORK_REFUSAL}" else untrusted.error_name(error)
            messages.append(f"Your cell {cell_id} raised {said} on the grader's run (your feedback notebook shows the "
                            "error in full); the checks that need it cannot pass.")
    return messages


def probe_command(jail: Path, skip: list[str] = ()) -> list[str]:
    """The probe of a prepared `jail` folder as the jail's user, in bubblewrap: of the repository, only course/ (the
    machinery) exists; its standard input is the hidden probes (paths.probes_file)."""
    command = [sys.executable, "-m", "course.grading.probe", str(jail), "--skip", *skip]
    setenv = {"PYTHONPATH": str(paths.ROOT)}
    if SANDBOX == "none":
        home = sandbox.private_home(jail)
        return sandbox.with_clean_environment(sandbox.confined(command, chdir=jail), home, setenv)
    return sandbox.jail(command, workdir=jail, readable=[paths.ROOT / "course"], setenv=setenv)


def probe_step(record: Record, folder: Path, jail: Path, log: Path | None = None) -> bool:
    """Run the answer cells and the probes in bubblewrap, a run of their own; False (and the reason) if that failed.

    A run that dies (os._exit, a crash, the memory cap) in some cell or probe is tried again
    without it, up to limits.PROBE_ATTEMPTS runs, so one broken piece costs only its own checks.
    Everything the run leaves in `jail` was written where student code ran: it is read as
    untrusted (course.untrusted), and a cell or probe is named only if it is a known one.
    The run's output goes to `log` (beside `jail` if not given).
    """
    sandbox.open_machinery()
    notebook = nbformat.read(folder / f"{record.assignment}.ipynb", as_version=4)
    cells = [cell_id for cell_id, _ in graded_program(record.assignment, notebook)]
    skip: list[str] = []
    record.seconds["probe"] = record.seconds.get("probe", 0.0)
    for _ in range(limits.PROBE_ATTEMPTS):
        probe.prepare(record.assignment, folder / f"{record.assignment}.ipynb", jail)
        sandbox.give_to_jail(jail)
        outcome = sandbox.limited_run(probe_command(jail, skip), timeout=limits.PROBE_TIMEOUT_S,
                                      log=log or jail.parent / "probe.log", env=sandbox.grading_env(), cwd=jail,
                                      stdin=paths.probes_file(record.assignment),
                                      watch=[jail, sandbox.home_beside(jail)])
        sandbox.reclaim(jail)
        sandbox.reclaim(sandbox.home_beside(jail))
        record.seconds["probe"] += outcome.seconds
        report = probe.read_report(jail) if outcome.code == 0 else None
        if report is not None:
            break
        memory = outcome.out_of_memory or outcome.memory_filled  # killed for it, or ran out of time while it was full
        reason = (f"used more than {limits.MEMORY_MB} MB of memory" if memory else
                  f"did not finish within {limits.PROBE_TIMEOUT_S} s" if outcome.timed_out else
                  f"wrote more than {limits.DISK_MB} MB or {limits.MAX_FILES} files, or nested folders too deep to "
                  "count" if outcome.over_disk else
                  "stopped the process that ran it (for example os._exit or a crash)")
        set_status(record, "timeout" if outcome.timed_out and not memory else "crashed")
        culprit = probe.culprit(jail)
        if culprit not in known_steps(record.assignment, cells) or culprit in skip:
            record.messages.append(f"Your code, run on the grader's inputs, {reason}; no check could judge it.")
            return False
        skip.append(culprit)
        what = (f"cell {culprit}" if culprit in cells else
                f"the submission log's probe {culprit.split(':', 1)[1]}"
                if culprit.startswith((probe.VISIBLE_PREFIX, probe.VISIBLE_AGAIN_PREFIX)) else
                f"the check {culprit.removeprefix(probe.AGAIN_PREFIX)}")
        record.messages.append(f"Your code, run on the grader's inputs, {reason} in {what}; it was left out "
                               "and the rest of your code was graded without it.")
    else:
        record.messages.append(f"Your code stopped the grader's process {limits.PROBE_ATTEMPTS} times; "
                               "no check could judge it.")
        return False
    record.messages += cell_error_messages(record, {cell_id: report["cell_errors"][cell_id] for cell_id in cells
                                                    if cell_id in report["cell_errors"]})
    return True


def known_steps(assignment: str, cells: list[str]) -> set[str]:
    """The steps a probe run of `cells` can name as the one it died in: each cell, and each run of each probe.

    Asked only when a run died: the names of the visible probes come from loading their module, which
    imports what it needs (torch, for a real assignment), a second or two the grader spares every other run.
    """
    return {*cells, *(prefix + name for prefix in probe.STEP_PREFIXES
                      for name in (*checks_for(assignment), *load_visible_probes(assignment).PROBES))}


def judge_step(record: Record, folder: Path, probe_dir: Path, clues: Path | None = None) -> bool:
    """The judge (course.grading.judge, in this process: it runs no student code) on the probe's data in
    `probe_dir` (and the `clues` of a second run, if any): points per check, and flags from the submission log in
    `folder`; False (and the reason) if the data could not be judged."""
    start = time.perf_counter()
    try:
        result = judge(record.assignment, folder, probe_dir, clues)
    except Exception:  # unreadable, oversized or malformed data: it was written where student code ran
        set_status(record, "crashed")
        record.messages.append("the checks could not judge your code (the grader's data was unreadable); "
                               "the instructor has been told.")
        return False
    finally:
        record.seconds["judge"] = round(time.perf_counter() - start, 2)
    for check_id, check in result["checks"].items():
        record.judge[check_id] = {"passed": check["passed"], "message": check["message"], "mistake": check["mistake"]}
        record.points[check_id] = check["points"]
    for problem in result["log"]:  # a log problem raises a flag and costs no points
        record.flags.append(problem["flag"])
        record.messages.append(problem["message"])
    if {"log-differs-from-code", "log-code-not-in-notebook"} & set(record.flags):
        set_status(record, "forged")
    return True


def probe_apart_and_judge(record: Record, work: Path) -> bool:
    """A probe run of its own (`probe_step`), then the judge; False if either could not give the verdicts."""
    submission = paths.submission_dir(record.student, record.assignment)
    probe_dir = probe_folder(record.assignment, record.student)
    return probe_step(record, submission, probe_dir, work / "probe.log") and judge_step(record, submission, probe_dir)


def main() -> None:
    """Started by nbgrader's process (`judge_kernel_run`) where the kernel's run gave no probe data: the probes apart,
    in a process of its own (nbgrader's has threads: this one may fork), for the record in the work folder."""
    parser = argparse.ArgumentParser(description=main.__doc__.split(":")[0])
    parser.add_argument("work", type=Path, help="the grading's work folder (RECORD in it)")
    work = parser.parse_args().work
    record = read_record(work, RECORD)
    probe_apart_and_judge(record, work)
    write_record(record, work, JUDGED)


if __name__ == "__main__":
    main()
