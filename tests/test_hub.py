"""The course on a real JupyterHub: real Unix accounts, nbgrader's exchange, the course's own grading.

A scratch course of the fixture assignment (with its own copy of the assignments folder, which students must not
read), served by `python -m course.hub.serve` (what `make hub` runs) with the sample roster's students under a
test prefix. The instructor releases the assignment into the exchange; each student's own server (started through
the hub's API, as the hub starts it at login) fetches it from the Assignments tab's API; alice writes the solution
into her copy and submits, bob submits the blank release; the instructor collects, grades with the course's
batch and returns feedback; each student fetches their own and reads their points in it. Then the isolation a
class needs, tried by bob's account in a shell of his own (`runuser`): each attempt must fail.
The tests of this module run in order, on one hub.
"""

from __future__ import annotations

import csv
import datetime
import json
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest

from course import paths
from course.samples import sample_notebook
from helpers import ASSIGNMENT, paths_of
from hub_course import NEEDS_HUB, Hub, as_account, course_hub

PREFIX = "crstest-"  # never a real course's accounts
ALICE, BOB = f"{PREFIX}alice", f"{PREFIX}bob"
pytestmark = NEEDS_HUB


@pytest.fixture(scope="module")
def hub() -> Iterator[Hub]:
    with course_hub(PREFIX) as running:
        yield running


# ------------------------------------------------------------------ the loop


def test_students_fetch_what_the_instructor_released(hub):
    hub.instructor("course.hub.exchange", "release", ASSIGNMENT)
    for student in (ALICE, BOB):
        hub.start_server(student)
        listed = hub.assignments(student, "fetch")
        assert [(a["assignment_id"], a["status"]) for a in listed if a["status"] == "fetched"] == [(ASSIGNMENT, "fetched")]
        fetched = hub.contents(student, f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb").json()
        assert fetched["writable"] and "raise NotImplementedError" in json.dumps(fetched["content"])


def test_each_student_submits_their_own_work(hub):
    with paths_of(hub.root, hub.root / "assignments"):
        solution = sample_notebook(ASSIGNMENT, "perfect")
    hub.contents(ALICE, f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb", method="PUT",
                 json={"type": "notebook", "format": "json", "content": solution})
    for student in (ALICE, BOB):
        listed = hub.assignments(student, "submit")
        assert any(a["status"] == "submitted" for a in listed), listed
        if student == ALICE:  # the due date passes between the two submissions
            hub.instructor("course.grading.nbgrader_cli", "db", "assignment", "add", ASSIGNMENT,
                           f"--duedate={datetime.datetime.now(datetime.timezone.utc).isoformat()}")


def test_the_instructor_collects_grades_and_returns_feedback_each_student_reads_their_own_points(hub):
    hub.instructor("course.hub.exchange", "collect", ASSIGNMENT)
    for student in (ALICE, BOB):
        assert (hub.root / "submitted" / student / ASSIGNMENT / "timestamp.txt").exists(), "nbgrader's timestamp kept"
    hub.instructor("course.grading.batch", ASSIGNMENT)
    records = {s: json.loads((hub.root / "build" / "results" / ASSIGNMENT / f"{s}.json").read_text()) for s in (ALICE, BOB)}
    assert {s: sum(r["points"].values()) for s, r in records.items()} == {ALICE: 15, BOB: 0}
    with (hub.root / "grades" / ASSIGNMENT / "grades.csv").open() as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    stamped = {s: (hub.root / "submitted" / s / ASSIGNMENT / "timestamp.txt").read_text()[:19] for s in (ALICE, BOB)}
    assert {s: rows[s]["submitted_at"] for s in (ALICE, BOB)} == stamped, "nbgrader's timestamps"
    assert rows[ALICE]["late_by"] == "" and re.fullmatch(r"0:\d\d:\d\d", rows[BOB]["late_by"]), "bob's is late"
    report = (hub.root / "grades" / ASSIGNMENT / "report.md").read_text()
    assert re.search(rf"## Late submissions.*\| {BOB} \| {stamped[BOB]} \|", report, flags=re.S), report
    hub.instructor("course.hub.exchange", "feedback", ASSIGNMENT)
    for student, points in ((ALICE, 15), (BOB, 0)):
        hub.assignments(student, "fetch_feedback")
        [folder] = hub.contents(student, f"{ASSIGNMENT}/feedback").json()["content"]
        html = hub.contents(student, f"{folder['path']}/{ASSIGNMENT}.html").json()["content"]
        assert re.search(r"\(Score: ([\d.]+) / [\d.]+\)", html).group(1) == f"{points:.1f}"  # the written answer: later


# ------------------------------------------------------------------ isolation, tried by bob


def test_a_student_cannot_read_another_students_home(hub):
    assert as_account(BOB, "ls", f"/home/{ALICE}").returncode != 0
    assert as_account(BOB, "cat", f"/home/{ALICE}/{ASSIGNMENT}/{ASSIGNMENT}.ipynb").returncode != 0


def test_a_student_cannot_list_or_read_another_students_submission_in_the_exchange(hub):
    inbound = paths.COURSE_ID
    exchange = hub.root / "build" / "exchange" / inbound / "inbound"
    assert as_account(BOB, "ls", str(exchange)).returncode != 0
    [alices] = [p for p in exchange.iterdir() if p.name.startswith(f"{ALICE}+")]
    assert as_account(BOB, "cat", str(alices / f"{ASSIGNMENT}.ipynb")).returncode != 0


def test_a_student_cannot_read_another_students_feedback(hub):
    feedback = hub.root / "build" / "exchange" / paths.COURSE_ID / "feedback"
    assert as_account(BOB, "ls", str(feedback)).returncode != 0
    for html in feedback.iterdir():
        alices = (hub.root / "feedback" / ALICE / ASSIGNMENT / f"{ASSIGNMENT}.html").read_bytes() == html.read_bytes()
        if alices:
            assert as_account(BOB, "cat", str(html)).returncode != 0


@pytest.mark.parametrize("secret", ["source", "gradebook.db", "assignments", "assignments/tiny/probes.py",
                                    "assignments/tiny/checks.py", "assignments/tiny/reference.npz", "submitted",
                                    "autograded", "feedback", "build/results"])
def test_a_student_cannot_read_the_course_directory(hub, secret):
    target = hub.root / secret
    assert target.exists(), target
    command = ("ls", str(target)) if target.is_dir() else ("cat", str(target))
    assert as_account(BOB, *command).returncode != 0


def test_a_student_cannot_write_into_the_outbound_or_another_students_submission(hub):
    outbound = hub.root / "build" / "exchange" / paths.COURSE_ID / "outbound" / ASSIGNMENT
    assert as_account(BOB, "touch", str(outbound / "planted.py")).returncode != 0
    assert as_account(BOB, "touch", str(outbound / f"{ASSIGNMENT}.ipynb")).returncode != 0
    inbound = hub.root / "build" / "exchange" / paths.COURSE_ID / "inbound"
    [alices] = [p for p in inbound.iterdir() if p.name.startswith(f"{ALICE}+")]
    assert as_account(BOB, "touch", str(alices / f"{ASSIGNMENT}.ipynb")).returncode != 0
    assert as_account(BOB, "touch", str(alices / "planted.py")).returncode != 0


def test_a_student_cannot_submit_as_someone_else(hub):
    """bob submits his blank copy naming alice (nbgrader's submit takes --student): collect refuses it, and alice's
    own submission stays what is graded."""
    forged = as_account(BOB, f"{sys.prefix}/bin/nbgrader", "submit", f"/home/{BOB}/{ASSIGNMENT}", f"--student={ALICE}",
                        f"--assignment={ASSIGNMENT}", env={"JUPYTER_CONFIG_DIR": str(hub.root / "build/hub/jupyter/student")})
    assert forged.returncode == 0, forged.stderr  # the exchange takes it: nbgrader cannot tell
    before = (hub.root / "submitted" / ALICE / ASSIGNMENT / "timestamp.txt").read_text()
    result = subprocess.run([sys.executable, "-m", "course.hub.exchange", "collect", ASSIGNMENT], cwd=paths.ROOT,
                            env=hub.env, capture_output=True, text=True)
    assert result.returncode == 0 and "another account made it" in result.stderr, result.stderr
    assert (hub.root / "submitted" / ALICE / ASSIGNMENT / "timestamp.txt").read_text() == before
