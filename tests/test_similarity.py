"""Similar submissions, flagged with evidence for review (course.grading.similarity), on the fixture assignment.

A synthetic class (course.planted_copies): independent students built from the solution and the corpus's correct
alternatives, and copies of two of them, disguised. Each student's answers go into a copy of the release notebook in
submitted/, and the class is merged as after a batch (course.grading.batch.merge): similarity.csv and the class
report's section.
"""

from __future__ import annotations

import csv
import shutil
from collections.abc import Iterator

import nbformat
import pytest

from course import paths
from course.grading.batch import merge
from course.grading.grade_one import new_record, write_record
from course.grading.similarity import THRESHOLD, Answers, answers_of, compare
from course.planted_copies import planted_class
from course.samples import sample_notebook
from helpers import ASSIGNMENT, needs_browser, paths_of

HOSTILE = "<b>copier</b>"  # a student id that is markup


def hand_in(student: str, answers: Answers) -> None:
    """The release notebook with `answers` in its answer cells, as submitted/<student>/<assignment>/, graded."""
    nb = sample_notebook(ASSIGNMENT, "blank")
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        cell.source = {**answers.code, **answers.text}.get(grade_id, cell.source)
    folder = paths.submission_dir(student, ASSIGNMENT)
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{ASSIGNMENT}.ipynb")
    write_record(new_record(ASSIGNMENT, student, folder))


@pytest.fixture(scope="module")
def course(fixture_release, tmp_path_factory) -> Iterator[dict]:
    """The planted class of the fixture assignment, handed in and merged; the hostile id is a third copy."""
    root = tmp_path_factory.mktemp("similarity")
    for folder in ("source", "release"):
        shutil.copytree(fixture_release / folder, root / folder)
    with paths_of(root):
        synthetic = planted_class(ASSIGNMENT, students=8, copies=2)
        first_copy = synthetic.planted[0]
        answers = {**synthetic.answers, HOSTILE: synthetic.answers[first_copy[0]]}
        for student, their in answers.items():
            hand_in(student, their)
        merge(ASSIGNMENT, sorted(answers))
        yield {"root": root, "planted": {frozenset(p) for p in synthetic.planted}, "answers": answers,
               "first_copy": first_copy}


def listed_pairs(course) -> set[frozenset]:
    with (course["root"] / "grades" / ASSIGNMENT / "similarity.csv").open() as f:
        return {frozenset((row["student_a"], row["student_b"])) for row in csv.DictReader(f) if row["listed"]}


def test_the_planted_copies_are_flagged_and_nothing_else(course):
    """The hostile id holds the first copy's answers unchanged: it pairs with that copy and with its original."""
    copier, original = course["first_copy"]
    expected = course["planted"] | {frozenset((HOSTILE, copier)), frozenset((HOSTILE, original))}
    assert listed_pairs(course) == expected


def test_the_report_lists_the_pairs_and_the_group_without_saying_copied(course):
    report = (course["root"] / "grades" / ASSIGNMENT / "report.md").read_text()
    section = report.split("## Similar submissions (review)")[1].split("\n## ")[0]
    assert "Similar is not copied" in section and "group of 3" in section
    assert "copied" not in section.replace("Similar is not copied", "")
    assert "&lt;b&gt;copier&lt;/b&gt;" in section, "student ids are escaped"


def test_a_class_of_one_and_a_class_of_blank_submissions_list_nothing(course):
    with paths_of(course["root"]):
        alone = compare(ASSIGNMENT, {"solo": course["answers"]["student000"]})
        blank = answers_of(sample_notebook(ASSIGNMENT, "blank"))
        everyone_blank = compare(ASSIGNMENT, {f"blank{i}": blank for i in range(5)})
    assert alone.pairs == [] and alone.listed == []
    assert everyone_blank.listed == [] and all(p.similarity == 0 for p in everyone_blank.pairs)


@needs_browser
def test_the_section_renders_in_chromium_with_the_heat_map_and_the_matches_highlighted(course, browser):
    from selenium.webdriver.common.by import By

    browser.get((course["root"] / "grades" / ASSIGNMENT / "report.html").as_uri())
    section = next(s for s in browser.find_elements(By.TAG_NAME, "section")
                   if s.find_element(By.TAG_NAME, "h2").text == "Similar submissions (review)")
    image = section.find_element(By.TAG_NAME, "img")
    assert image.is_displayed() and browser.execute_script("return arguments[0].naturalWidth", image) > 0
    assert HOSTILE in section.text, "the markup id is shown as text"
    folded = section.find_elements(By.TAG_NAME, "details")
    assert folded
    folded[-1].find_element(By.TAG_NAME, "summary").click()
    marks = folded[-1].find_elements(By.TAG_NAME, "mark")
    assert marks and marks[0].is_displayed()
    assert f"{THRESHOLD:.0%}" in section.text
