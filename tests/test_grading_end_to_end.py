"""Grading a class for real: the sandboxed probe, the judge, nbgrader with a real kernel.

One isolated course directory of the fixture assignment (its own gradebook,
submitted/, grades/) gets the three generated sample submissions, one made of
correct alternative implementations from its corpus, and every bad submission
of tests/bad_submissions.py, and is graded by the same batch command as
`make autograde`, three submissions at a time. Then a batch is killed midway and
resumed, the instructor gives hand grades, cleans, regrades and releases again.
Short time limits keep the endless loops short.
"""

from __future__ import annotations

import csv
import html
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from bad_submissions import CASES, EXTRA_SNOOPING, FULL, SECRET_VARIABLES, hand_in, snoop_targets
from course import paths
from course.assignment_parts import part
from course.grading import limits
from course.grading.nbgrader_cli import nbgrader_command
from course.grading.nbgrader_hooks import REFUSAL
from course.grading.record import STATUS_MEANING, submission_hash
from course.samples import apply_edits, sample_notebook
from course.untrusted import escaped
from helpers import ASSIGNMENT, copy_of_release, course_env, give_hand_grade, paths_of, run

HIDDEN_INPUTS = "SQUARE_INPUTS"  # a name in the fixture's hidden probes only (tests/fixture/assignments/tiny/probes.py)
ODD_NAMES = sum(case.folder_name is not None for case in CASES)  # recorded as invalid at each batch, not graded
GOOD = ("perfect", "blank", "partial", "alternatives")
# Limits far apart, so that no machine's load decides which one a submission meets: the memory bomb fills 256 MB in
# about a quarter of a second (memory fills at about 1 GB/s), a twentieth of the 5 s a cell may run; an honest
# grading of the fixture peaks at about 130 MB (the cgroup's memory.max_usage_in_bytes).
LIMITS = {"COURSE_CELL_TIMEOUT": "5", "COURSE_PROBE_TIMEOUT": "120", "COURSE_NOTEBOOK_TIMEOUT": "300",
          "COURSE_MEMORY_MB": "256", "COURSE_JOBS": "3"}


@pytest.fixture(scope="module")
def course(tmp_path_factory, fixture_release) -> Iterator[dict]:
    """Release, samples and grades of a fresh course directory; returns its paths, env and records."""
    root = tmp_path_factory.mktemp("course")
    env = {**course_env(root), **LIMITS, **SECRET_VARIABLES}
    for name in limits.THREAD_VARIABLES:  # set by the batch only while it grades several submissions at once
        env.pop(name, None)
    copy_of_release(fixture_release, root)
    run([sys.executable, "-m", "course.samples"], env)
    with paths_of(root):
        write_alternatives_student(root / "submitted" / "alternatives" / ASSIGNMENT)
        for case in CASES:
            folder = root / "submitted" / os.fsdecode(case.folder_name or case.student) / ASSIGNMENT
            folder.mkdir(parents=True)
            case.write(folder)
        batch_output = run([sys.executable, "-m", "course.grading.batch"], env)
        build = root / "build"
        yield {"root": root, "build": build, "env": env, "records": records_in(build), "batch_output": batch_output}


def records_in(build: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in (build / "results" / ASSIGNMENT).glob("*.json")}


def write_alternatives_student(folder: Path) -> None:
    """A submission made of the first correct alternative of each answer cell (not run: no log)."""
    first_per_cell = {}
    for alternative in part(ASSIGNMENT, "corpus").ALTERNATIVES:
        first_per_cell.setdefault(alternative.cell, alternative)
    hand_in(folder, apply_edits(sample_notebook(ASSIGNMENT, "perfect"), first_per_cell.values()))


def totals(record: dict) -> tuple[float, float]:
    """(the judge's points, the points nbgrader's gradebook holds) of a record."""
    return sum(record["points"].values()), sum(record["gradebook"].get(c, 0) for c in record["max_points"])


def test_perfect_submission_gets_full_marks_in_the_judge_and_the_gradebook(course):
    record = course["records"]["perfect"]
    assert totals(record) == (FULL, FULL)
    assert record["status"] == "ok" and record["flags"] == []
    assert sum(record["manual_pending"].values()) == 10


def test_blank_release_gets_zero_in_the_judge_and_the_gradebook_and_is_not_attempted_everywhere(course):
    record = course["records"]["blank"]
    assert totals(record) == (0, 0)
    assert record["status"] == "ok"
    assert {verdict["mistake"] for verdict in record["judge"].values()} == {"not-attempted"}
    feedback = (course["root"] / "feedback" / "blank" / ASSIGNMENT / "feedback.md").read_text()
    assert "not attempted" in feedback and "shapes" not in feedback
    assert "| not-attempted |" in (course["root"] / "grades" / ASSIGNMENT / "report.md").read_text()


def test_partial_submission_loses_exactly_the_points_of_its_bugs(course):
    record = course["records"]["partial"]
    broken = {check for _, check in part(ASSIGNMENT, "corpus").SAMPLE_BUGS}
    lost = {c for c, p in record["points"].items() if p < record["max_points"][c]}
    assert lost == broken and record["gradebook"] == record["points"]
    assert totals(record) == (FULL - sum(record["max_points"][c] for c in broken),) * 2
    assert record["status"] == "ok"


def test_alternative_implementations_get_full_marks(course):
    record = course["records"]["alternatives"]
    assert totals(record) == (FULL, FULL)
    assert record["flags"] == ["log-missing"], "it was never run, so it has no log; nothing else is wrong"


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.student)
def test_bad_submission_gets_its_outcome_and_its_reason(course, case):
    record = course["records"][case.student]
    assert record["status"] == case.status, record["messages"]
    assert sum(record["points"].values()) == case.points, record["judge"]
    assert record["gradebook"] == ({} if case.status == "invalid" else record["points"]), "the gradebook shows the judge's"
    assert set(case.flags) <= set(record["flags"]), record["flags"]
    feedback = (course["root"] / "feedback" / case.student / ASSIGNMENT / "feedback.md").read_text()
    assert all(told in feedback for told in case.told), feedback
    assert HIDDEN_INPUTS not in feedback, "the hidden probes reached the student"
    assert f"(status: {case.status}: {STATUS_MEANING[case.status]})" in feedback
    page = (course["root"] / "feedback" / case.student / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    if "nbgrader-failed" in record["flags"]:  # no page of nbgrader's: the feedback's text in its place
        assert all(html.escape(told) in page for told in case.told), page


def test_student_code_cannot_read_or_write_outside_its_folder(course):
    kernel_folder = course["build"] / "jail" / ASSIGNMENT / "snooper" / "kernel"  # what the kernel saw as its folder
    attempts = json.loads((kernel_folder / "snoop.json").read_text())
    targets = snoop_targets(course["root"])
    reads = [name for name in [*targets, *EXTRA_SNOOPING] if not name.startswith("write")]
    assert {name: attempts[name] for name in reads} == {name: "blocked" for name in reads}
    for name in (name for name in targets if name.startswith("write")):  # a write may land in the jail's own tmpfs
        assert b"overwritten by another student" not in Path(targets[name]).read_bytes(), name
    assert not (course["root"] / "autograded" / "snooper" / ASSIGNMENT / "snoop.json").exists()
    victim = course["root"] / "submitted" / "perfect" / ASSIGNMENT
    assert submission_hash(victim) == course["records"]["perfect"]["submission_sha256"], "the link attack changed it"
    assert not (course["root"] / "autograded" / "link_attacker" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_symlink()


def test_what_the_kernel_sends_while_the_probes_run_never_reaches_the_graded_notebook(course):
    saw = course["build"] / "jail" / ASSIGNMENT / "display_updater" / "kernel" / "saw_hidden_probes.txt"
    leaked = f"LEAKED {saw.read_text()}"  # what the thread displayed once it saw them
    assert saw.read_text(), "the thread did not see the hidden probes: the attack did not happen"
    graded = (course["root"] / "autograded" / "display_updater" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text()
    assert "nothing seen yet" in graded and leaked not in graded
    feedback = (course["root"] / "feedback" / "display_updater" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert leaked not in feedback


def test_nbgrader_export_shows_the_judges_points(course):
    run(nbgrader_command("export", f"--to={course['build'] / 'export.csv'}"), course["env"])
    with (course["build"] / "export.csv").open() as f:
        exported = {row["student_id"]: float(row["raw_score"]) for row in csv.DictReader(f)}
    expected = {student: sum(r["points"].values()) for student, r in course["records"].items() if r["status"] != "invalid"}
    assert exported == expected


def test_nbgrader_autograde_outside_the_course_grader_is_refused_and_touches_nothing(course):
    """What formgrader's Autograde button runs: no sandbox, no judge. It must refuse before changing anything."""
    autograded = course["root"] / "autograded" / "perfect" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    before = autograded.read_bytes()
    result = subprocess.run(nbgrader_command("autograde", ASSIGNMENT, "--student", "perfect", "--force"),
                            cwd=paths.ROOT, env=course["env"], capture_output=True, text=True)
    assert result.returncode != 0 and REFUSAL in result.stdout + result.stderr
    assert autograded.read_bytes() == before
    run(nbgrader_command("export", f"--to={course['build'] / 'after.csv'}"), course["env"])
    with (course["build"] / "after.csv").open() as f:
        assert {row["student_id"]: row["raw_score"] for row in csv.DictReader(f)}["perfect"] == str(float(FULL))


def test_grades_csv_has_one_row_per_student_with_both_totals(course):
    with (course["root"] / "grades" / ASSIGNMENT / "grades.csv").open() as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert sorted(rows) == sorted([*GOOD, *(case.student for case in CASES)])
    assert rows["perfect"]["total"] == rows["perfect"]["gradebook_total"] == str(FULL)
    assert rows["blank"]["total"] == "0"


def test_feedback_explains_lost_points_and_agrees_with_the_html(course):
    feedback = (course["root"] / "feedback" / "partial" / ASSIGNMENT / "feedback.md").read_text()
    assert "Subtract the minimum" in feedback and "0 / 3" in feedback
    assert "&lt;max - min&gt;" in feedback and "<max - min>" not in feedback, "Markdown would swallow <...> as a tag"
    html = (course["root"] / "feedback" / "partial" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "Autograded score: **12 / 15**" in feedback and "(Score: 12.0 / 25.0)" in html, "every student's maximum"
    assert html.count("To be graded by hand: this answer (5 points)") == 2, "written answers are not 0 / 5"
    blank = (course["root"] / "feedback" / "blank" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "(Score: 0.0 / 25.0)" in blank, "the same maximum for an unanswered notebook"
    assert "CheckFailed: normalize" in html, "the judge's verdict is in its test cell"


def test_report_counts_the_statuses_and_lists_each_submission_that_needs_attention(course):
    report = (course["root"] / "grades" / ASSIGNMENT / "report.md").read_text()
    assert f"{len(GOOD) + len(CASES)} submissions graded" in report
    line = next(line for line in report.splitlines() if line.startswith("Statuses: "))
    counted = {status: int(n) for status, n in (item.split() for item in line.removeprefix("Statuses: ").split(", "))}
    assert counted == Counter(case.status for case in CASES) + Counter(ok=len(GOOD))
    attention = [r for r in course["records"].values() if r["status"] != "ok" or r["flags"]]
    assert all(f"| {escaped(r['student'])} | {r['status']} |" in report for r in attention)
    assert "| %FF%FEodd%20name | invalid |" in report
    assert "| perfect |" not in report.split("## Needs attention")[1].split("\n## ")[0], "nothing wrong with it"
    assert (course["root"] / "grades" / ASSIGNMENT / "report.html").exists()
    assert f'href="{ASSIGNMENT}/report.html"' in (course["root"] / "grades" / "index.html").read_text()


def test_grading_again_skips_unchanged_submissions_and_changes_nothing(course):
    results = course["build"] / "results" / ASSIGNMENT
    before = {p.name: p.read_bytes() for p in results.glob("*.json")}
    output = run([sys.executable, "-m", "course.grading.batch", ASSIGNMENT], course["env"])
    assert output.count("already graded, unchanged") == len(GOOD) + len(CASES) - ODD_NAMES
    assert {p.name: p.read_bytes() for p in results.glob("*.json")} == before


def running(pattern: str) -> bool:
    return subprocess.run(["pgrep", "-f", "--", pattern], capture_output=True).returncode == 0


def stop_batch_midway(course: dict, student: str, stop: signal.Signals) -> None:
    """Start a batch, and send `stop` to all of it while nbgrader runs `student`'s notebook."""
    batch = subprocess.Popen([sys.executable, "-m", "course.grading.batch", ASSIGNMENT], cwd=paths.ROOT,
                             env=course["env"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    deadline = time.monotonic() + 120
    while not running(f"--student {student}") and time.monotonic() < deadline:
        time.sleep(0.2)
    os.killpg(batch.pid, stop)
    batch.wait(timeout=60)
    time.sleep(1)


def test_a_stopped_batch_leaves_nothing_running_then_resumes_to_the_same_grades(course):
    student = "hard_exit"  # its record is removed, so the batch grades it again
    results = course["build"] / "results" / ASSIGNMENT
    (results / f"{student}.json").unlink()
    for stop in (signal.SIGINT, signal.SIGKILL):  # Ctrl-C in its terminal; kill -9 of the whole job
        stop_batch_midway(course, student, stop)
        assert not running(f"grade_one {ASSIGNMENT} {student}") and not running(f"--student {student}"), \
            f"grading went on after the batch got {stop.name}"
        assert not (results / f"{student}.json").exists(), f"grading stopped by {stop.name} left a record"

    output = run([sys.executable, "-m", "course.grading.batch", ASSIGNMENT], course["env"])
    assert output.count("already graded, unchanged") == len(GOOD) + len(CASES) - ODD_NAMES - 1
    again = records_in(course["build"])[student]
    first = course["records"][student]
    assert {k: v for k, v in again.items() if k != "seconds"} == {k: v for k, v in first.items() if k != "seconds"}
    with (course["root"] / "grades" / ASSIGNMENT / "grades.csv").open() as f:
        students = [row["student"] for row in csv.DictReader(f)]
    assert sorted(students) == sorted([*GOOD, *(case.student for case in CASES)]), "each student once"


def test_the_final_grades_go_into_canvas_s_import_file_for_the_students_of_a_canvas_roster(course):
    """tests/fixture/canvas_export.csv lists perfect (SIS Login ID), blank (by e-mail), dana (no submission) and
    Canvas's test student."""
    run(nbgrader_command("db", "student", "add", "blank", "--email=bo@example.edu"), course["env"])
    export = Path(__file__).parent / "fixture" / "canvas_export.csv"
    result = subprocess.run([sys.executable, "-m", "course.grading.final_grades", "--canvas-roster", str(export)],
                            cwd=paths.ROOT, env=course["env"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    with (course["root"] / "grades" / "final_grades.csv").open() as f:
        final = {row["student"]: row[ASSIGNMENT] for row in csv.DictReader(f)}
    with (course["root"] / "grades" / "canvas_import.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert rows[0]["Student"] == "Points Possible" and rows[0]["Tiny (4711)"] == str(FULL + 10)
    assert {row["SIS Login ID"]: row["Tiny (4711)"] for row in rows[1:]} == {
        "perfect": final["perfect"], "bo@example.edu": final["blank"], "dana": "", "": ""}
    not_in_roster = set(final) - {"perfect", "blank"}
    assert f"{len(not_in_roster)} graded students are not in the Canvas roster" in result.stderr
    assert all(student in result.stderr for student in not_in_roster)


def test_hand_grades_survive_clean_regrade_and_rerelease_and_reach_the_final_grades(course):
    """Runs last: it cleans the course's build area."""
    give_hand_grade(course["env"], "perfect", "reflection-hardest", 4)
    cleaned = run([sys.executable, "-m", "course.clean"], course["env"])
    assert "backed up the gradebook" in cleaned and not (course["root"] / "autograded").exists()
    run([sys.executable, "-m", "course.grading.batch", ASSIGNMENT, "--regrade", "--student", "perfect", "--student", "blank"],
        course["env"])
    run(nbgrader_command("generate_assignment", ASSIGNMENT, "--force"), course["env"])
    summary = run([sys.executable, "-m", "course.grading.final_grades"], course["env"])
    with (course["root"] / "grades" / "final_grades.csv").open() as f:
        final = {row["student"]: row for row in csv.DictReader(f)}
    assert final["perfect"][ASSIGNMENT] == str(FULL + 4) and final["perfect"]["written_answers_to_grade"] == "1"
    assert final["blank"]["written_answers_to_grade"] == "0", "blank answers are graded 0 by nbgrader itself"
    assert "written answers are not graded yet" in summary
    feedback = (course["root"] / "feedback" / "perfect" / ASSIGNMENT / "feedback.md").read_text()
    assert "Written answers: **4 / 5** graded by hand so far; 5 points still to be graded by hand." in feedback
    html = (course["root"] / "feedback" / "perfect" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert f"(Score: {FULL + 4}.0 / {FULL + 10}.0)" in html and html.count("To be graded by hand") == 1
    assert len(list((course["root"] / "backups").glob("gradebook-*.db"))) >= 3



def test_a_course_whose_assignment_is_not_in_the_gradebook_grades_nothing_and_blames_no_student(tmp_path,
                                                                                                fixture_release):
    """The course's own fault (the hub's steps once skipped the release that records the assignment): the batch
    stops with a line that says what to run, and records no result for the student."""
    root = tmp_path / "course"
    copy_of_release(fixture_release, root)
    (root / "gradebook.db").unlink()
    with paths_of(root):
        hand_in(root / "submitted" / "perfect" / ASSIGNMENT, sample_notebook(ASSIGNMENT, "perfect"))
    result = subprocess.run([sys.executable, "-m", "course.grading.batch", ASSIGNMENT], cwd=paths.ROOT,
                            env=course_env(root), capture_output=True, text=True)
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [
        f"{ASSIGNMENT}: not released, or not recorded in the gradebook ({root / 'gradebook.db'}; nbgrader records an "
        f"assignment when it releases it): run `make release ASSIGNMENT={ASSIGNMENT}` first"], result.stderr
    assert not (root / "build" / "results" / ASSIGNMENT / "perfect.json").exists(), "no result is the student's"
