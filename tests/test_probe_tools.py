"""What the probes are made of (course.probe_tools): here, the fingerprint a training probe keeps its result by."""

from course.probe_tools import code_fingerprint

MODEL = '''
import torch.nn as nn
WIDTH = 4

def widen(n):
    return n * WIDTH

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(widen(1), 2)

    def forward(self, x):
        return [self.layer(row) for row in x]
'''


def namespace(source: str) -> dict:
    """`source` run as a notebook's cells are: in a fresh namespace named __main__."""
    ns = {"__name__": "__main__"}
    exec(compile(source, "<cell answer>", "exec"), ns)
    return ns


def fingerprint(source: str) -> str:
    ns = namespace(source)
    return code_fingerprint(ns["Model"], ns)


def test_the_same_code_in_two_notebooks_has_one_fingerprint():
    assert fingerprint(MODEL) == fingerprint(MODEL)


def test_a_change_in_a_method_even_in_a_comprehension_changes_the_fingerprint():
    assert fingerprint(MODEL.replace("[self.layer(row)", "[self.layer(-row)")) != fingerprint(MODEL)


def test_a_change_in_a_helper_the_class_calls_changes_the_fingerprint():
    assert fingerprint(MODEL.replace("return n * WIDTH", "return n * WIDTH + 0")) != fingerprint(MODEL)


def test_a_constant_counts_by_its_value():
    assert fingerprint(MODEL.replace("WIDTH = 4", "WIDTH = 5")) != fingerprint(MODEL)


def test_code_the_class_does_not_use_leaves_the_fingerprint_alone():
    assert fingerprint(MODEL + "\ndef unused():\n    return 1\n") == fingerprint(MODEL)


def test_a_base_class_of_the_notebook_counts():
    base = "import torch.nn as nn\nclass Base(nn.Module):\n    def scale(self):\n        return 1\n"
    child = "class Model(Base):\n    def forward(self, x):\n        return x * self.scale()\n"
    assert fingerprint(base + child) != fingerprint(base.replace("return 1", "return 2") + child)
