"""formgrader in a real browser (headless Chromium, driven by selenium): what an instructor sees and does.

A small class of the fixture assignment is graded by `course.grading.batch`; then
`course.formgrader` (what `make formgrader` runs) serves it. In the browser the
instructor sees the judge's points, also for a submission that tampered with
its tests, gives a written answer points, and `course.grading.final_grades`
puts them in the course-wide CSV and the student's feedback.
"""

from __future__ import annotations

import csv
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bad_submissions import FULL, cell, hand_in, solution
from course.samples import sample_notebook
from helpers import (ASSIGNMENT, copy_of_release, course_env, free_port, give_points_in_formgrader, needs_browser,
                     page_text, paths_of, run, wait_for_formgrader)

pytestmark = needs_browser
TAMPERING = ("import numpy as np\n"
             "np.allclose = lambda *args, **kwargs: True  # every assert on np.allclose passes in this kernel\n")


def write_tamperer(folder: Path) -> None:
    """The blank release whose first answer cell patches np.allclose and whose test cells print 'passed'."""
    nb = sample_notebook(ASSIGNMENT, "blank")
    cell(nb, "answer-square").source = TAMPERING + cell(nb, "answer-square").source
    for test in (c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"):
        test.source = "print('all tests passed')"
    hand_in(folder, nb)


# What an injector's notebook prints and writes, each way a page could run it: an HTML output with a script and an
# event handler, a JavaScript output, an SVG with onload, and a written answer (Markdown) with raw HTML.
INJECTIONS = ('<script>window.__injected = "script"</script>',
              '<img src="x" onerror="window.__injected = \'onerror\'">',
              '<svg xmlns="http://www.w3.org/2000/svg" onload="window.__injected = \'svg\'"></svg>')
INJECTING_CELL = ("from IPython.display import HTML, Javascript, SVG, display\n"
                  f"for payload in {INJECTIONS!r}:\n"
                  "    display(HTML(payload))\n"
                  "display(Javascript('window.__injected = \"javascript\"'))\n"
                  f"display(SVG({INJECTIONS[2]!r}))\n")


def write_injector(folder: Path) -> None:
    """The solution, whose first answer cell also displays markup that runs script, and whose written answer holds
    the same markup."""
    nb = solution()
    cell(nb, "answer-square").source = INJECTING_CELL + cell(nb, "answer-square").source
    cell(nb, "reflection-hardest").source = "My answer. " + " ".join(INJECTIONS)
    hand_in(folder, nb)


def assert_no_script_ran(browser, url: str) -> None:
    """`url` loaded: none of the INJECTIONS ran, and the written answer's markup is shown as text."""
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(url)
    WebDriverWait(browser, 30).until(lambda b: b.execute_script("return document.readyState") == "complete")
    time.sleep(1)  # an image's onerror fires once its load fails
    assert browser.execute_script("return window.__injected") is None, url


@pytest.fixture(scope="module")
def server(tmp_path_factory, fixture_release) -> Iterator[dict]:
    """A graded class of three (perfect, tamperer, injector) served by formgrader; yields its url, env and paths."""
    root = tmp_path_factory.mktemp("formgrader_course")
    env = course_env(root)
    copy_of_release(fixture_release, root)
    with paths_of(root):
        hand_in(root / "submitted" / "perfect" / ASSIGNMENT, solution())
        write_tamperer(root / "submitted" / "tamperer" / ASSIGNMENT)
        write_injector(root / "submitted" / "injector" / ASSIGNMENT)
        run([sys.executable, "-m", "course.grading.batch"], env)
        port = free_port()
        log = (root / "build" / "formgrader.log").open("w")
        process = subprocess.Popen([sys.executable, "-m", "course.formgrader", "--port", str(port)], env=env,
                                   stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        wait_for_formgrader(url)
        try:
            yield {"url": url, "env": env, "root": root, "log": root / "build" / "formgrader.log"}
        finally:
            process.terminate()
            process.wait(timeout=30)
            log.close()


def test_formgrader_shows_the_judges_points_even_for_a_submission_that_tampered_with_its_tests(server, browser):
    tamperer = page_text(browser, f"{server['url']}/formgrader/manage_students/tamperer/{ASSIGNMENT}")
    assert f"{ASSIGNMENT} 0 / {FULL + 10} 0 / {FULL} 0 / 10" in tamperer
    perfect = page_text(browser, f"{server['url']}/formgrader/manage_students/perfect/{ASSIGNMENT}")
    assert f"{ASSIGNMENT} {FULL} / {FULL + 10} {FULL} / {FULL} 0 / 10" in perfect


def test_a_written_answer_graded_in_the_browser_reaches_the_final_grades_and_the_feedback(server, browser):
    with paths_of(server["root"]):
        give_points_in_formgrader(browser, server["url"], "perfect", "reflection-hardest", 4)
    summary = run([sys.executable, "-m", "course.grading.final_grades"], server["env"])
    with (server["root"] / "grades" / "final_grades.csv").open() as f:
        final = {row["student"]: row for row in csv.DictReader(f)}
    assert final["perfect"][ASSIGNMENT] == str(FULL + 4) and final["perfect"]["written_answers_to_grade"] == "1"
    assert final["tamperer"][ASSIGNMENT] == "0"
    assert "written answers are not graded yet" in summary
    feedback = (server["root"] / "feedback" / "perfect" / ASSIGNMENT / "feedback.md").read_text()
    assert "Written answers: **4 / 5** graded by hand so far" in feedback
    shown = page_text(browser, f"{server['url']}/formgrader/manage_students/perfect/{ASSIGNMENT}")
    assert f"{ASSIGNMENT} {FULL + 4} / {FULL + 10}" in shown


def test_formgrader_runs_without_exchange_warnings(server, browser):
    page = page_text(browser, f"{server['url']}/formgrader/manage_assignments")
    assert ASSIGNMENT in page and "does not exist" not in page, "formgrader's banner of a missing exchange"
    log = server["log"].read_text()
    assert "127.0.0.1" in log and "Unwritable directory" not in log and "CRITICAL" not in log, log[-2000:]


def test_student_markup_runs_no_script_in_the_feedback_or_in_formgrader(server, browser):
    """What a student's code displays, and what they write, is text where the instructor and the student read it."""
    from selenium.webdriver.common.by import By

    feedback = server["root"] / "feedback" / "injector" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    assert_no_script_ran(browser, feedback.as_uri())
    assert "My answer." in browser.find_element(By.TAG_NAME, "body").text
    page_text(browser, f"{server['url']}/formgrader/manage_students/injector/{ASSIGNMENT}")
    submission = browser.find_element(By.CSS_SELECTOR, "a[href*='/formgrader/submissions/']").get_attribute("href")
    assert_no_script_ran(browser, submission)
    assert "My answer." in browser.find_element(By.TAG_NAME, "body").text
