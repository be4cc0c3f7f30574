"""Helpers shared by the repository's tests."""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import nbformat
import numpy as np
import pytest

from bad_submissions import ASSIGNMENT, FIXTURE_ASSIGNMENTS
from course import paths, verdicts
from course.grading import limits
from course.grading.nbgrader_cli import nbgrader_command
from course.grading.sandbox import grading_env
from course.measuring.grader_accuracy import Figures, corpora, evaluate_corpora
from course.probe_runner import execute_program, solution_program
from course.reference import solution_outputs
from course.samples import sample_notebook

__all__ = ["ASSIGNMENT", "FIXTURE_ASSIGNMENTS"]  # the machinery's tests grade the fixture assignment

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")  # helpers.chromium
needs_browser = pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER),
                                   reason="Chromium and chromedriver are not installed (make browser-tools)")


@contextlib.contextmanager
def chromium() -> Iterator[object]:
    """A headless Chromium driven by selenium (its WebDriver), for tests marked `needs_browser`. Its temporary
    files (its profile, its singleton socket, which it leaves behind when it quits) go to a folder of its own,
    removed after it quits."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(argument)
    with tempfile.TemporaryDirectory(prefix="chromium-") as temporary:
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER, env={**os.environ, "TMPDIR": temporary}),
                                  options=options)
        try:
            yield driver
        finally:
            driver.quit()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_formgrader(url: str, seconds: float = 60) -> None:
    """Wait until the formgrader at `url` (http://127.0.0.1:PORT) answers."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(f"{url}/formgrader", timeout=5)
            return
        except OSError:
            assert time.monotonic() < deadline, f"formgrader never answered at {url}"
            time.sleep(0.5)


def page_text(browser, url: str) -> str:
    """The visible text of a formgrader page once its tables have loaded."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(url)
    body = browser.find_element(By.TAG_NAME, "body")
    WebDriverWait(browser, 30).until(lambda _: "Loading, please wait" not in body.text)
    return body.text


def give_points_in_formgrader(browser, url: str, student: str, answer_id: str, points: int) -> None:
    """In the formgrader at `url`, as an instructor does: open `student`'s submission of ASSIGNMENT, type `points`
    for the written answer `answer_id`, and wait until the course's gradebook (course.paths) holds them."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    from course.grading.gradebook import hand_scores

    page_text(browser, f"{url}/formgrader/manage_students/{student}/{ASSIGNMENT}")
    browser.find_element(By.CSS_SELECTOR, "a[href*='/formgrader/submissions/']").click()
    score = browser.find_element(By.CSS_SELECTOR, f"div.nbgrader_cell input.score#{answer_id}")
    score.clear()
    score.send_keys(str(points), Keys.TAB)  # formgrader saves on change
    deadline = time.monotonic() + 30
    while hand_scores(ASSIGNMENT, [answer_id]).get(student, {}).get(answer_id) != points:
        assert time.monotonic() < deadline, "the score typed in formgrader never reached the gradebook"
        time.sleep(0.5)


def nbgrader(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the venv's nbgrader from the repository root (where nbgrader_config.py is)."""
    return subprocess.run(nbgrader_command(*args), cwd=paths.ROOT, env={**grading_env(), **(env or {})},
                          capture_output=True, text=True)


def course_env(root: Path, assignments: Path = FIXTURE_ASSIGNMENTS) -> dict[str, str]:
    """The environment of commands run on a scratch course directory `root` of the assignments in `assignments`."""
    build = root / "build"
    build.mkdir(parents=True, exist_ok=True)
    return {**grading_env(), **paths.course_environment(root, build), "COURSE_ASSIGNMENTS_DIR": str(assignments)}


def run(args: list[str], env: dict) -> str:
    """Run a course command from the repository root; its stdout (the test fails if it does)."""
    result = subprocess.run(args, cwd=paths.ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


def give_hand_grade(env: dict, student: str, answer_id: str, points: float) -> None:
    """What an instructor does in formgrader: points for one written answer (through nbgrader's gradebook API), in the
    course of `env`."""
    code = ("from nbgrader.api import Gradebook\nfrom course import paths\n"
            "with Gradebook(paths.GRADEBOOK_URL, paths.COURSE_ID) as gb:\n"
            f"    gb.find_grade({answer_id!r}, {ASSIGNMENT!r}, {ASSIGNMENT!r}, {student!r}).manual_score = {points}\n"
            "    gb.db.commit()\n")
    run([sys.executable, "-c", code], env)


def released_course(root: Path, env: dict, *assignments: str) -> None:
    """Build the source folders and nbgrader releases of `assignments` in the course directory of `env`."""
    run([sys.executable, "-m", "course.build_source", *assignments], env)
    run([sys.executable, "-m", "course.release", *assignments], env)


def copy_of_release(released: Path, root: Path) -> None:
    """Make `root` a course directory of what `released` (a course made by released_course) released: its source,
    release and gradebook, copied (a build and an nbgrader release cost about 4 s; the copy, milliseconds)."""
    for name in ("source", "release"):
        shutil.copytree(released / name, root / name, symlinks=True)
    shutil.copy2(released / "gradebook.db", root / "gradebook.db")


@contextlib.contextmanager
def paths_of(root: Path, assignments: Path = FIXTURE_ASSIGNMENTS) -> Iterator[None]:
    """This process's course.paths pointed at the scratch course `root` (as `course_env` points a child's)."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in (("COURSE", root), ("BUILD", root / "build"), ("ASSIGNMENTS_DIR", assignments),
                            ("GRADEBOOK", root / "gradebook.db"), ("GRADEBOOK_URL", f"sqlite:///{root / 'gradebook.db'}"),
                            ("EXCHANGE", root / "build" / "exchange")):
            patch.setattr(paths, name, value)
        yield


# The log a student's last cell writes, from the answers' definitions (their graded pieces), in the submission folder.
WRITE_LOG = """
import sys, nbformat
from pathlib import Path
from course.probe_runner import execute_program, graded_program
from submission_log import write_submission_log
assignment, folder = sys.argv[1], Path(sys.argv[2])
ns, _ = execute_program(graded_program(assignment, nbformat.read(folder / f"{assignment}.ipynb", as_version=4)), folder)
write_submission_log(ns, {}, folder / "submission_log.json")
"""


def hand_in_with_log(release: Path, folder: Path, notebook: nbformat.NotebookNode, env: dict) -> None:
    """`folder`, as a student hands it in: a copy of the release folder `release`, `notebook` as its notebook, and
    the submission_log.json the notebook's code writes (without running its demonstrations)."""
    assignment = release.name
    shutil.copytree(release, folder)
    nbformat.write(notebook, folder / f"{assignment}.ipynb")
    run([sys.executable, "-c", WRITE_LOG, assignment, str(folder)], {**env, "PYTHONPATH": f"{folder}:{paths.ROOT}"})


SOLUTION_STUDENT = "perfect"  # the solution, handed in under its sample's name


def graded_course(root: Path, assignment: str) -> Path:
    """`root`, a scratch course directory where `assignment` was released, its solution handed in as SOLUTION_STUDENT
    with the log its code writes (its demonstrations not run first: nbgrader runs the whole notebook, training
    included, when it grades) and graded by `course.grading.batch`, as `make autograde` grades."""
    env = course_env(root, paths.ASSIGNMENTS_DIR)
    released_course(root, env, assignment)
    with paths_of(root, paths.ASSIGNMENTS_DIR):
        notebook = sample_notebook(assignment, SOLUTION_STUDENT)
    hand_in_with_log(root / "release" / assignment, root / "submitted" / SOLUTION_STUDENT / assignment, notebook, env)
    run([sys.executable, "-m", "course.grading.batch", assignment], env)
    return root


# The real assignment whose solution tests/test_gradescope.py grades in Gradescope's container; tests/test_pipeline.py
# grades the others' through the course's batch. Each real solution is graded once, whole, by the sandboxed path.
GRADED_IN_GRADESCOPE = "pretrained_attention"


def assert_graded_in_full(course: Path, build: Path, assignment: str, student: str) -> None:
    """The student's grading of `assignment` in the course directory `course` (build area `build`) gave every
    autograded point, with nothing flagged; nbgrader's gradebook holds the judge's points; nbgrader wrote its feedback;
    and every cell of the notebook ran without an error in nbgrader's sandboxed kernel, trainings included."""
    record = json.loads((build / "results" / assignment / f"{student}.json").read_text())
    auto, _ = verdicts.grade_cells(assignment)
    assert (record["points"], record["status"], record["flags"]) == (auto, "ok", []), record
    assert record["gradebook"] == record["points"], "the gradebook shows the judge's"
    assert (course / "feedback" / student / assignment / f"{assignment}.html").exists()
    graded = nbformat.read(course / "autograded" / student / assignment / f"{assignment}.ipynb", as_version=4)
    errors = {cell.id: output["ename"] for cell in graded.cells if cell.cell_type == "code"
              for output in cell.outputs if output["output_type"] == "error"}
    assert errors == {}, "every cell of the solution runs in nbgrader's sandboxed kernel, training included"


# A fresh run on another CPU (other vector kernels, other orders of summation) rounds differently. The reference data
# come from torch's default float32 computations (some combined afterwards in float64), so each number carries
# float32 rounding of the size of the numbers behind it; a softmax of scores near 100, which the probes use, multiplies
# that by up to 100. ROUNDING_ULPS float32 epsilons times the array's largest magnitude allow for it, and remain far
# below what any check tolerates (1e-4 and more).
ROUNDING_ULPS = 256


def rounding_tolerance(values: np.ndarray) -> float:
    """How far a fresh run of the same computation may round away from `values`: ROUNDING_ULPS of float32's
    epsilon, times the array's largest magnitude (at least 1)."""
    return ROUNDING_ULPS * float(np.finfo(np.float32).eps) * max(1.0, float(np.abs(values).max(initial=0.0)))


def assert_reference_is_fresh(assignment: str, how_to_rebuild: str) -> None:
    """The committed reference data of `assignment` equals a fresh run of its solution: text and flags exactly,
    numbers within float32 rounding (rounding_tolerance), on any CPU."""
    fresh = solution_outputs(assignment)
    committed = {f"{c}/{k}": v for c, data in verdicts.reference_for(assignment).items() for k, v in data.items()}
    assert sorted(fresh) == sorted(committed), how_to_rebuild
    for key, value in fresh.items():
        if value.dtype.kind in "USb":
            assert np.array_equal(value, committed[key]), key
        else:
            want = committed[key].astype(np.float64)
            np.testing.assert_allclose(value, want, rtol=0, atol=rounding_tolerance(want), err_msg=f"{key}: {how_to_rebuild}")


def corpus_figures(assignment: str, corpus_set: str) -> Figures:
    """How one set of the assignment's corpus ('corpus', 'fresh' or 'held_out') fares on the fast path."""
    return every_set_figures(assignment)[corpus_set]


@functools.cache
def every_set_figures(assignment: str) -> dict[str, Figures]:
    """Every set of the assignment's corpus on the fast path, graded once per run by one pool (the grader-accuracy
    tests and the generic-kernels test all read it)."""
    return evaluate_corpora(assignment, corpora(assignment))


def solution_namespace(assignment: str) -> dict:
    """The namespace of the instructor notebook's definitions (its given and answer cells), run here."""
    ns, errors = execute_program(solution_program(assignment), paths.source_dir(assignment))
    assert not errors, errors
    return ns


def long_running_cells(assignment: str) -> list[str]:
    """The ids of the instructor notebook's code cells that get the long time limit (training), in order."""
    source = nbformat.read(paths.source_notebook(assignment), as_version=4)
    return [cell.id for cell in source.cells
            if cell.cell_type == "code" and limits.cell_timeout(cell) == limits.LONG_CELL_TIMEOUT_S]


def whole_notebook_namespace(assignment: str, before_training: bool = False) -> dict:
    """The namespace after every code cell of the instructor notebook but the log's, run here (training included;
    plots not shown); with `before_training`, after the code cells above its first long-running one only."""
    import matplotlib

    matplotlib.use("Agg")
    cells = [cell for cell in nbformat.read(paths.source_notebook(assignment), as_version=4).cells
             if cell.cell_type == "code" and cell.id != "write-submission-log"]
    if before_training:
        cells = list(itertools.takewhile(lambda cell: not limits.is_long_running(cell), cells))
    program = [(cell.id, cell.source) for cell in cells]
    ns, errors = execute_program(program, paths.source_dir(assignment))
    assert not errors, errors
    return ns


def grade_cells(nb: nbformat.NotebookNode, **flags) -> list[nbformat.NotebookNode]:
    """Cells whose nbgrader metadata has all of `flags` (e.g. grade=True, solution=False)."""
    return [c for c in nb.cells if all(c.metadata.get("nbgrader", {}).get(k, False) == v for k, v in flags.items())]


def between(source: str, begin: str, end: str) -> list[str]:
    """The lines strictly between marker lines containing `begin` and `end`."""
    inside, lines = False, []
    for line in source.splitlines():
        if begin in line:
            inside = True
        elif end in line:
            inside = False
        elif inside:
            lines.append(line)
    return lines
