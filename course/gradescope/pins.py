"""Which of a requirements file's pins the running Python lacks, so that setup.sh installs only when one is missing.

    python -m course.gradescope.pins requirements.txt    # exit 0 if every pin is installed; else 1, naming the others

Standard library only: setup.sh runs it before anything is installed. Gradescope builds its image once from a fresh
venv, where every pin is missing and setup.sh installs them all; a venv that already holds every pinned version (setup
run again, or a container given the course's venv) needs neither pip's install nor its check, which cost seconds even
when there is nothing to do.
"""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path


def pins(requirements: str) -> dict[str, str]:
    """Package -> version of every `package==version` line of a requirements file's text (comments skipped)."""
    found = {}
    for line in requirements.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            found[name.strip()] = version.strip()
    return found


def missing(required: dict[str, str]) -> list[str]:
    """'package==version' of each pin not installed at that version (a local label such as torch's +cpu aside)."""
    lacking = []
    for name, version in required.items():
        try:
            installed = metadata.version(name).split("+")[0]
        except metadata.PackageNotFoundError:
            installed = None
        if installed != version:
            lacking.append(f"{name}=={version}")
    return lacking


def main(argv: list[str]) -> int:
    lacking = missing(pins(Path(argv[0]).read_text()))
    if lacking:
        print(f"{len(lacking)} pinned packages to install, first {lacking[0]}", file=sys.stderr)
    return 1 if lacking else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
