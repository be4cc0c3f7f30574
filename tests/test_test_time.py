"""scripts/test_time.py: make test's durations summed by the groups its workers keep together."""

from __future__ import annotations

import subprocess
import sys

from course import paths

LOG = """\
============================= slowest durations =============================
200.50s call     tests/test_assignments.py::test_grader_accuracy[corpus-transformer_fundamentals]
10.25s setup    tests/test_assignments.py::test_solution_passes_every_check[transformer_fundamentals]
0.25s setup    tests/test_assignments.py::test_no_markers[END SOLUTION-transformer_fundamentals]
30.00s setup    tests/test_cluster.py::test_a
5.00s call     tests/test_cluster.py::test_b
1.00s teardown tests/test_cluster.py::test_b
3.00s call     tests/test_docs.py::test_every_make_target_a_doc_shows_exists[README.md]
423 passed, 3 skipped in 1407.58s (0:23:27)
"""


def test_seconds_are_summed_per_worker_group_slowest_first(tmp_path):
    (tmp_path / "test.log").write_text(LOG)
    result = subprocess.run([sys.executable, "scripts/test_time.py", str(tmp_path / "test.log")], cwd=paths.ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert [line.split() for line in result.stdout.splitlines()] == [
        ["211", "s", "tests/test_assignments.py[transformer_fundamentals]"],
        ["36", "s", "tests/test_cluster.py"],
        ["3", "s", "tests/test_docs.py"],
        ["250", "s", "in", "all", "(worker", "seconds)"]]
