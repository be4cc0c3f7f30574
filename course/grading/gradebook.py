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
from contextlib import closing
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from course import paths


def store_points(assignment: str, student: str, points: dict[str, int]) -> None:
    """Set the auto score of each autograded cell of `points` (grade_id -> points), creating the submission if needed.

    For a submission nbgrader could not run to the end (its kernel died): nbgrader stored no scores,
    and the judge's points must still show everywhere.
    """
    with Gradebook(paths.GRADEBOOK_URL, paths.COURSE_ID) as gb:
        gb.update_or_create_student(student)
        try:
            submission = gb.find_submission(assignment, student)
        except MissingEntry:
            submission = gb.add_submission(assignment, student)
        for notebook in submission.notebooks:
            for grade in notebook.grades:
                if grade.name in points:
                    grade.auto_score = points[grade.name]
                    grade.needs_manual_grade = False
        gb.db.commit()


def auto_scores(assignment: str, student: str) -> dict[str, float]:
    """The score of each autograded cell of the student's submission, by grade_id ({} if there is none)."""
    with Gradebook(paths.GRADEBOOK_URL, paths.COURSE_ID) as gb:
        try:
            submission = gb.find_submission(assignment, student)
        except MissingEntry:
            return {}
        return {grade.name: float(grade.score or 0.0) for notebook in submission.notebooks
                for grade in notebook.grades if grade.cell.cell_type == "code"}


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
            grades = {g.name: g for notebook in submission.notebooks for g in notebook.grades if g.name in answer_ids}
            scores[submission.student.id] = {
                grade_id: None if grade.manual_score is None and grade.auto_score is None else float(grade.score)
                for grade_id, grade in grades.items()}
    return scores


def backup(reason: str, keep: int = 20) -> Path | None:
    """Copy the gradebook into backups/ (consistently, even while it is open) before `reason` may change it.

    Keeps the newest `keep` copies. Returns the copy, or None when there is no gradebook yet.
    """
    if not paths.GRADEBOOK.exists():
        return None
    folder = paths.COURSE / "backups"
    folder.mkdir(exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    target = folder / f"gradebook-{stamp}-{reason}.db"
    with closing(sqlite3.connect(paths.GRADEBOOK)) as source, closing(sqlite3.connect(target)) as copy:
        source.backup(copy)
    for old in sorted(folder.glob("gradebook-*.db"))[:-keep]:
        old.unlink()
    return target

