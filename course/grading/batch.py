"""Grade a class: one grading step per submission, then one merge per assignment.

    python -m course.grading.batch [ASSIGNMENT ...] [--regrade] [--student S ...] [--jobs N] [--cluster ADDRESS] [--quiet]
                                                                                            (default: every assignment)

Each submission in submitted/ is graded in its own child process
(course.grading.grade_one), so one submission cannot take the batch down;
N of them run at once, each with its share of the CPU threads (two notebook
kernels that each take every core slow each other down many times over),
from one queue for every assignment graded, so that a long submission of one
assignment leaves no core idle that another's could use.
A submission whose record is already on disk for the same files is not
graded again: an interrupted batch resumes where it stopped, and a killed
batch takes its children with it. The merge is the only writer of
grades/<assignment>/ and feedback/.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import threading
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor, as_completed

import nbformat
from tqdm import tqdm

from course import paths
from course.grading import class_report, gradebook, limits, sandbox
from course.grading.checking import SANDBOX
from course.grading.class_results import merge, students
from course.grading.grade_one import run_in_child
from course.grading.record import (REGRADED_ALONE, failed_child_record, load_record, new_record, submission_hash,
                                   write_record)

def invalid_name_record(assignment: str, student: str, folder_name: str) -> None:
    """The record of a folder whose name cannot be a student id: nothing of it is run."""
    record = new_record(assignment, student, paths.COURSE / "submitted" / folder_name / assignment)
    record.status = "invalid"
    record.messages = [f"the folder submitted/{student} (shown percent-encoded) is not a valid student id: use "
                       "letters, digits, '.', '_', '@', '+' or '-' only; the instructor must rename it."]
    write_record(record)


def is_current(assignment: str, student: str) -> bool:
    """True if the record on disk grades exactly the files now in submitted/."""
    record = load_record(assignment, student)
    folder = paths.submission_dir(student, assignment)
    return record is not None and record["submission_sha256"] == submission_hash(folder)


STOPPING = threading.Event()  # set when the batch is stopped: nothing more is started or recorded


def grade_in_child(assignment: str, student: str, jobs: int = 1, alone: bool = False) -> float | None:
    """Run grade_one in a child process (one of `jobs` at once); the seconds it took, or None if it was stopped.

    If the child fails or runs past the step limit, the student gets a 'crashed' or 'timeout' record.
    If it was stopped from outside (Ctrl-C, kill), or the batch is stopping, there is no verdict to
    record: the submission stays ungraded, and the next batch grades it. `alone`: this is the second
    grading of a submission that timed out, with nothing else graded beside it (see main).
    """
    start = time.perf_counter()
    code = run_in_child(assignment, student, {**os.environ, **limits.thread_env(jobs)}, limits.step_timeout(), alone)
    if STOPPING.is_set() or (code is not None and code < 0):
        return None
    if code != 0 or load_record(assignment, student) is None:
        write_record(failed_child_record(assignment, student, paths.submission_dir(student, assignment), code, alone))
    return time.perf_counter() - start


def needs_grading_alone(assignment: str, student: str) -> bool:
    """True if the student's record is a timeout that was not graded alone yet."""
    record = load_record(assignment, student)
    return record is not None and record["status"] == "timeout" and REGRADED_ALONE not in record["flags"]


class LocalPool:
    """Each submission graded by a child process on this machine, `jobs` at once (the default pool)."""

    def __init__(self, jobs: int):
        self.jobs = jobs
        self.executor = ThreadPoolExecutor(max_workers=jobs)

    def submit(self, assignment: str, student: str, alone: bool = False) -> Future:
        return self.executor.submit(grade_in_child, assignment, student, 1 if alone else self.jobs, alone)

    @staticmethod
    def finish(future: Future) -> float | None:
        """The seconds a finished grading took (its child wrote the record), or None if it was stopped from outside."""
        return future.result()

    as_completed = staticmethod(as_completed)

    def in_flight(self) -> int:
        """Gradings to keep submitted: one waiting for each thread, in the executor's queue, taken in order by the
        first thread that frees."""
        return 2 * self.jobs

    def close(self) -> None:
        STOPPING.set()
        self.executor.shutdown(cancel_futures=True)


def grade_all(pool, submissions: list[tuple[str, str]], alone: bool = False, quiet: bool = False) -> None:
    """Grade each (assignment, student) on `pool` (LocalPool or cluster.ClusterPool), keeping `pool.in_flight()` of them
    submitted (one at a time if `alone`), and the next one submitted as soon as one finishes, before the driver records
    it; prints one line per submission as it finishes, under a progress bar (none if `quiet`) that shows done/total,
    the time left and the statuses so far. Ctrl-C starts no further gradings."""
    statuses: Counter = Counter()
    with tqdm(total=len(submissions), desc="grading", unit="submission", disable=quiet or not submissions,
              dynamic_ncols=True) as bar:
        waiting = list(submissions)
        running = {}

        def submit_more() -> None:
            while waiting and len(running) < (1 if alone else pool.in_flight()):
                assignment, student = waiting.pop(0)
                running[pool.submit(assignment, student, alone)] = (assignment, student)

        submit_more()
        while running:
            future = next(iter(pool.as_completed(running)))
            assignment, student = running.pop(future)
            submit_more()  # the freed worker's next grading starts while this one is recorded
            seconds = pool.finish(future)
            record = load_record(assignment, student) if seconds is not None else None
            if record:
                statuses[record["status"]] += 1
                line = (f"{assignment}/{student}: {record['status']}, {sum(record['points'].values())}/"
                        f"{sum(record['max_points'].values())} points, graded in {seconds:.1f} s")
            else:
                line = (f"{assignment}/{student}: not graded (stopped from outside, or its worker failed); it will be "
                        "graded next time")
            bar.write(line, file=sys.stdout)
            bar.set_postfix_str(", ".join(f"{status} {n}" for status, n in sorted(statuses.items())), refresh=False)
            bar.update()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*", help="default: all")
    parser.add_argument("--regrade", action="store_true", help="grade every submission again, even if unchanged")
    parser.add_argument("--student", action="append", help="grade only this student (repeatable)")
    parser.add_argument("--jobs", type=int, default=limits.default_jobs(),
                        help="submissions graded at once (default: COURSE_JOBS, or one per core)")
    parser.add_argument("--cluster", default=os.environ.get("COURSE_SCHEDULER"), metavar="ADDRESS",
                        help="grade on the Dask scheduler at ADDRESS (default: COURSE_SCHEDULER), or on a LocalCluster "
                             "of --jobs worker processes with 'local'; without it, child processes on this machine")
    parser.add_argument("--quiet", action="store_true", help="no progress bar (for logs): one line per submission")
    args = parser.parse_args()
    if SANDBOX == "none":
        print("WARNING: COURSE_SANDBOX=none: student code runs WITHOUT isolation (no network or file jail).",
              file=sys.stderr)
    elif not (args.cluster or sandbox.bubblewrap()):  # on a cluster, each worker checks it has bubblewrap
        sys.exit("bubblewrap (bwrap) is not installed, so student code cannot be isolated. Run "
                 "`make sandbox-tools` (apt-get install bubblewrap), or, on a machine that cannot run it, "
                 "set COURSE_SANDBOX=none to grade without isolation.")
    assignments = paths.select_assignments(args.assignments)
    if problems := [problem for assignment in assignments for problem in course_problems(assignment)]:
        sys.exit("\n".join(problems))  # the course's own fault: nothing is graded, no student is blamed
    sandbox.remove_stale_cgroups()
    gradebook.backup("autograde")
    names = {assignment: students(assignment) for assignment in assignments}  # listed once, merged at the end
    selected = {assignment: selected_students(names[assignment], args.student) for assignment in assignments}
    to_grade = [(assignment, student) for assignment in assignments
                for student in needing_grades(assignment, selected[assignment], args.regrade)]
    pool = open_pool(args.cluster, args.jobs)
    try:
        grade_all(pool, longest_first(to_grade), quiet=args.quiet)
        # A busy machine must not cost a correct submission its points: each timeout is graded again,
        # alone (nothing else graded beside it, all the cores), and that second verdict stands.
        again = [(assignment, student) for assignment in assignments for student, folder_name in
                 selected[assignment].items() if student == folder_name and needs_grading_alone(assignment, student)]
        for assignment, student in again:
            print(f"{assignment}/{student}: ran past a time limit; grading it again, alone")
        grade_all(pool, again, alone=True, quiet=args.quiet)
    except KeyboardInterrupt:
        sys.exit("interrupted: the submissions graded so far are kept; run the same command again to grade the rest")
    finally:
        pool.close()
    for assignment in assignments:
        records, _ = merge(assignment, list(names[assignment]))
        print(f"merged {len(records)} records into {paths.grades_dir(assignment)}/: grades.csv, report.md, report.html")
    print(f"course page: {class_report.write_course_page()}")


def course_problems(assignment: str) -> list[str]:
    """What the course lacks to grade `assignment` (its own fault, which grading would otherwise record as every
    student's), each said in a line with the command that mends it."""
    problems = []
    if not paths.source_notebook(assignment).is_file():
        problems.append(f"{assignment}: no source notebook ({paths.source_notebook(assignment)}): run "
                        f"`make source ASSIGNMENT={assignment}` first")
    if not (paths.release_dir(assignment) / f"{assignment}.ipynb").is_file() or not gradebook.has_assignment(assignment):
        problems.append(f"{assignment}: not released, or not recorded in the gradebook ({paths.GRADEBOOK}; nbgrader "
                        f"records an assignment when it releases it): run `make release ASSIGNMENT={assignment}` first")
    return problems


def longest_first(submissions: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """`submissions`, the longest gradings likely first: those of assignments with a long-running cell (training),
    then the largest notebooks (a notebook's size grows with what it ran). The batch then ends on short gradings, with
    no core idle while one long grading finishes."""
    def expected_length(submission: tuple[str, str]) -> tuple[bool, int]:
        assignment, student = submission
        notebook = paths.submission_dir(student, assignment) / f"{assignment}.ipynb"
        size = notebook.stat().st_size if notebook.is_file() and not notebook.is_symlink() else 0
        return trains(assignment), size
    return sorted(submissions, key=expected_length, reverse=True)


@functools.cache
def trains(assignment: str) -> bool:
    """True if the assignment's notebook has a long-running cell."""
    return any(limits.is_long_running(cell) for cell in nbformat.read(paths.source_notebook(assignment), 4).cells)


def open_pool(cluster: str | None, jobs: int):
    """Where submissions are graded: child processes here (LocalPool), or the Dask cluster at `cluster`."""
    if not cluster:
        return LocalPool(jobs)
    from course.grading.cluster import ClusterPool  # Dask is imported only when a cluster grades

    return ClusterPool(cluster, jobs)


def selected_students(names: dict[str, str], only: list[str] | None) -> dict[str, str]:
    """Of one assignment's submissions (`students`), those to look at: all, or `only` these students."""
    return {student: folder_name for student, folder_name in names.items() if not only or student in only}


def needing_grades(assignment: str, selected: dict[str, str], regrade: bool) -> list[str]:
    """The selected students whose submission needs grading (all of them with `regrade`); a folder name that is not a
    valid student id gets an 'invalid' record instead, and an unchanged graded submission is left as it is."""
    to_grade = []
    for student, folder_name in selected.items():
        if student != folder_name:
            invalid_name_record(assignment, student, folder_name)
            print(f"{assignment}/{student}: not a valid student id, recorded as invalid")
        elif not regrade and is_current(assignment, student):
            print(f"{assignment}/{student}: already graded, unchanged")
        else:
            to_grade.append(student)
    return to_grade


if __name__ == "__main__":
    main()
