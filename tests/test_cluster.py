"""Grading a class on a Dask cluster (a LocalCluster of 2 worker processes on this machine).

The class of the fixture assignment (three samples and a folder with a link) is graded
first by the local batch; the cluster must give it the same grades, and keep them
when a worker is killed mid-batch, when the driver is stopped and started again, and
when a submission kills the worker that grades it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from bad_submissions import FULL, solution_with, write_link_to_solution
from course import paths
from course.grading.sandbox import alive
from course.grading.task import TASK_PREFIX, remove_stale_folders, task_folder_prefix
from helpers import ASSIGNMENT, copy_of_release, course_env, give_hand_grade, paths_of, run

CLASS = ("perfect", "blank", "partial", "linker")
LIMITS = {"COURSE_CELL_TIMEOUT": "20", "COURSE_PROBE_TIMEOUT": "120", "COURSE_NOTEBOOK_TIMEOUT": "300"}
# Student code that kills the process grading it (the Dask worker, the parent of grade_one) and counts its runs.
# Only graded with COURSE_SANDBOX=none: in the sandbox, student code cannot see the worker.
KILLER = """
import os, signal
def _parent(pid):
    return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
_pid = os.getpid()
while _pid > 1 and b"course.grading.grade_one" not in open(f"/proc/{_pid}/cmdline", "rb").read():
    _pid = _parent(_pid)
if _pid > 1:
    os.kill(_parent(_pid), signal.SIGKILL)
"""


def batch(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "course.grading.batch", ASSIGNMENT, *args], cwd=paths.ROOT, env=env,
                          capture_output=True, text=True)


def records(root: Path) -> dict[str, dict]:
    """Each record of the course at `root`, without its timings."""
    found = {p.stem: json.loads(p.read_text()) for p in (root / "build" / "results" / ASSIGNMENT).glob("*.json")}
    return {student: {k: v for k, v in record.items() if k != "seconds"} for student, record in found.items()}


def gradebook_rows(root: Path) -> list[tuple[str, str, float]]:
    """(student, grade_id, score) of every graded cell of every submission in the course's gradebook."""
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", paths.COURSE_ID) as gb:
        return sorted((s.student.id, g.name, g.score) for s in gb.find_assignment(ASSIGNMENT).submissions
                      for nb in s.notebooks for g in nb.grades)


def graded_class(root: Path) -> dict:
    """What grading left in the course: records, gradebook scores, feedback, grades.csv."""
    return {"records": records(root), "gradebook": gradebook_rows(root),
            "feedback": {s: (root / "feedback" / s / ASSIGNMENT / "feedback.md").read_text() for s in CLASS},
            "csv": (root / "grades" / ASSIGNMENT / "grades.csv").read_text()}


@pytest.fixture(scope="module")
def course(tmp_path_factory, fixture_release) -> Iterator[dict]:
    """The class, graded by the local batch: its root, env and what grading left."""
    root = tmp_path_factory.mktemp("cluster_course")
    env = {**course_env(root), **LIMITS}
    copy_of_release(fixture_release, root)
    run([sys.executable, "-m", "course.samples"], env)
    with paths_of(root):
        write_link_to_solution(root / "submitted" / "linker" / ASSIGNMENT)
    assert batch(env, "--quiet").returncode == 0
    yield {"root": root, "env": env, "local": graded_class(root)}


@pytest.fixture(scope="module")
def cluster(course) -> Iterator[dict]:
    """A LocalCluster of 2 worker processes that see the course as a worker machine sees its repository.

    Its workers keep their task folders in a temporary folder of their own (TMPDIR), so that the tests see
    only theirs, not those of the other tests running at the same time."""
    from distributed import Client, LocalCluster

    temporary = course["root"] / "worker-tmp"
    temporary.mkdir()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      env={**course["env"], "COURSE_JOBS": "2", "TMPDIR": str(temporary)}) as local, \
            Client(local) as client:
        yield {"client": client, "env": {**course["env"], "COURSE_SCHEDULER": local.scheduler_address},
               "temporary": temporary}


def test_the_cluster_grades_a_class_as_the_local_batch_does_and_shows_its_progress(course):
    graded = batch(course["env"], "--regrade", "--cluster", "local")
    assert graded.returncode == 0, graded.stderr[-3000:]
    assert graded_class(course["root"]) == course["local"]
    assert "grading: 100%" in graded.stderr and "ok 3" in graded.stderr and "invalid 1" in graded.stderr
    assert graded.stdout.count(f"{ASSIGNMENT}/perfect: ok, 15/15 points") == 1


def worker_pids(client) -> set[int]:
    return set(client.run(os.getpid).values())


def grading_workers(pids: set[int]) -> set[int]:
    """Those of the processes `pids` that run grade_one now."""
    found = subprocess.run(["pgrep", "-f", "course.grading.grade_one"], capture_output=True, text=True).stdout.split()
    parents = set()
    for pid in found:
        try:
            parents.add(int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]))
        except OSError:  # it has finished since
            pass
    return parents & pids


def test_a_worker_killed_mid_batch_loses_nothing_and_counts_nothing_twice(course, cluster):
    pids = worker_pids(cluster["client"])
    driver = subprocess.Popen([sys.executable, "-m", "course.grading.batch", ASSIGNMENT, "--regrade", "--quiet"],
                              cwd=paths.ROOT, env=cluster["env"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    deadline = time.monotonic() + 120
    while not grading_workers(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    victim = min(grading_workers(pids) or pids)
    os.kill(victim, signal.SIGKILL)
    output, errors = driver.communicate(timeout=300)
    assert driver.returncode == 0, errors[-3000:]
    assert victim not in worker_pids(cluster["client"]), "the worker was not killed"
    assert graded_class(course["root"]) == course["local"]
    assert sorted(line.split(":")[0] for line in output.splitlines() if " points, graded in " in line) == \
        sorted(f"{ASSIGNMENT}/{student}" for student in CLASS), "each submission reported once"
    cluster["client"].wait_for_workers(2, timeout=60)


def test_a_stopped_driver_resumes_where_it_stopped(course, cluster):
    results = course["root"] / "build" / "results" / ASSIGNMENT
    for student in ("perfect", "blank", "partial"):  # more than the 2 workers: the last waits for a first to finish
        (results / f"{student}.json").unlink()
    driver = subprocess.Popen([sys.executable, "-m", "course.grading.batch", ASSIGNMENT, "--quiet"], cwd=paths.ROOT,
                              env=cluster["env"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while len(list(results.glob("*.json"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    driver.kill()
    driver.wait()
    done = len(list(results.glob("*.json")))
    assert 2 <= done < len(CLASS), "stopped after a new record, before the last"
    resumed = batch(cluster["env"], "--quiet")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert resumed.stdout.count("already graded, unchanged") == done
    assert graded_class(course["root"]) == course["local"]


def test_a_submission_cannot_kill_its_worker_even_unsandboxed(course, cluster):
    """Without bubblewrap's namespaces the submission sees its worker, but runs as the jail's user: its kill is
    refused, the worker lives on, and the classmate graded beside it keeps the points."""
    with paths_of(course["root"]):
        solution_with(KILLER)(course["root"] / "submitted" / "killer" / ASSIGNMENT)
    workers = worker_pids(cluster["client"])
    graded = batch({**cluster["env"], "COURSE_SANDBOX": "none"}, "--quiet", "--regrade",
                   "--student", "killer", "--student", "perfect")
    assert graded.returncode == 0, graded.stderr[-3000:]
    assert worker_pids(cluster["client"]) == workers, "a worker died"
    killer = records(course["root"])["killer"]
    assert "killed-worker" not in killer["flags"] and "not-sandboxed" in killer["flags"]
    assert any("PermissionError" in message for message in killer["messages"]), killer["messages"]
    assert records(course["root"])["perfect"]["points"] == course["local"]["records"]["perfect"]["points"]


def stale_task_folders(temporary: Path) -> list[Path]:
    """The task folders in `temporary` of this machine's processes that are gone."""
    return [folder for folder in temporary.glob(f"{TASK_PREFIX}*")
            if not any(folder.name.startswith(task_folder_prefix(pid)) for pid in live_pids(folder))]


def live_pids(folder: Path) -> list[int]:
    pid = folder.name.removeprefix(task_folder_prefix(0).removesuffix("0-")).split("-")[0]
    return [int(pid)] if pid.isdigit() and alive(int(pid)) else []


def test_the_next_task_removes_the_folders_of_workers_killed_mid_task(course, cluster):
    """The workers killed above (mid-batch, and twice by a submission) left the course directory of their task."""
    graded = batch(cluster["env"], "--quiet", "--regrade", "--student", "perfect")
    assert graded.returncode == 0, graded.stderr[-3000:]
    assert stale_task_folders(cluster["temporary"]) == []


def test_a_batch_started_before_any_worker_joined_grades_when_one_joins(course):
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, threads_per_worker=1, processes=True, dashboard_address=None,
                      env={**course["env"], "COURSE_JOBS": "1"}) as local:
        driver = subprocess.Popen([sys.executable, "-m", "course.grading.batch", ASSIGNMENT, "--quiet", "--regrade",
                                   "--student", "perfect"], cwd=paths.ROOT,
                                  env={**course["env"], "COURSE_SCHEDULER": local.scheduler_address},
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not local.scheduler.tasks and driver.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert local.scheduler.tasks and driver.poll() is None, "the batch sent no task to wait for a worker"
        local.scale(1)
        output, errors = driver.communicate(timeout=300)
    assert driver.returncode == 0, errors[-3000:]
    assert records(course["root"])["perfect"] == course["local"]["records"]["perfect"]
    assert output.count(" points, graded in ") == 1


def test_a_regrade_on_the_cluster_keeps_the_hand_grades_and_its_feedback_shows_them(course, cluster):
    """The worker grades in a gradebook of its own: the instructor's points must reach it, and come back untouched.
    Runs after the tests that compare the class with the local batch's: it gives a hand grade."""
    give_hand_grade(course["env"], "perfect", "reflection-hardest", 4)
    graded = batch(cluster["env"], "--quiet", "--regrade", "--student", "perfect")
    assert graded.returncode == 0, graded.stderr[-3000:]
    with Gradebook(f"sqlite:///{course['root'] / 'gradebook.db'}", paths.COURSE_ID) as gb:
        assert gb.find_grade("reflection-hardest", ASSIGNMENT, ASSIGNMENT, "perfect").manual_score == 4
    html = (course["root"] / "feedback" / "perfect" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert f"(Score: {FULL + 4}.0 / {FULL + 10}.0)" in html


def test_only_the_folders_of_processes_that_are_gone_are_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # not the folders of the tests running beside it
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale, live = (Path(tempfile.mkdtemp(prefix=task_folder_prefix(pid))) for pid in (gone.pid, os.getpid()))
    assert remove_stale_folders() == [stale] and not stale.exists() and live.exists()
