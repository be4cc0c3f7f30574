"""Visible probes of A Small GPT, Trained Well: shipped with the notebook.

Each probe runs one of your pieces on small inputs like those of the
notebook's visible tests, at a fixed seed, and returns its outputs.
submission_log.py records them in submission_log.json; the grader runs the
same probes on the code you submit and checks that the two agree. They earn
no points: your grade comes from the grader's own checks, on its own inputs.
"""

from __future__ import annotations

import torch

ASSIGNMENT = "modern_gpt"

# The names the notebook defines, in the order the notebook asks for them.
GRADED_NAMES = (
    "merge_pair",
    "train_bpe",
    "encode",
    "decode",
    "apply_rope",
    "CausalSelfAttention",
    "init_weights",
    "generate",
    "configure_optimizer",
    "lr_at",
    "train_step",
)


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def bpe(ns: dict) -> dict:
    merges = ns["train_bpe"]("aaabdaaabac", 260)
    ids = ns["encode"]("abaa aaab", merges)
    return {"merges": torch.tensor(merges), "ids": torch.tensor(ids),
            "round_trip": torch.tensor(list(ns["decode"](ids, merges).encode("utf-8")))}


def rope(ns: dict) -> dict:
    return {"rotated": ns["apply_rope"](torch.randn(2, 4, 6, generator=_generator(0)), torch.arange(4))}


def _model(ns: dict, **sizes) -> torch.nn.Module:
    torch.manual_seed(0)
    return ns["GPT"](20, max_len=16, d_model=8, n_heads=2, n_layers=1, **sizes)


def attention_and_generation(ns: dict) -> dict:
    model = _model(ns).eval()
    prompt = torch.randint(0, 20, (1, 3), generator=_generator(1))
    ids, logits = ns["generate"](model, prompt, 4, use_cache=True)
    return {"ids": ids, "logits": logits}


def recipe(ns: dict) -> dict:
    model = _model(ns, rope=False)
    optimizer = ns["configure_optimizer"](model, lr=0.0, weight_decay=0.1)
    text = torch.randint(0, 20, (2, 9), generator=_generator(2))
    losses = [ns["train_step"](model, optimizer, text[:, :-1], text[:, 1:], ns["lr_at"](step, 2, 5, 1e-2, 1e-3))
              for step in range(5)]
    return {"group_sizes": torch.tensor([len(group["params"]) for group in optimizer.param_groups]),
            "lr": torch.tensor([ns["lr_at"](step, 2, 5, 1e-2, 1e-3) for step in range(7)], dtype=torch.float64),
            "losses": torch.tensor(losses, dtype=torch.float64)}


PROBES = {probe.__name__: probe for probe in (bpe, rope, attention_and_generation, recipe)}
