"""The class report and the course page (course.grading.class_report), on a synthetic class of 300.

The class is 300 result records of the fixture assignment, as grading writes them
(course.measuring.synthetic_records), with what the report must find planted in them: how many
students make each mistake of the catalogue and in which checks, the submissions that need
attention (with a hostile student id and message), the seconds each step took, and how far
hand grading has got. `merge` writes the report from them and `write_course_page` the course
page, as `make autograde` and `make grades` do; then headless Chromium opens both. How long
the report takes to write is measured by `make bench-report`, not here.
"""

from __future__ import annotations

import html
import shutil
import urllib.parse
from collections.abc import Iterator
from dataclasses import asdict
from html.parser import HTMLParser
from pathlib import Path

import pytest

from course import paths
from course.grading.class_results import merge
from course.grading.class_report import (NO_MISTAKE_NAMED, WHY_LENGTH, AnswerProgress, course_page_file, html_report,
                                         markdown, step_limits, summarize, write_course_page)
from course.grading.record import write_record
from course.measuring.synthetic_records import judged, synthetic_records
from course.untrusted import escaped, quoted
from course.verdicts import grade_cells, mistakes_for
from helpers import ASSIGNMENT, needs_browser, paths_of

CLASS_SIZE = 300
NAMES = [f"student{i:03d}" for i in range(CLASS_SIZE)]
HOSTILE = NAMES[2] = "<img src=x onerror=alert(1)>"
HOSTILE_MESSAGE = ('Your cell answer-square raised ValueError: </td><script>alert("message")</script> | '
                   '<img src="https://evil.example/x.png">')
NEEDS_ATTENTION = {  # student -> (status, flags, first message), in the order the report must list them
    "student297": ("invalid", (), f"no notebook named {ASSIGNMENT}.ipynb was submitted (notebooks found: none)."),
    "student298": ("invalid", (), "the submission contains a symbolic link (secret); links are not graded."),
    "student299": ("invalid", (), "the submission is 80 MB, more than the 50 MB allowed."),
    "student000": ("timeout", (), "Your notebook did not finish within 900 s under nbgrader."),
    "student001": ("timeout", ("regraded-alone",), "Your cell answer-mean did not finish within 60 s."),
    HOSTILE: ("crashed", (), HOSTILE_MESSAGE),
    "student003": ("forged", ("log-differs-from-code",), "submission_log.json does not match what the code computes."),
    "student004": ("ok", ("cells-restored",), "The tests of cell square_values were restored."),
    "student005": ("ok", ("log-missing",), "submission_log.json is missing."),
    "student006": ("ok", ("regraded-alone",), ""),
}
JUDGED = judged(NAMES, NEEDS_ATTENTION)  # the invalid: nothing run
PLANTED = {  # mistake (None: the verdict names none) -> (students who make it, the checks they fail with it)
    "square-values": (150, ("square_values",)),
    "normalize-shift": (90, ("normalize_values",)),
    "raises-error": (40, ("clip_values", "mean_values")),
    None: (10, ("cube_values",)),
}
HAND = {name: {"reflection-hardest": 4.0, "reflection-tests": 0.0 if i < 50 else None}  # a blank answer's 0 is a grade
        for i, name in enumerate(NAMES[:200])}
SECTIONS = ["Score distribution", "Pass rate per check", "Most common mistakes", "Grading time", "Slowest submissions",
            "Needs attention", "Late submissions", "Similar submissions (review)", "Written answers"]


@pytest.fixture(scope="module")
def course(fixture_release, tmp_path_factory) -> Iterator[dict]:
    """A course directory of the fixture assignment where the synthetic class is graded and merged; course.paths
    points at it for the whole module."""
    root = tmp_path_factory.mktemp("class_report")
    shutil.copytree(fixture_release / "source", root / "source")
    with paths_of(root):
        check_points, answer_points = grade_cells(ASSIGNMENT)
        records = synthetic_records(ASSIGNMENT, NAMES, check_points, answer_points, PLANTED, NEEDS_ATTENTION)
        for record in records:
            write_record(record)
        merge(ASSIGNMENT, NAMES)
        write_course_page()
        yield {"root": root, "records": [asdict(r) for r in records], "check_points": check_points}


@pytest.fixture(scope="module")
def summary(course):
    return summarize(ASSIGNMENT, course["records"], course["check_points"], HAND)


def report(course, suffix: str) -> Path:
    return course["root"] / "grades" / ASSIGNMENT / f"report.{suffix}"


def test_the_summary_counts_statuses_scores_and_pass_rates_hardest_first(summary, course):
    points, full = course["check_points"], sum(course["check_points"].values())
    assert summary.graded == CLASS_SIZE and summary.max_score == full
    assert summary.statuses == {"ok": 293, "invalid": 3, "timeout": 2, "crashed": 1, "forged": 1}
    lost = (150 * points["square_values"] + 90 * points["normalize_values"]
            + 40 * (points["clip_values"] + points["mean_values"]) + 10 * points["cube_values"] + 3 * full)
    assert summary.mean == pytest.approx((CLASS_SIZE * full - lost) / CLASS_SIZE)
    assert list(summary.pass_counts.items()) == [("square_values", 147), ("normalize_values", 207),
                                                 ("clip_values", 257), ("mean_values", 257), ("cube_values", 287),
                                                 ("normalize_constant", 297)], "ties stay in the assignment's order"


def test_mistakes_are_ranked_by_students_with_the_catalogues_advice(summary):
    assert [(m.mistake, m.students, m.checks) for m in summary.mistakes] == [
        ("square-values", 150, ("square_values",)), ("normalize-shift", 90, ("normalize_values",)),
        ("raises-error", 40, ("clip_values", "mean_values")), (None, 10, ("cube_values",))], \
        "a student who makes one mistake in two checks counts once"
    catalogue = mistakes_for(ASSIGNMENT)
    assert [m.advice for m in summary.mistakes] == [catalogue["square-values"], catalogue["normalize-shift"],
                                                    catalogue["raises-error"], NO_MISTAKE_NAMED]


def test_attention_lists_bad_statuses_worst_first_then_flags_with_the_first_message(summary):
    assert [(a.student, a.status, a.flags, a.why) for a in summary.attention] == [
        (student, status, flags, quoted(message, WHY_LENGTH))
        for student, (status, flags, message) in NEEDS_ATTENTION.items()]


def test_grading_time_is_per_step_against_its_limit_with_the_slowest_submissions(summary):
    assert summary.limits == step_limits() and list(summary.seconds) == ["probe", "judge", "nbgrader"]
    assert all(len(seconds) == len(JUDGED) for seconds in summary.seconds.values()), "an invalid submission ran nothing"
    assert {student for student, _ in summary.slowest[:2]} == {"student000", "student001"}, "the two timeouts"


def test_hand_grading_progress_per_written_answer(summary):
    assert summary.answers == (AnswerProgress("reflection-hardest", 200, CLASS_SIZE, 5 * 100),
                               AnswerProgress("reflection-tests", 50, CLASS_SIZE, 5 * 250))


def test_late_submissions_are_listed_latest_first_with_how_late(course):
    records = course["records"][:3]
    on_time, a_minute, two_days = (r["student"] for r in records)
    times = {on_time: {"submitted_at": "2026-01-01 09:00:00", "due": "2026-01-02 00:00:00", "seconds_late": 0.0},
             a_minute: {"submitted_at": "2026-01-02 00:01:05", "due": "2026-01-02 00:00:00", "seconds_late": 65.0},
             two_days: {"submitted_at": "2026-01-04 00:00:00", "due": "2026-01-02 00:00:00", "seconds_late": 172800.0}}
    late = summarize(ASSIGNMENT, records, course["check_points"], HAND, times).late
    assert [(x.student, x.late_by) for x in late] == [(two_days, "48:00:00"), (a_minute, "0:01:05")]
    assert summarize(ASSIGNMENT, records, course["check_points"], HAND).late == (), "no times, nothing late"


def test_before_anything_is_graded_the_report_says_so(course):
    nothing = summarize(ASSIGNMENT, [], course["check_points"], {})
    assert f"No submission of {ASSIGNMENT} has been graded yet." in markdown(nothing)
    assert "<section>" not in html_report(nothing)


class Tags(HTMLParser):
    """Every start tag of a page, with its attributes."""

    def __init__(self, page: str):
        super().__init__()
        self.found: list[tuple[str, dict[str, str]]] = []
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))


def test_the_html_report_is_self_contained_and_escapes_student_text(course):
    page = report(course, "html").read_text()
    tags = Tags(page).found
    assert not [tag for tag, _ in tags if tag in ("script", "link", "iframe", "object")]
    images = [attrs["src"] for tag, attrs in tags if tag == "img"]
    assert len(images) == 3 and all(src.startswith("data:image/png;base64,") for src in images), "plots embedded"
    links = [attrs["href"] for tag, attrs in tags if "href" in attrs]
    assert links and not [href for href in links if urllib.parse.urlsplit(href).scheme or href.startswith("//")]
    assert "url(" not in page and "@import" not in page
    assert HOSTILE not in page and html.escape(HOSTILE) in page
    assert "<script>" not in page and html.escape(quoted(HOSTILE_MESSAGE, WHY_LENGTH)) in page


def test_the_markdown_report_has_no_per_student_table(course, summary):
    text = report(course, "md").read_text()
    named = set(NEEDS_ATTENTION) | {student for student, _ in summary.slowest}
    assert [name for name in NAMES if name not in named and name in text] == []
    assert "Statuses: ok 293, invalid 3, timeout 2, crashed 1, forged 1" in text
    assert HOSTILE not in text and escaped(HOSTILE) in text and escaped(quoted(HOSTILE_MESSAGE, WHY_LENGTH)) in text


def test_the_course_page_has_a_line_per_graded_assignment_and_links_the_final_grades(course):
    page = course_page_file().read_text()
    assert f'<a href="{ASSIGNMENT}/report.html">{ASSIGNMENT}</a>' in page
    assert f"<td>{CLASS_SIZE}</td>" in page, "submissions graded"
    assert f"<td>{2 * 5 * CLASS_SIZE}</td>" in page, "points to grade by hand: two answers of 5, none graded"
    assert "final grades are not written yet" in page
    paths.final_grades_file().write_text("student\n")
    write_course_page()
    assert '<a href="final_grades.csv">final_grades.csv</a>' in course_page_file().read_text()


def loaded_images(browser) -> list[dict]:
    """Each <img> of the page once every one has loaded: whether it is displayed, and its natural width."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(browser, 30).until(lambda b: b.execute_script(
        "return Array.from(document.images).every(image => image.complete)"))
    return [{"displayed": image.is_displayed(),
             "width": browser.execute_script("return arguments[0].naturalWidth", image)}
            for image in browser.find_elements(By.TAG_NAME, "img")]


@needs_browser
def test_the_report_renders_in_chromium_with_every_plot_visible(course, browser):
    from selenium.webdriver.common.by import By

    browser.get(report(course, "html").as_uri())
    assert browser.find_element(By.TAG_NAME, "h1").text == f"Class report: {ASSIGNMENT}"
    assert [h2.text for h2 in browser.find_elements(By.TAG_NAME, "h2")] == SECTIONS
    images = loaded_images(browser)
    assert len(images) == 3 and all(image["displayed"] and image["width"] > 0 for image in images), images
    assert HOSTILE in browser.find_element(By.TAG_NAME, "body").text, "the hostile id is shown as text"


@needs_browser
def test_the_course_page_links_to_the_report_and_the_link_works(course, browser):
    from selenium.webdriver.common.by import By

    browser.get((course["root"] / "grades" / "index.html").as_uri())
    browser.find_element(By.LINK_TEXT, ASSIGNMENT).click()
    assert browser.title == f"Class report: {ASSIGNMENT}"
    assert all(image["width"] > 0 for image in loaded_images(browser))
