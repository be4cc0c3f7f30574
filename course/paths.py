"""Where things live in the course repository."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# nbgrader's course directory (source/ release/ submitted/ autograded/ feedback/)
# and the build area (gradebook, records, scratch). Tests point both elsewhere.
COURSE = Path(os.environ.get("COURSE_DIR", ROOT))
BUILD = Path(os.environ.get("COURSE_BUILD_DIR", ROOT / "build"))
GRADEBOOK_URL = f"sqlite:///{BUILD / 'gradebook.db'}"
COURSE_ID = "transformers"
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
