"""The course on a real JupyterHub (real Unix accounts, nbgrader's exchange, the course's own grading), in a real
browser (headless Chromium driven by selenium), as a class uses it.

The steps of docs/hub_instructor.md, in its order, from a fresh clone: a scratch course of the fixture assignment (its
source and release as a clone has them, no gradebook; its own copy of the assignments folder, which students must not
read), owned by an account that is not root (`make course-owner`), served by `python -m course.hub.serve` (what `make
hub` runs) with the sample roster's students under a test prefix. The instructor runs `make hub-release` (which
releases the assignment first, recording it in the gradebook) and the Formgrader tab shows it released. alice logs in, fetches it
from the Assignments tab, opens it in JupyterLab, pastes her answers into its cells through the editor, saves, runs
every cell (the visible tests pass), validates with the Validate button and submits; the due date passes; bob logs
in, fetches it, validates the blank release (Validate fails and says why) and submits it, late. The instructor
collects from the Formgrader tab, grades with the course's batch (the grades keep nbgrader's timestamps and show bob's
lateness) and returns the feedback; each student fetches theirs in the Assignments tab and reads their own points in
the browser.
Then the isolation a class needs, tried by bob's account in a shell of his own (`runuser`): each attempt must fail;
and, in cells run in the servers' kernels: the instructor's server has no privilege, a student sees only her own
processes, writes no file over the limit, has a /tmp of her own, and nothing she started outlives her server.
Then a real assignment's release opens in JupyterLab and its first visible test shows the stub's NotImplementedError;
last, make hub-clean removes the accounts and leaves nothing of theirs to a uid a later account could get.
Each step in the browser saves a screenshot in build/screenshots/hub/ (numbered in step order) and asserts on what
the page shows. The tests of this module run in order, on one hub; each is one user's session in a browser of its
own (a JupyterLab page costs seconds of CPU to load, so a user's consecutive steps share one).
"""

from __future__ import annotations

import contextlib
import csv
import datetime
import json
import pwd
import re
import shutil
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
import requests
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from course import paths
from course.permissions import make_passable
from course.samples import sample_notebook
from helpers import ASSIGNMENT, chromium, course_env, needs_browser, paths_of
from hub_course import FILE_MB, MEMORY_MB, NEEDS_HUB, PROXY, Hub, as_account, course_hub, owner_name

PREFIX = "crstest-"  # never a real course's accounts
ALICE, BOB = f"{PREFIX}alice", f"{PREFIX}bob"
SHOTS = paths.BUILD / "screenshots" / "hub"
SMOKE_ASSIGNMENT = "hand_designed_attention"  # a real assignment, for the last step
pytestmark = [*NEEDS_HUB, needs_browser]


@pytest.fixture(scope="module")
def hub() -> Iterator[Hub]:
    shutil.rmtree(SHOTS, ignore_errors=True)
    SHOTS.mkdir(parents=True)
    with course_hub(PREFIX) as running:
        yield running


class Page:
    """One user's browser on the hub."""

    def __init__(self, driver, hub: Hub, user: str):
        self.driver, self.hub, self.user = driver, hub, user

    def wait(self, condition, seconds: float = 60):
        """`condition`'s first true value; past `seconds`, the test fails with what the page and the hub showed."""
        try:
            return WebDriverWait(self.driver, seconds).until(condition)
        except TimeoutException:
            self.shot("timed-out")
            pytest.fail(f"{self.user}'s browser waited {seconds} s in vain. The page showed:\n"
                        f"{self.driver.find_element(By.TAG_NAME, 'body').text[-3000:]}\n"
                        f"The end of the hub's log:\n{self.hub.log_tail()}")

    def shot(self, name: str) -> None:
        self.driver.save_screenshot(str(SHOTS / f"{len(list(SHOTS.iterdir())) + 1:02d}-{name}.png"))

    def text(self, css: str) -> str:
        return self.driver.find_element(By.CSS_SELECTOR, css).text

    def keys(self, *chord: str) -> None:
        actions = ActionChains(self.driver)
        for key in chord[:-1]:
            actions.key_down(key)
        actions.send_keys(chord[-1])
        for key in chord[:-1]:
            actions.key_up(key)
        actions.perform()

    def login(self, next_path: str = "") -> None:
        """Log in through the hub's form; JupyterLab opens (at `next_path`, e.g. '/user/<name>/lab/tree/<file>')."""
        self.driver.get(f"{self.hub.url}/hub/login" + (f"?next={urllib.parse.quote(next_path)}" if next_path else ""))
        self.driver.find_element(By.ID, "username_input").send_keys(self.user)
        self.driver.find_element(By.ID, "password_input").send_keys(self.hub.password(self.user))
        self.driver.find_element(By.ID, "login_submit").click()
        self.wait(EC.presence_of_element_located((By.CSS_SELECTOR, "#jp-menu-panel .lm-MenuBar-itemLabel")), 180)

    def menu(self, top: str, item: str) -> None:
        self.wait(EC.element_to_be_clickable(
            (By.XPATH, f"//div[@id='jp-menu-panel']//div[contains(@class,'lm-MenuBar-itemLabel') and text()='{top}']"))).click()
        self.wait(EC.element_to_be_clickable(
            (By.XPATH, f"//ul[contains(@class,'lm-Menu-content')]//div[contains(@class,'lm-Menu-itemLabel') and text()='{item}']"))).click()

    # ------------------------------------------------------------ the Assignments tab

    def assignments(self) -> None:
        self.menu("Nbgrader", "Assignment List")
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "#released_assignments_list, #fetched_assignments_list"))

    def rows(self, section: str) -> list:
        return self.driver.find_elements(By.CSS_SELECTOR, f"#{section}_assignments_list > .list_item")

    def press(self, section: str, label: str) -> None:
        """The button `label` of the assignment's row in `section` (released, fetched, submitted)."""
        self.wait(lambda d: any(label in r.text for r in self.rows(section)))
        row = next(r for r in self.rows(section) if label in r.text)
        row.find_element(By.XPATH, f".//button[text()='{label}']").click()

    def notebook_of_fetched(self, button: str | None = None) -> None:
        """In the fetched assignment's fold: open its notebook in JupyterLab, or press the notebook's `button`
        (Validate). (Pressed as a click event: the fold may be mid-animation.)"""
        self.wait(lambda d: self.rows("fetched"))
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "#fetched_assignments_list .nested_list_item .item_name a"))
        target = (f"//*[@id='fetched_assignments_list']//div[contains(@class,'nested_list_item')]//button[text()='{button}']"
                  if button else "//*[@id='fetched_assignments_list']//div[contains(@class,'nested_list_item')]"
                                 "//span[contains(@class,'item_name')]/a")
        self.driver.execute_script("arguments[0].click()", self.driver.find_element(By.XPATH, target))

    def dialog(self, seconds: float = 180) -> str:
        """The text of the dialog that opens (the Validate button's), once its result is in; closed after."""
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, ".jp-Dialog")
                  and "Validating" not in self.text(".jp-Dialog") and self.text(".jp-Dialog").strip(), seconds)
        return self.text(".jp-Dialog")

    def close_dialog(self) -> None:
        self.driver.find_element(By.CSS_SELECTOR, ".jp-Dialog .jp-mod-accept").click()

    def validate(self, shot: str) -> str:
        """Press the fetched notebook's Validate button: the dialog's text once its result is in (screenshot
        `shot`, then the dialog closed)."""
        self.notebook_of_fetched("Validate")
        shown = self.dialog()
        self.shot(shot)
        self.close_dialog()
        return shown

    def submit(self, shot: str) -> None:
        """Press the fetched assignment's Submit button and wait for it under Submitted (screenshot `shot`)."""
        self.press("fetched", "Submit")
        self.wait(lambda d: self.rows("submitted"))
        self.shot(shot)

    # ------------------------------------------------------------ JupyterLab's notebook

    def cells(self) -> list:
        return self.driver.find_elements(By.CSS_SELECTOR, ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell")

    def paste_into(self, cell, text: str, markdown: bool) -> None:
        """Replace a cell's text by `text` as a student pastes it: clipboard, select all, paste."""
        if markdown:
            ActionChains(self.driver).double_click(cell).perform()  # a rendered answer opens its editor
        cell.find_element(By.CSS_SELECTOR, ".cm-content").click()
        self.driver.execute_script("return navigator.clipboard.writeText(arguments[0])", text)
        self.keys(Keys.CONTROL, "a")
        self.keys(Keys.CONTROL, "v")
        if markdown:
            self.keys(Keys.SHIFT, Keys.ENTER)

    def run_all(self, cells: int) -> None:
        self.menu("Run", "Run All Cells")
        self.wait(lambda d: len(self.cells()) == cells and all(
            p.text.strip() not in ("[*]:", "[ ]:") for p in d.find_elements(
                By.CSS_SELECTOR, ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt")), 300)


@contextlib.contextmanager
def browser(hub: Hub, user: str, next_path: str = "") -> Iterator[Page]:
    """A new headless Chromium logged in to the hub as `user`, JupyterLab open (at `next_path`); it may paste: the
    clipboard is allowed."""
    with chromium() as driver:
        driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": hub.user_url(user), "permissions": [
            "clipboardReadWrite", "clipboardSanitizedWrite"]})
        page = Page(driver, hub, user)
        page.login(next_path)
        yield page


def formgrader_row(page: Page):
    """The fixture assignment's row on the Formgrader tab's Manage Assignments (in its frame)."""
    page.driver.switch_to.default_content()
    if not page.driver.find_elements(By.CSS_SELECTOR, "#formgrader iframe"):
        page.menu("Nbgrader", "Formgrader")
    page.driver.switch_to.frame(page.wait(EC.presence_of_element_located((By.CSS_SELECTOR, "#formgrader iframe"))))
    page.wait(lambda d: d.find_elements(By.XPATH, f"//tr[td[contains(@class,'name')]/a[text()='{ASSIGNMENT}']]"))
    return page.driver.find_element(By.XPATH, f"//tr[td[contains(@class,'name')]/a[text()='{ASSIGNMENT}']]")


# ------------------------------------------------------------------ the loop


def test_the_instructor_releases_on_a_fresh_clone_as_the_hub_page_says_and_the_formgrader_tab_shows_it(hub):
    """make hub-release on a course with no gradebook yet (a fresh clone): it releases the assignment first, which
    records it in the gradebook (grading needs it), then puts it in the exchange."""
    released = exchange_command(hub, "release")
    assert released.returncode == 0, released.stderr
    assert f"{ASSIGNMENT} is not in the gradebook yet: releasing it first" in released.stdout, released.stdout
    with browser(hub, "instructor") as page:
        page.wait(lambda d: "released" in formgrader_row(page).find_element(By.CSS_SELECTOR, "td.status").text)
        page.driver.switch_to.default_content()
        page.shot("instructor-released")


def fetch(page: Page) -> None:
    """Fetch the assignment in the Assignments tab; JupyterLab keeps the student's layout in their home."""
    page.assignments()
    page.press("released", "Fetch")
    page.wait(lambda d: page.rows("fetched"))
    assert ASSIGNMENT in page.rows("fetched")[0].text
    page.shot(f"{page.user}-fetched")
    workspaces = Path(f"/home/{page.user}/.jupyter/lab/workspaces")
    page.wait(lambda d: workspaces.is_dir() and any(workspaces.iterdir()))


def test_alice_fetches_it_pastes_her_answers_runs_the_visible_tests_validates_and_submits(hub):
    with paths_of(hub.root, hub.root / "assignments"):
        answers = sample_notebook(ASSIGNMENT, "perfect").cells
    with browser(hub, ALICE) as page:
        fetch(page)
        page.notebook_of_fetched()
        page.wait(lambda d: len(page.cells()) == len(answers))
        for dom, cell in zip(page.cells(), answers):
            if cell.metadata.get("nbgrader", {}).get("solution"):
                page.paste_into(dom, cell.source, markdown=cell.cell_type == "markdown")
        page.run_all(len(answers))
        page.keys(Keys.CONTROL, "s")
        page.wait(lambda d: not d.find_elements(By.CSS_SELECTOR, ".lm-TabBar-tab.jp-mod-dirty"))  # saved
        visible = [dom for dom, cell in zip(page.cells(), answers) if cell.id.startswith("visible-")]
        assert visible and not any(dom.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output[data-mime-type="
                                                     "'application/vnd.jupyter.stderr']") for dom in visible)
        page.shot("alice-answered-and-ran")
        page.driver.find_element(By.XPATH, "//div[contains(@class,'lm-DockPanel-tabBar')]//div[text()='Assignments']").click()
        assert "Success! Your notebook passes all the tests." in page.validate("alice-validated")
        page.submit("alice-submitted")


def test_bob_fetches_it_late_validates_the_blank_release_which_fails_and_says_why_then_submits_it(hub):
    hub.instructor("course.grading.nbgrader_cli", "db", "assignment", "add", ASSIGNMENT,  # the due date passes
                   f"--duedate={datetime.datetime.now(datetime.timezone.utc).isoformat()}")
    with browser(hub, BOB) as page:
        fetch(page)
        shown = page.validate("bob-validate-fails")
        assert "The following cell failed" in shown and "NotImplementedError" in shown and "Success" not in shown
        page.submit("bob-submitted")


def test_the_instructor_collects_from_the_formgrader_tab_grades_and_returns_feedback(hub):
    with browser(hub, "instructor") as page:
        formgrader_row(page).find_element(By.CSS_SELECTOR, "td.collect a").click()
        page.wait(lambda d: formgrader_row(page).find_element(By.CSS_SELECTOR, "td.num-submissions").text == "2", 120)
        page.driver.switch_to.default_content()
        page.shot("instructor-collected")
    for student in (ALICE, BOB):
        assert (hub.root / "submitted" / student / ASSIGNMENT / "timestamp.txt").exists(), hub.log_tail(60)
    hub.instructor("course.grading.batch", ASSIGNMENT)
    with (hub.root / "grades" / ASSIGNMENT / "grades.csv").open() as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert {s: float(rows[s]["total"]) for s in (ALICE, BOB)} == {ALICE: 15, BOB: 0}
    stamped = {s: (hub.root / "submitted" / s / ASSIGNMENT / "timestamp.txt").read_text()[:19] for s in (ALICE, BOB)}
    assert {s: rows[s]["submitted_at"] for s in (ALICE, BOB)} == stamped, "nbgrader's timestamps"
    assert rows[ALICE]["late_by"] == "" and re.fullmatch(r"0:\d\d:\d\d", rows[BOB]["late_by"]), "bob's is late"
    report = (hub.root / "grades" / ASSIGNMENT / "report.md").read_text()
    assert re.search(rf"## Late submissions.*\| {BOB} \| {stamped[BOB]} \|", report, flags=re.S), report
    hub.instructor("course.hub.exchange", "feedback", ASSIGNMENT)


@pytest.mark.parametrize("student, points", [(ALICE, 15), (BOB, 0)])
def test_each_student_fetches_their_feedback_and_reads_their_own_points(hub, student, points):
    with browser(hub, student) as page:
        page.assignments()
        page.press("submitted", "Fetch Feedback")
        page.wait(lambda d: d.find_elements(By.XPATH, "//*[@id='submitted_assignments_list']//a[contains(., 'feedback')]"))
        page.shot(f"{student}-fetched-feedback")
        [folder] = hub.contents(student, f"{ASSIGNMENT}/feedback").json()["content"]
        page.driver.get(f"{hub.user_url(student)}/user/{student}/files/{folder['path']}/{ASSIGNMENT}.html")
        page.wait(lambda d: "Score" in d.find_element(By.TAG_NAME, "body").text)
        assert f"Score: {points:.1f}" in page.driver.find_element(By.TAG_NAME, "body").text
        page.shot(f"{student}-reads-feedback")


# ------------------------------------------------------------------ isolation, tried by bob


def test_a_student_cannot_read_another_students_home(hub):
    assert as_account(BOB, "ls", f"/home/{ALICE}").returncode != 0
    assert as_account(BOB, "cat", f"/home/{ALICE}/{ASSIGNMENT}/{ASSIGNMENT}.ipynb").returncode != 0


def test_a_student_cannot_list_or_read_another_students_submission_in_the_exchange(hub):
    inbound = paths.COURSE_ID
    exchange = hub.root / "build" / "exchange" / inbound / "inbound"
    assert as_account(BOB, "ls", str(exchange)).returncode != 0
    [alices] = [p for p in exchange.iterdir() if p.name.startswith(f"{ALICE}+")]
    assert as_account(BOB, "cat", str(alices / f"{ASSIGNMENT}.ipynb")).returncode != 0


def test_a_student_cannot_read_another_students_feedback(hub):
    feedback = hub.root / "build" / "exchange" / paths.COURSE_ID / "feedback"
    assert as_account(BOB, "ls", str(feedback)).returncode != 0
    for html in feedback.iterdir():
        alices = (hub.root / "feedback" / ALICE / ASSIGNMENT / f"{ASSIGNMENT}.html").read_bytes() == html.read_bytes()
        if alices:
            assert as_account(BOB, "cat", str(html)).returncode != 0


@pytest.mark.parametrize("secret", ["source", "gradebook.db", "assignments", "assignments/tiny/probes.py",
                                    "assignments/tiny/checks.py", "assignments/tiny/reference.npz", "submitted",
                                    "autograded", "feedback", "build/results"])
def test_a_student_cannot_read_the_course_directory(hub, secret):
    target = hub.root / secret
    assert target.exists(), target
    command = ("ls", str(target)) if target.is_dir() else ("cat", str(target))
    assert as_account(BOB, *command).returncode != 0


def test_a_student_cannot_write_into_the_outbound_or_another_students_submission(hub):
    outbound = hub.root / "build" / "exchange" / paths.COURSE_ID / "outbound" / ASSIGNMENT
    assert as_account(BOB, "touch", str(outbound / "planted.py")).returncode != 0
    assert as_account(BOB, "touch", str(outbound / f"{ASSIGNMENT}.ipynb")).returncode != 0
    inbound = hub.root / "build" / "exchange" / paths.COURSE_ID / "inbound"
    [alices] = [p for p in inbound.iterdir() if p.name.startswith(f"{ALICE}+")]
    assert as_account(BOB, "touch", str(alices / f"{ASSIGNMENT}.ipynb")).returncode != 0
    assert as_account(BOB, "touch", str(alices / "planted.py")).returncode != 0


def test_a_student_cannot_submit_as_someone_else(hub):
    """bob submits his blank copy naming alice (nbgrader's submit takes --student): collect refuses it, and alice's
    own submission stays what is graded."""
    forged = as_account(BOB, f"{sys.prefix}/bin/nbgrader", "submit", f"/home/{BOB}/{ASSIGNMENT}", f"--student={ALICE}",
                        f"--assignment={ASSIGNMENT}", env={"JUPYTER_CONFIG_DIR": str(hub.root / "build/hub/jupyter/student")})
    assert forged.returncode == 0, forged.stderr  # the exchange takes it: nbgrader cannot tell
    before = (hub.root / "submitted" / ALICE / ASSIGNMENT / "timestamp.txt").read_text()
    result = subprocess.run([sys.executable, "-m", "course.hub.exchange", "collect", ASSIGNMENT], cwd=paths.ROOT,
                            env=hub.env, capture_output=True, text=True)
    assert result.returncode == 0 and "another account made it" in result.stderr, result.stderr
    assert (hub.root / "submitted" / ALICE / ASSIGNMENT / "timestamp.txt").read_text() == before


def exchange_command(hub: Hub, command: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`make collect`, `make return-feedback` or `make hub-release` of the fixture assignment, as the instructor."""
    return subprocess.run([sys.executable, "-m", "course.hub.exchange", command, ASSIGNMENT], cwd=paths.ROOT,
                          env={**hub.env, **(env or {})}, capture_output=True, text=True)


def inbound(hub: Hub) -> Path:
    return hub.root / "build" / "exchange" / paths.COURSE_ID / "inbound"


def test_a_submission_of_links_fifos_and_hard_links_is_collected_without_them_and_said_so(hub):
    """bob makes his own inbound folder, named as nbgrader's submit names one and newer than his submission: his
    notebook, links to the course's hidden checks and to /etc/shadow, a FIFO, and a file with a second name. Collect
    (as root) copies his notebook alone, and names each thing it left out."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    folder = inbound(hub) / f"{BOB}+{ASSIGNMENT}+{stamp}+planted"
    checks = hub.root / "assignments" / ASSIGNMENT / "checks.py"
    planted = as_account(BOB, "sh", "-c", f"mkdir '{folder}' && cp /home/{BOB}/{ASSIGNMENT}/{ASSIGNMENT}.ipynb "
                         f"'{folder}/' && ln -s '{checks}' '{folder}/checks.py' && ln -s /etc/shadow '{folder}/shadow' "
                         f"&& mkfifo '{folder}/pipe' && echo mine > '{folder}/mine.txt' && "
                         f"ln '{folder}/mine.txt' '{folder}/again.txt'")
    assert planted.returncode == 0, planted.stderr
    result = exchange_command(hub, "collect")
    assert result.returncode == 0, result.stderr
    collected = hub.root / "submitted" / BOB / ASSIGNMENT
    assert sorted(p.name for p in collected.iterdir()) == sorted([f"{ASSIGNMENT}.ipynb", "timestamp.txt"])
    for told in ("checks.py (a symbolic link)", "shadow (a symbolic link)", "pipe (not a file or folder)",
                 "mine.txt (a hard link", "again.txt (a hard link"):
        assert told in result.stderr, result.stderr


def test_a_folder_not_named_as_a_submission_is_skipped_and_said_whose_and_the_class_still_collected(hub):
    before = (hub.root / "submitted" / ALICE / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_bytes()
    assert as_account(BOB, "mkdir", str(inbound(hub) / f"{BOB}+{ASSIGNMENT}+not-a-date")).returncode == 0
    result = exchange_command(hub, "collect")
    assert result.returncode == 0, result.stderr
    assert f"Skipped {BOB}+{ASSIGNMENT}+not-a-date, made by {BOB}" in result.stderr
    assert (hub.root / "submitted" / ALICE / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_bytes() == before


def test_a_submission_its_student_made_unreadable_is_refused_and_said_whose_and_the_class_still_collected(hub):
    before = {s: (hub.root / "submitted" / s / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_bytes() for s in (ALICE, BOB)}
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    folder = inbound(hub) / f"{BOB}+{ASSIGNMENT}+{stamp}+closed"
    assert as_account(BOB, "mkdir", "-m", "700", str(folder)).returncode == 0
    result = exchange_command(hub, "collect")
    assert result.returncode == 0, result.stderr
    assert f"Refused {folder.name}, made by {BOB}: its owner made it unreadable" in result.stderr, result.stderr
    assert {s: (hub.root / "submitted" / s / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_bytes()
            for s in (ALICE, BOB)} == before, "bob's earlier submission stays collected"


def test_a_submission_with_a_forged_timestamp_or_deep_folders_stops_no_later_collect(hub):
    """bob's own inbound folder holds a timestamp.txt no date has (nbgrader parses the collected one at each later
    collect) and folders 40 deep: collect takes what it may, twice, and alice's submission stays collected."""
    before = (hub.root / "submitted" / ALICE / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_bytes()
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    folder = inbound(hub) / f"{BOB}+{ASSIGNMENT}+{stamp}+odd"
    deep = "/".join(["d"] * 40)
    planted = as_account(BOB, "sh", "-c", f"mkdir '{folder}' && cp /home/{BOB}/{ASSIGNMENT}/{ASSIGNMENT}.ipynb "
                         f"'{folder}/' && echo '2026-99-99 99:99:99' > '{folder}/timestamp.txt' && "
                         f"mkdir -p '{folder}/{deep}'")
    assert planted.returncode == 0, planted.stderr
    for _ in range(2):
        result = exchange_command(hub, "collect")
        assert result.returncode == 0, result.stderr
    assert "folders deeper than 16 are left out" in result.stderr or "No newer submission" in result.stderr
    assert (hub.root / "submitted" / BOB / ASSIGNMENT / "timestamp.txt").read_text() == stamp, "the name's, not his"
    assert (hub.root / "submitted" / ALICE / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_bytes() == before


@pytest.mark.parametrize("user", [ALICE, "instructor"])
def test_no_server_offers_the_debugger_which_would_open_a_port_any_account_could_use(hub, user):
    hub.start_server(user)
    page = hub.request("GET", f"/user/{user}/lab").text
    config = json.loads(re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page,
                                  re.S)[1])
    assert "@jupyterlab/debugger-extension" in config["disabledExtensions"], config["disabledExtensions"]


def test_a_student_cannot_rename_a_classmates_submission_away(hub):
    [alices] = [p for p in inbound(hub).iterdir() if p.owner() == ALICE]
    assert inbound(hub).stat().st_mode & 0o1000, "the inbound folder has the sticky bit"
    assert as_account(BOB, "mv", str(alices), str(inbound(hub) / f"{BOB}+{ASSIGNMENT}+moved")).returncode != 0
    assert alices.exists()


@pytest.mark.parametrize("secret", [None, b"", b"\xff\xfe", b"../../x"], ids=["none", "empty", "not-text", "a-path"])
def test_feedback_still_reaches_the_class_when_a_submission_has_no_secret_and_the_instructor_is_told(hub, secret):
    """bob's submission lost its secret, or he changed it in the exchange after submitting (nbgrader carries it to
    his feedback folder): alice still gets hers, and the instructor is told whose was not returned."""
    file = hub.root / "feedback" / BOB / ASSIGNMENT / "submission_secret.txt"
    file.unlink(missing_ok=True)
    if secret is not None:
        file.write_bytes(secret)
    result = exchange_command(hub, "feedback")
    assert result.returncode == 0, result.stderr
    assert f"Not returned to {BOB}" in result.stderr and f"Releasing feedback for student '{ALICE}'" in result.stderr, \
        result.stderr


def test_return_feedback_before_grading_says_what_to_run(hub):
    result = subprocess.run([sys.executable, "-m", "course.hub.exchange", "feedback", "later"], cwd=paths.ROOT,
                            env=hub.env, capture_output=True, text=True)
    assert result.returncode != 0 and "run make autograde ASSIGNMENT=later first" in result.stderr, result


@pytest.mark.parametrize("squat", ["mkdir {}", "ln -s /tmp {}"], ids=["folder", "link"])
def test_a_course_folder_a_student_made_first_is_refused_and_said_whose(hub, tmp_path, squat):
    build = tmp_path / "build"
    (build / "exchange").mkdir(parents=True)
    (build / "exchange").chmod(0o1777)
    make_passable(build / "exchange")
    made = as_account(BOB, "sh", "-c", squat.format(build / "exchange" / paths.COURSE_ID))
    assert made.returncode == 0, made.stderr
    result = exchange_command(hub, "release", {"COURSE_BUILD_DIR": str(build)})
    assert result.returncode != 0
    assert f"of {BOB}, not the course's" in result.stderr and "run make hub again" in result.stderr, result.stderr


def test_make_hub_refuses_a_course_that_root_owns_and_says_what_to_do(tmp_path):
    root = tmp_path / "course"
    env = {**course_env(root, root / "assignments"), "COURSE_HUB_PREFIX": "crsnever-", "COURSE_HUB_PROXY": str(PROXY)}
    result = subprocess.run([sys.executable, "-m", "course.hub.serve", "--port", "1"], cwd=paths.ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode != 0 and "is root's" in result.stderr, result.stdout + result.stderr
    assert "make course-owner OWNER=" in result.stderr
    assert not (root / "build" / "hub").exists(), "refused before anything was made"


def test_the_instructors_server_runs_as_the_course_owner_without_privilege(hub):
    shown = hub.run_code("instructor", "import os\nprint(os.getuid(), os.geteuid())\n"
                                       "print(*[l for l in open('/proc/self/status') if l.startswith('CapEff')])")
    uid, euid, capabilities = shown.split()[0], shown.split()[1], shown.split()[-1]
    assert int(uid) == int(euid) == pwd.getpwnam(owner_name(hub.env)).pw_uid != 0, shown
    assert int(capabilities, 16) == 0, shown


PROCESSES_SEEN = ("import os\nseen = [p for p in os.listdir('/proc') if p.isdigit()]\n"
                  "print(sorted({os.stat(f'/proc/{p}').st_uid for p in seen}), len(seen))")


def test_a_student_sees_only_her_own_processes(hub):
    hub.start_server(BOB)
    assert subprocess.run(["pgrep", "-u", BOB], capture_output=True).returncode == 0, "bob's server runs"
    uids, count = hub.run_code(ALICE, PROCESSES_SEEN).rsplit(maxsplit=1)
    assert uids == f"[{pwd.getpwnam(ALICE).pw_uid}]" and int(count) < 20, (uids, count)


def test_a_page_from_a_students_server_cannot_read_the_instructors_server(hub):
    """What bob's server serves (a process of his can answer in its place) runs on bob's own host: a script there,
    opened by the logged-in instructor, cannot read the instructor's files through their server's API."""
    with browser(hub, "instructor") as page:
        page.driver.get(f"{hub.user_url(BOB)}/user/{BOB}/api/status")  # a page on bob's host
        read = page.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "fetch(arguments[0], {credentials: 'include'}).then(r => r.text())"
            ".then(t => done('read: ' + t.slice(0, 80)), e => done('refused: ' + e));",
            f"{hub.user_url('instructor')}/user/instructor/api/contents")
        assert read.startswith("refused"), read


def test_a_students_server_uses_no_more_memory_than_its_limit_and_the_rest_lives(hub):
    shown = hub.run_code(ALICE, f"""
import subprocess, sys
hog = subprocess.run([sys.executable, '-c', 'bytearray({MEMORY_MB} * 2**20)'])
print('hog ended by signal', -hog.returncode)
""")
    assert shown.strip() == "hog ended by signal 9", shown  # the kernel's OOM killer, in her cgroup alone
    assert hub.run_code(ALICE, "print('still here')").strip() == "still here"


KERNELS_TRANSPORT = "import json, ipykernel.connect\nprint(json.loads(ipykernel.connect.get_connection_info())['transport'])"


@pytest.mark.parametrize("user", [ALICE, "instructor"])
def test_kernels_listen_on_no_port_another_account_could_subscribe_to(hub, user):
    assert hub.run_code(user, KERNELS_TRANSPORT).strip() == "ipc"


def test_a_students_server_writes_no_file_over_its_limit_and_its_tmp_is_her_own(hub):
    shown = hub.run_code(ALICE, f"""
import errno
open('/tmp/alice-was-here', 'w').write('mine')
try:
    with open('/tmp/too-big', 'wb') as f:
        f.write(bytes({FILE_MB + 1} * 2**20))
    print('written')
except OSError as e:
    print('refused', errno.errorcode[e.errno])
""")
    assert shown.strip() == "refused EFBIG", shown
    assert (Path(f"/home/{ALICE}/.tmp/alice-was-here")).read_text() == "mine"
    assert not Path("/tmp/alice-was-here").exists(), "the machine's /tmp is not hers"


# ------------------------------------------------------------------ a real assignment


def test_a_real_assignment_opens_in_jupyterlab_and_its_first_visible_test_shows_the_stub(hub):
    release = paths.release_dir(SMOKE_ASSIGNMENT)
    home = Path(f"/home/{ALICE}") / SMOKE_ASSIGNMENT
    shutil.copytree(release, home)
    subprocess.run(["chown", "-R", f"{ALICE}:", str(home)], check=True)
    cells = nbformat.read(release / f"{SMOKE_ASSIGNMENT}.ipynb", as_version=4).cells
    first_visible = next(i for i, c in enumerate(cells) if c.id.startswith("visible-"))
    with browser(hub, ALICE, f"/user/{ALICE}/lab/tree/{SMOKE_ASSIGNMENT}/{SMOKE_ASSIGNMENT}.ipynb") as page:
        page.wait(lambda d: len(page.cells()) == len(cells), 120)
        page.cells()[first_visible].click()
        page.menu("Run", "Run All Above Selected Cell")
        time.sleep(1)
        page.keys(Keys.SHIFT, Keys.ENTER)
        page.wait(lambda d: "NotImplementedError" in page.cells()[first_visible].text, 300)
        assert "Write your solution here" in page.cells()[first_visible].text
        page.shot("real-assignment-first-visible-test")


def test_stopping_a_students_server_ends_every_process_she_started_there(hub):
    hub.run_code(ALICE, "import subprocess\nsubprocess.Popen(['sleep', '600'], start_new_session=True)")
    assert subprocess.run(["pgrep", "-u", ALICE, "-x", "sleep"], capture_output=True).returncode == 0
    hub.stop_server(ALICE)
    deadline = time.monotonic() + 30
    while (left := subprocess.run(["pgrep", "-a", "-u", ALICE], capture_output=True, text=True).stdout):
        assert time.monotonic() < deadline, f"left running: {left}"
        time.sleep(0.5)


def test_make_hub_again_while_it_runs_adds_a_new_student_who_logs_in_at_once_and_leaves_the_hub_running(hub, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text((paths.ROOT / "roster.csv").read_text().rstrip("\n") + "\ndmitri,Dmitri,Sokolov,dmitri@example.org\n")
    running = sorted(hub.processes())
    result = subprocess.run([sys.executable, "-m", "course.hub.serve"], cwd=paths.ROOT, timeout=120,
                            env={**hub.env, "COURSE_ROSTER": str(roster)}, capture_output=True, text=True)
    newcomer = f"{PREFIX}dmitri"
    assert result.returncode == 0 and "was left running" in result.stdout and newcomer in result.stdout, result
    assert set(running) <= set(hub.processes()), "nothing of the running hub stopped"
    session = requests.Session()
    session.get(f"{hub.url}/hub/login")
    answer = session.post(f"{hub.url}/hub/login", allow_redirects=False, data={
        "username": newcomer, "password": hub.password(newcomer), "_xsrf": session.cookies.get("_xsrf")})
    assert answer.status_code == 302 and "login" not in answer.headers["Location"], (answer.status_code, answer.text)


def test_hub_clean_removes_the_accounts_and_leaves_no_file_of_theirs_to_a_bare_uid(hub):
    """After make hub-clean, an account made later with a removed account's uid owns nothing in the exchange, nor in
    the machine's shared temporary folders."""
    uids = {pwd.getpwnam(name).pw_uid for name in (ALICE, BOB)}
    exchange = hub.root / "build" / "exchange"
    assert any(p.lstat().st_uid in uids for p in exchange.rglob("*")), "the students made files there"
    left = Path("/var/tmp") / f"{BOB}-left-this"
    assert as_account(BOB, "sh", "-c", f"mkdir {left} && touch {left}/file").returncode == 0
    assert hub.processes()
    (hub.state / "hub.pid").unlink()  # whatever happened before, everything the hub started stops
    result = subprocess.run([sys.executable, "-m", "course.hub.clean"], cwd=paths.ROOT, env=hub.env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert hub.processes() == [] and "stopped the hub" in result.stdout, result.stdout
    assert [name for name in (ALICE, BOB) if name in {p.pw_name for p in pwd.getpwall()}] == []
    assert [p for p in exchange.rglob("*") if p.lstat().st_uid in uids] == []
    assert not left.exists(), "what bob left in /var/tmp went with his account"
