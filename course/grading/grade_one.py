"""Grade one submission: one step, one result record.

    python -m course.grading.grade_one ASSIGNMENT STUDENT

0. validate (a folder of plain files, no links, a readable notebook of the
   right name and size);
1. nbgrader autograde: the notebook's structure repaired (course.repair: what
   was mended is told to the student), the whole notebook in a sandboxed
   kernel that sees a scratch copy of the submission and nothing of the course
   but its machinery;
   then, in the same kernel, the probes (the student's code runs once); then,
   in nbgrader's process, where no student code runs, the judge on the probes'
   data (course.grading.checking); each test cell then shows the judge's
   verdict, and nbgrader stores the judge's points in its gradebook
   (course.grading.nbgrader_hooks); then, in the same nbgrader process,
   nbgrader's feedback. Where nbgrader could not run the notebook to its end,
   the probes run apart and the judge's points go into the gradebook directly;
2. a result record, build/results/<assignment>/<student>.json, written last
   and atomically, so a record on disk is always a finished grading.

Every step runs under a wall clock and memory and process caps
(course.grading.limits, course.grading.sandbox). Nothing here raises for a
bad submission: every failure becomes a status and a message in the record.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import nbformat

from course import paths, untrusted
from course.grading import limits, sandbox
from course.grading.checking import (JUDGED, RECORD, SANDBOX, WORK_VARIABLE, jail_folder, probe_apart_and_judge,
                                     probe_folder, read_record)
from course.grading.checking import write_record as write_work_record
from course.grading.nbgrader_cli import nbgrader_command
from course.grading.record import REGRADED_ALONE, Record, new_record, set_status, submission_entries, write_record


def validate(folder: Path, assignment: str) -> str | None:
    """Why the submission cannot be graded at all, or None."""
    notebook = folder / f"{assignment}.ipynb"
    if folder.is_symlink() or not folder.is_dir():
        return f"{folder.name} is not a folder of files; hand in the assignment's folder as it was given."
    entries = submission_entries(folder)
    links = [str(p.relative_to(folder)) for p in entries if p.is_symlink()]
    if links:
        return (f"the submission contains a symbolic link ({untrusted.quoted(links[0], 80)}); links are not graded: "
                "hand in the files themselves.")
    odd = [str(p.relative_to(folder)) for p in entries if not (p.is_file() or p.is_dir())]
    if odd:
        return f"the submission contains something that is not a file or folder ({untrusted.quoted(odd[0], 80)})."
    size_mb = sum(p.stat().st_size for p in entries if p.is_file()) / 2**20
    if size_mb > limits.SUBMISSION_MB:
        return (f"the submission is {size_mb:.0f} MB, more than the {limits.SUBMISSION_MB} MB allowed; hand in only "
                f"{notebook.name} and submission_log.json, with outputs no larger than the notebook makes.")
    if not notebook.exists():
        names = ", ".join(sorted(p.name for p in folder.glob("*.ipynb"))) or "none"
        return f"no notebook named {notebook.name} was submitted (notebooks found: {untrusted.quoted(names, 120)})."
    try:
        nbformat.validate(nbformat.read(notebook, as_version=4))
    except Exception as error:  # unreadable JSON, wrong format, empty file
        return f"{notebook.name} is not a readable Jupyter notebook ({type(error).__name__}); re-download it from Jupyter."
    return None


def invalid_record(assignment: str, student: str, folder: Path) -> Record | None:
    """The 'invalid' record of a submission that cannot be graded at all (see `validate`), or None."""
    problem = validate(folder, assignment)
    if problem is None:
        return None
    record = new_record(assignment, student, folder)
    record.status, record.messages = "invalid", [problem]
    return record


def grade_one(assignment: str, student: str) -> Record:
    """Grade submitted/<student>/<assignment>/ and return its record."""
    folder = paths.submission_dir(student, assignment)
    work = work_folder(assignment, student)
    work.mkdir(parents=True, exist_ok=True)
    invalid = invalid_record(assignment, student, folder)
    if invalid:
        return invalid
    record = new_record(assignment, student, folder)
    if SANDBOX == "none":
        record.flags.append("not-sandboxed")
        sandbox.seal_course()
    return autograde_step(record, work)


def work_folder(assignment: str, student: str) -> Path:
    """What the grading of one submission keeps: its steps' logs, the hand-offs with nbgrader's process
    (course.grading.checking), the sandbox's folders."""
    return paths.BUILD / "grading" / assignment / student


def kernel_folder(assignment: str, student: str) -> Path:
    """The folder nbgrader's kernel runs the submission's notebook in, where what the notebook writes stays: a scratch
    copy (prepare_kernel_folder) that the kernel sees as nbgrader's autograded folder."""
    return jail_folder(assignment, student) / "kernel"


def autograde_step(record: Record, work: Path) -> Record:
    """nbgrader autograde in the sandboxed kernel, the probes after the notebook in that kernel, the judge, the
    test cells scored by its verdicts; then nbgrader's feedback. Returns the finished record."""
    assignment, student = record.assignment, record.student
    autograded = paths.autograded_dir(student, assignment)
    (work / JUDGED).unlink(missing_ok=True)
    write_work_record(record, work, RECORD)
    paths.feedback_page(student, assignment).unlink(missing_ok=True)  # an earlier grading's: this one writes its own
    scratch, probe_dir = kernel_folder(assignment, student), probe_folder(assignment, student)
    prepare_kernel_folder(paths.submission_dir(student, assignment), assignment, scratch)
    sandbox.remove_tree(probe_dir)
    probe_dir.mkdir(parents=True)
    sandbox.open_machinery()
    options, env, sockets = sandbox.kernel_jail(work, workdir=autograded, scratch=scratch, probe_dir=probe_dir,
                                                namespaces=SANDBOX != "none")
    env.update({WORK_VARIABLE: str(work), "COURSE_JAIL_UID": str(sandbox.JAIL_UID)})
    log = work / "autograde.log"
    command = nbgrader_command("autograde", assignment, "--student", student, "--force", *options,
                               then=("generate_feedback", assignment, "--student", student, "--force"))
    outcome = sandbox.limited_run(command, timeout=limits.NBGRADER_TIMEOUT_S, log=log,
                                  env={**sandbox.grading_env(), **env}, cwd=paths.ROOT,
                                  watch=[scratch, sandbox.home_beside(scratch), probe_dir, sockets / "ipc"])
    code, seconds = outcome.code, outcome.seconds
    for folder in (scratch, sandbox.home_beside(scratch), probe_dir):
        sandbox.reclaim(folder)
    sandbox.remove_tree(sockets)
    if (work / JUDGED).exists():
        record = read_record(work, JUDGED)
    else:  # nbgrader stopped before the judge: the probes apart (they may die where the notebook did), then the judge
        record = read_record(work, RECORD)  # (with what nbgrader's structure repair told, if it got that far)
        probe_apart_and_judge(record, work)
    record.seconds["nbgrader"] = seconds
    if code is None:
        set_status(record, "timeout")
        record.messages.append(f"Your notebook did not finish within {limits.NBGRADER_TIMEOUT_S} s under nbgrader, "
                               "so nbgrader could not run it to the end; the checks judged your code on their own.")
    elif code != 0:
        record.flags.append("nbgrader-failed")
        text = log.read_text(errors="replace")
        if outcome.over_disk:
            set_status(record, "crashed")
            record.messages.append(f"Your notebook wrote more than {limits.DISK_MB} MB or {limits.MAX_FILES} files, "
                                   "or nested folders too deep to count, while nbgrader ran it, so it was stopped; the "
                                   "checks judged your code on their own.")
        elif outcome.out_of_memory or outcome.memory_filled:
            set_status(record, "crashed")
            record.messages.append(f"Your notebook used all the memory it may use ({limits.MEMORY_MB} MB) while "
                                   "nbgrader ran it (a list or array that keeps growing?), so it was stopped; the "
                                   "checks judged your code on their own.")
        elif "DeadKernelError" in text:
            set_status(record, "crashed")
            record.messages.append("The Python kernel died while nbgrader ran your notebook (a crash, os._exit, or "
                                   "too much memory), so nbgrader could not run it to the end; the checks judged "
                                   "your code on their own.")
        elif "CellTimeoutError" in text:
            set_status(record, "timeout")
            record.messages.append("A cell of your notebook ran past its time limit and could not be interrupted, "
                                   "so nbgrader could not run it to the end; the checks judged your code on their own.")
        else:
            record.messages.append("nbgrader could not run your notebook to the end; the checks judged your code on "
                                   "their own, and the instructor has been told.")
    else:
        for cell in cells_with_error(autograded / f"{assignment}.ipynb", "CellTimeoutError"):
            set_status(record, "timeout")
            record.messages.append(
                f"Your cell {cell.get('id', '?')} did not finish within {limits.cell_timeout(cell)} s on the grader's "
                "run and was interrupted" + (f", having used all the memory it may use ({limits.MEMORY_MB} MB): a "
                                             "list or array that keeps growing?" if outcome.memory_filled else
                                             " (an endless loop or a long sleep?)") +
                "; the checks that need it cannot pass.")
    if code != 0:  # nbgrader stored no scores (with them, it wrote what it stored into the record): the judge's points
        # go into the gradebook directly
        from course.grading import gradebook  # (nbgrader's API: a second of imports that a normal grading skips)

        gradebook.store_points(assignment, student, record.points)
        record.gradebook = gradebook.auto_scores(assignment, student)
    return record


def prepare_kernel_folder(submission: Path, assignment: str, scratch: Path) -> None:
    """What nbgrader's autograded folder will hold, as a scratch copy for the kernel to run in.

    The submitted files (validated: no links), then the instructor's files of source/ over them,
    as nbgrader does.
    """
    sandbox.remove_tree(scratch)
    ignore = shutil.ignore_patterns(*paths.IGNORED_FILES)
    shutil.copytree(submission, scratch, ignore=ignore)
    shutil.copytree(paths.source_dir(assignment), scratch, ignore=shutil.ignore_patterns(*paths.IGNORED_FILES, "*.ipynb"),
                    dirs_exist_ok=True)


def cells_with_error(notebook: Path, error_name: str) -> list[nbformat.NotebookNode]:
    """The cells of an executed notebook that show the error `error_name`."""
    nb = nbformat.read(notebook, as_version=4)
    return [cell for cell in nb.cells if cell.cell_type == "code"
            and any(output.get("ename") == error_name for output in cell.outputs)]


def run_in_child(assignment: str, student: str, env: dict[str, str], timeout: float, alone: bool = False) -> int | None:
    """grade_one in a child process that dies with its parent (its output line left out: the batch prints its own);
    its exit code (negative: stopped by a signal), or None if it ran past `timeout` (the step limit)."""
    command = [sys.executable, "-m", "course.grading.grade_one", assignment, student, *(["--alone"] if alone else [])]
    try:
        return subprocess.run(command, cwd=paths.ROOT, env=env, timeout=timeout, preexec_fn=sandbox.die_with_parent,
                              stdout=subprocess.DEVNULL).returncode
    except subprocess.TimeoutExpired:
        return None


def main() -> None:
    # Stopped from outside (Ctrl-C, kill): die at once, by the signal, with no record written; the
    # steps this started die with it (PR_SET_PDEATHSIG), and the batch grades this submission next time.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignment", choices=paths.assignments())
    parser.add_argument("student")
    parser.add_argument("--alone", action="store_true", help="the second grading of a timeout, alone on the machine")
    args = parser.parse_args()
    record = grade_one(args.assignment, args.student)
    if args.alone:
        record.flags.append(REGRADED_ALONE)
        if record.status == "timeout":
            record.messages.append("It was graded a second time, alone on the machine, and ran past its limit again.")
    print(f"{args.student}: {record.status}, {sum(record.points.values())}/{sum(record.max_points.values())} "
          f"-> {write_record(record)}")


if __name__ == "__main__":
    main()
