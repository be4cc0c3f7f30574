"""docs/instructors.md, walked as a new instructor walks it: its tasks from editing an assignment to publishing the final
grades, each `make` command in the page's order, on a fresh copy of the repository whose course is the fixture
assignment.

Two students hand in the release (one with every answer written, one untouched); the instructor grades the class,
gives a written answer points in formgrader in a real browser, and publishes the final grades. The good submission
must end above zero in grades/final_grades.csv, or the page does not work as written.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from bad_submissions import FULL, NOTEBOOK
from course import paths
from course.samples import sample_notebook
from helpers import (ASSIGNMENT, FIXTURE_ASSIGNMENTS, free_port, give_points_in_formgrader, needs_browser, paths_of,
                     wait_for_formgrader)

pytestmark = needs_browser
PAGE = paths.ROOT / "docs" / "instructors.md"
# The page's tasks a term walks through, in order: one heading each.
SECTIONS = ("## Edit an assignment", "## Release an assignment", "## Grade a class", "## Grade the written answers by hand",
            "## Publish the final grades")
# What this test does for each command of the page, in the page's order.
WALK = ("make source reference release", "make autograde", "make formgrader", "make grades")
# What a fresh clone has that the walk leaves out or replaces: the real assignments (their sources and releases too:
# the course here is the fixture's one assignment) and the rubrics `make source` writes.
LEFT_OUT = ("assignments/", "source/", "release/", "docs/rubrics/")


def page_commands() -> list[str]:
    """The `make` commands of the page's task sections (SECTIONS), in order, leaving out variables (REGRADE=1) and
    commands whose targets an earlier one ran (`make grades CANVAS_ROSTER=...` after `make grades`)."""
    page = PAGE.read_text()
    assert all(section + "\n" in page for section in SECTIONS), "a task's heading is missing from the page"
    commands, ran = [], set()
    for section in SECTIONS:
        text = page.split(section + "\n", 1)[1].split("\n## ", 1)[0]
        for command in re.findall(r"`(make [a-z -]+)", text):
            targets = set(command.split()[1:])
            if targets - ran:
                commands.append(command.strip())
                ran |= targets
    return commands


def fresh_clone(clone: Path) -> None:
    """`clone`: the repository's committed files, as `git clone` gives them, with the fixture assignment as the course's
    only one and the repository's venv (its stamp keeps its time: make installs nothing)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=paths.ROOT, capture_output=True, text=True, check=True)
    for name in filter(None, listed.stdout.split("\0")):
        if name.startswith(LEFT_OUT) or not (paths.ROOT / name).is_file():
            continue
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(paths.ROOT / name, clone / name)
    shutil.copytree(FIXTURE_ASSIGNMENTS / ASSIGNMENT, clone / "assignments" / ASSIGNMENT)
    (clone / ".venv").symlink_to(paths.ROOT / ".venv")


def make(clone: Path, *targets: str, **variables: str) -> subprocess.Popen:
    """`make <targets>` started in `clone`, as the instructor types it in a shell of their own (none of the test's
    course variables), in a session of its own."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("COURSE_", "JUPYTER_", "PYTHON", "MAKE"))}
    return subprocess.Popen(["make", *targets, *(f"{k}={v}" for k, v in variables.items())], cwd=clone, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def succeeds(process: subprocess.Popen) -> str:
    output, _ = process.communicate(timeout=600)
    assert process.returncode == 0, output[-4000:]
    return output


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("instructor_page")
    fresh_clone(root)
    with paths_of(root, root / "assignments"):
        yield root


def test_the_page_s_steps_are_the_ones_this_test_walks():
    assert page_commands() == list(WALK)


def test_the_local_page_from_release_to_final_grades(clone, browser):
    # Edit an assignment (the fixture's is written), release it: its source, reference data and release.
    succeeds(make(clone, *WALK[0].split()[1:]))
    assert (clone / "release" / ASSIGNMENT / NOTEBOOK).exists() and (clone / "gradebook.db").exists()
    assert (clone / "docs" / "rubrics" / f"{ASSIGNMENT}.md").exists()

    # Grade a class: the students hand in their copies of the release in nbgrader's layout.
    for student in ("ada", "bo"):
        shutil.copytree(clone / "release" / ASSIGNMENT, clone / "submitted" / student / ASSIGNMENT)
    nbformat.write(sample_notebook(ASSIGNMENT, "perfect"), clone / "submitted" / "ada" / ASSIGNMENT / NOTEBOOK)
    graded = succeeds(make(clone, "autograde"))
    assert "ada" in graded and "bo" in graded, graded[-2000:]

    # Grade the written answers by hand (one, in formgrader, in the browser); publish the final grades.
    port = free_port()
    server = make(clone, "formgrader", FORMGRADER_PORT=str(port))
    try:
        wait_for_formgrader(f"http://127.0.0.1:{port}")
        give_points_in_formgrader(browser, f"http://127.0.0.1:{port}", "ada", "reflection-hardest", 4)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.communicate(timeout=60)
    succeeds(make(clone, "grades"))

    with (clone / "grades" / "final_grades.csv").open() as f:
        final = {row["student"]: row for row in csv.DictReader(f)}
    assert final["ada"][ASSIGNMENT] == str(FULL + 4), final
    assert final["bo"][ASSIGNMENT] == "0", final
    feedback = (clone / "feedback" / "ada" / ASSIGNMENT / "feedback.md").read_text()
    assert "Written answers: **4 / 5** graded by hand so far" in feedback
