"""Print what the sandbox costs: seconds per grading step of one submission, with and without bubblewrap.

    make bench-sandbox [STUDENT=blank] [ASSIGNMENT=name]     (after `make samples`; default: every assignment)

Each mode grades the same submission in a scratch course directory (its own
gradebook, release and build folder), so the course's own records are not touched.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from course import paths  # noqa: E402
from course.grading.nbgrader_cli import nbgrader_command  # noqa: E402
from course.grading.sandbox import grading_env  # noqa: E402


def grade(assignment: str, student: str, mode: str) -> dict[str, float]:
    """Grading seconds per step for one submission, with COURSE_SANDBOX=mode."""
    with tempfile.TemporaryDirectory() as root:
        env = {**grading_env(), "COURSE_DIR": root, "COURSE_BUILD_DIR": f"{root}/build", "COURSE_SANDBOX": mode}
        shutil.copytree(paths.source_dir(assignment), Path(root) / "source" / assignment)
        shutil.copytree(paths.submission_dir(student, assignment), Path(root) / "submitted" / student / assignment)
        subprocess.run(nbgrader_command("generate_assignment", assignment, "--force"), cwd=paths.ROOT, env=env, check=True)
        subprocess.run([sys.executable, "-m", "course.grading.grade_one", assignment, student], cwd=paths.ROOT,
                       env=env, check=True, stdout=subprocess.DEVNULL)
        return json.loads((Path(root) / "build" / "results" / assignment / f"{student}.json").read_text())["seconds"]


def main() -> None:
    student = sys.argv[1] if len(sys.argv) > 1 else "blank"
    for assignment in paths.select_assignments(sys.argv[2:]):
        if not paths.submission_dir(student, assignment).exists():
            sys.exit(f"no submission {student!r} of {assignment}: run `make samples` first")
        plain, jailed = grade(assignment, student, "none"), grade(assignment, student, "bwrap")
        print(f"# {assignment}, {student}")
        for step in plain:
            print(f"{step:>9}: {plain[step]:6.1f} s without sandbox, {jailed[step]:6.1f} s with it "
                  f"({jailed[step] - plain[step]:+.1f} s)")
        print(f"    total: {sum(plain.values()):6.1f} s without sandbox, {sum(jailed.values()):6.1f} s with it "
              f"({sum(jailed.values()) - sum(plain.values()):+.1f} s per submission)")


if __name__ == "__main__":
    main()
