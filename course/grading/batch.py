"""Grade a class: one grading step per submission, then one merge.

    python -m course.grading.batch ASSIGNMENT [--regrade] [--jobs N]

Each submission in submitted/ is graded in its own child process
(course.grading.grade_one), so one submission cannot take the batch down;
N of them run at once, each with its share of the CPU threads (two notebook
kernels that each take every core slow each other down many times over).
A submission whose record is already on disk for the same files is not
graded again: an interrupted batch resumes where it stopped, and a killed
batch takes its children with it. The merge is the only writer of
grades/<assignment>/ and feedback/.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from course import paths
from course.grading import limits, sandbox
from course.grading.grade_one import RECORD_VERSION, SANDBOX, Record, grade_cells, submission_hash, write_record



def students(assignment: str) -> list[str]:
    """Students with a folder for `assignment` in submitted/."""
    root = paths.COURSE / "submitted"
    return sorted(p.parent.name for p in root.glob(f"*/{assignment}") if p.is_dir())


def load_record(assignment: str, student: str) -> dict | None:
    path = paths.record_file(assignment, student)
    try:
        record = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return record if record.get("version") == RECORD_VERSION else None


def is_current(assignment: str, student: str) -> bool:
    """True if the record on disk grades exactly the files now in submitted/."""
    record = load_record(assignment, student)
    folder = paths.submission_dir(student, assignment)
    return record is not None and record["submission_sha256"] == submission_hash(folder)


def grade_in_child(assignment: str, student: str, jobs: int = 1) -> float | None:
    """Run grade_one in a child process (one of `jobs` at once); the seconds it took, or None if it was stopped.

    If the child fails or runs past the step limit, the student gets a 'crashed' or 'timeout' record.
    If a signal from outside stopped it (Ctrl-C, kill), there is no verdict to record: the submission
    stays ungraded, and the next batch grades it.
    """
    start = time.perf_counter()
    env = {**os.environ, **limits.thread_env(jobs)}
    try:
        code = subprocess.run([sys.executable, "-m", "course.grading.grade_one", assignment, student], cwd=paths.ROOT,
                              env=env, timeout=limits.step_timeout(), preexec_fn=sandbox.die_with_parent).returncode
    except subprocess.TimeoutExpired:
        code = None
    if code is not None and code < 0:
        return None
    if code != 0 or load_record(assignment, student) is None:
        auto, manual = grade_cells(assignment)
        folder = paths.submission_dir(student, assignment)
        write_record(Record(student, assignment, status="crashed" if code is not None else "timeout",
                            messages=["grading stopped before it finished; the instructor has been told."],
                            submission_sha256=submission_hash(folder), points={c: 0 for c in auto},
                            max_points=auto, manual_pending=manual))
    return time.perf_counter() - start


def grade_all(assignment: str, names: list[str], jobs: int) -> None:
    """Grade `names`, `jobs` at a time; prints one line per student. Ctrl-C starts no further gradings."""
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {student: pool.submit(grade_in_child, assignment, student, jobs) for student in names}
        try:
            for student, future in futures.items():
                seconds = future.result()
                print(f"{student}: " + (f"graded in {seconds:.1f} s" if seconds is not None else
                                        "grading was stopped from outside; it will be graded next time"), flush=True)
        except KeyboardInterrupt:
            pool.shutdown(cancel_futures=True)
            raise


STATUS_MEANING = {  # what each status tells the student
    "ok": "graded normally",
    "invalid": "the submission could not be opened, see below",
    "timeout": "some of your code ran past its time limit, see below",
    "crashed": "your code stopped the process that ran it, see below",
    "forged": "submission_log.json does not hold what your code computes",
    "tampered": "your notebook changed how the tests run inside it; your points come from the grader's own run",
}


def feedback_text(record: dict, check_ids: list[str]) -> str:
    """The student's feedback: status, points per check with the reason for each lost point."""
    total, possible = sum(record["points"].values()), sum(record["max_points"].values())
    lines = [f"# Feedback: {record['assignment']} ({record['student']})", "",
             f"Autograded score: **{total} / {possible}** (status: {record['status']}: "
             f"{STATUS_MEANING[record['status']]}).",
             f"Written answers ({sum(record['manual_pending'].values())} points) are graded by hand.", ""]
    lines += [f"- {message}" for message in record["messages"]]
    lines += ["", "| check | points | note |", "|---|---|---|"]
    for check_id in check_ids:
        possible_points = record["max_points"][check_id]
        verdict = record["judge"].get(check_id, {})
        note = "passed" if verdict.get("passed") else (verdict.get("message") or "not graded")
        note = note.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {check_id} | {record['points'][check_id]} / {possible_points} | {note} |")
    return "\n".join(lines) + "\n"


def merge(assignment: str, names: list[str]) -> list[dict]:
    """Write grades.csv, report.md and each student's feedback.md from the records."""
    records = [r for r in (load_record(assignment, s) for s in names) if r is not None]
    out = paths.grades_dir(assignment)
    out.mkdir(parents=True, exist_ok=True)
    check_ids = list(grade_cells(assignment)[0])
    with (out / "grades.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "status", *check_ids, "total", "max", "nbgrader_total", "manual_pending", "flags"])
        for r in records:
            nbgrader_total = f'{sum(r["nbgrader"].get(c, 0) for c in check_ids):g}' if r["nbgrader"] else ""
            writer.writerow([r["student"], r["status"], *(r["points"][c] for c in check_ids), sum(r["points"].values()),
                             sum(r["max_points"].values()), nbgrader_total, sum(r["manual_pending"].values()),
                             ";".join(r["flags"])])
    for r in records:
        folder = paths.feedback_dir(r["student"], assignment)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "feedback.md").write_text(feedback_text(r, check_ids))
    (out / "report.md").write_text(report_text(assignment, records, check_ids))
    return records


def report_text(assignment: str, records: list[dict], check_ids: list[str]) -> str:
    """The instructor's summary: one line per student, pass rate per check, what needs attention."""
    lines = [f"# Grades report: {assignment}", "", f"{len(records)} submissions graded.", "",
             "| student | status | judge | nbgrader | flags | seconds |", "|---|---|---|---|---|---|"]
    for r in records:
        nbgrader = f'{sum(r["nbgrader"].get(c, 0) for c in check_ids):g}' if r["nbgrader"] else "-"
        seconds = sum(r["seconds"].values())
        lines.append(f"| {r['student']} | {r['status']} | {sum(r['points'].values())}/{sum(r['max_points'].values())} "
                     f"| {nbgrader} | {', '.join(r['flags']) or '-'} | {seconds:.0f} |")
    lines += ["", "| check | passed by |", "|---|---|"]
    for check_id in check_ids:
        passed = sum(1 for r in records if r["judge"].get(check_id, {}).get("passed"))
        lines.append(f"| {check_id} | {passed}/{len(records)} |")
    attention = [r["student"] for r in records if r["status"] != "ok" or "paths-disagree" in r["flags"]]
    statuses = Counter(r["status"] for r in records)
    lines += ["", "Statuses: " + ", ".join(f"{status} {statuses[status]}" for status in STATUS_MEANING if statuses[status]),
              "", f"Needs attention: {', '.join(attention) or 'nobody'}.",
              f"Written answers to grade by hand: {len(records)} submissions (nbgrader formgrader)."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignment", choices=paths.ASSIGNMENTS)
    parser.add_argument("--regrade", action="store_true", help="grade every submission again, even if unchanged")
    parser.add_argument("--jobs", type=int, default=limits.default_jobs(),
                        help="submissions graded at once (default: COURSE_JOBS, or one per core)")
    args = parser.parse_args()
    if SANDBOX == "none":
        print("WARNING: COURSE_SANDBOX=none: student code runs WITHOUT isolation (no network or file jail).",
              file=sys.stderr)
    elif not sandbox.bubblewrap():
        sys.exit("bubblewrap (bwrap) is not installed, so student code cannot be isolated. Run "
                 "`make sandbox-tools` (apt-get install bubblewrap), or, on a machine that cannot run it, "
                 "set COURSE_SANDBOX=none to grade without isolation.")
    sandbox.remove_stale_cgroups()
    names = students(args.assignment)
    to_grade = []
    for student in names:
        if not args.regrade and is_current(args.assignment, student):
            print(f"{student}: already graded, unchanged")
        else:
            to_grade.append(student)
    try:
        grade_all(args.assignment, to_grade, args.jobs)
    except KeyboardInterrupt:
        sys.exit("interrupted: the submissions graded so far are kept; run the same command again to grade the rest")
    records = merge(args.assignment, names)
    print(f"merged {len(records)} records into {paths.grades_dir(args.assignment)}/grades.csv and report.md")


if __name__ == "__main__":
    main()
