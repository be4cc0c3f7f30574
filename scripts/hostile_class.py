"""Grade the hostile class (tests/hostile_class.py) beside honest students on every grading path; print what got
through.

    make hostile-class [HOSTILE_PATHS="local cluster gradescope gradescope-no-namespaces hub"]
                               (as root, after `make sandbox-tools`; about 20 minutes on 2 cores)

The class is of the fixture assignment (tests/fixture/assignments/tiny, 15 points) in a scratch course: three honest
students (the solution, the partly wrong sample, the blank release) and one hostile student per attack, each on the
blank release. Paths: the local batch, a LocalCluster of 2 workers, and Gradescope's container with bubblewrap's
namespaces and without them (tests/test_gradescope.py's Container), and a JupyterHub's course (tests/hub_course.py):
the students hand in through nbgrader's exchange from their own Unix accounts, and fetch their feedback there. What
a student's account can do to the exchange and to classmates is attacked in tests/test_hub.py. For each path it prints, per attack, whether it got through:
a point for a hostile student, a secret in what the student gets back (feedback, or results.json), a change to the
course's files or to an honest student's grade, or a process left running; then the totals. The table goes into
docs/bad_submissions.md by hand, with the date and the commit.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from bad_submissions import cell, hand_in, solution  # noqa: E402
from helpers import ASSIGNMENT, FIXTURE_ASSIGNMENTS, course_env, paths_of, released_course  # noqa: E402
from hostile_class import ATTACKS, attack_code  # noqa: E402

from course.grading import sandbox  # noqa: E402
from course.measuring.grader_accuracy import failed_checks  # noqa: E402
from course.samples import sample_notebook  # noqa: E402
from course.verdicts import grade_cells  # noqa: E402

HONEST = ("perfect", "partial", "blank")
FIRST_ANSWER = "answer-square"


def secrets(root: Path) -> dict[str, str]:
    """A line of each thing no student may read, as it would stand in what they get back."""
    source = nbformat.read(root / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    solution_line = next(line for c in source.cells if c.cell_type == "code" and "BEGIN SOLUTION" in c.source
                         for line in c.source.split("### BEGIN SOLUTION", 1)[1].splitlines() if line.strip())
    shadow = Path("/etc/shadow").read_text().splitlines()[0][:24]
    return {"probes": (FIXTURE_ASSIGNMENTS / ASSIGNMENT / "probes.py").read_text().splitlines()[0],
            "checks": (FIXTURE_ASSIGNMENTS / ASSIGNMENT / "checks.py").read_text().splitlines()[0],
            "solution": solution_line.strip(), "shadow": shadow, "gradebook": "SQLite format 3"}


def write_class(root: Path) -> dict[str, int]:
    """The class's submissions in `root`/submitted; the points each student earned."""
    auto, _ = grade_cells(ASSIGNMENT)
    earned = {}
    for student in HONEST:
        nb = solution() if student == "perfect" else sample_notebook(ASSIGNMENT, student)
        hand_in(root / "submitted" / student / ASSIGNMENT, nb)
        earned[student] = sum(p for check, p in auto.items() if check not in failed_checks(ASSIGNMENT, nb))
    for attack in ATTACKS:
        nb = sample_notebook(ASSIGNMENT, "blank")
        cell(nb, FIRST_ANSWER).source = attack_code(attack, str(ROOT)) + cell(nb, FIRST_ANSWER).source
        hand_in(root / "submitted" / attack.student / ASSIGNMENT, nb)
        earned[attack.student] = 0
    return earned


def fingerprint() -> str:
    """A digest of the machinery and the fixture assignment's hidden files."""
    digest = hashlib.sha256()
    for folder in (ROOT / "course", FIXTURE_ASSIGNMENTS):
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path).encode() + path.read_bytes())
    return digest.hexdigest()


def batch(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "course.grading.batch", ASSIGNMENT, "--quiet", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True)


def returned_by_batch(root: Path, student: str) -> tuple[int, str]:
    """(points, everything the student is given back) of a graded class in `root`."""
    record = json.loads((root / "build" / "results" / ASSIGNMENT / f"{student}.json").read_text())
    given = " ".join(p.read_text(errors="replace") for p in (root / "feedback" / student).rglob("*") if p.is_file())
    return sum(record["points"].values()), given + " ".join(record["messages"])


def local(root: Path, env: dict) -> dict[str, tuple[int, str]]:
    result = batch(env)
    assert result.returncode == 0, result.stderr[-3000:]
    return {student: returned_by_batch(root, student) for student in students()}


def cluster(root: Path, env: dict) -> dict[str, tuple[int, str]]:
    from distributed import Client, LocalCluster

    os.environ.update(env)  # the workers import this script again (as spawned processes do), course.paths with it
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      env={**env, "COURSE_JOBS": "2"}) as local_cluster, Client(local_cluster):
        result = batch({**env, "COURSE_SCHEDULER": local_cluster.scheduler_address}, "--regrade")
    assert result.returncode == 0, result.stderr[-3000:]
    return {student: returned_by_batch(root, student) for student in students()}


def gradescope(root: Path, env: dict, namespaces: bool) -> dict[str, tuple[int, str]]:
    from test_gradescope import Container, built_zip

    container = Container(Path(tempfile.mkdtemp(prefix="hostile-gradescope-")), built_zip(env, ASSIGNMENT))
    container.setup()
    graded = {}
    for student in students():
        handed_in = root / "submitted" / student / ASSIGNMENT
        results = container.grade(lambda folder: shutil.copy(handed_in / f"{ASSIGNMENT}.ipynb", folder),
                                  namespaces=namespaces)
        time.sleep(0.5)
        graded[student] = (int(results["score"]), json.dumps(results))
    time.sleep(8)  # a daemon's late write would have come by now
    final = json.loads((container.autograder / "results" / "results.json").read_text())
    assert final["score"] == graded[students()[-1]][0], "results.json changed after the grading"
    shutil.rmtree(container.box, ignore_errors=True)
    return graded


def hub(root: Path) -> dict[str, tuple[int, str]]:
    """The class on a hub (tests/hub_course.py's: a course of its own, owned by an account that is not root, the
    students as Unix accounts): each student fetches the release and submits their notebook from their own account
    with nbgrader's commands, as in a terminal of their server; the instructor (root) collects, grades and returns
    the feedback, which each student fetches. What a student is given back is what they fetch, and their record's
    messages."""
    from hub_course import as_account, course_hub

    account = {student: f"crsh-{student.replace('_', '-')}" for student in students()}
    roster = root.parent / "hostile-roster.csv"
    roster.write_text("id,first_name,last_name,email\n" + "".join(
        f"{name.removeprefix('crsh-')},{name},Student,{name}@example.org\n" for name in account.values()))
    with course_hub("crsh-", roster) as running:
        student_config = {"JUPYTER_CONFIG_DIR": str(running.root / "build" / "hub" / "jupyter" / "student")}
        nbgrader = f"{sys.prefix}/bin/nbgrader"
        running.instructor("course.hub.exchange", "release", ASSIGNMENT)
        for student, name in account.items():
            notebook = (root / "submitted" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text()
            for step in ([nbgrader, "fetch_assignment", ASSIGNMENT],
                         ["sh", "-c", f"cat > {ASSIGNMENT}/{ASSIGNMENT}.ipynb"],
                         [nbgrader, "submit", ASSIGNMENT]):
                done = as_account(name, "sh", "-c", 'cd && exec "$@"', "sh", *step, env=student_config,
                                  input=notebook if step[0] == "sh" else None)
                assert done.returncode == 0, (name, step, done.stderr[-2000:])
        for command in (("course.hub.exchange", "collect", ASSIGNMENT), ("course.grading.batch", ASSIGNMENT, "--quiet"),
                        ("course.hub.exchange", "feedback", ASSIGNMENT)):
            running.instructor(*command)
        graded = {}
        for student, name in account.items():
            fetched = as_account(name, "sh", "-c", f"cd && {nbgrader} fetch_feedback {ASSIGNMENT} && "
                                 f"cat {ASSIGNMENT}/feedback/*/*.html", env=student_config)
            assert fetched.returncode == 0, (name, fetched.stderr[-2000:])
            record = json.loads((running.root / "build" / "results" / ASSIGNMENT / f"{name}.json").read_text())
            graded[student] = (sum(record["points"].values()), fetched.stdout + " ".join(record["messages"]))
    return graded


def students() -> list[str]:
    return [*HONEST, *(attack.student for attack in ATTACKS)]


def judged(path: str, graded: dict[str, tuple[int, str]], earned: dict[str, int], marks: dict[str, str],
           changed: bool, alive: list[int]) -> list[str]:
    """The table's rows of one path; prints them."""
    rows = []
    for student in students():
        points, given = graded[student]
        leaked = [] if student in HONEST else [name for name, line in marks.items() if line and line in given]
        wrong = points != earned[student] if student in HONEST else points > 0
        rows.append((student, points, earned[student], leaked, wrong))
    got_through = [r for r in rows if r[3] or r[4]]
    print(f"\n## {path}: {len(ATTACKS)} attacks, {len(ATTACKS) - len([r for r in got_through if r[0] not in HONEST])} "
          f"refused, {sum(bool(r[3]) for r in rows)} leaked; honest students' grades "
          f"{'kept' if not [r for r in rows if r[0] in HONEST and r[4]] else 'CHANGED'}; course files "
          f"{'CHANGED' if changed else 'unchanged'}; processes left: {len(alive)}")
    for student, points, due, leaked, wrong in got_through:
        print(f"  GOT THROUGH {student}: {points} points (earned {due}), leaked {leaked}")
    return [f"| {path} | {len(ATTACKS)} | {len(ATTACKS) - len([r for r in got_through if r[0] not in HONEST])} | "
            f"{sum(bool(r[3]) for r in rows)} | {'kept' if not [r for r in rows if r[0] in HONEST and r[4]] else 'changed'}"
            f" | {'changed' if changed else 'unchanged'} | {len(alive)} |"]


def main() -> None:
    if os.geteuid() != 0:
        sys.exit("run it as root: grading takes the jail's users, and the Gradescope container needs root")
    top = Path(tempfile.mkdtemp(prefix="hostile-class-"))
    root = top / "course"
    env = {**course_env(root), "COURSE_CELL_TIMEOUT": "20", "COURSE_FILE_MB": "64"}
    released_course(root, env)
    marks = secrets(root)
    with paths_of(root):
        earned = write_class(root)
    table = ["| path | attacks | refused | leaked | honest grades | course files | processes left |",
             "|---|---|---|---|---|---|---|"]
    paths_to_grade = {"local": ("local batch", lambda: local(root, env)),
                      "cluster": ("LocalCluster, 2 workers", lambda: cluster(root, env)),
                      "gradescope": ("Gradescope, namespaces", lambda: gradescope(root, env, True)),
                      "gradescope-no-namespaces": ("Gradescope, no namespaces", lambda: gradescope(root, env, False)),
                      "hub": ("JupyterHub, its exchange", lambda: hub(root))}
    chosen = sys.argv[1:] or list(paths_to_grade)
    for name, grade in (paths_to_grade[key] for key in chosen):
        before = fingerprint()
        start = time.monotonic()
        graded = grade()
        time.sleep(6)
        table += judged(name, graded, earned, marks, fingerprint() != before, sandbox.jail_processes(range(sandbox.JAIL_UID_BASE, 2**32)))
        print(f"  ({time.monotonic() - start:.0f} s)")
    print("\n" + "\n".join(table))
    shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    main()
