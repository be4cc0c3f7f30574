"""Print where `make test`'s time went: seconds of one worker per group of tests, the slowest first.

    PYTEST_ADDOPTS=--durations=0 make test 2>&1 | tee test.log
    .venv/bin/python scripts/test_time.py test.log

A group is what make test keeps on one worker (tests/conftest.py's worker_group: a test module, or one assignment
of a module parametrized by assignment). The figures are pytest's own durations (setup, call and teardown of each
test), summed; both workers' groups together are the suite's CPU work, about twice its wall time.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]  # tests/ first: its conftest.py, not the repository's

from conftest import worker_group  # noqa: E402

DURATION = re.compile(r"^([\d.]+)s (?:setup|call|teardown)\s+(.+?)\s*$", re.M)  # ids may hold spaces


def seconds_by_group(log: str) -> Counter:
    """{worker group: seconds} from the lines of pytest's --durations report in `log`."""
    found = Counter()
    for seconds, nodeid in DURATION.findall(log):
        found[worker_group(nodeid)] += float(seconds)
    return found


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    groups = seconds_by_group(Path(sys.argv[1]).read_text(errors="replace"))
    for group, seconds in groups.most_common():
        print(f"{seconds:7.0f} s  {group}")
    print(f"{sum(groups.values()):7.0f} s  in all (worker seconds)")


if __name__ == "__main__":
    main()
