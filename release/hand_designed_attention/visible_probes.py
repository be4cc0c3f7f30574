"""Visible probes of Attention Designed by Hand: shipped with the notebook.

Each probe runs one of your pieces on inputs like those of the notebook's
visible tests, at a fixed seed, and returns its outputs. submission_log.py
records them in submission_log.json; the grader runs the same probes on the
code you submit and checks that the two agree. They earn no points: your
grade comes from the grader's own checks, on its own inputs.
"""

from __future__ import annotations

import numpy as np
import torch

ASSIGNMENT = "hand_designed_attention"

# The names the notebook defines, in the order the notebook asks for them.
GRADED_NAMES = (
    "PytorchTransformer",
    "attention_by_content",
    "attention_by_position",
    "attention_by_content_and_position",
)


def pytorch_transformer(ns: dict) -> dict:
    """The module of the visible tests (input_dim=4, qk_dim=2, v_dim=3, pos_dim=2), its weights set by name."""
    rng = np.random.default_rng(0)
    with torch.no_grad():
        model = ns["PytorchTransformer"](input_dim=4, qk_dim=2, v_dim=3, pos_dim=2, max_seq_len=6)
        for name in ("Qm", "Km", "Vm", "pos"):
            parameter = getattr(model, name).weight
            parameter.copy_(torch.as_tensor(rng.normal(size=tuple(parameter.shape)), dtype=parameter.dtype))
    return {"output": model(torch.as_tensor(rng.normal(size=(5, 4)), dtype=torch.float32))}


def _design(ns: dict, function: str) -> dict:
    return {name: np.asarray(matrix, dtype=np.float64) for name, matrix in zip(("Km", "Qm", "Vm", "pos"), ns[function]())}


def attention_by_content(ns: dict) -> dict:
    return _design(ns, "attention_by_content")


def attention_by_position(ns: dict) -> dict:
    return _design(ns, "attention_by_position")


def attention_by_content_and_position(ns: dict) -> dict:
    return _design(ns, "attention_by_content_and_position")


PROBES = {probe.__name__: probe for probe in (pytorch_transformer, attention_by_content, attention_by_position,
                                               attention_by_content_and_position)}
