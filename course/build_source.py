"""Write each assignment's nbgrader source folder from its assignment folder.

    python -m course.build_source [ASSIGNMENT ...] [--check]

source/<assignment>/ holds what nbgrader releases: the instructor notebook
(built from notebook.py), the visible probes, the course's submission_log.py
and the assignment's data/. Nothing there is edited by hand; --check fails
if anything in it is stale.
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
from pathlib import Path

from course import paths
from course.notebook_format import render


def shipped_files(assignment: str) -> dict[str, Path]:
    """What goes beside the notebook, by its path in the source folder: every file ships as it is."""
    files = {"visible_probes.py": paths.visible_probes_file(assignment)}
    files.update({p.name: p for p in sorted(paths.STUDENT_FILES.glob("*.py"))})
    data = paths.assignment_dir(assignment) / "data"
    files.update({str(p.relative_to(data.parent)): p for p in sorted(data.rglob("*")) if p.is_file()})
    return files


def source_contents(assignment: str) -> dict[str, bytes]:
    """Every file of source/<assignment>/, by relative path."""
    contents = {f"{assignment}.ipynb": render(paths.authoring_file(assignment)).encode()}
    contents.update({name: path.read_bytes() for name, path in shipped_files(assignment).items()})
    return contents


def stale_files(assignment: str) -> tuple[dict[str, bytes], list[Path]]:
    """(files to write, files to delete) to bring source/<assignment>/ up to date."""
    folder = paths.source_dir(assignment)
    wanted = source_contents(assignment)
    write = {name: data for name, data in wanted.items()
             if not (folder / name).is_file() or (folder / name).read_bytes() != data}
    extra = [p for p in folder.rglob("*") if p.is_file() and str(p.relative_to(folder)) not in wanted
             and not ignored(p.relative_to(folder))] if folder.exists() else []
    return write, extra


def ignored(relative: Path) -> bool:
    """Whether nbgrader ignores the file (course.paths.IGNORED_FILES): a run's leftovers, not the source."""
    return any(fnmatch.fnmatch(part, pattern) for part in relative.parts for pattern in paths.IGNORED_FILES)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*", help=f"default: all ({', '.join(paths.assignments())})")
    parser.add_argument("--check", action="store_true", help="fail if a file is stale instead of writing it")
    args = parser.parse_args()
    stale = []
    for assignment in paths.select_assignments(args.assignments):
        folder = paths.source_dir(assignment)
        write, extra = stale_files(assignment)
        stale += [folder / name for name in write] + extra
        if args.check:
            continue
        for name, data in write.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)
            print(f"wrote {folder / name}")
        for path in extra:
            path.unlink()
            print(f"removed {path}")
    if args.check and stale:
        sys.exit(f"stale: {', '.join(map(str, stale))}; run `make source`")


if __name__ == "__main__":
    main()
