"""Final grades in the CSV Canvas's gradebook imports, from a roster in Canvas's export format
(tests/fixture/canvas_export.csv: a byte-order mark, a Points Possible row, read-only score columns, a test
student, an assignment Canvas already has and one it has not)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from course.grading import canvas

EXPORT = Path(__file__).parent / "fixture" / "canvas_export.csv"
GRADES = {"tiny": {"perfect": 20.0, "blank": 0.0, "zoe": 12.0}, "hand_designed_attention": {"perfect": 31.5}}
MAXIMA = {"tiny": 25, "hand_designed_attention": 40}


@pytest.fixture
def written(tmp_path) -> tuple[list[list[str]], list[str]]:
    """(the rows of the import file, the graded students it left out)."""
    missing = canvas.write_import(tmp_path / "import.csv", EXPORT, GRADES, MAXIMA, {"blank": "Bo@example.edu"})
    with (tmp_path / "import.csv").open(newline="") as f:
        return list(csv.reader(f)), missing


def test_an_assignment_canvas_has_keeps_its_column_and_a_new_one_gets_its_own_with_its_points(written):
    rows, _ = written
    assert rows[0] == [*canvas.IDENTITY, "Tiny (4711)", "hand_designed_attention"]
    assert rows[1] == ["Points Possible", "", "", "", "", "25", "40"]


def test_students_are_matched_by_sis_login_id_or_e_mail_and_keep_the_rosters_order(written):
    rows, _ = written
    assert [row[:5] for row in rows[2:]] == [["Perfect, Pat", "101", "S101", "perfect", "Section A"],
                                              ["Blank, Bo", "102", "S102", "bo@example.edu", "Section A"],
                                              ["Nosubmission, Dana", "103", "S103", "dana", "Section B"],
                                              ["Student, Test", "104", "", "", "Section A"]]
    assert [row[5:] for row in rows[2:]] == [["20", "31.5"], ["0", ""], ["", ""], ["", ""]]


def test_a_graded_student_the_roster_lacks_is_returned_never_dropped_silently(written):
    _, missing = written
    assert missing == ["zoe"]


def test_two_students_claiming_one_row_leave_the_second_reported():
    rows = [{"ID": "1", "SIS Login ID": "sam@example.edu"}]
    emails = {"sam": "sam@example.edu", "sam2": "SAM@example.edu"}
    assert canvas.match(rows, {"sam", "sam2"}, emails) == ({"sam": 0}, ["sam2"])


def test_a_file_that_is_not_a_canvas_export_is_refused_with_how_to_get_one(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("id,first_name,last_name,email\nalice,Alice,A,alice@example.edu\n")
    with pytest.raises(SystemExit, match="Grades > Export"):
        canvas.write_import(tmp_path / "import.csv", roster, GRADES, MAXIMA, {})
