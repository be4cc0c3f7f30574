"""Visible probes of A Causal Language Model: shipped with the notebook.

Each probe runs one of your pieces on small inputs like those of the
notebook's visible tests, at a fixed seed, and returns its outputs.
submission_log.py records them in submission_log.json; the grader runs the
same probes on the code you submit and checks that the two agree. They earn
no points: your grade comes from the grader's own checks, on its own inputs.
"""

from __future__ import annotations

import torch

ASSIGNMENT = "causal_language_model"

# The names the notebook defines, in the order the notebook asks for them.
GRADED_NAMES = (
    "masked_softmax",
    "attention_entropy",
    "saturation_stats",
    "dependency_matrix",
    "causal_mask",
    "make_examples",
    "DecoderBlock",
    "TinyGPT",
    "lm_loss",
    "train_lm",
    "next_token_probs",
    "generate",
)


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def masked_softmax(ns: dict) -> dict:
    scores = torch.randn(3, 4, generator=_generator(0))
    mask = torch.tensor([[1, 1, 0, 0], [0, 0, 0, 0], [1, 0, 1, 1]])
    return {"no_mask": ns["masked_softmax"](scores), "mask": ns["masked_softmax"](scores, mask)}


def entropy_and_saturation(ns: dict) -> dict:
    weights = torch.softmax(torch.randn(2, 3, 5, generator=_generator(1)), dim=-1)
    stats = ns["saturation_stats"](weights)
    return {"entropy": ns["attention_entropy"](weights)} | {key: float(stats[key]) for key in sorted(stats)}


def dependency_matrix(ns: dict) -> dict:
    W = torch.randn(3, 2, generator=_generator(2))
    return {"D": ns["dependency_matrix"](lambda x: torch.cumsum(x, dim=0) @ W, torch.randn(4, 3, generator=_generator(3)))}


def causal_mask(ns: dict) -> dict:
    return {"mask_5": ns["causal_mask"](5).float()}


def make_examples(ns: dict) -> dict:
    x, y = ns["make_examples"](torch.arange(100, 120), torch.tensor([0, 7, 15]), 4)
    return {"x": x, "y": y}


def decoder_block(ns: dict) -> dict:
    torch.manual_seed(0)
    block = ns["DecoderBlock"](8, 2, 16, 0.0).eval()
    with torch.no_grad():
        return {"output": block(torch.randn(2, 5, 8, generator=_generator(4)), ns["causal_mask"](5))}


def tiny_gpt(ns: dict) -> dict:
    torch.manual_seed(0)
    model = ns["TinyGPT"](11, 6, 8, 2, 2, 16, 0.0).eval()
    with torch.no_grad():
        return {"logits": model(torch.randint(0, 11, (2, 6), generator=_generator(5)))}


def lm_loss(ns: dict) -> dict:
    logits = torch.randn(2, 3, 5, generator=_generator(6))
    return {"loss": ns["lm_loss"](logits, torch.tensor([[0, 1, 2], [3, 4, 0]]))}


def train_lm(ns: dict) -> dict:
    torch.manual_seed(0)
    model = ns["TinyGPT"](7, 4, 8, 2, 1, 16, 0.0)
    text = torch.randint(0, 7, (200,), generator=_generator(7))
    history = ns["train_lm"](model, text[:150], text[150:], steps=4, batch_size=3, learning_rate=1e-2, eval_every=2)
    return {key: torch.tensor(history[key], dtype=torch.float64) for key in ("step", "train_loss", "val_loss")}


def generation(ns: dict) -> dict:
    logits = torch.randn(2, 6, generator=_generator(8))
    return {"probs": ns["next_token_probs"](logits, 0.7), "top_3": ns["next_token_probs"](logits, 1.0, 3)}


PROBES = {probe.__name__: probe for probe in (masked_softmax, entropy_and_saturation, dependency_matrix, causal_mask,
                                               make_examples, decoder_block, tiny_gpt, lm_loss, train_lm, generation)}
