"""Final grades: the judge's points plus the instructor's hand grades, for the whole course.

    python -m course.grading.final_grades [ASSIGNMENT ...]      (make grades)

For each assignment (all of them by default): backs up the gradebook, rewrites
grades.csv, the class report and every feedback.md with the hand grades
formgrader holds, and regenerates nbgrader's feedback HTML (which reads the
gradebook). Then writes grades/final_grades.csv, one row per student, ready for
an LMS: points per assignment (autograded + by hand), the total, and the
written answers still to grade; links it from the course page,
grades/index.html; and says how many written answers are not graded yet.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
from pathlib import Path

from course import paths
from course.grading import canvas, class_report, gradebook
from course.grading.class_results import hand_summary, merge, students
from course.grading.nbgrader_cli import nbgrader_command
from course.grading.sandbox import grading_env
from course.verdicts import grade_cells

def assignment_grades(assignment: str) -> dict[str, tuple[float, float, int]]:
    """student -> (points, maximum, written answers not graded yet) in `assignment`, with fresh feedback."""
    # nbgrader's --force empties each feedback folder: its HTML first, then our feedback.md beside it.
    subprocess.run(nbgrader_command("generate_feedback", assignment, "--force"), cwd=paths.ROOT, env=grading_env(),
                   check=True, capture_output=True)
    records, hand = merge(assignment, list(students(assignment)))
    grades = {}
    for record in records:
        answers = hand.get(record["student"], {})
        given, _, _ = hand_summary(record, answers)
        maximum = sum(record["max_points"].values()) + sum(record["manual_pending"].values())
        not_graded = sum(answers.get(grade_id) is None for grade_id in record["manual_pending"])
        grades[record["student"]] = (sum(record["points"].values()) + given, maximum, not_graded)
    return grades


def points_possible(assignment: str) -> int:
    """The assignment's points: its autograded checks' and its written answers'."""
    return sum(sum(points.values()) for points in grade_cells(assignment))


def write_final_grades(by_assignment: dict[str, dict[str, tuple[float, float, int]]],
                       maxima: dict[str, int]) -> tuple[int, list[str]]:
    """grades/final_grades.csv from each assignment's grades and points possible (`maxima`); (written answers not
    graded yet, students concerned)."""
    everyone = sorted({student for grades in by_assignment.values() for student in grades})
    pending_students, pending_answers = [], 0
    path = paths.final_grades_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student", *by_assignment, "total", "max", "written_answers_to_grade"])
        for student in everyone:
            grades = [by_assignment[a].get(student, (0.0, maxima[a], 0)) for a in by_assignment]
            pending = sum(g[2] for g in grades)
            if pending:
                pending_students.append(student)
                pending_answers += pending
            writer.writerow([student, *(f"{g[0]:g}" for g in grades), f"{sum(g[0] for g in grades):g}",
                             f"{sum(maxima.values()):g}", pending])
    return pending_answers, pending_students


def write_canvas_import(roster: Path, by_assignment: dict[str, dict[str, tuple[float, float, int]]],
                        maxima: dict[str, int]) -> None:
    """grades/canvas_import.csv for the Canvas export `roster`; says where it is and who it leaves out."""
    target = paths.COURSE / "grades" / "canvas_import.csv"
    points = {a: {student: grade[0] for student, grade in grades.items()} for a, grades in by_assignment.items()}
    missing = canvas.write_import(target, roster, points, maxima, gradebook.student_emails())
    print(f"wrote {target} for Canvas's gradebook import (Grades > Import), the students of {roster}")
    if missing:
        print(f"{len(missing)} graded students are not in the Canvas roster, so not in {target.name} (match them by "
              f"their SIS Login ID or e-mail): {', '.join(missing)}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*", help="default: all")
    parser.add_argument("--canvas-roster", type=Path, help="Canvas's gradebook export: also write grades/canvas_import.csv")
    args = parser.parse_args()
    assignments = paths.select_assignments(args.assignments)
    gradebook.backup("final-grades")
    by_assignment = {assignment: assignment_grades(assignment) for assignment in assignments}
    maxima = {assignment: points_possible(assignment) for assignment in assignments}
    pending_answers, pending_students = write_final_grades(by_assignment, maxima)
    course_page = class_report.write_course_page()
    print(f"wrote {paths.final_grades_file()}: {sum(len(g) for g in by_assignment.values())} graded "
          f"submissions of {len({s for g in by_assignment.values() for s in g})} students; the course page, "
          f"{course_page}, links it and every assignment's report")
    if pending_students:
        print(f"{pending_answers} written answers are not graded yet, of {len(pending_students)} "
              f"students ({', '.join(pending_students[:10])}{', ...' if len(pending_students) > 10 else ''}): "
              "grade them in formgrader (`make formgrader`), then run `make grades` again.")
    else:
        print("every written answer is graded.")
    if args.canvas_roster:
        write_canvas_import(args.canvas_roster, by_assignment, maxima)


if __name__ == "__main__":
    main()
