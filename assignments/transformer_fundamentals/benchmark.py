"""This assignment's own figures for `make bench`: training time, accuracy vs the baseline."""

from __future__ import annotations

import re

import nbformat

from course.samples import cell_text


def figures(nb: nbformat.NotebookNode) -> list[str]:
    """Lines to print, read off the executed instructor notebook."""
    trained = re.search(r"Trained in (\d+) s: val acc ([\d.]+), test acc ([\d.]+)", cell_text(nb, "demo-train"))
    baseline = re.search(r"TF-IDF \+ logistic regression\s+([\d.]+)\s+([\d.]+)", cell_text(nb, "demo-baseline"))
    return [f"training (4 epochs): {trained[1]} s",
            f"MiniTransformer: val acc {trained[2]}, test acc {trained[3]}",
            f"TF-IDF + logistic regression: val acc {baseline[1]}, test acc {baseline[2]}"]
