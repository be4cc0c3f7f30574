"""Reading a student's submission_log.json (its schema: docs/grading.md)."""

from __future__ import annotations

import json
from pathlib import Path


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
