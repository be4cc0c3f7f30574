"""Grading a class for real: nbgrader, a real kernel, the hidden pytest checks.

One isolated course directory (its own gradebook, submitted/, grades/) gets
the three generated sample submissions, plus one made of correct alternative
implementations from the grader-accuracy corpus and one that attacks the
grader from inside its kernel, and is graded by the same
batch command as `make autograde`. This is the slow test (a few minutes).
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course import paths
from course.grading.grade_one import grading_env, nbgrader_command
from course.samples import SAMPLE_BUGS, apply_edits, sample_notebook
from grader_accuracy.alternatives import ALTERNATIVES
from helpers import ASSIGNMENT

FULL = 50


def run(args: list[str], env: dict) -> str:
    result = subprocess.run(args, cwd=paths.ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> dict:
    """Release, samples and grades of a fresh course directory; returns its paths, env and records."""
    root = tmp_path_factory.mktemp("course")
    build = root / "build"
    env = {**grading_env(), "COURSE_DIR": str(root), "COURSE_BUILD_DIR": str(build)}
    env.update({name: str(build / sub) for name, sub in (("JUPYTER_CONFIG_DIR", "jupyter/config"),
               ("JUPYTER_DATA_DIR", "jupyter/data"), ("JUPYTER_RUNTIME_DIR", "jupyter/runtime"), ("IPYTHONDIR", "ipython"))})
    build.mkdir()
    shutil.copytree(paths.ROOT / "source", root / "source", ignore=shutil.ignore_patterns("submission_log.json"))
    run(nbgrader_command("generate_assignment", ASSIGNMENT), env)
    run([sys.executable, "-m", "course.samples", ASSIGNMENT], env)
    write_alternatives_student(root / "submitted" / "alternatives" / ASSIGNMENT)
    write_snooping_student(root / "submitted" / "snooper" / ASSIGNMENT, root, build)
    write_misbehaving_student(root / "submitted" / "misbehaving" / ASSIGNMENT)
    for name, write in UNREADABLE.items():
        folder = root / "submitted" / name / ASSIGNMENT
        folder.mkdir(parents=True)
        write(folder)
    batch_output = run([sys.executable, "-m", "course.grading.batch", ASSIGNMENT], env)
    records = {p.stem: json.loads(p.read_text()) for p in (build / "results" / ASSIGNMENT).glob("*.json")}
    return {"root": root, "build": build, "env": env, "records": records, "batch_output": batch_output}


def write_alternatives_student(folder: Path) -> None:
    """A submission made of the first correct alternative of each answer cell (not run: no log)."""
    shutil.copytree(paths.ROOT / "release" / ASSIGNMENT, folder)
    first_per_cell = {}
    for alternative in ALTERNATIVES:
        first_per_cell.setdefault(alternative.cell, alternative)
    nb = apply_edits(sample_notebook(ASSIGNMENT, "perfect"), first_per_cell.values())
    nbformat.write(nb, folder / f"{ASSIGNMENT}.ipynb")


SNOOP = """
import json, pathlib
import course.grading.in_notebook as hidden_tests
hidden_tests.grade = lambda *args, **kwargs: None  # every hidden test now passes in this kernel
attempts = {}
for name, path in TARGETS.items():
    try:
        if name.startswith("write"):
            pathlib.Path(path).write_text("overwritten by another student")
        else:
            pathlib.Path(path).read_bytes()
        attempts[name] = "done"
    except OSError:
        attempts[name] = "blocked"
pathlib.Path("snoop.json").write_text(json.dumps(attempts))
"""


def write_snooping_student(folder: Path, root: Path, build: Path) -> None:
    """A blank submission that patches the in-kernel tests and tries to read and write outside its folder."""
    targets = {"read_solution": root / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
               "read_other_student": root / "submitted" / "perfect" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
               "write_other_student": root / "submitted" / "perfect" / ASSIGNMENT / "submission_log.json",
               "write_gradebook": build / "gradebook.db"}
    shutil.copytree(paths.ROOT / "release" / ASSIGNMENT, folder)
    nb = sample_notebook(ASSIGNMENT, "blank")
    first_answer = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "answer-tokenizer")
    first_answer.source = f"TARGETS = {json.dumps({k: str(v) for k, v in targets.items()})}\n{SNOOP}\n{first_answer.source}"
    nbformat.write(nb, folder / f"{ASSIGNMENT}.ipynb")


# Answer cells that misbehave in different ways, all in one submission, with its log copied from a classmate.
MISBEHAVIOUR = {
    "answer-tokenizer": "class SimpleTokenizer(:\n    pass",
    "answer-token-embedding": "raise ValueError('my cell is broken')",
    "answer-positional-encoding": "import sys\nsys.exit('leaving early')",
    "answer-transformer-embeddings": "print('spam ' * 5_000_000)",
    "answer-attention": "def scaled_dot_product_attention(Q, K, V, mask=None, dropout=None):\n"
                        "    nan = torch.full(Q.shape[:-1] + (K.shape[-2],), float('nan'))\n"
                        "    return nan @ V, nan",
}
MISBEHAVIOUR_MESSAGES = ("Your cell answer-tokenizer raised SyntaxError", "Your cell answer-token-embedding raised "
                         "ValueError: my cell is broken", "Your cell answer-positional-encoding raised SystemExit")


def write_misbehaving_student(folder: Path) -> None:
    shutil.copytree(paths.ROOT / "release" / ASSIGNMENT, folder)
    nb = sample_notebook(ASSIGNMENT, "blank")
    for cell in nb.cells:
        cell.source = MISBEHAVIOUR.get(cell.metadata.get("nbgrader", {}).get("grade_id"), cell.source)
    nbformat.write(nb, folder / f"{ASSIGNMENT}.ipynb")
    shutil.copyfile(folder.parents[1] / "perfect" / ASSIGNMENT / "submission_log.json", folder / "submission_log.json")


# Submissions grading cannot even open, with the reason each student is told.
UNREADABLE = {
    "missing_notebook": lambda folder: (folder / "submission_log.json").write_text("{}"),
    "wrong_name": lambda folder: (folder / "my_homework.ipynb").write_text("{}"),
    "empty_file": lambda folder: (folder / f"{ASSIGNMENT}.ipynb").write_text(""),
    "corrupt_json": lambda folder: (folder / f"{ASSIGNMENT}.ipynb").write_text('{"cells": [ {"cell_type": '),
}
UNREADABLE_REASONS = {
    "missing_notebook": "no notebook named transformer_fundamentals.ipynb was submitted (notebooks found: none)",
    "wrong_name": "(notebooks found: my_homework.ipynb)",
    "empty_file": "is not a readable Jupyter notebook",
    "corrupt_json": "is not a readable Jupyter notebook",
}


def totals(record: dict) -> tuple[float, float]:
    """(judge points, nbgrader points) of a record."""
    return sum(record["points"].values()), sum(record["nbgrader"].get(c, 0) for c in record["max_points"])


def test_perfect_submission_gets_full_marks_on_both_paths(course):
    record = course["records"]["perfect"]
    assert totals(record) == (FULL, FULL)
    assert record["status"] == "ok" and record["flags"] == []
    assert sum(record["manual_pending"].values()) == 15


def test_blank_release_gets_zero_on_both_paths(course):
    record = course["records"]["blank"]
    assert totals(record) == (0, 0)
    assert record["status"] == "ok"


def test_partial_submission_loses_exactly_the_points_of_its_bugs(course):
    record = course["records"]["partial"]
    broken = {check for _, check in SAMPLE_BUGS[ASSIGNMENT]}
    lost_judge = {c for c, p in record["points"].items() if p < record["max_points"][c]}
    lost_nbgrader = {c for c in record["max_points"] if record["nbgrader"][c] < record["max_points"][c]}
    assert lost_judge == broken and lost_nbgrader == broken
    assert totals(record) == (FULL - sum(record["max_points"][c] for c in broken),) * 2
    assert "paths-disagree" not in record["flags"] and record["status"] == "ok"


def test_alternative_implementations_get_full_marks_on_both_paths(course):
    record = course["records"]["alternatives"]
    assert totals(record) == (FULL, FULL)
    assert record["flags"] == ["log-missing"], "it was never run, so it has no log; nothing else is wrong"


def test_student_code_cannot_read_or_write_outside_its_folder(course):
    attempts = json.loads((course["root"] / "autograded" / "snooper" / ASSIGNMENT / "snoop.json").read_text())
    assert attempts == {"read_solution": "blocked", "read_other_student": "blocked",
                        "write_other_student": "blocked", "write_gradebook": "blocked"}
    assert json.loads((course["root"] / "submitted" / "perfect" / ASSIGNMENT / "submission_log.json").read_text())


def test_patching_the_in_kernel_tests_is_caught_as_tampering(course):
    record = course["records"]["snooper"]
    assert totals(record) == (0, FULL), "nbgrader was fooled inside the kernel; the judge was not"
    assert record["status"] == "tampered" and "paths-disagree" in record["flags"]


@pytest.mark.parametrize("student", UNREADABLE)
def test_unreadable_submission_is_invalid_with_its_reason_and_the_batch_goes_on(course, student):
    record = course["records"][student]
    assert record["status"] == "invalid" and totals(record) == (0, 0)
    assert UNREADABLE_REASONS[student] in record["messages"][0]
    feedback = (course["root"] / "feedback" / student / ASSIGNMENT / "feedback.md").read_text()
    assert UNREADABLE_REASONS[student] in feedback


def test_misbehaving_cells_each_get_a_specific_message_and_a_copied_log_is_forged(course):
    record = course["records"]["misbehaving"]
    assert totals(record) == (0, 0)
    assert record["status"] == "forged" and "log-differs-from-code" in record["flags"]
    assert all(any(expected in m for m in record["messages"]) for expected in MISBEHAVIOUR_MESSAGES), record["messages"]
    assert "NaN" in record["judge"]["attention_values"]["message"]


def test_grades_csv_has_one_row_per_student_with_both_totals(course):
    with (course["root"] / "grades" / ASSIGNMENT / "grades.csv").open() as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert sorted(rows) == sorted(["alternatives", "blank", "misbehaving", "partial", "perfect", "snooper", *UNREADABLE])
    assert rows["perfect"]["total"] == rows["perfect"]["nbgrader_total"] == str(FULL)
    assert rows["blank"]["total"] == "0"


def test_feedback_explains_lost_points_without_hidden_test_source(course):
    feedback = (course["root"] / "feedback" / "partial" / ASSIGNMENT / "feedback.md").read_text()
    assert "sqrt(d_k)" in feedback and "0 / 4" in feedback
    html = (course["root"] / "feedback" / "partial" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    for text in (feedback, html):
        assert "BEGIN HIDDEN TESTS" not in text and "course.grading" not in text and "globals())" not in text


def test_report_lists_every_student(course):
    report = (course["root"] / "grades" / ASSIGNMENT / "report.md").read_text()
    assert all(f"| {name} | ok |" in report for name in ("blank", "partial", "perfect"))


def test_grading_again_skips_unchanged_submissions_and_changes_nothing(course):
    results = course["build"] / "results" / ASSIGNMENT
    before = {p.name: p.read_bytes() for p in results.glob("*.json")}
    output = run([sys.executable, "-m", "course.grading.batch", ASSIGNMENT], course["env"])
    assert output.count("already graded, unchanged") == 6 + len(UNREADABLE)
    assert {p.name: p.read_bytes() for p in results.glob("*.json")} == before
