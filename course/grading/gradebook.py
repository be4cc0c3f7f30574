"""nbgrader's gradebook, read and written through its own API (nbgrader.api.Gradebook).

The gradebook is where formgrader, `nbgrader export` and the feedback HTML
read points: it holds the judge's points for autograded cells (nbgrader
stores them as it scores the judge's verdicts, course.grading.nbgrader_hooks)
and the instructor's hand grades for written answers. Nothing here deletes
a hand grade, and `backup` copies the whole gradebook before any step that writes to it.
"""

from __future__ import annotations

import datetime
import sqlite3
import tempfile
import warnings
from contextlib import closing
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from sqlalchemy.exc import SAWarning

from course import paths


def has_assignment(assignment: str) -> bool:
    """Whether the gradebook records `assignment` (nbgrader does at release: course.release)."""
    if not paths.GRADEBOOK.is_file():
        return False
    with Gradebook(paths.GRADEBOOK_URL, paths.COURSE_ID) as gb:
        try:
            gb.find_assignment(assignment)
            return True
        except MissingEntry:
            return False


def store_points(assignment: str, student: str, points: dict[str, int]) -> None:
    """Set the auto score of each autograded cell of `points` (grade_id -> points), creating the submission if needed.

    For a submission nbgrader could not run to the end (its kernel died): nbgrader stored no scores,
    and the judge's points must still show everywhere.
    """
    with Gradebook(paths.GRADEBOOK_URL, paths.COURSE_ID) as gb:
        for grade in _grades(_submission(gb, assignment, student)):
            if grade.name in points:
                grade.auto_score = points[grade.name]
                grade.needs_manual_grade = False
        gb.db.commit()


def auto_scores(assignment: str, student: str, url: str | None = None) -> dict[str, float]:
    """The score of each autograded cell of the student's submission in the gradebook at `url` (the course's by
    default), by grade_id ({} if there is none)."""
    with Gradebook(url or paths.GRADEBOOK_URL, paths.COURSE_ID) as gb:
        submission = _existing_submission(gb, assignment, student)
        return {grade.name: float(grade.score or 0.0) for grade in _grades(submission)
                if grade.cell.cell_type == "code"} if submission else {}


def hand_scores(assignment: str, answer_ids: list[str]) -> dict[str, dict[str, float | None]]:
    """The instructor's points for each written answer of `answer_ids`, by student then grade_id.

    None: not graded yet (a blank answer, which nbgrader scores 0 by itself, counts as graded).
    """
    scores: dict[str, dict[str, float | None]] = {}
    with Gradebook(paths.GRADEBOOK_URL, paths.COURSE_ID) as gb:
        try:
            submissions = gb.find_assignment(assignment).submissions
        except MissingEntry:
            return {}
        for submission in submissions:
            grades = {g.name: g for g in _grades(submission) if g.name in answer_ids}
            scores[submission.student.id] = {
                grade_id: None if grade.manual_score is None and grade.auto_score is None else float(grade.score)
                for grade_id, grade in grades.items()}
    return scores


def submission_times(assignment: str) -> dict[str, dict]:
    """When each student's graded submission was made, by nbgrader's timestamp (timestamp.txt, which nbgrader's
    submit writes and collect keeps), against its due date (the assignment's, set in formgrader's Manage Assignments, plus the student's extension):
    {student: {"submitted_at": ISO time or None, "due": ISO time or None, "seconds_late": float, 0 when on time}}."""
    with Gradebook(paths.GRADEBOOK_URL, paths.COURSE_ID) as gb:
        try:
            found = gb.find_assignment(assignment)
        except MissingEntry:
            return {}
        return {s.student.id: {"submitted_at": _when(s.timestamp), "due": _when(s.duedate),  # with any extension
                               "seconds_late": float(s.total_seconds_late)} for s in found.submissions}


def student_emails() -> dict[str, str]:
    """Each student's e-mail in nbgrader's student table (`nbgrader db student import` fills it), by id."""
    with Gradebook(paths.GRADEBOOK_URL, paths.COURSE_ID) as gb:
        return {student.id: student.email for student in gb.students if student.email}


def _when(moment: datetime.datetime | None) -> str | None:
    return moment.isoformat(sep=" ", timespec="seconds") if moment else None


def without_students() -> bytes:
    """The gradebook with every assignment and its cells and no student: a private gradebook to grade one submission in.

    A worker that shares no files with the driver grades in a copy of it (course.grading.task).
    """
    with tempfile.TemporaryDirectory() as folder:
        copy = _copy_to(Path(folder) / "gradebook.db")
        with Gradebook(f"sqlite:///{copy}", paths.COURSE_ID) as gb:
            for student in [s.id for s in gb.students]:
                gb.remove_student(student)
        return copy.read_bytes()


def _copy_to(target: Path) -> Path:
    """Copy the course's gradebook to `target`, consistently even while it is open; returns `target`."""
    with closing(sqlite3.connect(paths.GRADEBOOK)) as source, closing(sqlite3.connect(target)) as copy:
        source.backup(copy)
    return target


def _grades(submission) -> list:
    """Every grade (one per graded cell) of a submission, in all its notebooks."""
    return [grade for notebook in submission.notebooks for grade in notebook.grades]


def _comments(submission) -> list:
    """Every comment (one per graded cell) of a submission, in all its notebooks."""
    return [comment for notebook in submission.notebooks for comment in notebook.comments]


def _existing_submission(gb: Gradebook, assignment: str, student: str):
    """The student's submission of `assignment`, or None if there is none."""
    try:
        return gb.find_submission(assignment, student)
    except MissingEntry:
        return None


def _submission(gb: Gradebook, assignment: str, student: str):
    """The student's submission of `assignment`, created (with the student) if there is none yet."""
    gb.update_or_create_student(student)
    submission = _existing_submission(gb, assignment, student)
    if submission:
        return submission
    with warnings.catch_warnings():  # nbgrader's add_submission trips SQLAlchemy's autoflush warnings
        warnings.simplefilter("ignore", SAWarning)
        return gb.add_submission(assignment, student)


def hand_grades(assignment: str, student: str) -> dict:
    """What the instructor entered for the student's submission: {"grades": {grade_id: [manual_score, extra_credit]},
    "comments": {comment_id: manual_comment}}, the cells with an entry only (empty if there is no submission)."""
    with Gradebook(paths.GRADEBOOK_URL, paths.COURSE_ID) as gb:
        submission = _existing_submission(gb, assignment, student)
        if submission is None:
            return {"grades": {}, "comments": {}}
        return {"grades": {g.name: [g.manual_score, g.extra_credit] for g in _grades(submission)
                           if (g.manual_score, g.extra_credit) != (None, None)},
                "comments": {c.name: c.manual_comment for c in _comments(submission) if c.manual_comment is not None}}


def keep_hand_grades(url: str, assignment: str, student: str, hand: dict) -> None:
    """Put `hand` (from `hand_grades`) into the gradebook at `url`: grading there sees what the instructor entered
    (nothing to put, the gradebook is not opened)."""
    if not (hand["grades"] or hand["comments"]):
        return
    with Gradebook(url, paths.COURSE_ID) as gb:
        submission = _submission(gb, assignment, student)
        for grade in (g for g in _grades(submission) if g.name in hand["grades"]):
            grade.manual_score, grade.extra_credit = hand["grades"][grade.name]
        for comment in (c for c in _comments(submission) if c.name in hand["comments"]):
            comment.manual_comment = hand["comments"][comment.name]
        gb.db.commit()


def autograder_results(url: str, assignment: str, student: str) -> dict | None:
    """What nbgrader's autograde stored for the submission in the gradebook at `url`: {"timestamp",
    "grades": {grade_id: [auto_score, needs_manual_grade]}, "comments": {comment_id: auto_comment}}; None if nothing."""
    with Gradebook(url, paths.COURSE_ID) as gb:
        submission = _existing_submission(gb, assignment, student)
        if submission is None:
            return None
        return {"timestamp": submission.timestamp.isoformat() if submission.timestamp else None,
                "grades": {g.name: [g.auto_score, g.needs_manual_grade] for g in _grades(submission)},
                "comments": {c.name: c.auto_comment for c in _comments(submission)}}


def store_autograder_results(assignment: str, student: str, results: dict) -> None:
    """Write `results` (from `autograder_results` on a worker) into the course's gradebook, as nbgrader's autograde
    would have: the autograder's fields only, never a hand grade."""
    with Gradebook(paths.GRADEBOOK_URL, paths.COURSE_ID) as gb:
        submission = _submission(gb, assignment, student)
        if results["timestamp"]:
            submission.timestamp = datetime.datetime.fromisoformat(results["timestamp"])
        for grade in (g for g in _grades(submission) if g.name in results["grades"]):
            grade.auto_score, grade.needs_manual_grade = results["grades"][grade.name]
        for comment in (c for c in _comments(submission) if c.name in results["comments"]):
            comment.auto_comment = results["comments"][comment.name]
        gb.db.commit()


def backup(reason: str, keep: int = 20) -> Path | None:
    """Copy the gradebook into backups/ (consistently, even while it is open) before `reason` may change it.

    Keeps the newest `keep` copies. Returns the copy, or None when there is no gradebook yet.
    """
    if not paths.GRADEBOOK.exists():
        return None
    folder = paths.COURSE / "backups"
    folder.mkdir(exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    target = _copy_to(folder / f"gradebook-{stamp}-{reason}.db")
    for old in sorted(folder.glob("gradebook-*.db"))[:-keep]:
        old.unlink()
    return target

