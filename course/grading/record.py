"""A grading's result record: what grading decided about one submission, its statuses, and how records are read and
written (build/results/<assignment>/<student>.json, written last and atomically, so a record on disk is always a
finished grading)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path

from course import paths
from course.verdicts import grade_cells

RECORD_VERSION = 2
STATUS_MEANING = {  # each status a record may have, and what it tells the student
    "ok": "graded normally",
    "invalid": "the submission could not be opened, see below",
    "timeout": "some of your code ran past its time limit, see below",
    "crashed": "your code stopped the process that ran it, see below",
    "forged": "submission_log.json does not hold what your code computes",
}
STATUSES = tuple(STATUS_MEANING)
REGRADED_ALONE = "regraded-alone"  # the flag of a second grading, alone on the machine, after a timeout


@dataclass
class Record:
    """Everything grading decided about one submission."""

    student: str
    assignment: str
    status: str = "ok"  # one of STATUSES
    messages: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    submission_sha256: str = ""
    judge: dict = field(default_factory=dict)  # check_id -> {"passed", "message", "mistake"}
    points: dict = field(default_factory=dict)  # check_id -> points awarded by the judge
    max_points: dict = field(default_factory=dict)  # check_id -> points possible
    gradebook: dict = field(default_factory=dict)  # check_id -> auto score in nbgrader's gradebook, read back
    manual_pending: dict = field(default_factory=dict)  # grade_id -> points to grade by hand
    seconds: dict = field(default_factory=dict)
    version: int = RECORD_VERSION


def new_record(assignment: str, student: str, folder: Path) -> Record:
    """A record with every check at 0 points, before anything is graded."""
    auto_points, manual_points = grade_cells(assignment)
    return Record(student, assignment, submission_sha256=submission_hash(folder), max_points=auto_points,
                  manual_pending=manual_points, points={check_id: 0 for check_id in auto_points})


def submission_entries(folder: Path) -> list[Path]:
    """Every file, folder and link under `folder`, without following links, in a fixed order."""
    entries = []
    for root, dirs, files in os.walk(folder):  # os.walk does not descend into linked folders
        dirs.sort()
        entries += [Path(root) / name for name in sorted(dirs + files)]
    return entries


def submission_hash(folder: Path) -> str:
    """A digest of what the student handed in: names, contents of plain files, targets of links."""
    digest = hashlib.sha256()
    for path in submission_entries(folder) if folder.is_dir() and not folder.is_symlink() else []:
        info = path.lstat()
        content = (path.read_bytes() if stat.S_ISREG(info.st_mode) else
                   os.readlink(path).encode(errors="surrogateescape") if stat.S_ISLNK(info.st_mode) else b"")
        digest.update(str(path.relative_to(folder)).encode(errors="surrogateescape") + b"\0" +
                      str(stat.S_IFMT(info.st_mode)).encode() + b"\0" + content + b"\0")
    return digest.hexdigest()


def set_status(record: Record, status: str) -> None:
    """Record what went wrong; the first problem found is the status."""
    if record.status == "ok":
        record.status = status


def failed_child_record(assignment: str, student: str, folder: Path, code: int | None, alone: bool) -> Record:
    """The record of a grading child that failed (`code` != 0) or ran past the step limit (`code` None) on the
    submission in `folder`."""
    record = new_record(assignment, student, folder)
    record.status = "crashed" if code is not None else "timeout"
    record.messages = ["grading stopped before it finished; the instructor has been told."]
    record.flags += [REGRADED_ALONE] if alone else []
    return record


def read_record(path: Path) -> dict | None:
    """A record written by `write_record` (None if there is none, or it is of another version)."""
    try:
        record = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return record if record.get("version") == RECORD_VERSION else None


def write_record(record: Record | dict) -> Path:
    """Write the record (a Record or its dict) atomically: a reader never sees half a record."""
    data = asdict(record) if isinstance(record, Record) else record
    path = paths.record_file(data["assignment"], data["student"])
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(data, indent=1, sort_keys=True))
    os.replace(partial, path)
    return path


def load_record(assignment: str, student: str) -> dict | None:
    """The record of the student's submission of `assignment` as data (build/results/), or None if there is none."""
    return read_record(paths.record_file(assignment, student))
