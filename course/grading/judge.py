"""The judge: points for one submission, decided where no student code ever ran.

`judge` (called in nbgrader's process, or the grader's, neither of which runs student code: course.grading.checking)
reads the probe's data (outputs.npz, probe_report.json: written where student
code ran, so read as untrusted files), judges each check on the hidden probes'
outputs against the instructor's reference data (`judge_check`, one check
at a time in a plain loop; course.grading.check_items shows the same checks as
pytest items, for make check-submission), cross-checks submission_log.json
against the visible probes' fresh outputs and the notebook's code, and returns
plain data:

    {"checks": {check_id: {"passed": bool, "points": int, "max_points": int, "message": str,
                           "mistake": str | None}},
     "log": [{"flag": str, "message": str}, ...]}

The log checks raise flags for the instructor and cost no points.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import nbformat
import numpy as np

from course import untrusted
from course.grading.probe import AGAIN_PREFIX, VISIBLE_AGAIN_PREFIX, VISIBLE_PREFIX
from course.probe_runner import SKIPPED, visible_probe_names
from course.verdicts import COMMON_MISTAKES, checks_for, grade_cells, likely, mismatch, verdict

LOG_TOLERANCE = 1e-4  # how far two runs of the same code may differ
MESSAGE_LIMIT = 1000  # characters of one verdict's message (it may quote the student's outputs)
OUTPUTS_LIMIT = 64 * 2**20  # bytes of probe outputs read at most
UNPACKED_LIMIT = 256 * 2**20  # bytes they may unpack to (a file of a few megabytes must not fill the judge's memory)
REPORT_LIMIT = 2**20


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


def read_outputs(path: Path) -> dict[str, dict[str, np.ndarray]]:
    """Probe outputs by step id and key, from an .npz file written where student code ran (so read as an untrusted
    file, bounded in size and in what it unpacks to, holding arrays only)."""
    outputs: dict[str, dict[str, np.ndarray]] = {}
    with np.load(io.BytesIO(untrusted.read_bytes(path, OUTPUTS_LIMIT)), allow_pickle=False) as data:
        if sum(member.file_size for member in data.zip.infolist()) > UNPACKED_LIMIT:  # (zipfile reads no more)
            raise ValueError(f"the probe's outputs unpack to more than {UNPACKED_LIMIT} bytes")
        for name in data.files:
            step_id, key = name.split("/", 1)
            outputs.setdefault(step_id, {})[key] = data[name]
    return outputs


def with_clues(assignment: str, outputs: dict[str, dict[str, np.ndarray]],
               clues: dict[str, dict[str, np.ndarray]]) -> dict[str, dict[str, np.ndarray]]:
    """`outputs` (a first run, without clues), with the clues (its Clue outputs, worth no points) of a check's second
    run (`clues`) where that run gave the same graded outputs: the clues name the mistake of the very outputs the check
    judged. Nothing graded is taken from the second run, and code that gives other outputs each time keeps the first
    run's, without clues."""
    merged = dict(outputs)
    for check_id, found in clues.items():
        check, first = checks_for(assignment).get(check_id), outputs.get(check_id)
        if check is None or first is None:
            continue
        graded = [expect.key for expect in check.expects]
        if all(key in first and key in found and not disagree(first[key], found[key]) for key in graded
               if key in first or key in found):
            merged[check_id] = first | {clue.key: found[clue.key] for clue in check.clues if clue.key in found}
    return merged


def read_probe_data(probe_dir: Path, assignment: str | None = None,
                    clues: Path | None = None) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, str]]:
    """(outputs by step id and key, probe error by step id), as the probes wrote them where student code ran (so
    read as untrusted files); with `assignment`, the clues of the checks whose probes ran again for them (the file
    `clues`, course.grading.probe.probe_clues), where there is one (`with_clues`)."""
    outputs = read_outputs(probe_dir / "outputs.npz")
    if assignment is not None and clues is not None and os.path.lexists(clues):
        outputs = with_clues(assignment, outputs, read_outputs(clues))
    report = json.loads(untrusted.read_text(probe_dir / "probe_report.json", REPORT_LIMIT))
    errors = {str(step_id): untrusted.quoted(error) for step_id, error in report.get("probe_errors", {}).items()}
    return outputs, errors


def judge_checks(assignment: str, outputs: dict, errors: dict) -> dict[str, dict]:
    """Every check's judged data (`judge_check`), by check id, in checks.py's order, on the probe data `outputs` and
    `errors` (see `read_probe_data`)."""
    points, _ = grade_cells(assignment)
    return {check_id: judge_check(assignment, check_id, points[check_id], outputs, errors)
            for check_id in checks_for(assignment)}


def read_log(submission: Path, assignment: str) -> tuple[dict | None, str | None]:
    """(log, None) if submission_log.json is this assignment's log, else (None, why not)."""
    path = submission / "submission_log.json"
    if not path.exists():
        return None, "submission_log.json is missing: run the notebook's last cell and submit the file it writes."
    try:
        log = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        return None, f"submission_log.json is not valid JSON ({error}); do not edit it by hand."
    if not isinstance(log, dict) or log.get("assignment") != assignment or not isinstance(log.get("probes"), dict):
        return None, "submission_log.json is not this assignment's log; re-run the notebook's last cell."
    return log, None


def log_problems(assignment: str, submission: Path, outputs: dict, errors: dict, again: dict) -> list[dict[str, str]]:
    """What is wrong with submission_log.json, each as a flag and a message for the student.

    `outputs` and `errors` are the visible probes' fresh outputs and errors, by probe name: the log
    must hold the same outputs, and an output only where the submitted code gives one. `again` are
    the outputs of a second run: a probe whose two runs differ shows code that keeps state between
    calls (a bug, reported as one), so its log entry cannot be held against the student.
    """
    log, problem = read_log(submission, assignment)
    if problem:
        return [{"flag": "log-missing", "message": problem}]
    known = visible_probe_names(assignment)  # the names written where student code ran are only ever these
    outputs, errors, again = ({name: value for name, value in found.items() if name in known}
                              for found in (outputs, errors, again))
    problems = []
    unrepeatable = sorted(name for name in outputs if name in again and runs_differ(outputs[name], again[name]))
    if unrepeatable:
        problems.append({"flag": "not-repeatable", "message":
                         f"{', '.join(unrepeatable)}: your code gave different results the two times the grader ran it "
                         f"on the same inputs; the checks of these pieces may fail for it. "
                         f"{likely('state-between-calls', COMMON_MISTAKES)}"})
        outputs = {name: value for name, value in outputs.items() if name not in unrepeatable}
    differing = [f"{name} (the submitted code raised an error)" for name, error in errors.items()
                 if name in log["probes"] and not cut_short(error)]
    for name, fresh in outputs.items():
        logged = log["probes"].get(name)
        if not isinstance(logged, dict):
            differing.append(f"{name} (missing from the log)")
            continue
        for key, value in fresh.items():
            try:
                differs = key not in logged or disagree(logged[key], value)
            except (TypeError, ValueError):  # a hand-edited log with values of another kind
                differs = True
            if differs:  # (the probe is named, not its output: the output's name was written where student code ran)
                differing.append(name)
                break
    if differing:
        problems.append({"flag": "log-differs-from-code", "message":
                         "submission_log.json does not match what the submitted code computes "
                         f"({', '.join(differing[:5])}{', ...' if len(differing) > 5 else ''}): "
                         "re-run the whole notebook (Restart & Run All) before submitting."})
    notebook = nbformat.read(submission / f"{assignment}.ipynb", as_version=4)
    code = _normalised("\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code"))
    sources = log.get("sources") if isinstance(log.get("sources"), dict) else {}
    missing = [str(name) for name, source in sources.items()
               if isinstance(source, str) and source and _normalised(source) not in code]
    if missing:
        problems.append({"flag": "log-code-not-in-notebook", "message":
                         f"the log was written by code that is not in the notebook: "
                         f"{untrusted.quoted(', '.join(missing), 120)}; re-run the whole notebook before submitting."})
    return problems


def _normalised(text: str) -> str:
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def judge(assignment: str, submission: Path, probe_dir: Path, clues: Path | None = None) -> dict:
    """The judge's plain-data result for one submission (see the module docstring), on the probes' data in
    `probe_dir` and the `clues` of a second run of some, if any."""
    outputs, errors = read_probe_data(probe_dir, assignment, clues)
    return {"checks": judge_checks(assignment, outputs, errors),
            "log": log_problems(assignment, submission, of_run(outputs, VISIBLE_PREFIX), of_run(errors, VISIBLE_PREFIX),
                                of_run(outputs, VISIBLE_AGAIN_PREFIX))}


def of_run(found: dict, prefix: str) -> dict:
    """The entries of one run (step ids starting with `prefix`), by probe name."""
    return {name.removeprefix(prefix): value for name, value in found.items() if name.startswith(prefix)}
