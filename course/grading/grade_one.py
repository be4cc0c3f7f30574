"""Grade one submission: one step, one result record.

    python -m course.grading.grade_one ASSIGNMENT STUDENT

0. validate (a folder of plain files, no links, a readable notebook of the
   right name and size) and note the structure repairs both runs will make
   (course.repair);
1. probe: the student's answer cells and the probes, in bubblewrap, where
   source/ and the checks do not exist; a run that dies is retried without
   the cell or probe it died in;
2. judge (course.grading.judge): points per check from the probe's data, and
   the submission log's cross-checks, in a process where no student code ran;
3. nbgrader autograde: the whole notebook in a sandboxed kernel that sees a
   scratch copy of the submission and nothing of the course; each test cell
   then shows the judge's verdict, and nbgrader stores the judge's points in
   its gradebook (course.grading.nbgrader_hooks); then, in the same nbgrader
   process, nbgrader's feedback;
4. a result record, build/results/<assignment>/<student>.json, written last
   and atomically, so a record on disk is always a finished grading.

Every step runs under a wall clock and memory and process caps
(course.grading.limits, course.grading.sandbox). Nothing here raises for a
bad submission: every failure becomes a status and a message in the record.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import nbformat

from course import paths, untrusted
from course.grading import limits, nbgrader_cli, probe, sandbox
from course.grading.nbgrader_cli import SCORES_VARIABLE, VERDICTS_VARIABLE
from course.grading.record import REGRADED_ALONE, Record, new_record, set_status, submission_entries, write_record
from course.probe_runner import SKIPPED, graded_program, load_visible_probes
from course.repair import repair
from course.verdicts import checks_for

# "bwrap" (default): student code runs in bubblewrap. "none": on a machine or container that cannot run it, without
# its namespaces; every record says so. Either way it runs as the jail's user, with no privilege
# (course.grading.sandbox.confined).
SANDBOX = os.environ.get("COURSE_SANDBOX", "bwrap")


def grading_env() -> dict[str, str]:
    """The environment of grading steps: the venv's tools first, and `course` importable."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": str(paths.ROOT)}


def _run(cmd: list[str], timeout: int, log: Path, env: dict | None = None,
         watch: list[Path] = ()) -> sandbox.Outcome:
    """Run a grading step under the sandbox's limits, student code's folders `watch`ed."""
    return sandbox.limited_run(cmd, timeout=timeout, log=log, env={**grading_env(), **(env or {})}, cwd=paths.ROOT,
                               watch=watch)


def nbgrader_command(*args: str, then: tuple[str, ...] = ()) -> list[str]:
    """The venv's nbgrader with `args`, and then, in the same process, with `then` if it succeeded (started through
    course.grading.nbgrader_cli)."""
    return [sys.executable, "-m", "course.grading.nbgrader_cli", *args, "--log-level=WARN",
            *([nbgrader_cli.THEN, *then, "--log-level=WARN"] if then else [])]


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
    repair_notes = repair(nbformat.read(folder / f"{assignment}.ipynb", as_version=4),
                          nbformat.read(paths.release_dir(assignment) / f"{assignment}.ipynb", as_version=4))
    if repair_notes:
        record.flags.append("cells-restored")
        record.messages += repair_notes
    if SANDBOX == "none":
        sandbox.seal_course()
    jail = jail_folder(assignment, student) / "probe"
    if probe_step(record, folder, jail, work / "probe.log"):
        judge_step(record, folder, jail, work)
    verdicts = work / "verdicts.json"
    verdicts.write_text(json.dumps({check_id: {"passed": record.points[check_id] > 0, "points": record.points[check_id],
                                               "max_points": record.max_points[check_id],
                                               "message": record.judge.get(check_id, {}).get("message", NOT_JUDGED)}
                                    for check_id in record.max_points}))
    autograde_step(record, work, verdicts)
    return record


NOT_JUDGED = "no check could judge your code: see the messages at the top of your feedback"


def work_folder(assignment: str, student: str) -> Path:
    """What the grading of one submission keeps: its steps' logs, the verdicts, the sandbox's folders."""
    return paths.BUILD / "grading" / assignment / student


def jail_folder(assignment: str, student: str) -> Path:
    """Where student code writes while one submission is graded: the probe's folder and the kernel's, given to the
    jail's user for the step and reclaimed after it (course.grading.sandbox); apart from the work folder, which holds
    the grader's own files."""
    return paths.BUILD / sandbox.JAIL_FOLDER / assignment / student


def kernel_folder(assignment: str, student: str) -> Path:
    """The folder nbgrader's kernel runs the submission's notebook in, where what the notebook writes stays: a scratch
    copy (prepare_kernel_folder) that the kernel sees as nbgrader's autograded folder."""
    return jail_folder(assignment, student) / "kernel"


def autograde_step(record: Record, work: Path, verdicts: Path) -> None:
    """nbgrader autograde in the sandboxed kernel, scored by the judge's `verdicts`; then nbgrader's feedback."""
    assignment, student = record.assignment, record.student
    autograded = paths.autograded_dir(student, assignment)
    scores = work / "scores.json"
    scores.unlink(missing_ok=True)
    paths.feedback_page(student, assignment).unlink(missing_ok=True)  # an earlier grading's: this one writes its own
    scratch = kernel_folder(assignment, student)
    prepare_kernel_folder(paths.submission_dir(student, assignment), assignment, scratch)
    options, env, sockets = sandbox.kernel_jail(work, workdir=autograded, scratch=scratch, namespaces=SANDBOX != "none")
    env.update({VERDICTS_VARIABLE: str(verdicts), SCORES_VARIABLE: str(scores)})
    log = work / "autograde.log"
    command = nbgrader_command("autograde", assignment, "--student", student, "--force", *options,
                               then=("generate_feedback", assignment, "--student", student, "--force"))
    outcome = _run(command, limits.NBGRADER_TIMEOUT_S, log, env, watch=[scratch, sandbox.home_beside(scratch)])
    code, record.seconds["nbgrader"] = outcome.code, outcome.seconds
    sandbox.reclaim(scratch)
    sandbox.reclaim(sandbox.home_beside(scratch))
    shutil.rmtree(sockets, ignore_errors=True)
    if code is None:
        set_status(record, "timeout")
        record.messages.append(f"Your notebook did not finish within {limits.NBGRADER_TIMEOUT_S} s under nbgrader, "
                               "so nbgrader could not run it to the end; the checks judged your code on their own.")
    elif code != 0:
        record.flags.append("nbgrader-failed")
        text = log.read_text(errors="replace")
        if outcome.over_disk:
            set_status(record, "crashed")
            record.messages.append(f"Your notebook wrote more than {limits.DISK_MB} MB or {limits.MAX_FILES} files "
                                   "while nbgrader ran it, so it was stopped; the checks judged your code on their own.")
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
        timed_out = cells_with_error(autograded / f"{assignment}.ipynb", "CellTimeoutError")
        if timed_out:
            set_status(record, "timeout")
            record.messages.append(f"Under nbgrader, cells {', '.join(timed_out)} ran past their time limit "
                                   f"({limits.CELL_TIMEOUT_S} s, {limits.LONG_CELL_TIMEOUT_S} s for training) "
                                   "and were interrupted" + (
                                       f", having used all the memory they may use ({limits.MEMORY_MB} MB): a list "
                                       "or array that keeps growing?" if outcome.memory_filled else "."))
    if code == 0:
        record.gradebook = json.loads(scores.read_text())
    else:  # nbgrader stored no scores: the judge's points go into the gradebook directly
        from course.grading import gradebook  # (nbgrader's API: a second of imports that a normal grading skips)

        gradebook.store_points(assignment, student, record.points)
        record.gradebook = gradebook.auto_scores(assignment, student)


def prepare_kernel_folder(submission: Path, assignment: str, scratch: Path) -> None:
    """What nbgrader's autograded folder will hold, as a scratch copy for the kernel to run in.

    The submitted files (validated: no links), then the instructor's files of source/ over them,
    as nbgrader does.
    """
    shutil.rmtree(scratch, ignore_errors=True)
    ignore = shutil.ignore_patterns(*paths.IGNORED_FILES)
    shutil.copytree(submission, scratch, ignore=ignore)
    shutil.copytree(paths.source_dir(assignment), scratch, ignore=shutil.ignore_patterns(*paths.IGNORED_FILES, "*.ipynb"),
                    dirs_exist_ok=True)


def cells_with_error(notebook: Path, error_name: str) -> list[str]:
    """Ids of the cells of an executed notebook that show the error `error_name`."""
    nb = nbformat.read(notebook, as_version=4)
    return [cell.get("id", "?") for cell in nb.cells if cell.cell_type == "code"
            and any(output.get("ename") == error_name for output in cell.outputs)]


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
    """Run the answer cells and the probes in bubblewrap; False (and the reason) if that failed.

    A run that dies (os._exit, a crash, the memory cap) in some cell or probe is tried again
    without it, up to limits.PROBE_ATTEMPTS runs, so one broken piece costs only its own checks.
    Everything the run leaves in `jail` was written where student code ran: it is read as
    untrusted (course.untrusted), and a cell or probe is named only if it is a known one.
    The run's output goes to `log` (beside `jail` if not given).
    """
    if SANDBOX == "none":
        record.flags.append("not-sandboxed")
    sandbox.open_machinery()
    notebook = nbformat.read(folder / f"{record.assignment}.ipynb", as_version=4)
    cells = [cell_id for cell_id, _ in graded_program(record.assignment, notebook)]
    skip: list[str] = []
    record.seconds["probe"] = 0.0
    for _ in range(limits.PROBE_ATTEMPTS):
        probe.prepare(record.assignment, folder / f"{record.assignment}.ipynb", jail)
        sandbox.give_to_jail(jail)
        outcome = sandbox.limited_run(probe_command(jail, skip), timeout=limits.PROBE_TIMEOUT_S,
                                      log=log or jail.parent / "probe.log", env=grading_env(), cwd=jail,
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
                  f"wrote more than {limits.DISK_MB} MB or {limits.MAX_FILES} files" if outcome.over_disk else
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
    for cell_id in cells:
        error = report["cell_errors"].get(cell_id)
        if error is None or error == SKIPPED or "NotImplementedError" in error:
            continue
        if error.startswith("TimeLimitExceeded"):
            set_status(record, "timeout")
            record.messages.append(f"Your cell {cell_id} did not finish within {limits.CELL_TIMEOUT_S} s on the "
                                   "grader's run (an endless loop or a long sleep?); the checks that need it cannot pass.")
        else:
            said = error if error == f"PermissionError: {sandbox.FORK_REFUSAL}" else untrusted.error_name(error)
            record.messages.append(f"Your cell {cell_id} raised {said} on the grader's run (your feedback notebook "
                                   "shows the error in full); the checks that need it cannot pass.")
    return True


def known_steps(assignment: str, cells: list[str]) -> set[str]:
    """The steps a probe run of `cells` can name as the one it died in: each cell, and each run of each probe.

    Asked only when a run died: the names of the visible probes come from loading their module, which
    imports what it needs (torch, for a real assignment), a second or two the grader spares every other run.
    """
    return {*cells, *(prefix + name for prefix in probe.STEP_PREFIXES
                      for name in (*checks_for(assignment), *load_visible_probes(assignment).PROBES))}


def judge_step(record: Record, folder: Path, jail: Path, work: Path) -> None:
    """The judge (course.grading.judge) on the probe's data: points per check, and flags from the log."""
    result_file = work / "judge.json"
    result_file.unlink(missing_ok=True)
    outcome = _run([sys.executable, "-m", "course.grading.judge", record.assignment, str(folder), str(jail),
                    str(result_file)], limits.JUDGE_TIMEOUT_S, work / "judge.log")
    record.seconds["judge"] = outcome.seconds
    if outcome.code != 0 or not result_file.exists():
        set_status(record, "crashed")
        record.messages.append("the checks could not judge your code (the grader's data was unreadable); "
                               "the instructor has been told.")
        return
    result = json.loads(result_file.read_text())
    for check_id, check in result["checks"].items():
        record.judge[check_id] = {"passed": check["passed"], "message": check["message"], "mistake": check["mistake"]}
        record.points[check_id] = check["points"]
    for problem in result["log"]:  # a log problem raises a flag and costs no points
        record.flags.append(problem["flag"])
        record.messages.append(problem["message"])
    if {"log-differs-from-code", "log-code-not-in-notebook"} & set(record.flags):
        set_status(record, "forged")


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
