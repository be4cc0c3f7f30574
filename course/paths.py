"""Where things live in the course repository."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# nbgrader's course directory (source/ release/ submitted/ autograded/ feedback/)
# and the build area (gradebook, records, scratch). Tests point both elsewhere.
COURSE = Path(os.environ.get("COURSE_DIR", ROOT))
BUILD = Path(os.environ.get("COURSE_BUILD_DIR", ROOT / "build"))
# The gradebook (hand grades included) lives in the course directory, as nbgrader's default does, outside
# build/: `make clean` keeps it; only `make clean-gradebook` removes it, after a backup.
GRADEBOOK = COURSE / "gradebook.db"
GRADEBOOK_URL = f"sqlite:///{GRADEBOOK}"
EXCHANGE = BUILD / "exchange"  # unused (no nbgrader exchange), but formgrader wants one to exist
COURSE_ID = "transformers"
# Files that never belong in a release or a graded copy (nbgrader's CourseDirectory.ignore).
IGNORED_FILES = (".ipynb_checkpoints", "*.pyc", "__pycache__", "submission_log.json")
ASSIGNMENTS = ("transformer_fundamentals",)


def authoring_file(assignment: str) -> Path:
    return ROOT / "authoring" / f"{assignment}.nb"


def source_dir(assignment: str) -> Path:
    return ROOT / "source" / assignment


def source_notebook(assignment: str) -> Path:
    return source_dir(assignment) / f"{assignment}.ipynb"


def release_dir(assignment: str) -> Path:
    return COURSE / "release" / assignment


def submission_dir(student: str, assignment: str) -> Path:
    return COURSE / "submitted" / student / assignment


def grades_dir(assignment: str) -> Path:
    return COURSE / "grades" / assignment


def feedback_dir(student: str, assignment: str) -> Path:
    return COURSE / "feedback" / student / assignment


def record_file(assignment: str, student: str) -> Path:
    """The result record of one graded submission."""
    return BUILD / "results" / assignment / f"{student}.json"


def probes_file(assignment: str) -> Path:
    """The assignment's probe module, shipped to students with the release."""
    (path,) = source_dir(assignment).glob("*_probes.py")
    return path


def reference_file(assignment: str) -> Path:
    return ROOT / "course" / "checks" / f"{assignment}.npz"
