"""Visible probes of Pretrained Attention: shipped with the notebook.

Each probe runs one of your pieces on small inputs like those of the
notebook's visible tests, at a fixed seed, and returns its outputs.
submission_log.py records them in submission_log.json; the grader runs the
same probes on the code you submit and checks that the two agree. They earn
no points: your grade comes from the grader's own checks, on its own inputs.
"""

from __future__ import annotations

import torch

ASSIGNMENT = "pretrained_attention"

# The names the notebook defines, in the order the notebook asks for them.
GRADED_NAMES = (
    "cosine_similarity_matrix",
    "input_embeddings",
    "get_attention_maps",
    "attention_entropy",
    "head_pattern_scores",
    "top_heads",
    "capture_qkv",
    "recompute_attention",
    "attention_rollout",
    "word_level_attention",
)
TEXT = "The quick brown fox jumps over the lazy dog."


def _weights(seed: int, *shape: int) -> torch.Tensor:
    """Rows of attention weights: a softmax of seeded scores over the last dimension."""
    return torch.softmax(2 * torch.randn(*shape, generator=torch.Generator().manual_seed(seed)), dim=-1)


def cosine_similarity_matrix(ns: dict) -> dict:
    return {"similarity": ns["cosine_similarity_matrix"](torch.randn(5, 7, generator=torch.Generator().manual_seed(0)))}


def input_embeddings(ns: dict) -> dict:
    encoded = ns["tokenizer"]("Where is the cinema?", "In town.", return_tensors="pt")
    with torch.no_grad():
        return {"embeddings": ns["input_embeddings"](ns["model"].cpu(), encoded["input_ids"], encoded["token_type_ids"])}


def attention_maps(ns: dict) -> dict:
    attn, tokens = ns["get_attention_maps"](ns["model"].cpu(), ns["tokenizer"], TEXT)
    return {"layer_0_mean": attn[0].mean(dim=0), "tokens": list(tokens)}


def head_measures(ns: dict) -> dict:
    attn = _weights(1, 2, 3, 5, 5)
    scores = ns["head_pattern_scores"](attn)
    return ({"entropy": ns["attention_entropy"](attn), "top_3": ns["top_heads"](scores["previous"], 3)}
            | {f"score_{key}": scores[key] for key in sorted(scores)})


def capture_and_recompute(ns: dict) -> dict:
    encoded = ns["tokenizer"](["A short one.", "A longer review of the film."], padding=True, return_tensors="pt")
    captured = ns["capture_qkv"](ns["model"].cpu(), encoded, 1)
    context, weights = ns["recompute_attention"](captured["query"], captured["key"], captured["value"],
                                                 ns["model"].config.num_attention_heads, encoded["attention_mask"])
    return {"query_sum": captured["query"].sum(dim=-1), "weights_head_0": weights[:, 0], "context_sum": context.sum(dim=-1)}


def rollout_and_words(ns: dict) -> dict:
    attn = _weights(2, 3, 2, 6, 6)
    return {"rollout": ns["attention_rollout"](attn), "plain": ns["attention_rollout"](attn, residual=False),
            "words": ns["word_level_attention"](attn[0, 0], [None, 0, 0, 1, 2, None])}


PROBES = {probe.__name__: probe for probe in (cosine_similarity_matrix, input_embeddings, attention_maps, head_measures,
                                               capture_and_recompute, rollout_and_words)}
