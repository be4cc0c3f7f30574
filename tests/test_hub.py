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

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
import requests

from course import paths
from course.samples import sample_notebook
from helpers import ASSIGNMENT, FIXTURE_ASSIGNMENTS, course_env, paths_of, released_course, run

PREFIX = "crstest-"  # never a real course's accounts
ALICE, BOB = f"{PREFIX}alice", f"{PREFIX}bob"
PROXY = paths.ROOT / "build" / "hub" / "node" / "node_modules" / ".bin" / "configurable-http-proxy"


def reachable_by_others(path: Path) -> bool:
    """Whether every folder down to `path` lets other accounts through, and the file or folder itself too."""
    return all(p.stat().st_mode & 0o001 for p in [path.resolve(), *path.resolve().parents])


pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the hub creates Unix accounts: root only"),
    pytest.mark.skipif(not reachable_by_others(Path(sys.executable)),
                       reason=f"the venv's Python ({Path(sys.executable).resolve()}) is out of other accounts' reach"),
    pytest.mark.skipif(not PROXY.exists(), reason="configurable-http-proxy is not installed: `make hub-tools`"),
]


def free_ports(count: int = 3) -> int:
    """The first of `count` consecutive free ports on the loopback."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            first = s.getsockname()[1]
        if first + count < 65536 and all(_free(first + i) for i in range(count)):
            return first
    raise RuntimeError("no free ports")


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


class Hub:
    """The running hub, driven through its REST API with the tests' service token."""

    def __init__(self, root: Path, env: dict, port: int, token: str):
        self.root, self.env, self.url, self.token = root, env, f"http://127.0.0.1:{port}", token

    def request(self, method: str, path: str, **kwargs) -> requests.Response:
        response = requests.request(method, f"{self.url}{path}", headers={"Authorization": f"token {self.token}"},
                                    timeout=120, **kwargs)
        response.raise_for_status()
        return response

    def start_server(self, user: str) -> None:
        self.request("POST", f"/hub/api/users/{user}/server")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.request("GET", f"/hub/api/users/{user}").json()["servers"].get("", {}).get("ready"):
                return
            time.sleep(0.5)
        raise TimeoutError(f"{user}'s server did not start")

    def assignments(self, user: str, action: str) -> list[dict]:
        """What the Assignments tab's button `action` (fetch, submit, fetch_feedback) does for `user`: the assignments
        it then lists."""
        answer = self.request("POST", f"/user/{user}/assignments/{action}",
                              data={"course_id": paths.COURSE_ID, "assignment_id": ASSIGNMENT}).json()
        assert answer["success"], answer
        return answer["value"]

    def contents(self, user: str, path: str, **kwargs) -> requests.Response:
        return self.request(kwargs.pop("method", "GET"), f"/user/{user}/api/contents/{path}", **kwargs)

    def instructor(self, *args: str) -> str:
        """A course command of the instructor (the course directory's owner)."""
        return run([sys.executable, "-m", *args], self.env)


@pytest.fixture(scope="module")
def hub():
    top = Path(tempfile.mkdtemp(prefix="course-hub-test-", dir="/tmp"))
    top.chmod(0o711)  # the students' servers pass through it to the venv and the exchange
    root = top / "course"
    shutil.copytree(FIXTURE_ASSIGNMENTS, root / "assignments")
    token = secrets.token_hex(16)
    env = {**course_env(root, root / "assignments"), "COURSE_HUB_PREFIX": PREFIX, "COURSE_HUB_PROXY": str(PROXY),
           "COURSE_HUB_SERVICE_TOKEN": token}
    released_course(root, env)
    port = free_ports()
    server = subprocess.Popen([sys.executable, "-m", "course.hub.serve", "--port", str(port)], cwd=paths.ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        first_line = server.stdout.readline()
        assert first_line.startswith("The course's hub: http://127.0.0.1"), first_line + server.stdout.read()
        yield Hub(root, env, port, token)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)
        subprocess.run([sys.executable, "-m", "course.hub.clean"], cwd=paths.ROOT, env=env, capture_output=True)
        shutil.rmtree(top, ignore_errors=True)


def as_account(account: str, *command: str) -> subprocess.CompletedProcess:
    """`command` in a shell of `account`'s own, as a student could run it in a terminal of their server."""
    return subprocess.run(["runuser", "-u", account, "--", *command], capture_output=True, text=True, cwd="/")


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


def test_the_instructor_collects_grades_and_returns_feedback_each_student_reads_their_own_points(hub):
    hub.instructor("course.hub.exchange", "collect", ASSIGNMENT)
    for student in (ALICE, BOB):
        assert (hub.root / "submitted" / student / ASSIGNMENT / "timestamp.txt").exists(), "nbgrader's timestamp kept"
    hub.instructor("course.grading.batch", ASSIGNMENT)
    records = {s: json.loads((hub.root / "build" / "results" / ASSIGNMENT / f"{s}.json").read_text()) for s in (ALICE, BOB)}
    assert {s: sum(r["points"].values()) for s, r in records.items()} == {ALICE: 15, BOB: 0}
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
    forged = as_account(BOB, "env", f"HOME=/home/{BOB}", f"JUPYTER_CONFIG_DIR={hub.root / 'build/hub/jupyter/student'}",
                        f"{sys.prefix}/bin/nbgrader", "submit", f"/home/{BOB}/{ASSIGNMENT}", f"--student={ALICE}",
                        f"--assignment={ASSIGNMENT}")
    assert forged.returncode == 0, forged.stderr  # the exchange takes it: nbgrader cannot tell
    before = (hub.root / "submitted" / ALICE / ASSIGNMENT / "timestamp.txt").read_text()
    result = subprocess.run([sys.executable, "-m", "course.hub.exchange", "collect", ASSIGNMENT], cwd=paths.ROOT,
                            env=hub.env, capture_output=True, text=True)
    assert result.returncode == 0 and "another account made it" in result.stderr, result.stderr
    assert (hub.root / "submitted" / ALICE / ASSIGNMENT / "timestamp.txt").read_text() == before
