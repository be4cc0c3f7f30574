"""One submission's grading as data in and data out, for a worker that shares no files with the driver.

    driver:  task = pack(assignment, student, ...)   the submission's bytes, the gradebook without students, the
                                                     instructor's hand grades of this submission, the grading settings
    worker:  result = grade_task(task, jobs)         grade_one (the same steps, sandbox and limits as a local batch)
                                                     in a private course directory built from the task
    driver:  apply(result)                           the only writer: autograded/, feedback/, the gradebook, the record

The worker needs the repository at the same version (the task carries its fingerprint and a worker that differs
refuses it) and, to sandbox student code, bubblewrap. Nothing it writes outlives the task: a task's private course
directory is removed when the task ends, and the folder of a task whose worker was killed is removed by the next
task on that machine (or by the driver, once the LocalCluster it started is closed).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
import tempfile
import time
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path

from course import paths
from course.grading import gradebook, limits, sandbox
from course.grading.grade_one import run_in_child
from course.grading.sandbox import grading_env
from course.grading.record import failed_child_record, new_record, read_record, submission_entries, write_record


class UnfitWorker(RuntimeError):
    """This worker cannot grade as the driver would: another version of the repository, or no sandbox."""


@dataclass
class Task:
    """What a worker needs to grade one submission. `files`: relative path -> bytes (None for a folder)."""

    assignment: str
    student: str
    files: dict[str, bytes | None]
    gradebook: bytes  # gradebook.without_students()
    hand: dict  # gradebook.hand_grades() of this submission
    settings: dict[str, str]  # limits.settings() of the driver
    step_timeout: float
    fingerprint: str
    alone: bool = False


@dataclass
class Result:
    """What grading one submission produced. `autograded` and `feedback`: relative path -> bytes."""

    record: dict | None  # None: grading was stopped from outside, there is no verdict
    seconds: float = 0.0  # wall clock on the worker
    autograded: dict[str, bytes] = field(default_factory=dict)
    feedback: dict[str, bytes] = field(default_factory=dict)
    autograder: dict | None = None  # gradebook.autograder_results()


def fingerprint(assignment: str) -> str:
    """A digest of everything grading `assignment` reads from the repository: the machinery, the assignment's
    folder (checks, reference data), its source and release, nbgrader's configuration."""
    digest = hashlib.sha256()
    for root in (paths.ROOT / "course", paths.assignment_dir(assignment), paths.source_dir(assignment),
                 paths.release_dir(assignment)):
        for path in submission_entries(root):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update((paths.ROOT / "nbgrader_config.py").read_bytes())
    return digest.hexdigest()


def folder_files(folder: Path) -> dict[str, bytes | None]:
    """Every plain file (its bytes) and folder (None) under `folder`, by relative path, links left out; {} if there
    is no folder."""
    entries = submission_entries(folder) if folder.is_dir() else []
    return {str(path.relative_to(folder)): None if path.is_dir() else path.read_bytes()
            for path in entries if not path.is_symlink() and (path.is_dir() or path.is_file())}


def write_folder(folder: Path, files: dict[str, bytes | None]) -> None:
    """Make `folder` hold exactly `files` (from `folder_files`)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name, content in files.items():
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise ValueError(f"{name!r} is not a path inside the folder")
        path = folder / name
        if content is None:
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)


def pack(assignment: str, student: str, empty_gradebook: bytes, version: str, alone: bool = False) -> Task:
    """The task of grading submitted/<student>/<assignment>/ (a validated folder of plain files) with the gradebook
    `empty_gradebook` (gradebook.without_students) at the repository's `version` (fingerprint)."""
    return Task(assignment, student, folder_files(paths.submission_dir(student, assignment)), empty_gradebook,
                gradebook.hand_grades(assignment, student), limits.settings(), limits.step_timeout(), version, alone)


@cache
def _own_fingerprint(assignment: str) -> str:
    return fingerprint(assignment)


TASK_PREFIX = "course-task-"


def task_folder_prefix(pid: int | None = None) -> str:
    """The name prefix of the private course directories a process grades tasks in: this machine's and the
    process's own (`pid`, by default this one), e.g. course-task-host-1234-."""
    return f"{TASK_PREFIX}{socket.gethostname()}-{pid or os.getpid()}-"


def remove_stale_folders() -> list[Path]:
    """Remove the task folders of this machine's processes that are gone (a worker killed mid-task leaves its
    folder: the course directory of the submission it graded); those of live processes stay. Returns the removed."""
    mine = re.compile(re.escape(f"{TASK_PREFIX}{socket.gethostname()}-") + r"(\d+)-")
    return sandbox.remove_folders_of_gone_processes(Path(tempfile.gettempdir()), mine)



def grade_task(task: Task, jobs: int) -> Result:
    """Grade `task` in a private course directory (one of `jobs` gradings at once on this machine)."""
    if _own_fingerprint(task.assignment) != task.fingerprint:
        raise UnfitWorker(f"the repository on {socket.gethostname()} differs from the driver's for {task.assignment} "
                          "(check out the driver's commit on every machine)")
    if task.settings.get("COURSE_SANDBOX", "bwrap") != "none" and not sandbox.bubblewrap():
        raise UnfitWorker(f"{socket.gethostname()} cannot sandbox student code: install bubblewrap there "
                          "(make sandbox-tools)")
    remove_stale_folders()  # before each task: those a worker killed on this machine left
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=task_folder_prefix()) as scratch:
        course = Path(scratch)
        submission = course / "submitted" / task.student / task.assignment
        write_folder(submission, task.files)
        for kind, folder in (("source", paths.source_dir(task.assignment)),
                             ("release", paths.release_dir(task.assignment))):
            (course / kind).mkdir()
            (course / kind / task.assignment).symlink_to(folder, target_is_directory=True)
        database = course / "gradebook.db"
        database.write_bytes(task.gradebook)
        gradebook.keep_hand_grades(f"sqlite:///{database}", task.assignment, task.student, task.hand)
        env = {**grading_env(), **paths.course_environment(course, course / "build"), **task.settings,
               **limits.thread_env(1 if task.alone else jobs)}
        code = run_in_child(task.assignment, task.student, env, task.step_timeout, task.alone)
        seconds = time.perf_counter() - start
        if code is not None and code < 0:
            return Result(None, seconds)
        record = read_record(course / "build" / "results" / task.assignment / f"{task.student}.json")
        if code != 0 or record is None:
            return Result(asdict(failed_child_record(task.assignment, task.student, submission, code, task.alone)),
                          seconds)
        return Result(record, seconds, folder_files(course / "autograded" / task.student / task.assignment),
                      folder_files(course / "feedback" / task.student / task.assignment),
                      gradebook.autograder_results(f"sqlite:///{database}", task.assignment, task.student))


def apply(result: Result) -> None:
    """Write what a worker returned into the course: autograded/ and feedback/ files, the autograder's scores in the
    gradebook, and last the record (a record on disk is a finished grading)."""
    record = result.record
    assignment, student = record["assignment"], record["student"]
    if result.autograded:
        write_folder(paths.autograded_dir(student, assignment), result.autograded)
    if result.feedback:
        write_folder(paths.feedback_dir(student, assignment), result.feedback)
    if result.autograder:
        gradebook.store_autograder_results(assignment, student, result.autograder)
    write_record(record)


def crashed_worker_record(assignment: str, student: str) -> dict:
    """The record of a submission whose grading stopped the worker that ran it, twice."""
    record = new_record(assignment, student, paths.submission_dir(student, assignment))
    record.status = "crashed"
    record.messages = ["grading your submission stopped the machine's grading process twice, so it could not be "
                       "graded; the instructor has been told."]
    record.flags.append("killed-worker")
    return asdict(record)

