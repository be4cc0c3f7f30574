"""Print how the similarity step does on a class with planted copies: flagged pairs and run time, per assignment.

    make bench-similarity [CLASS_SIZE=300] [COPIES=15] [ASSIGNMENT=name]     (default: every assignment)

Each assignment gets a synthetic class (course.planted_copies): CLASS_SIZE independent students and COPIES planted
copies of some of them, each disguised. Printed per assignment, at the default threshold
(course.grading.similarity.THRESHOLD): planted pairs flagged, independent pairs flagged, the lowest planted pair's
similarity and the highest independent pair's, whether every planted pair ranks above every independent one, and
the seconds the comparison took (building the class is not counted). Then the total for all the assignments.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from course import paths  # noqa: E402
from course.grading.similarity import THRESHOLD, compare  # noqa: E402
from course.planted_copies import planted_class  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*")
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--copies", type=int, default=15)
    args = parser.parse_args()
    print(f"a class of {args.students} independent students and {args.copies} planted copies per assignment; "
          f"threshold {THRESHOLD:.0%}")
    print("| assignment | planted flagged | independent flagged | lowest planted | highest independent | "
          "planted all ranked first | seconds |\n|---|---|---|---|---|---|---|")
    total = 0.0
    for assignment in paths.select_assignments(args.assignments):
        synthetic = planted_class(assignment, args.students, args.copies)
        start = time.perf_counter()
        similarity = compare(assignment, synthetic.answers)
        seconds = time.perf_counter() - start
        total += seconds
        planted = {frozenset(pair) for pair in synthetic.planted}
        is_planted = [frozenset((p.first, p.second)) in planted for p in similarity.pairs]
        scores = [p.similarity for p in similarity.pairs]
        lowest = min((s for s, planted_pair in zip(scores, is_planted) if planted_pair), default=0.0)
        highest = max((s for s, planted_pair in zip(scores, is_planted) if not planted_pair), default=0.0)
        flagged = [frozenset((p.first, p.second)) in planted for p in similarity.listed]
        print(f"| {assignment} | {sum(flagged)} / {len(planted)} | {flagged.count(False)} | {lowest:.2f} | "
              f"{highest:.2f} | {'yes' if lowest > highest else 'no'} | {seconds:.1f} |")
    print(f"all assignments: {total:.1f} s of comparison")


if __name__ == "__main__":
    main()
