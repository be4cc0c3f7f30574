"""A synthetic graded class for testing and measuring the class report (course.grading.class_report): the result
records grading would write (course.grading.record.Record), without running anything.

Everyone passes every check but for the planted mistakes; the submissions that need attention carry their status,
flags and first message; each step's seconds are drawn at random (a timeout's nbgrader step sits at its limit).
tests/test_class_report.py plants what its assertions count; scripts/benchmark_report.py plants a real
assignment's catalogue and times the report.
"""

from __future__ import annotations

import random

from course.grading import limits
from course.grading.record import Record

# mistake (None: the verdict names none) -> (how many students make it, the checks they fail with it)
Planted = dict[str | None, tuple[int, tuple[str, ...]]]
# student -> (status, flags, first message)
Attention = dict[str, tuple[str, tuple[str, ...], str]]


def judged(names: list[str], attention: Attention) -> list[str]:
    """The students whose code was run: all but the invalid submissions."""
    return [name for name in names if attention.get(name, ("ok",))[0] != "invalid"]


def synthetic_records(assignment: str, names: list[str], check_points: dict[str, int],
                      answer_points: dict[str, int], planted: Planted, attention: Attention,
                      seed: int = 13) -> list[Record]:
    """One record per student of `names`, in that order. `check_points`: check id -> points; `answer_points`: written
    answer -> points, all still to grade by hand. Each planted mistake goes to that many students drawn among the
    judged ones (a student may make several)."""
    rng = random.Random(seed)
    run = judged(names, attention)
    failures: dict[str, dict[str, str | None]] = {name: {} for name in run}  # student -> failed check -> mistake
    for mistake, (students, checks) in planted.items():
        for name in rng.sample(run, students):
            failures[name].update(dict.fromkeys(checks, mistake))
    records = []
    for name in names:
        status, flags, message = attention.get(name, ("ok", (), ""))
        record = Record(name, assignment, status, [message] if message else [], list(flags), max_points=check_points,
                        manual_pending=answer_points, points=dict.fromkeys(check_points, 0))
        if name in failures:
            for check_id, points in check_points.items():
                failed = check_id in failures[name]
                mistake = failures[name].get(check_id)
                record.judge[check_id] = {"passed": not failed, "mistake": mistake, "message": (
                    f"{check_id}: values differ. Likely mistake `{mistake}`." if failed else f"{check_id}: passed.")}
                record.points[check_id] = 0 if failed else points
            record.seconds = {"probe": rng.uniform(3, 30), "judge": rng.uniform(0.2, 2),
                              "nbgrader": limits.NOTEBOOK_TIMEOUT_S if status == "timeout" else rng.uniform(5, 120)}
        records.append(record)
    return records
