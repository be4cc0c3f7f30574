"""Similar submissions, flagged with evidence for review (course.grading.similarity), on the fixture assignment.

A synthetic class (course.measuring.planted_copies): independent students built from the solution and the corpus's correct
alternatives, and copies of two of them, disguised. Each student's answers go into a copy of the release notebook in
submitted/, and the class is merged as after a batch (course.grading.class_results.merge): similarity.csv and the class
report's section.
"""

from __future__ import annotations

import csv
import re
import shutil
from collections.abc import Iterator

import nbformat
import pytest

from course import paths
from course.grading.class_results import merge
from course.grading.record import new_record, write_record
from course.grading.similarity import Answers, answers_of, compare
from course.measuring.planted_copies import planted_class
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
    why = next(d for d in section.find_elements(By.TAG_NAME, "details") if "why listed" in d.text)
    why.find_element(By.TAG_NAME, "summary").click()
    assert "this class typically" in why.text
    alike = [d for d in section.find_elements(By.TAG_NAME, "details") if "fingerprints alike" in d.text]
    assert alike
    alike[-1].find_element(By.TAG_NAME, "summary").click()
    marks = alike[-1].find_elements(By.TAG_NAME, "mark")
    assert marks and marks[0].is_displayed()


# ---------------------------------------------------------------- each kind of evidence on its own (issue 44)
# A class of the fixture assignment whose written answers are real prose, each student's own; `own(i)` is the i-th
# independent student's work. The students below each copy one thing from ada, in a way a copier would.

HARDEST = (
    "Normalize, because of the constant input: the range is zero there and dividing by it gives NaN, so it needs its "
    "own branch that the other functions never need.",
    "I found clip the hardest. It is easy to mix up the order of minimum and maximum, and then every value ends up "
    "at one of the two bounds.",
    "The mean looked trivial, but summing a list of Python ints and dividing gave me an integer in an older version "
    "of my code, and I only saw it when the visible test compared floats.",
    "Square and cube are one line each. Normalize took me longest since I forgot that an array of equal numbers has "
    "no spread at all.",
    "Clip, since it has two parameters and I wrote it with a Python loop first, which broke on numpy arrays with "
    "more than one dimension.",
    "For me it was normalize: I divided by the maximum instead of by the maximum minus the minimum, and the test "
    "with negative numbers caught it.",
    "Mean, surprisingly. An empty input makes the size zero and I was not sure what the function should return, "
    "so I spent time reading the docstring again.",
    "Honestly none were hard, but normalize had the most edge cases to think about, with the all-equal array as "
    "the one that really matters.",
    "Cube was easy, clip was fiddly: I kept forgetting to convert the list to floats before comparing, so the "
    "output had the wrong type.",
    "The normalization function, because handling the flat array without dividing by zero required an extra "
    "condition, and getting that branch right took a couple of attempts.",
    "Clip. The documentation of numpy's minimum and maximum confused me, and I ended up writing it with where.",
    "All of them were straightforward once I converted the input with asarray; before that lists failed everywhere.",
    "Normalize, since the formula has two reductions and I computed the minimum twice on the wrong axis at first.",
    "The mean, because I wanted it to work for nested lists as well, which np.size handles and len does not.",
    "Clip was the trickiest: deciding what happens when low is larger than high is not stated anywhere.",
    "Probably normalize, as dividing by a range that can be zero is the only place the code can actually crash.",
    "Cube, oddly: I raised to the power with ^ out of habit from another language, which is exclusive or here.",
    "None of them really; the trickiest part was remembering that the mean of a list must come back as a float.",
    "Clip, because I first returned the clipped list without converting it, and the test expected an array.",
)
TESTS = (
    "It would give values below low, inside the range and above high, and check that only the outer ones move.",
    "A visible test for clip should check that a value under the lower bound becomes the lower bound, and one "
    "above the upper bound becomes the upper bound, with the middle untouched.",
    "Check the edges: a value exactly equal to low or high must stay as it is.",
    "I would test an array that is already inside the bounds, to see it come back unchanged, and one with "
    "negative numbers.",
    "That the result is a float array of the same length as the input, and that nothing is outside low and high.",
    "Clip of a list like [-5, 0, 5] between -1 and 1 should be [-1, 0, 1].",
    "It should check the two cases where clipping happens and the case where it does not.",
    "Whether low greater than high is handled, and whether the function accepts both lists and arrays.",
    "A test with every value too small, so the whole output equals low, and the same for high.",
    "Values outside the interval get moved to the nearest bound.",
    "I would assert that clip never returns anything smaller than low or bigger than high, on a random array.",
    "The boundary cases: numbers equal to the bounds, numbers just past them, and a list instead of an array.",
    "Give it [0, 10, 20] with bounds 5 and 15 and expect [5, 10, 15] back.",
    "It should check both directions of clipping and that the input array itself is not modified.",
    "That clip works elementwise: every entry is compared with the bounds on its own.",
    "Mixed signs, because a sign error in the comparison is the likeliest mistake.",
    "Whether a two-dimensional input keeps its shape after clipping.",
    "I would check an input with NaN in it, since comparisons with NaN are always false.",
    "One test per branch of the function: below, inside, above, and the two boundaries exactly.",
)
ADA = Answers(
    {"answer-square": '''def square(x):
    """Elementwise x ** 2 of an array-like, as a numpy array."""
    return np.asarray(x, dtype=float) ** 2
''',
     "answer-normalize": '''def normalize(x):
    """(x - min) / (max - min) of a 1-D array; all zeros when x is constant."""
    values = [float(v) for v in x]
    lowest, highest = values[0], values[0]
    for v in values[1:]:
        if v < lowest:
            lowest = v
        elif v > highest:
            highest = v
    width = highest - lowest
    if width == 0:
        return np.zeros(len(values))
    return np.array([(v - lowest) / width for v in values])
''', "answer-mean": '''def mean(x):
    """The mean of the values of an array-like."""
    running_total, how_many = 0.0, 0
    for item in np.ravel(x):
        running_total = running_total + float(item)
        how_many = how_many + 1
    if how_many == 0:
        raise ValueError("mean of nothing")
    return running_total / how_many
'''},
    {"reflection-hardest": "Normalize was the hardest for me. A constant array has a range of zero, so the division "
                           "blows up into NaN values, and I had to add a special case that returns zeros; the other "
                           "functions have no case like that.",
     "reflection-tests": "It should feed clip values below the lower bound, between the bounds and above the upper "
                         "bound, and check that the low ones are raised, the high ones lowered and the rest left "
                         "exactly as they were."})
BEA = {"answer-square": ADA.code["answer-square"], "answer-clip": '''def clip(x, low, high):
    """x with every value below `low` raised to it and every value above `high` lowered to it."""
    flat = np.array(x, dtype=float, copy=True)
    for position in np.ndindex(flat.shape):
        current = flat[position]
        if current < low:
            flat[position] = low
        elif current > high:
            flat[position] = high
    return flat
''', "answer-normalize": '''def normalize(x):
    """(x - min) / (max - min) of a 1-D array; all zeros when x is constant."""
    data = np.asarray(x, dtype=float)
    smallest = float(min(data)) if len(data) else 0.0
    largest = float(max(data)) if len(data) else 0.0
    gap = largest - smallest
    result = np.zeros(len(data))
    if gap:
        for k, value in enumerate(data):
            result[k] = (value - smallest) / gap
    return result
'''}
# ada's written answers, reworded as a copier rewords them: synonyms, clauses turned round, the same argument.
PARAPHRASED = {"reflection-hardest": "For me the hardest one was normalize. When the array is constant its range "
                                     "is zero, so dividing turns into NaN values, and I needed a special case that "
                                     "gives back zeros; none of the other functions has a case like this.",
               "reflection-tests": "It should give clip numbers under the lower bound, inside the bounds and over "
                                   "the upper bound, and check that the small ones get raised, the big ones get "
                                   "lowered and the others stay exactly as they were."}
OBVIOUS = "It checks values outside low and high."  # a short answer two students may well write alike


def own(i: int) -> Answers:
    """The i-th independent student: code from the synthetic class, prose of their own."""
    code = planted_class(ASSIGNMENT, students=len(HARDEST), copies=0).answers[f"student{i:03d}"].code
    return Answers(dict(code), {"reflection-hardest": HARDEST[i], "reflection-tests": TESTS[i]})


def with_parts(base: Answers, code: dict | None = None, text: dict | None = None) -> Answers:
    return Answers({**base.code, **(code or {})}, {**base.text, **(text or {})})


@pytest.fixture(scope="module")
def evidence_class(on_fixture) -> dict:
    """Ten independent students, ada (own distinctive normalize and mean, the solution's square, own prose), and:
    code_copier and second_copier: ada's code exactly, their own prose; bea (own distinctive clip and normalize,
    the solution's square); partial: bea's two distinctive cells among their own work;
    paraphraser: their own code, ada's prose reworded; link: reflection-hardest from ada, reflection-tests from
    independent student 0 (so ada and student 0 are each alike with link, not with each other); obvious_1 and
    obvious_2: the same short obvious answer to reflection-tests."""
    answers = {f"student{i:03d}": own(i) for i in range(10)}
    answers["ada"] = with_parts(own(10), code=ADA.code, text=ADA.text)
    answers["code_copier"] = with_parts(own(11), code=answers["ada"].code)
    answers["second_copier"] = with_parts(own(17), code=answers["ada"].code)
    answers["bea"] = with_parts(own(18), code=BEA)
    answers["partial"] = with_parts(own(12), code=BEA)  # with bea's (the solution's) answer-square
    answers["paraphraser"] = with_parts(own(13), text=PARAPHRASED)
    answers["link"] = with_parts(own(14), text={"reflection-hardest": ADA.text["reflection-hardest"],
                                                "reflection-tests": answers["student000"].text["reflection-tests"]})
    answers["obvious_1"] = with_parts(own(15), text={"reflection-tests": OBVIOUS})
    answers["obvious_2"] = with_parts(own(16), text={"reflection-tests": OBVIOUS})
    similarity = compare(ASSIGNMENT, answers)
    return {"similarity": similarity, "listed": {frozenset((p.first, p.second)): p for p in similarity.listed}}


def listed_by(evidence_class, first: str, second: str) -> set[str]:
    pair = evidence_class["listed"].get(frozenset((first, second)))
    return {reason.measure for reason in pair.reasons} if pair else set()


def test_a_copy_of_the_code_alone_is_listed_by_its_code(evidence_class):
    assert "code" in listed_by(evidence_class, "ada", "code_copier")


def test_two_copied_answers_among_others_are_listed_answer_by_answer_naming_them(evidence_class):
    pair = evidence_class["listed"][frozenset(("bea", "partial"))]
    why = next(str(reason) for reason in pair.reasons if reason.measure == "answer by answer")
    assert "answer-normalize 100% and 100%" in why and "answer-clip 100% and 100%" in why


def test_written_answers_reworded_are_listed_by_their_meaning(evidence_class):
    assert {"reflection-hardest (meaning)", "reflection-tests (meaning)"} <= listed_by(evidence_class, "ada",
                                                                                         "paraphraser")


def test_independent_work_and_the_same_short_obvious_answer_are_not_listed(evidence_class):
    copiers = {"code_copier", "second_copier", "partial", "paraphraser", "link"}  # and whom they copied
    unexpected = {pair for pair in evidence_class["listed"] if not pair & copiers}
    assert unexpected == set(), "independent students (obvious_1 and obvious_2 wrote the same short answer)"


def test_a_group_needs_every_two_of_its_members_listed(evidence_class):
    """ada and link share an answer, link and student000 another: two pairs, not a group of three."""
    assert listed_by(evidence_class, "ada", "link") and listed_by(evidence_class, "link", "student000")
    assert not listed_by(evidence_class, "ada", "student000")
    assert all({"ada", "link", "student000"} - set(group) for group in evidence_class["similarity"].clusters)
    assert ("ada", "code_copier", "second_copier") in evidence_class["similarity"].clusters


def test_the_side_by_side_view_marks_only_what_the_figures_count(evidence_class):
    """The copied lines are marked; the instructor's solution of answer-square, which bea and partial both handed in,
    is not shown as alike; answers alike in meaning only are shown unmarked, saying so."""
    from course.grading.similarity import side_by_side

    similarity = evidence_class["similarity"]
    views = {answer: (alike, first) for answer, alike, first, _ in
             side_by_side(similarity, similarity.pair("bea", "partial"))}
    assert {"answer-normalize", "answer-clip"} <= set(views)
    marked = " ".join(re.findall(r"<mark>(.*?)</mark>", views["answer-clip"][1], flags=re.S))
    assert "for position in np.ndindex(flat.shape)" in marked
    assert "answer-square" not in views, "the solution's code is not a match"
    reworded = {answer: alike for answer, alike, *_ in side_by_side(similarity, similarity.pair("ada", "paraphraser"))}
    assert all(alike.startswith("the same meaning") for alike in reworded.values()) and len(reworded) == 2


def test_a_huge_answer_and_cells_the_release_does_not_have_are_compared_as_the_release_s_cells_cut_short(on_fixture):
    """A notebook whose answers are megabytes long, with thousands of extra answer cells, is compared on the release's
    answer cells only, each cut at ANSWER_CHARS (what it costs is bounded by the release, not by the notebook)."""
    from course.grading.similarity import ANSWER_CHARS

    huge = Answers({"answer-square": "x = 1\n" * 500_000, **{f"extra-{i}": "y = 2\n" for i in range(5000)}},
                   {"reflection-hardest": "word " * 1_000_000})
    compared = compare(ASSIGNMENT, {"hostile": huge, "ada": ADA, "bea": Answers(BEA, {})}).answers["hostile"]
    assert set(compared.code) == {"answer-square"} and set(compared.text) == {"reflection-hardest"}
    assert len(compared.code["answer-square"]) == len(compared.text["reflection-hardest"]) == ANSWER_CHARS
