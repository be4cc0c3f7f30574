"""An assignment's hidden checks as pytest items: one item per check of assignments/<assignment>/checks.py.

    pytest assignments/<assignment>/checks.py --submission submitted/<student>/<assignment> [-k CHECK] [-x] [--tb=short]
    pytest assignments/<assignment>/checks.py --probe-dir build/grading/<assignment>/<student>/sandbox
    make check-submission STUDENT=<student> ASSIGNMENT=<assignment>

Each item judges one check (`judge_check`: its verdict against the reference data, and the probe's second run
against its first) on probe data: a fresh run of the submission's answer cells and the probes, in the sandbox, by
the same probe step as grading (--submission: a submission folder, or its notebook), or the data a grading left
(--probe-dir). A failed item shows the judge's message, the points it costs and the mistake it names.

Each item calls the judge's own `judge_check` (course.grading.judge), which `make autograde` and the Gradescope
autograder run in a plain loop: points have one path, whichever tool asks. The repository's pytest.ini loads this
plugin (-p course.grading.check_items); without --submission or --probe-dir it collects nothing.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from course import paths
from course.grading.checking import probe_step
from course.grading.grade_one import validate
from course.grading.judge import judge_check, read_probe_data
from course.grading.record import new_record
from course.verdicts import checks_for, grade_cells

JUDGED = "judged"  # the user property that carries an item's plain data



def probe_submission(assignment: str, submission: Path) -> tuple[tuple[dict, dict], list[str]]:
    """Run a submission (its folder, or its notebook) through grading's probe step, in the sandbox: (its probe
    data, what the step told the student). Fails the collection if no check could judge it."""
    work = Path(tempfile.mkdtemp(prefix="course-check-"))
    try:
        folder = submission
        if submission.is_file():  # a notebook: in a folder of its own, under the name grading expects
            folder = work / "submission"
            folder.mkdir()
            shutil.copyfile(submission, folder / f"{assignment}.ipynb")
        if problem := validate(folder, assignment):
            raise pytest.UsageError(f"{submission} cannot be graded: {problem}")
        record = new_record(assignment, "check", folder)
        if not probe_step(record, folder, work / "sandbox"):
            raise pytest.UsageError(" ".join(record.messages))
        return read_probe_data(work / "sandbox"), record.messages
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ------------------------------------------------------------------ the plugin


CLI_PLUGIN = "course-checks"


def is_checks_file(path: Path) -> bool:
    return path.name == "checks.py" and (path.parent / paths.AUTHORING_FILE).exists()


class CheckFailed(Exception):
    """A check that did not pass: its judged data."""


class CheckItem(pytest.Item):
    """One check, judged on the plugin's probe data."""

    def __init__(self, *, assignment: str, points: int, **kwargs):
        super().__init__(**kwargs)
        self.assignment, self.points = assignment, points

    def runtest(self) -> None:
        outputs, errors = self.parent.plugin.data_for(self.assignment)
        judged = judge_check(self.assignment, self.name, self.points, outputs, errors)
        self.user_properties.append((JUDGED, judged))
        if not judged["passed"]:
            raise CheckFailed(judged)

    def repr_failure(self, excinfo, style=None):
        if not isinstance(excinfo.value, CheckFailed):
            return super().repr_failure(excinfo, style)
        judged = excinfo.value.args[0]
        named = f"; named mistake: {judged['mistake']}" if judged["mistake"] else "; no mistake named"
        return f"{judged['message']}\n(0 / {judged['max_points']} points{named})"

    def reportinfo(self):
        piece = checks_for(self.assignment)[self.name].piece
        return self.path, None, f"{self.name} ({piece}, {self.points} points)"


class ChecksFile(pytest.File):
    """assignments/<assignment>/checks.py: one item per check, in the file's order, judged on `plugin`'s data."""

    def __init__(self, *, plugin: Checks, **kwargs):
        super().__init__(**kwargs)
        self.plugin = plugin

    def collect(self) -> Iterator[CheckItem]:
        assignment = self.path.parent.name
        if paths.assignment_dir(assignment).resolve() != self.path.parent.resolve():
            raise pytest.UsageError(f"{self.path} is not a checks.py of the course's assignments "
                                    f"({paths.ASSIGNMENTS_DIR}; "
                                    "COURSE_ASSIGNMENTS_DIR sets it)")
        self.plugin.data_for(assignment)  # once, before any item: a submission that cannot be probed stops the run
        points, _ = grade_cells(assignment)
        for check_id in checks_for(assignment):
            yield CheckItem.from_parent(self, name=check_id, assignment=assignment, points=points[check_id])


class Checks:
    """The plugin of one run: where its probe data come from, and each check's judged data (check id -> dict)."""

    def __init__(self, data: tuple[dict, dict] | None = None, submission: Path | None = None,
                 probe_dir: Path | None = None):
        self.data, self.submission, self.probe_dir = data, submission, probe_dir
        self.judged: dict[str, dict] = {}
        self.messages: list[str] = []

    def data_for(self, assignment: str) -> tuple[dict, dict]:
        """The probe data to judge, made on first use (a probe run of --submission, or --probe-dir's)."""
        if self.data is None:
            if self.probe_dir is not None:
                self.data = read_probe_data(self.probe_dir)
            else:
                self.data, self.messages = probe_submission(assignment, self.submission)
        return self.data

    def pytest_pycollect_makemodule(self, module_path: Path, parent):
        """An assignment's checks.py named on the command line is collected as its checks (pytest offers no other
        checks.py: they do not match python_files), not as a module of tests."""
        return ChecksFile.from_parent(parent, path=module_path, plugin=self) if is_checks_file(module_path) else None

    def pytest_runtest_logreport(self, report) -> None:
        for name, value in report.user_properties:
            if name == JUDGED and report.when == "call":
                self.judged[value["check_id"]] = value

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.judged:
            return
        got = sum(j["points"] for j in self.judged.values())
        possible = sum(j["max_points"] for j in self.judged.values())
        terminalreporter.section("points")
        for message in self.messages:
            terminalreporter.write_line(f"- {message}")
        for judged in self.judged.values():
            mistake = f"  [{judged['mistake']}]" if judged["mistake"] else ""
            terminalreporter.write_line(f"{judged['points']:>3} / {judged['max_points']:<3} "
                                        f"{judged['check_id']}{mistake}")
        terminalreporter.write_line(f"{got} / {possible} points for the checks run")


def pytest_addoption(parser) -> None:
    group = parser.getgroup("course checks", "an assignment's hidden checks (course.grading.check_items)")
    group.addoption("--submission", type=Path, help="a submission folder (or its notebook): run it through the "
                                                    "sandboxed probe step, and judge each check of checks.py on it")
    group.addoption("--probe-dir", type=Path, help="judge the probe data a grading left in this folder "
                                                   "(build/grading/<assignment>/<student>/sandbox)")


def pytest_configure(config) -> None:
    submission, probe_dir = config.getoption("submission"), config.getoption("probe_dir")
    if submission or probe_dir:
        config.pluginmanager.register(Checks(submission=submission, probe_dir=probe_dir), CLI_PLUGIN)


def pytest_pycollect_makemodule(module_path: Path, parent):
    """A checks.py named without probe data to judge: say what to give."""
    if is_checks_file(module_path) and not parent.config.pluginmanager.has_plugin(CLI_PLUGIN):
        raise pytest.UsageError(f"{module_path} holds an assignment's hidden checks: name the submission to run them "
                                "on, with --submission FOLDER_OR_NOTEBOOK or --probe-dir FOLDER")
    return None
