"""Visible probes of Transformer Architecture Fundamentals: shipped with the notebook.

Each probe runs one of your pieces on inputs like those of the notebook's
visible tests, at a fixed seed, and returns its outputs. submission_log.py
records them in submission_log.json; the grader runs the same probes on the
code you submit and checks that the two agree. They earn no points: your
grade comes from the grader's own checks, on its own inputs.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

ASSIGNMENT = "transformer_fundamentals"

# The names the notebook defines, in the order the notebook asks for them.
GRADED_NAMES = (
    "SimpleTokenizer",
    "TokenEmbedding",
    "PositionalEncoding",
    "TransformerEmbeddings",
    "scaled_dot_product_attention",
    "MultiHeadAttention",
    "LayerNorm",
    "FeedForward",
    "TransformerBlock",
    "MiniTransformer",
    "train_transformer",
    "attention_cost",
    "feed_forward_cost",
    "crossover_length",
    "CrossAttention",
    "DecoderBlock",
    "EncoderDecoder",
)


def tokenizer(ns: dict) -> dict:
    tok = ns["SimpleTokenizer"](vocab_size=6)
    tok.build_vocab(["a movie, a plot!", "A MOVIE?"])
    ids = tok.tokenize("A fine movie", max_length=6)
    return {"cleaned": [tok.clean_text("The MOVIE!")], "ids": ids, "decoded": [tok.decode(ids)]}


def token_embedding(ns: dict) -> dict:
    torch.manual_seed(0)
    return {"output": ns["TokenEmbedding"](vocab_size=10, d_model=8)(torch.tensor([[1, 5, 9], [0, 0, 2]]))}


def positional_encoding(ns: dict) -> dict:
    return {"pe": ns["PositionalEncoding"](d_model=16, max_length=50).pe}


def transformer_embeddings(ns: dict) -> dict:
    torch.manual_seed(0)
    module = ns["TransformerEmbeddings"](vocab_size=20, d_model=8, max_length=10).eval()
    return {"output": module(torch.tensor([[2, 7, 7, 0]]))}


def attention(ns: dict) -> dict:
    g = torch.Generator().manual_seed(0)
    Q, K, V = torch.randn(2, 3, 4, generator=g), torch.randn(2, 5, 4, generator=g), torch.randn(2, 5, 6, generator=g)
    output, weights = ns["scaled_dot_product_attention"](Q, K, V, mask=torch.tensor([1, 1, 0, 1, 0]))
    return {"output": output, "weights": weights}


def multi_head_attention(ns: dict) -> dict:
    torch.manual_seed(0)
    module = ns["MultiHeadAttention"](d_model=12, num_heads=3, dropout=0.0).eval()
    output, weights = module(torch.randn(2, 5, 12))
    return {"output": output, "weights": weights}


def layer_norm(ns: dict) -> dict:
    torch.manual_seed(0)
    x = torch.randn(2, 3, 4) * 5 + 10
    return {"output": ns["LayerNorm"](4, eps=1e-6)(x)}


def feed_forward(ns: dict) -> dict:
    torch.manual_seed(0)
    module = ns["FeedForward"](d_model=8, d_ff=32, dropout=0.1).eval()
    return {"output": module(torch.randn(2, 3, 8))}


def transformer_block(ns: dict) -> dict:
    torch.manual_seed(0)
    block = ns["TransformerBlock"](d_model=12, num_heads=3, d_ff=24, dropout=0.0).eval()
    output, weights = block(torch.randn(2, 5, 12))
    return {"output": output, "weights": weights}


def mini_transformer(ns: dict) -> dict:
    torch.manual_seed(0)
    model = ns["MiniTransformer"](vocab_size=30, d_model=16, num_heads=2, num_layers=2, d_ff=32,
                                  max_length=20, num_classes=2, dropout=0.0).eval()
    ids = F.pad(torch.tensor([[2, 5, 9, 4], [2, 7, 3, 11]]), (0, 2))
    logits, _ = model(ids, (ids != 0).long())
    return {"logits": logits}


def train_transformer(ns: dict) -> dict:
    torch.manual_seed(0)
    ids = torch.cat([torch.randint(3, 10, (8, 6)), torch.randint(10, 17, (8, 6))])
    labels = torch.cat([torch.zeros(8), torch.ones(8)]).long()
    batches = [{"input_ids": ids[i::2], "attention_mask": torch.ones_like(ids[i::2]), "labels": labels[i::2]}
               for i in range(2)]
    model = ns["MiniTransformer"](vocab_size=17, d_model=8, num_heads=2, num_layers=1, d_ff=16,
                                  max_length=6, num_classes=2, dropout=0.0)
    history = ns["train_transformer"](model, batches, batches, num_epochs=2, learning_rate=3e-3)
    return {key: history[key] for key in ("train_loss", "train_acc", "val_loss", "val_acc")}


def layer_costs(ns: dict) -> dict:
    return {"attention": [ns["attention_cost"](10, 4)], "feed_forward": [ns["feed_forward_cost"](10, 4, 16)],
            "crossover": [ns["crossover_length"](64, 256)]}


def cross_attention(ns: dict) -> dict:
    torch.manual_seed(0)
    module = ns["CrossAttention"](d_model=12, num_heads=3, dropout=0.0).eval()
    output, weights = module(torch.randn(2, 3, 12), torch.randn(2, 5, 12))
    return {"output": output, "weights": weights}


def decoder_block(ns: dict) -> dict:
    torch.manual_seed(0)
    block = ns["DecoderBlock"](d_model=12, num_heads=3, d_ff=24, dropout=0.0).eval()
    output, self_weights, cross_weights = block(torch.randn(2, 4, 12), torch.randn(2, 6, 12), torch.tril(torch.ones(4, 4)))
    return {"output": output, "self_weights": self_weights, "cross_weights": cross_weights}


def encoder_decoder(ns: dict) -> dict:
    torch.manual_seed(0)
    model = ns["EncoderDecoder"](vocab_size=15, d_model=16, num_heads=2, num_layers=2, d_ff=32, max_length=12,
                                 dropout=0.0).eval()
    src = torch.tensor([[3, 4, 5, 0, 0], [6, 7, 8, 9, 10]])
    logits, _ = model(src, torch.tensor([[1, 5, 4, 3], [1, 10, 9, 8]]), (src != 0).long())
    return {"logits": logits}


PROBES = {probe.__name__: probe for probe in (
    tokenizer, token_embedding, positional_encoding, transformer_embeddings, attention, multi_head_attention,
    layer_norm, feed_forward, transformer_block, mini_transformer, train_transformer, layer_costs, cross_attention,
    decoder_block, encoder_decoder)}
