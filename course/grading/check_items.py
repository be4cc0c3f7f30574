"""An assignment's hidden checks as pytest items: one item per check of assignments/<assignment>/checks.py.

    pytest assignments/<assignment>/checks.py --submission submitted/<student>/<assignment> [-k CHECK] [-x] [--tb=short]
    pytest assignments/<assignment>/checks.py --probe-dir build/grading/<assignment>/<student>/sandbox
    make check-submission STUDENT=<student> ASSIGNMENT=<assignment>

Each item judges one check (`judge_check`: its verdict against the reference data, and the probe's second run
against its first) on probe data: a fresh run of the submission's answer cells and the probes, in the sandbox, by
the same probe step as grading (--submission: a submission folder, or its notebook), or the data a grading left
(--probe-dir). A failed item shows the judge's message, the points it costs and the mistake it names.

The judge (course.grading.judge), and so `make autograde` and the Gradescope autograder, run the same collection
(`judge_checks`): pytest in the judge's own process, the probe data handed to this plugin, each item's plain data
handed back by the plugin's report hook. Points have one path, whichever tool asks. The repository's pytest.ini
loads this plugin (-p course.grading.check_items); without --submission or --probe-dir it collects nothing.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from course import paths
from course.checks import COMMON_MISTAKES, checks_for, grade_cells, likely, mismatch, verdict
from course.grading import untrusted
from course.grading.grade_one import new_record, probe_step, validate
from course.grading.probe import AGAIN_PREFIX
from course.probes import SKIPPED

LOG_TOLERANCE = 1e-4  # how far two runs of the same code may differ
MESSAGE_LIMIT = 1000  # characters of one verdict's message (it may quote the student's outputs)
OUTPUTS_LIMIT = 64 * 2**20  # bytes of probe outputs read at most
REPORT_LIMIT = 2**20
JUDGED = "judged"  # the user property that carries an item's plain data
# pytest's plugins the judge's run leaves out: what reports to a person (it reads plain data), and what scans for
# leaks after a run (a full garbage collection of a process that holds torch: a second per submission).
QUIET_RUN = ("terminal", "cacheprovider", "xdist", "logging", "unraisableexception", "threadexception", "faulthandler",
             "junitxml", "pastebin", "doctest", "warnings")


# ------------------------------------------------------------------ judging one check


def cut_short(error: str) -> bool:
    """Whether a step's error is the grader's doing (its time limit, or a skip after a crash), not the code's."""
    return error.startswith(("TimeLimitExceeded", SKIPPED))


def disagree(got, want) -> bool:
    """Whether two results of the same code differ (beyond LOG_TOLERANCE). NaN and infinities in the same places
    agree: code whose output is NaN gives the same NaN every time."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype.kind == "f" and want.dtype.kind == "f" and got.shape == want.shape:
        gaps = ~np.isfinite(got)
        if np.array_equal(gaps, ~np.isfinite(want)) and np.array_equal(got[gaps], want[gaps], equal_nan=True):
            got, want = np.where(gaps, 0.0, got), np.where(gaps, 0.0, want)
    return mismatch(got, want, LOG_TOLERANCE) is not None


def runs_differ(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    """True if two runs' outputs of one probe are not the same."""
    return a.keys() != b.keys() or any(disagree(a[k], b[k]) for k in a)


def repeatable(first: dict | None, second: dict | None, second_error: str | None) -> bool:
    """Whether a probe's second run agrees with its first (a second run cut short by the grader is no evidence)."""
    if second_error is not None:
        return cut_short(second_error)
    return first is None or second is None or not runs_differ(first, second)


def judge_check(assignment: str, check_id: str, points: int, outputs: dict, errors: dict) -> dict:
    """One check, worth `points`, as plain data: {"check_id", "passed", "points", "max_points", "message",
    "mistake"}. The first run must match the reference, and the second run the first."""
    result = verdict(assignment, check_id, outputs.get(check_id), errors.get(check_id))
    passed, message, mistake = result.passed, result.message, result.mistake
    if passed and not repeatable(outputs.get(check_id), outputs.get(AGAIN_PREFIX + check_id),
                                 errors.get(AGAIN_PREFIX + check_id)):
        passed, mistake = False, "state-between-calls"
        message = (f"{checks_for(assignment)[check_id].piece}: run a second time on the same inputs, it gave other "
                   f"results. {likely(mistake, COMMON_MISTAKES)}")
    return {"check_id": check_id, "passed": passed, "points": points if passed else 0,
            "max_points": points, "message": untrusted.quoted(message, MESSAGE_LIMIT), "mistake": mistake}


# ------------------------------------------------------------------ probe data


def read_probe_data(probe_dir: Path) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, str]]:
    """(outputs by step id and key, probe error by step id), as the probe step wrote them where student code ran
    (so read as untrusted files)."""
    outputs: dict[str, dict[str, np.ndarray]] = {}
    with np.load(io.BytesIO(untrusted.read_bytes(probe_dir / "outputs.npz", OUTPUTS_LIMIT)), allow_pickle=False) as data:
        for name in data.files:
            step_id, key = name.split("/", 1)
            outputs.setdefault(step_id, {})[key] = data[name]
    report = json.loads(untrusted.read_text(probe_dir / "probe_report.json", REPORT_LIMIT))
    errors = {str(step_id): untrusted.quoted(error) for step_id, error in report.get("probe_errors", {}).items()}
    return outputs, errors


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


@contextlib.contextmanager
def _without(variable: str) -> Iterator[None]:
    """The environment without `variable` for a while (a test run's PYTEST_ADDOPTS is not for the judge's)."""
    saved = os.environ.pop(variable, None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ[variable] = saved


def judge_checks(assignment: str, outputs: dict, errors: dict) -> dict[str, dict]:
    """Every check's judged data, by check id, in checks.py's order: the collection of the assignment's checks.py,
    run by pytest in this process on the probe data `outputs` and `errors` (see `read_probe_data`). Raises if an
    item did not report (a check that crashed the grader itself)."""
    plugin = Checks(data=(outputs, errors))
    checks_file = paths.assignment_dir(assignment) / "checks.py"
    with _without("PYTEST_ADDOPTS"):
        code = pytest.main([str(checks_file), "-c", os.devnull, "--rootdir", str(checks_file.parent), "--capture=no",
                            "--noconftest", "--disable-plugin-autoload",  # installed plugins (xdist, anyio): 0.2 s
                            *(arg for name in QUIET_RUN for arg in ("-p", f"no:{name}"))],
                           plugins=[plugin])
    if missing := [check_id for check_id in checks_for(assignment) if check_id not in plugin.judged]:
        raise RuntimeError(f"pytest (exit {code}) judged no verdict for {', '.join(missing)} of {checks_file}")
    return {check_id: plugin.judged[check_id] for check_id in checks_for(assignment)}
