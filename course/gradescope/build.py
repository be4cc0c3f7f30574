"""Build an assignment's Gradescope autograder: build/gradescope/<assignment>.zip.

    python -m course.gradescope.build ASSIGNMENT [--hidden-checks after_due_date]

The zip follows Gradescope's autograder contract: setup.sh and run_autograder at its root (course/gradescope/files/),
then what grading needs and nothing else: the machinery (course/), the assignment's folder (probes, checks,
reference data; not its tests), its source notebook, nbgrader_config.py and the pinned requirements.txt, with
environment.sh (the paths grading takes from the environment, and the grading limits of the environment this runs
in: COURSE_CELL_TIMEOUT and the rest of course.grading.limits.SETTINGS) and gradescope.json (course.gradescope.results
.Settings). Built twice from the same files, it is the same zip, byte for byte.
"""

from __future__ import annotations

import argparse
import shlex
import zipfile
from collections.abc import Iterator
from pathlib import Path

from course import paths
from course.gradescope import AUTOGRADER
from course.gradescope.results import SETTINGS_FILE, VISIBILITIES, Settings
from course.grading import limits

FILES = Path(__file__).parent / "files"
SCRIPTS = ("setup.sh", "run_autograder")
SKIPPED = {"__pycache__", ".ipynb_checkpoints", "tests"}  # never shipped (an assignment's tests are the course's)
TIME_MARGIN_S = 60  # run_autograder's limit: the longest one grading may take, and this


def environment(settings: Settings) -> str:
    """environment.sh: what the Makefile exports for the course's commands, for the autograder's layout."""
    source = AUTOGRADER / "source"
    variables = {**paths.course_environment(source, source / "build"), "PYTHONPATH": str(source),
                 "PYTHONDONTWRITEBYTECODE": "1", **settings.limits}
    lines = [f"export {name}={shlex.quote(value)}" for name, value in variables.items()]
    timeout = limits.step_timeout() + TIME_MARGIN_S
    lines += [f'export PATH={AUTOGRADER / "venv" / "bin"}:"$PATH"',
              f'export COURSE_GRADESCOPE_TIMEOUT="${{COURSE_GRADESCOPE_TIMEOUT:-{timeout}}}"']
    return "# Written by course.gradescope.build: sourced by setup.sh and run_autograder.\n" + "\n".join(lines) + "\n"


def tree(folder: Path, under: str) -> Iterator[tuple[str, Path]]:
    """(name in the zip, file) of every file below `folder`, but SKIPPED folders, in a fixed order."""
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not SKIPPED & set(path.relative_to(folder).parts):
            yield f"{under}/{path.relative_to(folder).as_posix()}", path


def contents(assignment: str) -> Iterator[tuple[str, Path]]:
    """Every file of the zip but the generated ones."""
    for name in SCRIPTS:
        yield name, FILES / name
    for name in ("requirements.txt", "nbgrader_config.py"):
        yield name, paths.ROOT / name
    yield from ((name, path) for name, path in tree(paths.ROOT / "course", "course") if not name.startswith(
        "course/gradescope/files/"))
    yield from tree(paths.assignment_dir(assignment), f"assignments/{assignment}")
    yield from tree(paths.source_dir(assignment), f"source/{assignment}")


def add(archive: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.external_attr = (0o755 if name in SCRIPTS else 0o644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)


def build(settings: Settings) -> Path:
    """Write the zip of `settings.assignment`; its path."""
    if not paths.source_notebook(settings.assignment).exists():
        raise SystemExit(f"{paths.source_notebook(settings.assignment)} is missing: run `make source` first")
    target = paths.BUILD / "gradescope" / f"{settings.assignment}.zip"
    target.parent.mkdir(parents=True, exist_ok=True)
    generated = {SETTINGS_FILE: settings.json(), "environment.sh": environment(settings)}
    with zipfile.ZipFile(target, "w") as archive:
        for name, path in contents(settings.assignment):
            add(archive, name, path.read_bytes())
        for name, text in generated.items():
            add(archive, name, text.encode())
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignment")
    parser.add_argument("--hidden-checks", default="after_due_date", choices=VISIBILITIES,
                        help="when students see the graded checks' results (Gradescope's visibility; "
                             "visible tests are shown at once)")
    args = parser.parse_args()
    [assignment] = paths.select_assignments([args.assignment])
    target = build(Settings(assignment, args.hidden_checks, limits.settings()))
    print(f"{target} ({target.stat().st_size / 2**20:.1f} MB): upload it as the assignment's autograder on Gradescope")


if __name__ == "__main__":
    main()
