"""Grade the submission Gradescope hands the autograder, and write its results.json.

    python -m course.gradescope.run            (run_autograder calls it, with environment.sh's variables)

The submission (/autograder/submission: the notebook, with or without submission_log.json, as the student
uploaded it) becomes submitted/student/<assignment>/ of the course directory the autograder's setup made, and is
graded by the same command as one submission of `make autograde` (course.grading.grade_one: structure repair,
sandboxed probe, judge, nbgrader, under the same limits). Its record becomes /autograder/results/results.json
(course.gradescope.results), written atomically, whatever happened: a grader that fails still writes one that says
so. Every run starts from the same state, so the same notebook gets the same results.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import traceback
from dataclasses import asdict
from pathlib import Path

from course import paths
from course.gradescope import AUTOGRADER
from course.gradescope.results import SETTINGS_FILE, Settings, crashed_results, results, visible_test_errors
from course.grading import limits, sandbox
from course.grading.grade_one import run_in_child, work_folder
from course.grading.sandbox import grading_env
from course.grading.record import failed_child_record, read_record, submission_entries, write_record

STUDENT = "student"  # one container grades one submission: the course directory holds this one student
GRADER_FAILED = ("The autograder failed before it could grade your submission; your instructor has been told. "
                 "Submitting again may help.")


def hand_in(upload: Path, folder: Path, assignment: str) -> list[str]:
    """Copy the uploaded files into the submission folder `folder` (links kept as links: grading refuses them),
    the notebook under the name grading expects; returns notes for the student on what was taken as what.

    The notebook is <assignment>.ipynb, at the top of the upload or below it; otherwise the only notebook uploaded,
    renamed. Its folder is what is handed in (submission_log.json belongs beside it).
    """
    expected = f"{assignment}.ipynb"
    entries = submission_entries(upload) if upload.is_dir() else []
    notebooks = sorted((p for p in entries if p.suffix == ".ipynb" and p.is_file() and not p.is_symlink()),
                       key=lambda p: (p.name != expected, len(p.parts)))
    chosen = notebooks[0] if notebooks and (notebooks[0].name == expected or len(notebooks) == 1) else None
    shutil.copytree(chosen.parent if chosen else upload, folder, symlinks=True)
    if chosen is None or chosen.name == expected:
        return []
    (folder / chosen.name).rename(folder / expected)
    return [f"Your notebook {chosen.name} was graded as {expected}, the assignment's notebook."]


def fresh_course_state(assignment: str) -> Path:
    """Remove what an earlier run left of the student (a rerun starts where the first did); their folder."""
    for folder in (paths.submission_dir(STUDENT, assignment), paths.COURSE / "autograded" / STUDENT,
                   paths.feedback_dir(STUDENT, assignment), work_folder(assignment, STUDENT)):
        shutil.rmtree(folder, ignore_errors=True)
    paths.record_file(assignment, STUDENT).unlink(missing_ok=True)
    return paths.submission_dir(STUDENT, assignment)


def sandbox_note() -> tuple[dict[str, str], list[str]]:
    """The grading environment's sandbox setting, and a note if this container cannot run bubblewrap (Docker's
    default profile forbids the namespaces it needs): then student code runs without its namespaces, still as the
    jail's user on a sealed course (course.grading.sandbox), in this container only. The grading child takes this
    process's jail user, so that what it leaves running is found and killed here."""
    jail_user = {"COURSE_JAIL_UID": str(sandbox.JAIL_UID)}
    if sandbox.bubblewrap_works():
        return jail_user, []
    return {**jail_user, "COURSE_SANDBOX": "none"}, [
        "This container cannot run the grader's namespaces, so your code ran as an unprivileged user without them "
        "(each submission is graded in a container of its own)."]


def grade(settings: Settings, upload: Path) -> dict:
    """Grade the upload; its results.json (without execution_time)."""
    assignment = settings.assignment
    folder = fresh_course_state(assignment)
    notes = hand_in(upload, folder, assignment)
    sandbox_env, sandbox_notes = sandbox_note()
    sandbox.seal_course()
    code = run_in_child(assignment, STUDENT, {**grading_env(), **sandbox_env}, limits.step_timeout())
    sandbox.kill_jail_processes()  # nothing of the student's outlives the grading (and writes after it)
    record = read_record(paths.record_file(assignment, STUDENT)) if code == 0 else None
    if record is None:
        record = asdict(failed_child_record(assignment, STUDENT, folder, code, alone=False))
        write_record(record)
    record["messages"] = notes + sandbox_notes + record["messages"]
    visible = visible_test_errors(paths.autograded_dir(STUDENT, assignment) / f"{assignment}.ipynb")
    return results(record, visible, settings)


def write_results(data: dict, path: Path) -> None:
    """Write results.json atomically: Gradescope never reads half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(data, indent=1))
    os.replace(partial, path)


def main() -> None:
    start = time.monotonic()
    try:
        data = grade(Settings.read(paths.ROOT / SETTINGS_FILE), AUTOGRADER / "submission")
    except Exception:  # the grader's own failure: the student still gets results that say so
        traceback.print_exc()
        data = crashed_results(GRADER_FAILED)
    data["execution_time"] = round(time.monotonic() - start)
    write_results(data, AUTOGRADER / "results" / "results.json")
    print(f"score {data['score']}, {len(data['tests'])} tests -> {AUTOGRADER / 'results' / 'results.json'}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
