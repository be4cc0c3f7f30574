"""Where things live in the course repository."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# nbgrader's course directory (source/ release/ submitted/ autograded/ feedback/)
# and the build area (records, scratch). Tests point both elsewhere.
COURSE = Path(os.environ.get("COURSE_DIR", ROOT))
BUILD = Path(os.environ.get("COURSE_BUILD_DIR", ROOT / "build"))
# Each assignment is a folder here (docs/writing_an_assignment.md). Tests use a fixture's.
ASSIGNMENTS_DIR = Path(os.environ.get("COURSE_ASSIGNMENTS_DIR", ROOT / "assignments"))
AUTHORING_FILE = "notebook.py"
# The files every release carries beside the notebook, from the machinery (course/student_files/).
STUDENT_FILES = ROOT / "course" / "student_files"
# The gradebook (hand grades included) lives in the course directory, as nbgrader's default does, outside
# build/: `make clean` keeps it.
GRADEBOOK = COURSE / "gradebook.db"
GRADEBOOK_URL = f"sqlite:///{GRADEBOOK}"
EXCHANGE = BUILD / "exchange"  # nbgrader's exchange: the hub's (make hub); formgrader wants one to exist anyway
COURSE_ID = "transformers"
# Files that never belong in a release or a graded copy (nbgrader's CourseDirectory.ignore).
IGNORED_FILES = (".ipynb_checkpoints", "*.pyc", "__pycache__", "submission_log.json")


def course_environment(course: Path, build: Path) -> dict[str, str]:
    """The environment of a course command on the course directory `course` with its build area `build`: every
    path this module and Jupyter take from the environment (the Makefile sets the same for the repository)."""
    return {"COURSE_DIR": str(course), "COURSE_BUILD_DIR": str(build),
            **{name: str(build / sub) for name, sub in (("JUPYTER_CONFIG_DIR", "jupyter/config"),
               ("JUPYTER_DATA_DIR", "jupyter/data"), ("JUPYTER_RUNTIME_DIR", "jupyter/runtime"),
               ("IPYTHONDIR", "ipython"), ("MPLCONFIGDIR", "matplotlib"))}}


def assignments() -> tuple[str, ...]:
    """The course's assignments: the folders of ASSIGNMENTS_DIR that hold an authoring file, by name."""
    return tuple(sorted(p.parent.name for p in ASSIGNMENTS_DIR.glob(f"*/{AUTHORING_FILE}")))


def assignment_dir(assignment: str) -> Path:
    """Everything specific to one assignment: notebook.py, probes.py, visible_probes.py, checks.py,
    reference.npz, corpus.py, data/ (and its build script), tests/."""
    return ASSIGNMENTS_DIR / assignment


def authoring_file(assignment: str) -> Path:
    return assignment_dir(assignment) / AUTHORING_FILE


def probes_file(assignment: str) -> Path:
    """The hidden probes: instructor-only, run by the grader on its own inputs."""
    return assignment_dir(assignment) / "probes.py"


def visible_probes_file(assignment: str) -> Path:
    """The probes of the visible inputs, shipped with the release: submission_log.json records them."""
    return assignment_dir(assignment) / "visible_probes.py"


def reference_file(assignment: str) -> Path:
    return assignment_dir(assignment) / "reference.npz"


def source_dir(assignment: str) -> Path:
    return COURSE / "source" / assignment


def source_notebook(assignment: str) -> Path:
    return source_dir(assignment) / f"{assignment}.ipynb"


def release_dir(assignment: str) -> Path:
    return COURSE / "release" / assignment


def submission_dir(student: str, assignment: str) -> Path:
    return COURSE / "submitted" / student / assignment


def grades_dir(assignment: str) -> Path:
    return COURSE / "grades" / assignment


def final_grades_file() -> Path:
    """The course-wide final grades (course.grading.final_grades)."""
    return COURSE / "grades" / "final_grades.csv"


def feedback_dir(student: str, assignment: str) -> Path:
    return COURSE / "feedback" / student / assignment


def feedback_page(student: str, assignment: str) -> Path:
    """nbgrader's feedback page of a student's notebook (what the hub's exchange returns)."""
    return feedback_dir(student, assignment) / f"{assignment}.html"


def autograded_dir(student: str, assignment: str) -> Path:
    """nbgrader's copy of a submission as it graded it: the executed notebook, with its outputs."""
    return COURSE / "autograded" / student / assignment


def record_file(assignment: str, student: str) -> Path:
    """The result record of one graded submission."""
    return BUILD / "results" / assignment / f"{student}.json"


def select_assignments(names: list[str]) -> tuple[str, ...]:
    """The assignments a command was given (all of them if none); exits with a message on an unknown name."""
    known = assignments()
    if unknown := [name for name in names if name not in known]:
        raise SystemExit(f"unknown assignment {', '.join(unknown)}; the course has {', '.join(known) or 'none'} "
                         f"(folders of {ASSIGNMENTS_DIR} with a {AUTHORING_FILE})")
    return tuple(names) or known
