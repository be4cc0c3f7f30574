"""Print how long the class report takes for a large class, per assignment: summarizing, then writing each page.

    make bench-report [CLASS_SIZE=300] [ASSIGNMENT=name]     (default: every assignment)

Each assignment gets a synthetic graded class (course.measuring.synthetic_records) of CLASS_SIZE students: the first mistakes
of its own catalogue (its checks.py) planted in its checks (the first in a third of the class, the next in a quarter,
...), a thirtieth of the class failing its last check with a verdict that names no mistake, and three submissions
that need attention (invalid, timed out, crashed); every written answer still to grade by hand. Nothing is graded or
written to disk: the seconds are those of course.grading.class_report's summarize, markdown and html_report (its
three plots), the best of three runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from course import paths  # noqa: E402
from course.assignment_parts import part  # noqa: E402
from course.grading.class_report import html_report, markdown, summarize  # noqa: E402
from course.measuring.synthetic_records import Attention, Planted, synthetic_records  # noqa: E402
from course.verdicts import grade_cells  # noqa: E402

PLANTED_MISTAKES = 4


def planted(check_points: dict[str, int], mistakes: list[str], students: int) -> Planted:
    """The first PLANTED_MISTAKES mistakes of `mistakes`, the i-th failing check i (in turn) for students/(i+3)
    students, and a thirtieth of the students failing the last check with a verdict that names no mistake."""
    checks = list(check_points)
    chosen: Planted = {mistake: (students // (i + 3), (checks[i % len(checks)],))
                       for i, mistake in enumerate(mistakes[:PLANTED_MISTAKES])}
    return chosen | {None: (students // 30, (checks[-1],))}


def attention(names: list[str]) -> Attention:
    return {names[0]: ("invalid", (), "no notebook was submitted."),
            names[1]: ("timeout", ("regraded-alone",), "Your cell did not finish within 60 s."),
            names[2]: ("crashed", (), "The Python kernel died while nbgrader ran your notebook.")}


def best_of_three(step: Callable[[], object]) -> tuple[float, object]:
    """The fewest seconds `step` took in three runs, and what it returned."""
    seconds = []
    for _ in range(3):
        start = time.perf_counter()
        result = step()
        seconds.append(time.perf_counter() - start)
    return min(seconds), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*")
    parser.add_argument("--students", type=int, default=300)
    args = parser.parse_args()
    names = [f"student{i:04d}" for i in range(args.students)]
    print(f"a class of {args.students} per assignment; seconds, best of three runs")
    print("| assignment | checks | summarize | markdown | html (three plots) |\n|---|---|---|---|---|")
    for assignment in paths.select_assignments(args.assignments):
        check_points, answer_points = grade_cells(assignment)
        records = [asdict(r) for r in synthetic_records(
            assignment, names, check_points, answer_points,
            planted(check_points, list(part(assignment, "checks").MISTAKES), args.students), attention(names))]
        hand = {name: dict.fromkeys(answer_points) for name in names}
        summarizing, summary = best_of_three(lambda: summarize(assignment, records, check_points, hand))
        as_markdown, _ = best_of_three(lambda: markdown(summary))
        as_html, _ = best_of_three(lambda: html_report(summary))
        print(f"| {assignment} | {len(check_points)} | {summarizing:.3f} | {as_markdown:.3f} | {as_html:.3f} |")


if __name__ == "__main__":
    main()
