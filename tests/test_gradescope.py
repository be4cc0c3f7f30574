"""The Gradescope autograder, run as Gradescope runs it, without Gradescope.

`make gradescope` builds the fixture assignment's zip; it is unpacked into a container of exactly Gradescope's
layout (bubblewrap: this machine's files, with /autograder/source, /autograder/submission and /autograder/results
really at those paths, no network, and the repository's venv read-only at /autograder/venv, so setup.sh must find
everything it needs installed). setup.sh runs once, then run_autograder for each upload: each results.json
validates against the JSON Schema written from Gradescope's documentation, and its points, messages and named
mistakes are the judge's for the same notebook on the fast path (course.measuring.grader_accuracy.failed_checks, which the
course's batch agrees with: tests/test_grading_end_to_end.py grades the same samples), or the bad submissions'
known outcomes.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import jsonschema
import nbformat
import pytest

from bad_submissions import CASES
from course import paths
from course.gradescope import container
from course.gradescope.run import STUDENT
from course.grading.sandbox import grading_env
from course.measuring.grader_accuracy import failed_checks
from course.samples import sample_notebook
from course.verdicts import checks_for, grade_cells
from helpers import (ASSIGNMENT, GRADED_IN_GRADESCOPE, assert_graded_in_full, copy_of_release, course_env,
                     hand_in_with_log, paths_of, run)

SCHEMA = json.loads((paths.ROOT / "course" / "gradescope" / "results.schema.json").read_text())
LIMITS = {"COURSE_CELL_TIMEOUT": "5", "COURSE_PROBE_TIMEOUT": "120", "COURSE_NOTEBOOK_TIMEOUT": "300"}
pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("bwrap"),
                                reason="the container of Gradescope's layout is made with bubblewrap, as root")


class Container(container.Container):
    """Gradescope's container (course.gradescope.container), whose every results.json is checked against the schema."""

    def grade(self, write: Callable[[Path], None], env: dict[str, str] | None = None, namespaces: bool = True) -> dict:
        data = super().grade(write, env, namespaces)
        jsonschema.validate(data, SCHEMA)
        return data


def built_zip(env: dict, assignment: str) -> Path:
    run([sys.executable, "-m", "course.gradescope.build", assignment], env)
    return Path(env["COURSE_BUILD_DIR"]) / "gradescope" / f"{assignment}.zip"


@pytest.fixture(scope="module")
def course(tmp_path_factory, fixture_release) -> Iterator[dict]:
    """The fixture assignment released in a scratch course with its three samples handed in, and its autograder
    set up in a container; "graded" keeps the results of each sample's first upload."""
    root = tmp_path_factory.mktemp("course")
    env = {**course_env(root), **LIMITS}
    copy_of_release(fixture_release, root)
    run([sys.executable, "-m", "course.samples"], env)
    autograder_zip = built_zip(env, ASSIGNMENT)
    container = Container(tmp_path_factory.mktemp("gradescope"), autograder_zip)
    container.setup()
    with paths_of(root):
        yield {"root": root, "env": env, "zip": autograder_zip, "container": container, "graded": {}}


def judged(root: Path, sample: str) -> dict[str, dict]:
    """The judge's result of each check the handed-in sample fails, on the fast path."""
    return failed_checks(ASSIGNMENT, nbformat.read(root / "submitted" / sample / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
                                                   as_version=4))


def judged_points(root: Path, sample: str) -> int:
    auto, _ = grade_cells(ASSIGNMENT)
    return sum(points for check_id, points in auto.items() if check_id not in judged(root, sample))


def graded(course: dict, sample: str) -> dict:
    """The results of the sample's upload, graded once per module."""
    if sample not in course["graded"]:
        course["graded"][sample] = course["container"].grade(upload(course["root"], sample))
    return course["graded"][sample]


def upload(root: Path, sample: str, name: str | None = None, log: bool = True) -> Callable[[Path], None]:
    """The files a student uploads: the sample's notebook (under `name` if given) and its submission_log.json."""
    def write(folder: Path) -> None:
        handed_in = root / "submitted" / sample / ASSIGNMENT
        shutil.copy(handed_in / f"{ASSIGNMENT}.ipynb", folder / (name or f"{ASSIGNMENT}.ipynb"))
        if log:
            shutil.copy(handed_in / "submission_log.json", folder)
    return write


def checks_of(results: dict) -> dict[str, dict]:
    return {test["name"].split(" ")[0]: test for test in results["tests"] if "check" in test["tags"]}


# ------------------------------------------------------------------ the zip


def test_the_zip_holds_gradescopes_two_scripts_at_its_root_the_machinery_and_the_assignment_but_no_tests(course):
    names = zipfile.ZipFile(course["zip"]).namelist()
    assert {"setup.sh", "run_autograder", "gradescope.json", "environment.sh", "requirements.txt",
            f"source/{ASSIGNMENT}/{ASSIGNMENT}.ipynb", f"assignments/{ASSIGNMENT}/checks.py",
            "course/grading/grade_one.py"} <= set(names)
    assert not [n for n in names if "/tests/" in n or "__pycache__" in n or n.startswith(("submitted/", "release/"))]


def test_the_same_files_build_the_same_zip_byte_for_byte(course):
    first = course["zip"].read_bytes()
    assert built_zip(course["env"], ASSIGNMENT).read_bytes() == first


# ------------------------------------------------------------------ grading


# The blank release is judged not attempted by the same grading of one submission (tests/test_grading_end_to_end.py);
# uploaded here it would take the partial sample's path through the results once more.
@pytest.mark.parametrize("sample", ["perfect", "partial"])
def test_a_sample_gets_the_judges_points_with_one_test_per_check_and_per_written_answer(course, sample):
    results = graded(course, sample)
    assert results["score"] == judged_points(course["root"], sample)
    checks = checks_of(results)
    assert set(checks) == set(checks_for(ASSIGNMENT))
    assert sum(test["score"] for test in checks.values()) == results["score"]
    assert all(test["visibility"] == "after_due_date" for test in checks.values())
    visible = [test for test in results["tests"] if "visible test" in test["tags"]]
    assert visible and all(test["visibility"] == "visible" and test["max_score"] == 0 for test in visible)
    written = [test for test in results["tests"] if "graded by hand" in test["tags"]]
    assert written and all("Graded by hand" in test["output"] for test in written)
    assert results["stdout_visibility"] == "hidden" and results["execution_time"] > 0
    assert "Status: ok" in results["output"]
    if sample == "perfect":
        assert all(test["status"] == "passed" for test in visible + list(checks.values()))
    if sample == "partial":  # the judge's message, and the mistake it names
        failed = judged(course["root"], "partial")
        assert failed and {c for c, t in checks.items() if t["status"] == "failed"} == set(failed)
        for check_id, verdict in failed.items():
            assert checks[check_id]["output"] == verdict["message"]
            assert checks[check_id]["extra_data"]["mistake"] == verdict["mistake"]
        assert any(verdict["mistake"] for verdict in failed.values())


def test_a_resubmission_of_the_same_notebook_gets_the_same_results(course):
    first, second = dict(graded(course, "partial")), course["container"].grade(upload(course["root"], "partial"))
    first.pop("execution_time"), second.pop("execution_time")
    assert first == second


def test_a_notebook_uploaded_under_another_name_without_its_log_is_graded_and_the_student_told(course):
    results = course["container"].grade(upload(course["root"], "perfect", name="my_homework.ipynb", log=False))
    assert results["score"] == judged_points(course["root"], "perfect")
    assert f"my_homework.ipynb was graded as {ASSIGNMENT}.ipynb" in results["output"]
    assert "log-missing" in results["output"]


@pytest.mark.parametrize("case", [c for c in CASES if c.student in ("hard_exit", "endless_loop", "missing_notebook")],
                         ids=lambda c: c.student)
def test_a_bad_submission_gets_its_status_points_and_message(course, case):
    def write(folder: Path) -> None:
        case.write(folder)
        for name in os.listdir(paths.release_dir(ASSIGNMENT)):  # the student uploads their files, not the release's
            if name not in (f"{ASSIGNMENT}.ipynb", "submission_log.json"):
                path = folder / name
                shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    results = course["container"].grade(write)
    assert results["score"] == case.points
    assert f"Status: {case.status}" in results["output"]


def test_a_container_that_forbids_the_sandbox_still_grades_and_every_result_says_so(course):
    results = course["container"].grade(upload(course["root"], "perfect"), namespaces=False)
    assert results["score"] == judged_points(course["root"], "perfect")
    assert "cannot run the grader's namespaces" in results["output"] and "not-sandboxed" in results["output"]


HOSTILE = """
import json, os, pathlib, subprocess, sys
tried = {}
def attempt(name, action):
    try:
        action()
        tried[name] = "done"
    except Exception as error:
        tried[name] = type(error).__name__
attempt("rewrite_judge", lambda: open("/autograder/source/course/grading/judge.py", "a").write("\\nFORGED = True\\n"))
attempt("read_checks", lambda: print(open("/autograder/source/assignments/ASSIGNMENT/checks.py").read()[:200]))
attempt("replace_results", lambda: (os.rename("/autograder/results", "/autograder/gone"),
                                    open("/autograder/results", "w").write("x")))
late = "import time; time.sleep(8); open('/autograder/results/results.json', 'w').write('{\\"score\\": 93}')"
attempt("daemon", lambda: subprocess.Popen([sys.executable, "-c", late], start_new_session=True))
print("TRIED", json.dumps(tried))
""".replace("ASSIGNMENT", ASSIGNMENT)


@pytest.mark.parametrize("namespaces", [True, False], ids=["namespaces", "no-namespaces"])
def test_a_hostile_blank_notebook_can_write_no_grade_read_no_check_and_leave_nothing_running(course, namespaces):
    def write(folder: Path) -> None:
        nb = nbformat.read(course["root"] / "submitted" / "blank" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
        answer = next(c for c in nb.cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution"))
        answer.source = HOSTILE + answer.source
        nbformat.write(nb, folder / f"{ASSIGNMENT}.ipynb")
    judge = course["container"].autograder / "source" / "course" / "grading" / "judge.py"
    before = judge.read_text()
    results = course["container"].grade(write, namespaces=namespaces)
    assert results["score"] == judged_points(course["root"], "blank")
    assert judge.read_text() == before
    checks = (paths.assignment_dir(ASSIGNMENT) / "checks.py").read_text()
    assert checks[:80] not in json.dumps(results)
    time.sleep(10)  # the daemon's write would have come by now
    after = json.loads((course["container"].autograder / "results" / "results.json").read_text())
    assert after["score"] == results["score"] and not (course["container"].autograder / "gone").exists()


def test_grading_stopped_at_the_time_limit_still_writes_results_that_say_so(course):
    results = course["container"].grade(upload(course["root"], "perfect"), env={"COURSE_GRADESCOPE_TIMEOUT": "1"})
    assert results["score"] == 0 and "did not finish within the time limit" in results["output"]


def test_a_real_assignments_perfect_submission_gets_full_marks(course, tmp_path):
    """The real assignment's files (its data; the pretrained model comes with the pinned packages) are in the zip and
    found in the container: its solution gets every point, and the course directory the autograder set up shows the
    same grading as the course's batch does (tests/test_pipeline.py, which grades the other assignments' solutions)."""
    real = paths.ROOT / "assignments"
    env = {**grading_env(), **paths.course_environment(paths.ROOT, tmp_path / "build"),
           "COURSE_ASSIGNMENTS_DIR": str(real)}
    container = Container(tmp_path, built_zip(env, GRADED_IN_GRADESCOPE))
    container.setup()
    handed, course_dir = tmp_path / "handed_in", container.autograder / "source"
    uploaded = (f"{GRADED_IN_GRADESCOPE}.ipynb", "submission_log.json")
    with paths_of(paths.ROOT, real):
        perfect = sample_notebook(GRADED_IN_GRADESCOPE, "perfect")
        hand_in_with_log(paths.release_dir(GRADED_IN_GRADESCOPE), handed, perfect, env)
        results = container.grade(lambda folder: [shutil.copy(handed / name, folder) for name in uploaded])
        assert results["score"] == sum(t["max_score"] for t in checks_of(results).values()) > 0
        assert_graded_in_full(course_dir, course_dir / "build", GRADED_IN_GRADESCOPE, STUDENT)
