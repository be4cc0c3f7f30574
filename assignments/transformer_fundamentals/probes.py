"""Hidden probes of Transformer Architecture Fundamentals: instructor-only, never released.

A probe builds one of the student's pieces from the notebook's namespace, runs
it on the grader's own inputs at fixed seeds, and returns plain data: a dict
of numpy arrays. It runs in the grading sandbox (course.grading.probe); the
judge compares its data with the instructor's (reference.npz), in a process
where no student code ran.

Where a piece is built from other pieces (a block from attention,
feed-forward and norms), the probe swaps those parts for simple stand-ins, so
each check looks at one piece only: a bug in the attention costs the attention
points, not the block's too. Stand-ins and inputs stay here: the release ships
only visible_probes.py (the notebook's visible inputs).
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from course.probe_tools import (Namespace, StandInDropout, error_output, fill_parameters, generator, randn, registry,
                               replaced, require, stand_in_registry, to_array, with_stand_in_dropout)

PROBES, probe = registry()  # check id -> probe; the grader runs them all (course.probes.run_probes)


# ---------------------------------------------------------------- helpers


def _as_pair(result, what: str) -> tuple[torch.Tensor, object]:
    if not (isinstance(result, tuple) and len(result) == 2):
        raise TypeError(f"{what} must return a pair (output, attention_weights), got {type(result).__name__}.")
    return result


# ------------------------------------------------------------ stand-ins
# Simple modules with the same interface as the pieces they replace. None of
# them is a transformer piece: they exist so that one piece can be checked
# with the others held fixed. Messages never name them (course.probes).

STAND_INS, stand_in = stand_in_registry()  # stand-in class name -> how a message names it
stand_in("dropout")(StandInDropout)


@stand_in("clean_text")
class StandInCleaner:
    """A fixed clean_text rule: lower-case, keep letters, split on the rest."""

    @staticmethod
    def clean_text(text: str) -> str:
        return " ".join("".join(c if c.isalpha() else " " for c in text.lower()).split())


@stand_in("TokenEmbedding")
class StandInTokenEmbedding(nn.Module):
    """A fixed lookup table in place of TokenEmbedding."""

    def __init__(self, vocab_size: int, d_model: int, *args, **kwargs):
        super().__init__()
        self.register_buffer("table", randn(101, vocab_size, d_model))

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:  # (B, T) -> (B, T, d)
        return self.table[input_ids]


@stand_in("PositionalEncoding")
class StandInPositionalEncoding(nn.Module):
    """Adds a fixed ramp in place of PositionalEncoding."""

    def __init__(self, d_model: int, *args, **kwargs):
        super().__init__()
        self.d_model = d_model

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, T, d) -> (B, T, d)
        T = x.size(1)
        ramp = torch.arange(T, dtype=x.dtype)[:, None] * torch.linspace(0.1, 1.0, self.d_model, dtype=x.dtype)
        return x + ramp.to(x.device)


def _masked_mixing(x: torch.Tensor, mask, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Each position takes a weighted average of the positions `mask` lets it see.

    x: (B, T, d); mask broadcastable to (B, 1, T, T), 1 = may attend.
    Returns mixed values (B, T, d) and weights (B, 1, T, T).
    """
    B, T, d = x.shape
    similarity = torch.sigmoid(x @ x.transpose(-2, -1) / d)[:, None]  # (B, 1, T, T)
    if mask is not None:
        mask = torch.as_tensor(mask, device=x.device)
        try:
            keep = torch.broadcast_to(mask, (B, 1, T, T)) != 0
        except RuntimeError:
            raise ValueError(
                f"the mask passed to attention has shape {tuple(mask.shape)}, which does not "
                f"broadcast to (batch, heads, seq, seq) = {(B, 'H', T, T)}; a padding mask "
                "should have shape (batch, 1, 1, seq)."
            ) from None
        similarity = similarity * keep
    weights = similarity / similarity.sum(-1, keepdim=True).clamp(min=1e-9)
    mixed = weights[:, 0] @ (x @ randn(seed, d, d).to(x.device) / math.sqrt(d))
    return mixed, weights


@stand_in("MultiHeadAttention")
class StandInAttention(nn.Module):
    """Masked averaging in place of MultiHeadAttention: returns (output * scale, weights)."""

    def __init__(self, *args, scale: float = 1.0, **kwargs):
        super().__init__()
        self.scale = scale

    def forward(self, x, mask=None):
        mixed, weights = _masked_mixing(x, mask, seed=201)
        return mixed * self.scale, weights


@stand_in("FeedForward")
class StandInFeedForward(nn.Module):
    """A fixed position-wise map in place of FeedForward."""

    def __init__(self, d_model: int, *args, scale: float = 1.0, **kwargs):
        super().__init__()
        self.register_buffer("weight", randn(202, d_model, d_model) / math.sqrt(d_model) * scale)

    def forward(self, x):
        return torch.sin(x @ self.weight)


@stand_in("LayerNorm")
class StandInNorm(nn.Module):
    """Centres each vector, squashes it and adds a fixed offset, in place of a layer norm.

    Not linear, like a layer norm: normalising then averaging differs from averaging then normalising.
    """

    def __init__(self, features: int, *args, seed: int = 203, **kwargs):
        super().__init__()
        self.register_buffer("offset", randn(seed, features))

    def forward(self, x):
        return torch.tanh(x - x.mean(-1, keepdim=True)) + self.offset


@stand_in("TransformerEmbeddings")
class StandInEmbeddings(nn.Module):
    """Token lookup plus position ramp, in place of TransformerEmbeddings."""

    def __init__(self, vocab_size: int, d_model: int, *args, **kwargs):
        super().__init__()
        self.tokens = StandInTokenEmbedding(vocab_size, d_model)
        self.positions = StandInPositionalEncoding(d_model)

    def forward(self, input_ids):
        return self.positions(self.tokens(input_ids))


@stand_in("TransformerBlock")
class StandInBlock(nn.Module):
    """Masked averaging with a residual, in place of TransformerBlock; it records the shape of the last mask it got
    (() for none), and uses no mask at all if `use_mask` is False."""

    def __init__(self, *args, seed: int = 204, use_mask: bool = True, **kwargs):
        super().__init__()
        self.seed, self.use_mask, self.mask_shape = seed, use_mask, ()

    def forward(self, x, mask=None):
        self.mask_shape = () if mask is None else tuple(torch.as_tensor(mask).shape)
        try:
            mixed, weights = _masked_mixing(x, mask if self.use_mask else None, seed=self.seed)
        except ValueError:  # a mask of the wrong shape: its shape is on record, the logits will be wrong
            mixed, weights = _masked_mixing(x, None, seed=self.seed)
        return x + torch.tanh(mixed), weights


class BagOfWordsClassifier(nn.Module):
    """A tiny classifier with the MiniTransformer interface, for checking the training loop."""

    def __init__(self, vocab_size: int = 20, d_model: int = 6, num_classes: int = 2):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model)
        self.dropout = nn.Dropout(0.3)
        self.classifier = nn.Linear(d_model, num_classes)

    def forward(self, input_ids, attention_mask=None):
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        real = attention_mask.unsqueeze(-1).float()
        pooled = (self.embedding(input_ids) * real).sum(1) / real.sum(1).clamp(min=1)
        return self.classifier(self.dropout(pooled)), []


# ------------------------------------------------------------ tokenizer

VOCAB_CORPUS = [
    "The movie was GREAT! The acting, too.",
    "the plot -- thin; the jokes: stale...",
    "It's a movie you'll forget; it's fine.",
    "Great   fun?  Great fun!",
    "a café, a crêpe and a movie",
]
OTHER_CORPUS = ["plot twist, plot hole", "a twist nobody saw coming", "hole in one"]
CLEAN_INPUTS = [
    "The FILM, REALLY!",
    "  spaces\tand\nnewlines  ",
    "it's a 10/10 -- don't miss it",
    "'quoted' words, rock'n'roll and ...dots",
    "café crêpe NAÏVE",
    "under_score and hyphen-ated",
    "!!!",
]
CASE_INPUTS = ["The FILM Really", "naïve CAFÉ"]  # letters only: only the case can go wrong
PUNCTUATION_INPUTS = ["the film, really! -- great.", "(well) ... ok?"]
UNDERSCORE_INPUTS = ["under_score and snake_case_words"]
FIXED_VOCAB = ["<PAD>", "<UNK>", "<CLS>", "the", "movie", "was", "great", "a", "plot"]


def _tokenizer(ns: Namespace, vocab_size: int = 5000):
    return require(ns, "SimpleTokenizer")(vocab_size=vocab_size)


def _with_fixed_vocab(tokenizer):
    tokenizer.vocab = {word: i for i, word in enumerate(FIXED_VOCAB)}
    tokenizer.inverse_vocab = dict(enumerate(FIXED_VOCAB))
    tokenizer.clean_text = StandInCleaner.clean_text
    return tokenizer


@probe("tokenizer_clean_text")
def probe_clean_text(ns):
    tokenizer = _tokenizer(ns)
    cases = {"case": CASE_INPUTS, "punctuation": PUNCTUATION_INPUTS, "underscores": UNDERSCORE_INPUTS,
             "cleaned": CLEAN_INPUTS}
    return {name: np.array([tokenizer.clean_text(text) for text in texts], dtype=str) for name, texts in cases.items()}


@probe("tokenizer_build_vocab")
def probe_build_vocab(ns):
    out = {}
    for vocab_size in (9, 100):
        tokenizer = _tokenizer(ns, vocab_size)
        tokenizer.clean_text = StandInCleaner.clean_text
        tokenizer.build_vocab(VOCAB_CORPUS)
        ids = sorted(tokenizer.vocab.values())
        if ids != list(range(len(ids))):
            raise ValueError(f"vocab ids must be 0, 1, 2, ... without gaps; got {ids[:12]}")
        words_by_id = sorted(tokenizer.vocab, key=tokenizer.vocab.get)
        inverse_ok = all(tokenizer.inverse_vocab.get(i) == w for i, w in enumerate(words_by_id))
        out[f"words_by_id_{vocab_size}"] = np.array(words_by_id, dtype=str)
        out[f"inverse_matches_{vocab_size}"] = np.array(inverse_ok)
        out[f"size_{vocab_size}"] = np.array(len(tokenizer.vocab))
    out["special_ids"] = np.array([tokenizer.vocab.get(token, -1) for token in ("<PAD>", "<UNK>", "<CLS>")])
    other = _tokenizer(ns, 8)  # a new tokenizer on other texts: nothing of the ones before may leak into it
    other.clean_text = StandInCleaner.clean_text
    other.build_vocab(OTHER_CORPUS)
    out["words_by_id_other"] = np.array(sorted(other.vocab, key=other.vocab.get), dtype=str)
    return out


@probe("tokenizer_tokenize")
def probe_tokenize(ns):
    tokenizer = _with_fixed_vocab(_tokenizer(ns))
    cases = {
        "short": ("The movie was great", 8),
        "unknown_words": ("the zebra movie was a quokka", 10),
        "truncated": ("the movie the movie the movie the movie", 5),
        "exact": ("a plot", 3),
        "cleaned_first": ("THE Movie... was, GREAT!", 7),
        "padded": ("movie", 6),
    }
    return {name: np.array(tokenizer.tokenize(text, max_length=n)) for name, (text, n) in cases.items()}


@probe("tokenizer_decode")
def probe_decode(ns):
    tokenizer = _with_fixed_vocab(_tokenizer(ns))
    cases = {
        "plain": [2, 3, 4, 5, 6, 0, 0],
        "with_unknown": [2, 7, 1, 8, 0],
        "no_cls": [3, 4],
        "tensor_input": torch.tensor([2, 6, 4, 0]),
    }
    return {name: np.array(tokenizer.decode(ids), dtype=str) for name, ids in cases.items()}


# ----------------------------------------------------------- embeddings


@probe("token_embedding")
def probe_token_embedding(ns):
    module = require(ns, "TokenEmbedding")(11, 6).eval()
    params = fill_parameters(module, seed=1)
    ids = torch.tensor([[2, 5, 10, 0, 0], [2, 1, 3, 7, 9]])
    with torch.no_grad():
        out = module(ids)
    return {"parameters": params, "output": to_array(out)}


@probe("positional_encoding")
def probe_positional_encoding(ns):
    out = {}
    for d_model, max_length in ((6, 9), (10, 7)):
        module = require(ns, "PositionalEncoding")(d_model, max_length=max_length).eval()
        pe = getattr(module, "pe", None)
        if not isinstance(pe, torch.Tensor):
            raise AttributeError("PositionalEncoding must register its table as the buffer `self.pe`.")
        out[f"pe_{d_model}"] = to_array(pe.reshape(max_length, d_model))
        if d_model == 6:  # the first pair has frequency 1 whatever the exponent: sin(pos), cos(pos)
            out["column_0"], out["column_1"] = out["pe_6"][:, 0], out["pe_6"][:, 1]
        x = randn(2, 2, 4, d_model)
        with torch.no_grad():
            forward = module(x)
        out[f"forward_{d_model}"] = to_array(forward)
        out[f"forward_dtype_{d_model}"] = np.array(str(forward.dtype))
    out["buffers"] = np.array(sorted(name for name, _ in module.named_buffers()), dtype=str)
    out["n_parameters"] = np.array(sum(p.numel() for p in module.parameters()))
    return out


@probe("transformer_embeddings")
def probe_transformer_embeddings(ns):
    cls = require(ns, "TransformerEmbeddings")
    with replaced(ns, TokenEmbedding=StandInTokenEmbedding, PositionalEncoding=StandInPositionalEncoding):
        module = cls(13, 6, max_length=16, dropout=0.5)
    module.token_embedding = StandInTokenEmbedding(13, 6)
    module.pos_encoding = StandInPositionalEncoding(6)
    ids = torch.tensor([[2, 5, 12, 0], [2, 1, 3, 7]])
    with torch.no_grad():
        evaluated = module.eval()(ids)
        torch.manual_seed(3)
        trained = module.train()(ids)
    return {"eval_output": to_array(evaluated), "train_output": to_array(trained)}


# ------------------------------------------------------------ attention


def _qkv(seed: int, *lead: int, t_q: int = 3, t_k: int = 5, d_k: int = 4, d_v: int = 6):
    return randn(seed, *lead, t_q, d_k), randn(seed + 1, *lead, t_k, d_k), randn(seed + 2, *lead, t_k, d_v)


@probe("attention_values")
def probe_attention_values(ns):
    attention = require(ns, "scaled_dot_product_attention")
    out = {}
    Q, K, V = _qkv(10, 2)
    output, weights = _as_pair(attention(Q, K, V), "scaled_dot_product_attention")
    out["batched_output"], out["batched_weights"] = to_array(output), to_array(weights)
    out["weight_sums_over_keys"] = out["batched_weights"].sum(-1)
    out["scale"] = np.array(softmax_scale(out["batched_weights"], to_array(Q @ K.transpose(-2, -1))))
    out["error_with_heads"] = np.array("")
    Q, K, V = _qkv(10, 2, 3)
    try:
        output, weights = _as_pair(attention(Q, K, V), "scaled_dot_product_attention")
        out["heads_output"], out["heads_weights"] = to_array(output), to_array(weights)
    except Exception as error:
        out["error_with_heads"] = error_output(error)
    for d_k in (1, 16):  # the scale must follow d_k
        Q, K, V = _qkv(20 + d_k, 2, d_k=d_k)
        out[f"d_k_{d_k}_output"] = to_array(attention(Q, K, V)[0])
    return out


@probe("attention_mask")
def probe_attention_mask(ns):
    """Masked attention must equal your own unmasked attention over the allowed keys only."""
    attention = require(ns, "scaled_dot_product_attention")
    Q, K, V = _qkv(30, 2, t_q=5, t_k=5)
    padding = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])[:, None, :]  # (B, 1, T_k): 1 = may attend
    output, weights = attention(Q, K, V, mask=padding)
    plain_weights = attention(Q, K, V)[1]
    out = {
        "plain_row_sums": to_array(plain_weights.sum(-1)),
        "plain_scale": np.array(softmax_scale(to_array(plain_weights), to_array(Q @ K.transpose(-2, -1)))),
        "padding_blocked_weight": to_array(weights[0, :, 3:].abs().max()),
        "padding_row_sums": to_array(weights.sum(-1)),
        "padding_output_first": to_array(output[0]),
        "unmasked_on_allowed_keys": to_array(attention(Q[:1], K[:1, :3], V[:1, :3])[0][0]),
        "padding_output_bool": to_array(attention(Q, K, V, mask=padding.bool())[0]),
        "padding_output": to_array(output),
    }
    causal_output, _ = attention(Q, K, V, mask=torch.tril(torch.ones(5, 5)))  # (T_q, T_k) mask
    out["causal_output"] = to_array(causal_output)
    out["causal_by_rows"] = to_array(torch.cat([attention(Q[:, i : i + 1], K[:, : i + 1], V[:, : i + 1])[0] for i in range(5)], 1))
    blocked_row = torch.ones(2, 5, 5)
    blocked_row[:, 1] = 0  # query 1 may attend to nothing
    output, weights = attention(Q, K, V, mask=blocked_row)
    out["blocked_row_finite"] = np.array(bool(torch.isfinite(output).all() and torch.isfinite(weights).all()))
    keep = [0, 2, 3, 4]
    out["blocked_row_other_outputs"] = to_array(output[:, keep])
    out["unmasked_other_outputs"] = to_array(attention(Q, K, V)[0][:, keep])
    return out


@probe("attention_dropout")
def probe_attention_dropout(ns):
    """Dropout must act once on your own attention weights."""
    attention = require(ns, "scaled_dot_product_attention")
    Q, K, V = _qkv(40, 2, t_q=4, t_k=4)
    dropout = nn.Dropout(0.5)
    plain_output, plain_weights = attention(Q, K, V)
    torch.manual_seed(4)
    train_output, _ = attention(Q, K, V, dropout=dropout.train())
    torch.manual_seed(4)
    dropped_weights_output = F.dropout(plain_weights, 0.5, training=True) @ V
    return {
        "eval_output": to_array(attention(Q, K, V, dropout=dropout.eval())[0]),
        "plain_output": to_array(plain_output),
        "train_output": to_array(train_output),
        "dropout_on_weights": to_array(dropped_weights_output),
    }


def softmax_scale(weights: np.ndarray, scores: np.ndarray) -> float:
    """The c for which weights = softmax(c * scores) over the last axis, fitted by least squares.

    weights, scores: (..., T_q, T_k). log-weights minus their row mean equal c times the scores minus theirs.
    """
    logs = np.log(np.clip(weights, 1e-30, None))
    y, x = logs - logs.mean(-1, keepdims=True), scores - scores.mean(-1, keepdims=True)
    return float((x * y).sum() / (x * x).sum())


def _reference_attention(Q, K, V, mask=None, dropout=None):
    """Attention through torch's own kernel, standing in for the notebook's function."""
    attn_mask = None if mask is None else torch.broadcast_to(torch.as_tensor(mask) != 0, (*Q.shape[:-1], K.size(-2)))
    output = F.scaled_dot_product_attention(Q, K, V, attn_mask=attn_mask)
    eye = torch.eye(K.size(-2), dtype=Q.dtype, device=Q.device).expand(*K.shape[:-1], K.size(-2))
    weights = F.scaled_dot_product_attention(Q, K, eye, attn_mask=attn_mask)  # the weights themselves
    if dropout is not None:  # dropout acts once, on the weights
        weights = dropout(weights)
        output = weights @ V
    return output, weights


@probe("multi_head_attention")
def probe_multi_head_attention(ns):
    cls = require(ns, "MultiHeadAttention")
    module = cls(12, 3, dropout=0.0).eval()
    params = fill_parameters(module, seed=5)
    x = randn(50, 2, 5, 12)  # (B, T, d_model) with B, T, d_model, heads, d_k all different
    padding = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]])[:, None, None, :]  # (B, 1, 1, T)
    out = {"parameters": params}
    with torch.no_grad(), replaced(ns, scaled_dot_product_attention=_reference_attention):
        for name, mask in (("no_mask", None), ("padding", padding)):
            output, weights = _as_pair(module(x, mask=mask), "MultiHeadAttention.forward")
            out[f"{name}_output"] = to_array(output)
            out[f"{name}_weights_shape"] = np.array(tuple(weights.shape))
        out["no_mask_weights"] = to_array(module(x)[1])  # from the projections and the split only
        if isinstance(getattr(module, "W_o", None), nn.Linear) and module.W_o.weight.shape == (12, 12):
            module.W_o.weight.copy_(torch.eye(12))  # with W_o the identity: wrong only if the merge is
            module.W_o.bias.zero_()
            out["identity_projection_output"] = to_array(module(x)[0])
    dropping = with_stand_in_dropout(cls(12, 3, dropout=0.5))  # dropout must act on the attention weights only
    fill_parameters(dropping, seed=5)
    with torch.no_grad(), replaced(ns, scaled_dot_product_attention=_reference_attention):
        out["train_output"] = to_array(_as_pair(dropping(x), "MultiHeadAttention.forward")[0])
    return out


# ----------------------------------------------------- block components


@probe("layer_norm")
def probe_layer_norm(ns):
    cls = require(ns, "LayerNorm")
    out = {}
    x = randn(60, 2, 3, 4) * torch.tensor([1.0, 3.0, 0.01]).view(1, 3, 1) + 2.0  # three scales
    for name, eps in (("default_eps", None), ("large_eps", 0.5)):
        module = cls(4) if eps is None else cls(4, eps=eps)
        params = fill_parameters(module, seed=6)
        with torch.no_grad():
            out[f"{name}_output"] = to_array(module(x))
    exact = cls(4, eps=0.0)  # with eps 0, where eps goes makes no difference
    fill_parameters(exact, seed=6)
    with torch.no_grad():
        out["zero_eps_output"] = to_array(exact(x))
        out["unit_parameters_output"] = to_array(cls(4)(x))  # gamma 1 and beta 0, as created: whether they are used or not
        out["rows_alone"] = to_array(torch.cat([module(row) for row in x.reshape(-1, 1, 4)]).reshape(x.shape))
    leaf = x.clone().requires_grad_(True)  # the backward pass must work too (no in-place op on the input)
    out["backward_error"] = np.array("")
    try:
        (module(leaf) * randn(61, *x.shape)).sum().backward()
        out["input_gradient"] = to_array(leaf.grad)
    except RuntimeError as error:
        out["backward_error"] = error_output(error)
    out["parameters"] = params
    return out


@probe("feed_forward")
def probe_feed_forward(ns):
    module = require(ns, "FeedForward")(6, 10, dropout=0.5)
    params = fill_parameters(module, seed=7)
    x = randn(70, 2, 3, 6)
    with torch.no_grad():
        evaluated = module.eval()(x)
        torch.manual_seed(7)
        trained = module.train()(x)
    return {"parameters": params, "eval_output": to_array(evaluated), "train_output": to_array(trained)}


def _stand_in_block(ns: Namespace, dropout: float) -> nn.Module:
    """The notebook's TransformerBlock (d_model 6) with stand-ins for its attention, feed-forward and norms."""
    with replaced(ns, MultiHeadAttention=StandInAttention, FeedForward=StandInFeedForward, LayerNorm=StandInNorm):
        block = require(ns, "TransformerBlock")(6, 2, 10, dropout=dropout)
    block.attention = StandInAttention()
    block.feed_forward = StandInFeedForward(6)
    block.norm1, block.norm2 = StandInNorm(6, seed=11), StandInNorm(6, seed=12)
    return block


@probe("transformer_block")
def probe_transformer_block(ns):
    block = _stand_in_block(ns, dropout=0.0).eval()
    x = randn(80, 2, 4, 6)
    padding = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]])[:, None, None, :]
    out = {}
    with torch.no_grad():
        for name, mask in (("no_mask", None), ("padding", padding)):
            output, weights = _as_pair(block(x, mask), "TransformerBlock.forward")
            out[f"{name}_output"], out[f"{name}_weights"] = to_array(output), to_array(weights)
        # in training mode, dropout acts on each sublayer's output, before its residual sum
        dropping = with_stand_in_dropout(_stand_in_block(ns, dropout=0.5))
        out["train_output"] = to_array(_as_pair(dropping(x), "TransformerBlock.forward")[0])
        block.norm2 = block.norm1  # one norm for both sublayers: the order of the norms cannot matter
        out["same_norms_output"] = to_array(block(x)[0])
        block.attention, block.feed_forward = StandInAttention(scale=0.0), StandInFeedForward(6, scale=0.0)
        out["zero_sublayers_output"] = to_array(block(x)[0])  # what is left is the residual path and the norms
    return out


# ----------------------------------------------------------- classifier


def _stand_in_model(ns: Namespace, num_layers: int = 2) -> tuple[nn.Module, dict[str, np.ndarray]]:
    """The notebook's MiniTransformer with stand-ins for its parts, and how it held its blocks
    (`blocks_in_module_list`, `blocks_distinct`)."""
    cls = require(ns, "MiniTransformer")
    config = dict(vocab_size=17, d_model=6, num_heads=2, num_layers=num_layers, d_ff=10, max_length=12, num_classes=3)
    with replaced(ns, TransformerEmbeddings=StandInEmbeddings, TransformerBlock=StandInBlock, LayerNorm=StandInNorm):
        model = cls(**config, dropout=0.0)
    blocks = getattr(model, "transformer_blocks", [])
    held = {"blocks_in_module_list": np.array(isinstance(blocks, nn.ModuleList)),
            "blocks_distinct": np.array(len({id(block) for block in blocks}) == num_layers)}
    model.embeddings = StandInEmbeddings(17, 6)
    model.transformer_blocks = nn.ModuleList(StandInBlock(seed=300 + i) for i in range(num_layers))
    model.ln_f = StandInNorm(6, seed=13)
    fill_parameters(model, seed=8)  # the classifier head
    return model.eval(), held


@probe("mini_transformer")
def probe_mini_transformer(ns):
    model, held = _stand_in_model(ns)
    ids = torch.tensor([[2, 5, 9, 4, 0, 0], [2, 7, 3, 11, 16, 8]])
    mask = (ids != 0).long()
    more_padding = F.pad(ids, (0, 4))
    other_padding = torch.where(mask.bool(), ids, torch.full_like(ids, 15))
    out = {**held, "parameters": np.array(sorted(f"{n} {tuple(p.shape)}" for n, p in model.named_parameters()))}
    with torch.no_grad():
        logits, weights = _as_pair(model(ids, mask), "MiniTransformer.forward")
        out["block_mask_shape"] = np.array(model.transformer_blocks[0].mask_shape)
        out["mask_given_to_blocks"] = np.array(model.transformer_blocks[0].mask_shape != ())
        out["logits"], out["n_attention_maps"] = to_array(logits), np.array(len(weights))
        out["logits_more_padding"] = to_array(model(more_padding, (more_padding != 0).long())[0])
        out["logits_other_padding_ids"] = to_array(model(other_padding, mask)[0])
        model.ln_f = nn.Identity()  # without a final norm, where it goes makes no difference
        out["logits_without_final_norm"] = to_array(model(ids, mask)[0])
        model.transformer_blocks = nn.ModuleList(StandInBlock(seed=300 + i, use_mask=False) for i in range(2))
        out["logits_blocks_ignoring_mask"] = to_array(model(ids, mask)[0])  # only the pooling sees the mask
    return out


# ------------------------------------------------------------- training


def training_batches(n: int, seed: int, batch_size: int = 4) -> list[dict[str, torch.Tensor]]:
    """A small fixed dataset in the notebook's batch format (input_ids, attention_mask, labels)."""
    g = generator(seed)
    ids = torch.randint(3, 20, (n, 6), generator=g)
    lengths = torch.randint(2, 7, (n,), generator=g)
    mask = (torch.arange(6)[None, :] < lengths[:, None]).long()
    ids = ids * mask
    ids[:, 0] = 2
    labels = (ids.float().mean(1) > 5.0).long()
    return [
        {"input_ids": ids[i : i + batch_size], "attention_mask": mask[i : i + batch_size], "labels": labels[i : i + batch_size]}
        for i in range(0, n, batch_size)
    ]


def _trained(ns: Namespace, train_size: int, num_epochs: int, learning_rate: float) -> tuple[nn.Module, dict]:
    """A fresh BagOfWordsClassifier trained by the notebook's train_transformer, and its history."""
    torch.manual_seed(9)
    model = BagOfWordsClassifier()  # on the CPU; the notebook's global `device` is not: use the model's
    fill_parameters(model, seed=9)
    with replaced(ns, device=torch.device("meta")):
        history = require(ns, "train_transformer")(model, training_batches(train_size, seed=91),
                                                    training_batches(9, seed=92), num_epochs=num_epochs,
                                                    learning_rate=learning_rate)
    if not isinstance(history, dict):
        raise TypeError(f"train_transformer must return the history dict, got {type(history).__name__}.")
    return model, {key: np.array(history.get(key, []), dtype=float) for key in ("train_loss", "train_acc", "val_loss",
                                                                                  "val_acc")}


def _parameters(model: nn.Module) -> np.ndarray:
    return np.concatenate([to_array(p).ravel() for _, p in sorted(model.named_parameters())])


@probe("train_transformer")
def probe_train_transformer(ns):
    try:  # 13 and 9 examples: the last batch is smaller, so averages over batches and over examples differ
        model, out = _trained(ns, 13, num_epochs=3, learning_rate=0.05)
    except (NotImplementedError, RuntimeError) as error:
        if "meta" not in str(error):
            raise
        return {"uses_model_device": np.array(False)}  # it used the notebook's global `device`
    out["uses_model_device"] = np.array(True)
    out["final_parameters"] = _parameters(model)
    out["train_acc_is_fraction"] = np.array(bool(np.all((out["train_acc"] >= 0) & (out["train_acc"] <= 1))))
    _, frozen = _trained(ns, 13, num_epochs=2, learning_rate=0.0)  # nothing learns: only the losses' bookkeeping
    out["frozen_epoch_1_loss"], out["frozen_epoch_2_loss"] = frozen["train_loss"][:1], frozen["train_loss"][1:]
    one_step, history = _trained(ns, 4, num_epochs=1, learning_rate=0.05)  # one batch, one step: nothing to reset
    out["one_step_parameters"], out["one_step_loss"] = _parameters(one_step), history["train_loss"]
    return out


# ------------------------------------------------------------- costs

COST_SHAPES = ((7, 3, 11), (50, 16, 40), (300, 48, 200))  # (seq_len, d_model, d_ff)
CROSSOVER_SHAPES = ((48, 400), (100, 1000), (30, 70))  # (d_model, d_ff); the last crosses at n = 10
WIDE_SHAPE = (16, 24)  # attention costs more from the first token on: n = 1


def _costs(ns: Namespace) -> dict[str, np.ndarray]:
    """The notebook's attention_cost and feed_forward_cost at COST_SHAPES."""
    attention, feed_forward = require(ns, "attention_cost"), require(ns, "feed_forward_cost")
    return {"attention": np.array([float(attention(n, d)) for n, d, _ in COST_SHAPES]),
            "feed_forward": np.array([float(feed_forward(n, d, f)) for n, d, f in COST_SHAPES])}


@probe("layer_costs")
def probe_layer_costs(ns):
    return _costs(ns)


@probe("crossover_length")
def probe_crossover_length(ns):
    crossover = require(ns, "crossover_length")
    found = [crossover(d, f) for d, f in CROSSOVER_SHAPES + (WIDE_SHAPE,)]
    out = {"returns_int": np.array(all(isinstance(n, (int, np.integer)) for n in found)),
           "lengths": np.array(found[:-1], dtype=float), "wide_model_length": np.array(float(found[-1]))}
    # Clues: the student's own costs, and whether the lengths follow from them
    costs = _costs(ns)
    out["attention_costs"], out["feed_forward_costs"] = costs["attention"], costs["feed_forward"]
    attention, feed_forward = ns["attention_cost"], ns["feed_forward_cost"]
    out["follows_own_costs"] = np.array(all(
        next(n for n in range(1, 10 * f) if attention(n, d) >= feed_forward(n, d, f)) == length
        for (d, f), length in zip(CROSSOVER_SHAPES, found)))
    return out
