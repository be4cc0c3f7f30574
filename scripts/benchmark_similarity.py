"""Print how the similarity step does on a class whose copies are known: pairs listed and run time.

    make bench-similarity [CLASS_SIZE=300] [COPIES=15] [ASSIGNMENT=name]     (default: every assignment)
    .venv/bin/python scripts/benchmark_similarity.py --held-out FOLDER [FOLDER ...]

Each assignment gets a synthetic class (course.measuring.planted_copies): CLASS_SIZE independent students and COPIES planted
copies of some of them, each disguised. With --held-out, each FOLDER is a class written apart from the detector
(tests/fixture/similarity_held_out/<assignment>/: answers.json, each student's answers by grade id, and truth.json
naming each copy, its source and how it was made). Printed per class, with the rules of course.grading.similarity (FLOOR, Z, calibrated on
the class): copies listed, independent pairs listed, the groups, and the seconds the comparison took (building the
class is not counted); for a held-out class, each copy with what listed it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from course import paths  # noqa: E402
from course.grading.similarity import Answers, Similarity, compare  # noqa: E402
from course.measuring.planted_copies import planted_class  # noqa: E402


def listed_pairs(similarity: Similarity) -> dict[frozenset, str]:
    """Each listed pair, with the measures that list it."""
    return {frozenset((p.first, p.second)): p.listed_by for p in similarity.listed}


def summary_row(name: str, similarity: Similarity, copies: set[frozenset], seconds: float) -> str:
    listed = listed_pairs(similarity)
    found = sum(pair in listed for pair in copies)
    independent = [pair for pair in listed if pair not in copies]
    groups = "; ".join(", ".join(g) for g in similarity.clusters) or "-"
    return (f"| {name} | {len(similarity.students)} | {found} / {len(copies)} | {len(independent)} | {groups} | "
            f"{seconds:.1f} |")


HEADER = ("| class | students | copies listed | other pairs listed | groups | seconds |\n"
          "|---|---|---|---|---|---|")


def planted(assignments: list[str], students: int, copies: int) -> None:
    print(f"a class of {students} independent students and {copies} planted copies per assignment\n{HEADER}")
    total = 0.0
    for assignment in paths.select_assignments(assignments):
        synthetic = planted_class(assignment, students, copies)
        start = time.perf_counter()
        similarity = compare(assignment, synthetic.answers)
        seconds = time.perf_counter() - start
        total += seconds
        print(summary_row(assignment, similarity, {frozenset(pair) for pair in synthetic.planted}, seconds))
    print(f"all assignments: {total:.1f} s of comparison")


def held_out(folder: Path) -> None:
    """One held-out class: the summary row, then each copy, and each pair listed that is not a copy."""
    assignment = folder.name
    truth = json.loads((folder / "truth.json").read_text())
    answers = {student: Answers(a["code"], a["text"])
               for student, a in json.loads((folder / "answers.json").read_text()).items()}
    start = time.perf_counter()
    similarity = compare(assignment, answers)
    seconds = time.perf_counter() - start
    copies = {frozenset((c["copier"], c["source"])): c["kind"] for c in truth["copies"]}
    listed = listed_pairs(similarity)
    print(f"{HEADER}\n{summary_row(f'{assignment} (held out)', similarity, set(copies), seconds)}\n")
    print("| copier and source | how it was copied | listed by |\n|---|---|---|")
    for pair, kind in copies.items():
        print(f"| {' and '.join(sorted(pair))} | {kind} | {listed.get(pair, 'not listed')} |")
    for pair, why in listed.items():
        if pair not in copies:
            print(f"| {' and '.join(sorted(pair))} | not a copy | {why} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*")
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--copies", type=int, default=15)
    parser.add_argument("--held-out", nargs="+", type=Path, default=[])
    args = parser.parse_args()
    for folder in args.held_out:
        held_out(folder)
    if not args.held_out:
        planted(args.assignments, args.students, args.copies)


if __name__ == "__main__":
    main()
