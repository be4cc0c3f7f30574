"""This assignment's own figures for `make bench`: the model check, attention on later tokens, the [CLS] sink."""

from __future__ import annotations

import re

import nbformat

from course.samples import cell_text


def figures(nb: nbformat.NotebookNode) -> list[str]:
    """Lines to print, read off the executed instructor notebook."""
    errors = [float(x) for x in re.findall(r"largest difference in weights ([\d.e+-]+)", cell_text(nb, "demo-verify"))]
    future = re.search(r"mean over reviews, heads and queries: (\d+%)", cell_text(nb, "demo-one-head"))
    cls = re.search(r"mean attention on \[CLS\] by layer: ([\d., ]+)", cell_text(nb, "demo-pattern-scores"))
    return [f"recomputed attention vs the model's, 6 layers, padded batch: largest difference {max(errors):.1e}",
            f"attention on later tokens (what a lower-triangle plot hides): {future[1]}",
            f"mean attention on [CLS] by layer: {cls[1].strip()}"]
