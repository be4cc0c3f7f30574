"""Every limit grading puts on a submission, in one place (each can be set from the environment).

- a cell: nbgrader's run of each notebook cell, and the probe's run of each
  answer cell and of each probe; cells the instructor marks long-running (the
  training cell) get the long limit;
- a step: the whole nbgrader run, the whole probe run, the judge;
- memory and processes: caps on each step (cgroups, see course.grading.sandbox).
"""

from __future__ import annotations

import os

import nbformat

CELL_TIMEOUT_S = int(os.environ.get("COURSE_CELL_TIMEOUT", "60"))
LONG_CELL_TIMEOUT_S = int(os.environ.get("COURSE_LONG_CELL_TIMEOUT", "600"))
NOTEBOOK_TIMEOUT_S = int(os.environ.get("COURSE_NOTEBOOK_TIMEOUT", "900"))
PROBE_TIMEOUT_S = int(os.environ.get("COURSE_PROBE_TIMEOUT", "300"))
JUDGE_TIMEOUT_S = int(os.environ.get("COURSE_JUDGE_TIMEOUT", "120"))
FEEDBACK_TIMEOUT_S = 300
PROBE_ATTEMPTS = 3  # a probe run that crashes is retried without the cell or probe that crashed it
# The nbgrader step: the notebook, the probes in its kernel (a first run, and a second for the clues of the checks that
# fail; or, where they cannot finish there, runs of their own), the judge, then feedback.
NBGRADER_TIMEOUT_S = NOTEBOOK_TIMEOUT_S + (2 + PROBE_ATTEMPTS) * PROBE_TIMEOUT_S + JUDGE_TIMEOUT_S + FEEDBACK_TIMEOUT_S
MEMORY_MB = int(os.environ.get("COURSE_MEMORY_MB", "4096"))
FILE_MB = int(os.environ.get("COURSE_FILE_MB", "1024"))  # any one file student code writes while graded
DISK_MB = int(os.environ.get("COURSE_DISK_MB", "2048"))  # all it writes in a step's folders
MAX_FILES = int(os.environ.get("COURSE_MAX_FILES", "10000"))  # files and folders it makes there
SUBMISSION_MB = int(os.environ.get("COURSE_SUBMISSION_MB", "50"))  # all files a student hands in
MAX_PROCESSES = int(os.environ.get("COURSE_MAX_PROCESSES", "256"))
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
# The environment student code gets (course.grading.sandbox.jail_environment): what Python, the
# notebook and the probe need, and these limits; nothing else of the grader's environment.
JAIL_VARIABLES = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONDONTWRITEBYTECODE",
                  *THREAD_VARIABLES, "COURSE_CELL_TIMEOUT", "COURSE_LONG_CELL_TIMEOUT")


# What a driver hands a worker with each task, so that a class graded on a cluster is graded under the driver's limits.
SETTINGS = ("COURSE_CELL_TIMEOUT", "COURSE_LONG_CELL_TIMEOUT", "COURSE_NOTEBOOK_TIMEOUT", "COURSE_PROBE_TIMEOUT",
            "COURSE_JUDGE_TIMEOUT", "COURSE_MEMORY_MB", "COURSE_FILE_MB", "COURSE_DISK_MB", "COURSE_MAX_FILES",
            "COURSE_SUBMISSION_MB", "COURSE_MAX_PROCESSES", "COURSE_SANDBOX")


def settings() -> dict[str, str]:
    """The grading settings this process was given (SETTINGS that are set)."""
    return {name: os.environ[name] for name in SETTINGS if name in os.environ}


def default_jobs() -> int:
    """Notebooks run at once: COURSE_JOBS, or one per core."""
    return int(os.environ.get("COURSE_JOBS", os.cpu_count() or 1))


def thread_env(jobs: int) -> dict[str, str]:
    """Environment giving each of `jobs` concurrent notebooks its share of the cores.

    Two kernels that each start a thread per core slow each other down many times over.
    """
    if jobs <= 1:
        return {}
    threads = str(max(1, (os.cpu_count() or 1) // jobs))
    return {name: threads for name in THREAD_VARIABLES}


def is_long_running(cell: nbformat.NotebookNode) -> bool:
    """True for cells the authoring file marks `long` (set in their `course` metadata)."""
    return bool(cell.get("metadata", {}).get("course", {}).get("long_running"))


def cell_timeout(cell: nbformat.NotebookNode) -> int:
    """nbgrader's time limit for one cell, in seconds (nbclient's `timeout_func`)."""
    return LONG_CELL_TIMEOUT_S if is_long_running(cell) else CELL_TIMEOUT_S


def step_timeout() -> int:
    """The longest one submission's grading may take before the batch gives up on it."""
    return NBGRADER_TIMEOUT_S + PROBE_ATTEMPTS * PROBE_TIMEOUT_S + JUDGE_TIMEOUT_S + 60
