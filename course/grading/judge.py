"""The judge: points for one submission, decided where no student code ever ran.

    python -m course.grading.judge ASSIGNMENT SUBMISSION_FOLDER PROBE_FOLDER OUT.json

reads the probe's data (outputs.npz, probe_report.json: written where student
code ran, so read as untrusted files), judges each check on the hidden probes'
outputs against the instructor's reference data, as pytest items of the
assignment's checks.py (course.grading.check_items, the one path for points), cross-checks
submission_log.json against the visible probes' fresh outputs and the
notebook's code, and writes plain data:

    {"checks": {check_id: {"passed": bool, "points": int, "max_points": int, "message": str,
                           "mistake": str | None}},
     "log": [{"flag": str, "message": str}, ...]}

The log checks raise flags for the instructor and cost no points.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import nbformat

from course import paths
from course.checks import COMMON_MISTAKES, likely
from course.grading import untrusted
from course.grading.check_items import cut_short, disagree, judge_checks, read_probe_data, runs_differ
from course.grading.probe import VISIBLE_AGAIN_PREFIX, VISIBLE_PREFIX
from course.grading.submission_log import read_log


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
            if differs:
                differing.append(f"{name}/{key}")
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


def judge(assignment: str, submission: Path, probe_dir: Path) -> dict:
    """The judge's plain-data result for one submission (see the module docstring)."""
    outputs, errors = read_probe_data(probe_dir)
    return {"checks": judge_checks(assignment, outputs, errors),
            "log": log_problems(assignment, submission, of_run(outputs, VISIBLE_PREFIX), of_run(errors, VISIBLE_PREFIX),
                                of_run(outputs, VISIBLE_AGAIN_PREFIX))}


def of_run(found: dict, prefix: str) -> dict:
    """The entries of one run (step ids starting with `prefix`), by probe name."""
    return {name.removeprefix(prefix): value for name, value in found.items() if name.startswith(prefix)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignment", choices=paths.assignments())
    parser.add_argument("submission", type=Path, help="the student's submitted folder")
    parser.add_argument("probe_dir", type=Path, help="the probe step's folder (outputs.npz, probe_report.json)")
    parser.add_argument("out", type=Path, help="where to write the result (JSON)")
    args = parser.parse_args()
    args.out.write_text(json.dumps(judge(args.assignment, args.submission, args.probe_dir), indent=1))


if __name__ == "__main__":
    main()
