"""Write each assignment's instructor notebook from its authoring file.

    python -m course.build_source [--check]
"""

from __future__ import annotations

import argparse
import sys

from course import paths
from course.notebook_format import render


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a notebook is stale instead of writing it")
    args = parser.parse_args()
    stale = []
    for assignment in paths.ASSIGNMENTS:
        target, text = paths.source_notebook(assignment), render(paths.authoring_file(assignment))
        if target.exists() and target.read_text() == text:
            continue
        stale.append(target)
        if not args.check:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            print(f"wrote {target.relative_to(paths.ROOT)}")
    if args.check and stale:
        sys.exit(f"stale: {', '.join(str(p.relative_to(paths.ROOT)) for p in stale)}; run `make source`")


if __name__ == "__main__":
    main()
