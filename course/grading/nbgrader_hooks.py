"""Course code that runs inside nbgrader's own process (named in nbgrader_config.py)."""

from __future__ import annotations

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor

from course import paths
from course.grading.repair import repair


class RepairStructure(NbGraderPreprocessor):
    """Autograde's first step: mend stripped or duplicated nbgrader metadata (see course.grading.repair)."""

    def preprocess(self, nb: nbformat.NotebookNode, resources: dict) -> tuple[nbformat.NotebookNode, dict]:
        info = resources["nbgrader"]
        release = paths.release_dir(info["assignment"]) / f"{info['notebook']}.ipynb"
        for note in repair(nb, nbformat.read(release, as_version=4)):
            self.log.warning("%s: %s", info["student"], note)
        return nb, resources
