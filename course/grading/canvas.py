"""Final grades in the CSV that Canvas's gradebook imports (Grades > Import).

The roster is Canvas's own gradebook export (Grades > Export): the columns Student, ID, SIS User ID, SIS Login ID
and Section, then one column per Canvas assignment, named "Name (Canvas id)"; rows without an ID (Points
Possible, Manual Posting) are not students. A course student is the roster row whose SIS Login ID (or Email column,
if the export has one) is their course id or their e-mail in nbgrader's student table.

The import file keeps the roster's students in its order, with its five identity columns, and has one column per
course assignment: the export's column of the same name (compared without case, spaces, dashes or underscores), so
that Canvas updates that assignment, or else a new column named after the assignment, which Canvas creates on
import; a Points Possible row gives each its points. A roster student with no graded submission gets an empty
cell; a graded student in no row of the roster is returned to be reported, never dropped silently.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
POINTS_ROW = "Points Possible"
MATCHED_BY = ("SIS Login ID", "Email")  # roster columns compared with a student's id and e-mail


def read_roster(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """(the export's columns, its student rows). Exits with a message if it lacks an identity column."""
    with path.open(newline="", encoding="utf-8-sig") as f:  # Canvas writes a byte-order mark
        reader = csv.DictReader(f)
        rows = list(reader)
        columns = list(reader.fieldnames or [])
    if missing := [column for column in IDENTITY if column not in columns]:
        raise SystemExit(f"{path} is not a Canvas gradebook export: it has no {', '.join(missing)} column "
                         "(export it from Canvas: Grades > Export > Export Entire Gradebook)")
    return columns, [row for row in rows if (row.get("ID") or "").strip()]


def comparable(name: str) -> str:
    """An assignment's name as compared: without Canvas's " (id)", case, spaces, dashes or underscores."""
    return re.sub(r"[\s_-]+", "", re.sub(r"\s*\(\d+\)\s*$", "", name)).lower()


def column_for(assignment: str, columns: list[str]) -> str:
    """The export's column of `assignment`, or the name of the new column Canvas will create."""
    return next((c for c in columns if c not in IDENTITY and comparable(c) == comparable(assignment)), assignment)


def match(rows: list[dict[str, str]], students: set[str], emails: dict[str, str]) -> tuple[dict[str, int], list[str]]:
    """(course student -> index of their roster row, graded students found in no row)."""
    keys = {}
    for index, row in enumerate(rows):
        for column in MATCHED_BY:
            if value := (row.get(column) or "").strip().lower():
                keys.setdefault(value, index)
    found, missing = {}, []
    for student in sorted(students):
        rows_of = [keys[key] for key in (student.lower(), emails.get(student, "").strip().lower()) if key in keys]
        if rows_of and rows_of[0] not in found.values():
            found[student] = rows_of[0]
        else:  # in no row, or in a row another student was matched to first
            missing.append(student)
    return found, missing


def write_import(path: Path, roster: Path, grades: dict[str, dict[str, float]], maxima: dict[str, float],
                 emails: dict[str, str]) -> list[str]:
    """Write Canvas's import CSV of `grades` (assignment -> student -> points) to `path`, for the students of the
    export `roster`; `maxima` are the assignments' points possible, `emails` the students' e-mails. Returns the
    graded students the roster does not have."""
    columns, rows = read_roster(roster)
    found, missing = match(rows, {s for by_student in grades.values() for s in by_student}, emails)
    student_of_row = {index: student for student, index in found.items()}
    assignment_columns = [column_for(assignment, columns) for assignment in grades]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([*IDENTITY, *assignment_columns])
        writer.writerow([POINTS_ROW, *[""] * (len(IDENTITY) - 1), *(f"{maxima[a]:g}" for a in grades)])
        for index, row in enumerate(rows):
            student = student_of_row.get(index)
            cells = ["" if student not in by_student else f"{by_student[student]:g}" for by_student in grades.values()]
            writer.writerow([row[column] for column in IDENTITY] + cells)
    return missing
