"""A class's results: who handed in (`students`), and what is made of their records once graded (`merge`): grades.csv,
each student's feedback, the class's similarity and the class report.

The batch (course.grading.batch) merges after grading, and `make grades` (course.grading.final_grades) again once the
written answers are graded by hand. The merge is the only writer of grades/<assignment>/ and feedback/ (nbgrader's
feedback pages aside).
"""

from __future__ import annotations

import csv
import html
import os
import re
import urllib.parse

from course import paths
from course.grading import class_report, gradebook, similarity
from course.grading.record import STATUS_MEANING, load_record
from course.untrusted import escaped
from course.verdicts import grade_cells

# A student id nbgrader, file names and a CSV all take as it is.
STUDENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,99}")


def students(assignment: str) -> dict[str, str]:
    """Every folder of submitted/ that holds something named `assignment`: {student id: folder name}.

    A folder whose name is not a valid student id (not UTF-8, spaces, ...) gets an id made of its
    percent-encoded name, which no valid id can equal.
    """
    root = paths.COURSE / "submitted"
    found = {}
    for entry in sorted(root.iterdir()) if root.is_dir() else []:
        if os.path.lexists(entry / assignment):
            name = entry.name
            found[name if STUDENT_ID.fullmatch(name) else urllib.parse.quote(os.fsencode(name), safe="")] = name
    return found


def hand_summary(record: dict, hand: dict[str, float | None]) -> tuple[float, float, float]:
    """(points given by hand, points of the answers graded so far, points of the answers not graded yet)."""
    graded = {grade_id: score for grade_id, score in hand.items() if score is not None}
    possible = record["manual_pending"]
    return (sum(graded.values()), sum(possible[g] for g in graded),
            sum(points for grade_id, points in possible.items() if grade_id not in graded))


def feedback_text(record: dict, check_ids: list[str], hand: dict[str, float | None]) -> str:
    """The student's feedback (Markdown): status, points per check with the reason for each lost point, hand grades."""
    total, possible = sum(record["points"].values()), sum(record["max_points"].values())
    given, graded, pending = hand_summary(record, hand)
    written = (f"Written answers: **{given:g} / {graded:g}** graded by hand so far" if graded else "Written answers")
    written += f"; {pending:g} points still to be graded by hand." if pending else " (all graded)."
    lines = [f"# Feedback: {record['assignment']} ({escaped(record['student'])})", "",
             f"Autograded score: **{total} / {possible}** (status: {record['status']}: "
             f"{STATUS_MEANING[record['status']]}).", written, ""]
    lines += [f"- {escaped(message)}" for message in record["messages"]]
    lines += ["", "| check | points | note |", "|---|---|---|"]
    for check_id in check_ids:
        verdict = record["judge"].get(check_id, {})
        note = "passed" if verdict.get("passed") else (verdict.get("message") or "not graded")
        lines.append(f"| {check_id} | {record['points'][check_id]} / {record['max_points'][check_id]} | "
                     f"{escaped(note)} |")
    return "\n".join(lines) + "\n"


def write_feedback_page(student: str, assignment: str, text: str) -> None:
    """Where nbgrader wrote no feedback page (its run of the notebook was stopped: a crash, a limit), a page of the
    feedback's text in its place, with the submission's timestamp and secret, so that the student still gets their
    points and messages (the hub's exchange returns that page)."""
    paths.feedback_page(student, assignment).write_text(
        f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>Feedback: {html.escape(assignment)}</title></head>"
        f"<body><pre style='white-space: pre-wrap'>{html.escape(text)}</pre></body></html>\n")
    for name in ("timestamp.txt", "submission_secret.txt"):
        handed_in = paths.submission_dir(student, assignment) / name
        if handed_in.is_file() and not handed_in.is_symlink():
            (paths.feedback_dir(student, assignment) / name).write_bytes(handed_in.read_bytes()[:4096])


def gradebook_total(record: dict) -> str:
    """The autograded points nbgrader's gradebook holds for this record ('' if it has none)."""
    return f'{sum(record["gradebook"].values()):g}' if record["gradebook"] else ""


def merge(assignment: str, names: list[str]) -> tuple[list[dict], dict[str, dict[str, float | None]]]:
    """Write grades.csv, each student's feedback.md, the class's similarity (similarity.csv) and the class report
    (report.md, report.html) from the records and the gradebook's hand grades (the course page,
    class_report.write_course_page, once all are merged).

    Returns the records and the hand grades (student -> written answer -> points, None if not graded yet).
    """
    records = [r for r in (load_record(assignment, s) for s in names) if r is not None]
    check_points, answer_points = grade_cells(assignment)
    check_ids = list(check_points)
    hand = gradebook.hand_scores(assignment, list(answer_points))
    times = gradebook.submission_times(assignment)
    out = paths.grades_dir(assignment)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "grades.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "status", *check_ids, "total", "max", "gradebook_total", "hand_points",
                         "hand_pending", "flags", "submitted_at", "late_by"])
        for r in records:
            given, _, pending = hand_summary(r, hand.get(r["student"], {}))
            when = times.get(r["student"], {})
            writer.writerow([r["student"], r["status"], *(r["points"][c] for c in check_ids), sum(r["points"].values()),
                             sum(r["max_points"].values()), gradebook_total(r), f"{given:g}", f"{pending:g}",
                             ";".join(r["flags"]), when.get("submitted_at") or "",
                             class_report.late_by(when["seconds_late"]) if when.get("seconds_late") else ""])
    for r in records:
        folder = paths.feedback_dir(r["student"], assignment)
        folder.mkdir(parents=True, exist_ok=True)
        text = feedback_text(r, check_ids, hand.get(r["student"], {}))
        (folder / "feedback.md").write_text(text)
        if not paths.feedback_page(r["student"], assignment).exists():
            write_feedback_page(r["student"], assignment, text)
    similar = similarity.class_similarity(assignment, [r["student"] for r in records])
    similarity.write_csv(similar, out / "similarity.csv")
    class_report.write_reports(class_report.summarize(assignment, records, check_points, hand, times, similar))
    return records, hand
