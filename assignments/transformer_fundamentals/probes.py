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

import functools
import math
import numbers
from collections import Counter

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from course.probe_tools import (Namespace, StandInDropout, caught, clue, code_fingerprint, error_output,
                                fill_parameters, flat_parameters, generator, like, randn, registry, replaced, require,
                                stand_in_dropout, stand_in_registry, to_array)

PROBES, probe = registry()  # check id -> probe; the grader runs them all (course.probe_runner.run_probes)


# ---------------------------------------------------------------- helpers


def _as_pair(result, what: str) -> tuple[torch.Tensor, object]:
    if not (isinstance(result, tuple) and len(result) == 2):
        raise TypeError(f"{what} must return a pair (output, attention_weights), got {type(result).__name__}.")
    return result


# ------------------------------------------------------------ stand-ins
# Simple modules with the same interface as the pieces they replace. None of
# them is a transformer piece: they exist so that one piece can be checked
# with the others held fixed. Messages never name them (course.probe_runner).

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

    def __init__(self, vocab_size: int, d_model: int, *args, table_seed: int = 101, **kwargs):
        super().__init__()
        self.register_buffer("table", randn(table_seed, vocab_size, d_model))

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:  # (B, T) -> (B, T, d)
        return self.table[input_ids]


@stand_in("PositionalEncoding")
class StandInPositionalEncoding(nn.Module):
    """Adds a fixed ramp in place of PositionalEncoding."""

    def __init__(self, d_model: int, *args, **kwargs):
        super().__init__()
        self.d_model = d_model
        self.max_length = args[0] if args else kwargs.get("max_length")

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, T, d) -> (B, T, d)
        T = x.size(1)
        ramp = torch.arange(T, dtype=x.dtype)[:, None] * torch.linspace(0.1, 1.0, self.d_model, dtype=x.dtype)
        return x + ramp.to(x.device)


def _keep(mask, shape: tuple[int, int, int, int], device=None) -> torch.Tensor:
    """A mask of the notebook's convention (1 = may attend) broadcast to `shape` (B, H, T, S) as flags, True = may
    attend; a ValueError that says so if it does not broadcast."""
    mask = torch.as_tensor(mask, device=device)
    try:
        return torch.broadcast_to(mask, shape) != 0
    except RuntimeError:
        B, _, T, S = shape
        raise ValueError(
            f"the mask passed to attention has shape {tuple(mask.shape)}, which does not broadcast to "
            f"(batch, heads, queries, keys) = {(B, 'H', T, S)}; a padding mask should have shape (batch, 1, 1, keys)."
        ) from None


def _masked_mixing(x: torch.Tensor, mask, seed: int, memory: torch.Tensor | None = None
                   ) -> tuple[torch.Tensor, torch.Tensor]:
    """Each position of x takes a weighted average of the positions of `memory` (x itself by default) that `mask`
    lets it see.

    x: (B, T, d); memory: (B, S, d); mask broadcastable to (B, 1, T, S), 1 = may attend.
    Returns mixed values (B, T, d) and weights (B, 1, T, S).
    """
    memory = x if memory is None else memory
    (B, T, d), S = x.shape, memory.size(1)
    similarity = torch.sigmoid(x @ memory.transpose(-2, -1) / d)[:, None]  # (B, 1, T, S)
    if mask is not None:
        similarity = similarity * _keep(mask, (B, 1, T, S), device=x.device)
    weights = similarity / similarity.sum(-1, keepdim=True).clamp(min=1e-9)
    mixed = weights[:, 0] @ (memory @ randn(seed, d, d).to(x.device) / math.sqrt(d))
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
    """Token lookup plus position ramp, in place of TransformerEmbeddings; it records the dropout it was given."""

    def __init__(self, vocab_size: int, d_model: int, max_length: int = 512, dropout: float = 0.1, *,
                 table_seed: int = 101, **others):
        super().__init__()
        self.dropout_given = float(dropout)
        self.tokens = StandInTokenEmbedding(vocab_size, d_model, table_seed=table_seed)
        self.positions = StandInPositionalEncoding(d_model)

    def forward(self, input_ids):
        return self.positions(self.tokens(input_ids))


@stand_in("TransformerBlock")
class StandInBlock(nn.Module):
    """Masked averaging with a residual, in place of TransformerBlock; it records the last mask it got (None for
    none) and the dropout it was given, and uses no mask at all if `use_mask` is False."""

    def __init__(self, d_model: int = 0, num_heads: int = 0, d_ff: int = 0, dropout: float = 0.1, *, seed: int = 204,
                 use_mask: bool = True, **others):  # TransformerBlock's signature, and the probe's own keywords
        super().__init__()
        self.seed, self.use_mask, self.mask = seed, use_mask, None
        self.dropout_given = float(dropout)

    @property
    def mask_shape(self) -> tuple:
        return () if self.mask is None else tuple(self.mask.shape)

    def forward(self, x, mask=None):
        self.mask = None if mask is None else torch.as_tensor(mask)
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
CASE_INPUTS = ["The FILM Really", "MiXeD case WORDS"]  # ASCII letters only: only the case can go wrong
PUNCTUATION_INPUTS = ["the film, really! -- great.", "(well) ... ok?"]
UNDERSCORE_INPUTS = ["under_score and snake_case_words"]
FIXED_VOCAB = ["<PAD>", "<UNK>", "<CLS>", "the", "movie", "was", "great", "a", "plot"]
SPECIALS = ("<PAD>", "<UNK>", "<CLS>")


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
    out = {name: np.array([tokenizer.clean_text(text) for text in texts], dtype=str) for name, texts in cases.items()}
    out["case_folded"] = np.array([text.lower() for text in out["case"]], dtype=str)  # right but for the case?
    return out


def _ranking(texts: list[str]) -> list[str]:
    """Every word of `texts` (cleaned by the stand-in), most frequent first, ties in order of first appearance."""
    counts = Counter(word for text in texts for word in StandInCleaner.clean_text(text).split())
    return [word for word, _ in counts.most_common()]


@probe("tokenizer_build_vocab")
def probe_build_vocab(ns):
    out, prefixes = {}, []
    ranking = _ranking(VOCAB_CORPUS)
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
        words = [word for word in words_by_id if word not in SPECIALS]
        prefixes.append(words == ranking[: len(words)])
    # Clue: the words (specials aside) are the most frequent ones in the right order, however many they are
    out["ranking_prefix"] = np.array(all(prefixes))
    out["special_ids"] = np.array([tokenizer.vocab.get(token, -1) for token in SPECIALS])
    other = _tokenizer(ns, 8)  # a new tokenizer on other texts: nothing of the ones before may leak into it
    other.clean_text = StandInCleaner.clean_text
    other.build_vocab(OTHER_CORPUS)
    out["words_by_id_other"] = np.array(sorted(other.vocab, key=other.vocab.get), dtype=str)
    tokenizer.build_vocab(OTHER_CORPUS)  # built again: only the new texts' words may be in it
    out["words_by_id_rebuilt"] = np.array(sorted(tokenizer.vocab, key=tokenizer.vocab.get), dtype=str)
    return out


TOKENIZE_CASES = {
    "short": ("The movie was great", 8),
    "unknown_words": ("the zebra movie was a quokka", 10),
    "truncated": ("the movie the movie the movie the movie", 5),
    "exact": ("a plot", 3),
    "cleaned_first": ("THE Movie... was, GREAT!", 7),
    "padded": ("movie", 6),
    "joined_by_punctuation": ("the movie,great - a plot", 8),
}


def _trusted_ids(text: str, max_length: int, *, clean: bool = True, unknown: int = 1, keep: int | None = None,
                 cls_after: bool = False, per_word: bool = False) -> list[int]:
    """tokenize with the fixed vocabulary, or with one mistake: no cleaning, another id for unknown words, `keep`
    ids kept before padding (max_length - 1: truncated one short; a large number: never truncated), <CLS> put
    before the words after they were truncated to max_length."""
    vocab = {word: i for i, word in enumerate(FIXED_VOCAB)}
    if per_word:  # split at spaces first, then each piece cleaned (one id per piece, empty pieces included)
        words = [vocab.get(StandInCleaner.clean_text(piece), unknown) for piece in text.split()]
    else:
        words = [vocab.get(word, unknown) for word in (StandInCleaner.clean_text(text) if clean else text).split()]
    ids = [2] + words[:max_length] if cls_after else ([2] + words)[: max_length if keep is None else keep]
    return ids + [0] * (max_length - len(ids))


@probe("tokenizer_tokenize")
def probe_tokenize(ns):
    tokenizer = _with_fixed_vocab(_tokenizer(ns))
    out = {name: np.array(tokenizer.tokenize(text, max_length=n)) for name, (text, n) in TOKENIZE_CASES.items()}

    def like_ids(name: str, **mistake) -> np.ndarray:
        text, n = TOKENIZE_CASES[name]
        return like(out[name].astype(float), np.array(_trusted_ids(text, n, **mistake), dtype=float))

    # Clues: each output as one mistake would make it
    out["like_cls_after_truncation"] = clue(lambda: np.array(bool(like_ids("truncated", cls_after=True)
                                                     or like_ids("truncated", keep=10**6))))  # or never truncated
    out["like_one_short"] = clue(lambda: like_ids("truncated", keep=TOKENIZE_CASES["truncated"][1] - 1))
    out["like_uncleaned"] = clue(lambda: like_ids("cleaned_first", clean=False))
    out["like_cleaned_per_word"] = clue(lambda: like_ids("joined_by_punctuation", per_word=True))
    out["like_unknown_as_pad"] = clue(lambda: like_ids("unknown_words", unknown=0))
    return out


@probe("tokenizer_decode")
def probe_decode(ns):
    tokenizer = _with_fixed_vocab(_tokenizer(ns))
    cases = {
        "plain": [2, 3, 4, 5, 6, 0, 0],
        "with_unknown": [2, 7, 1, 8, 0],
        "no_cls": [3, 4],
        "tensor_input": torch.tensor([2, 6, 4, 0]),
        "pad_inside": [2, 3, 0, 4, 0],
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
    result = {"parameters": params, "output": to_array(out)}
    # Clue: the output is the table's rows for the ids times some constant (right or wrong)
    table = getattr(getattr(module, "embedding", None), "weight", None)
    result["scaled_lookup"] = np.array(False)
    if isinstance(table, torch.Tensor) and table.shape == (11, 6) and result["output"].shape == (2, 5, 6):
        rows = to_array(table)[ids.numpy()]
        scale = float((rows * result["output"]).sum() / (rows * rows).sum())
        result["scaled_lookup"] = like(result["output"], rows * scale)
    return result


def _trusted_pe(max_length: int, d_model: int, *, first_position: int = 0, swapped: bool = False,
                concatenated: bool = False) -> np.ndarray:
    """The sinusoidal table, or the table with one mistake: positions from `first_position`, cos and sin swapped,
    sines and cosines side by side instead of interleaved."""
    position = np.arange(first_position, first_position + max_length, dtype=float)[:, None]
    angles = position / 10000 ** (np.arange(0, d_model, 2) / d_model)  # (max_length, d_model / 2)
    even, odd = (np.cos(angles), np.sin(angles)) if swapped else (np.sin(angles), np.cos(angles))
    if concatenated:
        return np.concatenate([even, odd], axis=1)
    table = np.zeros((max_length, d_model))
    table[:, 0::2], table[:, 1::2] = even, odd
    return table


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
            # Clues: the table as one mistake would make it
            out["like_swapped"] = clue(lambda: like(out["pe_6"], _trusted_pe(max_length, d_model, swapped=True)))
            out["like_concatenated"] = clue(lambda: like(out["pe_6"], _trusted_pe(max_length, d_model, concatenated=True)))
            out["like_positions_from_1"] = clue(lambda: like(out["pe_6"], _trusted_pe(max_length, d_model, first_position=1)))
        x = randn(2, 2, 4, d_model)
        given = x.clone()
        with torch.no_grad():
            forward = module(x)
        out[f"forward_{d_model}"] = to_array(forward)
        out[f"forward_dtype_{d_model}"] = np.array(str(forward.dtype))
        if d_model == 6:  # forward must leave the caller's tensor as it was
            out["input_unchanged"] = np.array(bool(torch.equal(x, given)))
    out["buffers"] = np.array(sorted(name for name, _ in module.named_buffers()), dtype=str)
    out["n_parameters"] = np.array(sum(p.numel() for p in module.parameters()))
    return out


@probe("transformer_embeddings")
def probe_transformer_embeddings(ns):
    cls = require(ns, "TransformerEmbeddings")
    with replaced(ns, TokenEmbedding=StandInTokenEmbedding, PositionalEncoding=StandInPositionalEncoding):
        module = cls(13, 6, max_length=16, dropout=0.3)
    out = {"token_embedding_used": np.array(any(isinstance(m, StandInTokenEmbedding) for m in module.modules())),
           "max_length_passed": np.array(any(isinstance(m, StandInPositionalEncoding) and m.max_length == 16
                                             for m in module.modules()))}
    module.token_embedding = StandInTokenEmbedding(13, 6)
    module.pos_encoding = StandInPositionalEncoding(6)
    ids = torch.tensor([[2, 5, 12, 0], [2, 1, 3, 7]])
    with torch.no_grad():
        evaluated = module.eval()(ids)
        torch.manual_seed(3)
        trained = module.train()(ids)
        tokens = module.token_embedding(ids)
        out.update({"eval_output": to_array(evaluated), "train_output": to_array(trained)})
        # Clues: the eval-mode output as one mistake would make it
        out["like_no_positions"] = clue(lambda: like(out["eval_output"], tokens))
        out["like_tokens_twice"] = clue(lambda: like(out["eval_output"], tokens + module.pos_encoding(tokens)))
        # Clue: in training mode, dropout acting once on the eval-mode output, at a rate other than the given 0.3
        # (F.dropout's default 0.5, nn.Dropout's 0.1)
        rates = []
        for rate in (0.5, 0.1):
            torch.manual_seed(3)
            rates.append(bool(like(out["train_output"], F.dropout(evaluated, rate, training=True))))
        out["like_other_dropout_rate"] = clue(lambda: np.array(any(rates)))
    return out


# ------------------------------------------------------------ attention


def _qkv(seed: int, *lead: int, t_q: int = 3, t_k: int = 5, d_k: int = 4, d_v: int = 6):
    return randn(seed, *lead, t_q, d_k), randn(seed + 1, *lead, t_k, d_k), randn(seed + 2, *lead, t_k, d_v)


def _attend(attention, Q, K, V, **options) -> tuple[torch.Tensor, torch.Tensor]:
    """The notebook's attention on copies of Q, K, V (a change it makes to its inputs stays out of the other
    outputs: the check of inputs_unchanged sees it)."""
    return _as_pair(attention(Q.clone(), K.clone(), V.clone(), **options), "scaled_dot_product_attention")


def _trusted_weights(Q, K, mask=None, scale: float | None = None, dim: int = -1) -> torch.Tensor:
    """softmax(Q K^T * scale) over `dim` (scale 1 / sqrt(d_k) by default), blocked scores filled with -1e9."""
    scores = Q @ K.transpose(-2, -1) * (1 / math.sqrt(Q.size(-1)) if scale is None else scale)
    if mask is not None:
        scores = scores.masked_fill(torch.as_tensor(mask) == 0, -1e9)
    return torch.softmax(scores, dim=dim)


def _large_scores_finite(attention) -> np.ndarray:
    """Whether attention stays finite when the scores are in the hundreds (softmax must not overflow)."""
    Q, K, V = _qkv(15, 2)
    output, weights = _attend(attention, Q * 30, K * 30, V)
    return np.array(bool(torch.isfinite(output).all() and torch.isfinite(weights).all()))


@probe("attention_values")
def probe_attention_values(ns):
    attention = require(ns, "scaled_dot_product_attention")
    out = {}
    Q, K, V = _qkv(10, 2)
    given = [t.clone() for t in (Q, K, V)]
    output, weights = _as_pair(attention(Q, K, V), "scaled_dot_product_attention")
    out["inputs_unchanged"] = np.array(all(torch.equal(t, g) for t, g in zip((Q, K, V), given)))
    Q, K, V = given
    out["batched_output"], out["batched_weights"] = to_array(output), to_array(weights)
    out["weight_sums_over_keys"] = out["batched_weights"].sum(-1)
    scores = Q @ K.transpose(-2, -1)
    out["scale"] = np.array(softmax_scale(out["batched_weights"], to_array(scores)))
    # Clues: the weights are a softmax of the scores times some constant; as one mistake would make them
    out["like_softmax_of_scores"] = clue(lambda: like(out["batched_weights"], _trusted_weights(Q, K, scale=float(out["scale"]))))
    out["like_softmax_over_queries"] = clue(lambda: like(out["batched_weights"], _trusted_weights(Q, K, dim=-2)))
    out["like_scaled_after_softmax"] = clue(lambda: like(out["batched_weights"], _trusted_weights(Q, K, scale=1.0) / 2))
    out["large_scores_finite"] = _large_scores_finite(attention)
    out["error_with_heads"] = np.array("")
    Q, K, V = _qkv(10, 2, 3)
    out["heads_like_softmax_over_queries"] = np.array(False)
    try:
        output, weights = _attend(attention, Q, K, V)
        out["heads_output"], out["heads_weights"] = to_array(output), to_array(weights)
        out["heads_like_softmax_over_queries"] = like(out["heads_weights"], _trusted_weights(Q, K, dim=-2))
    except Exception as error:
        out["error_with_heads"] = error_output(error)
    for d_k in (1, 16):  # the scale must follow d_k
        Q, K, V = _qkv(20 + d_k, 2, d_k=d_k)
        out[f"d_k_{d_k}_output"] = to_array(_attend(attention, Q, K, V)[0])
    return out


@probe("attention_mask")
def probe_attention_mask(ns):
    """Masked attention must equal your own unmasked attention over the allowed keys only."""
    attention = require(ns, "scaled_dot_product_attention")
    Q, K, V = _qkv(30, 2, t_q=5, t_k=5)
    padding = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])[:, None, :]  # (B, 1, T_k): 1 = may attend
    output, weights = _attend(attention, Q, K, V, mask=padding)
    plain_weights = _attend(attention, Q, K, V)[1]
    out = {
        "plain_row_sums": to_array(plain_weights.sum(-1)),
        "padding_blocked_weight": to_array(weights[0, :, 3:].abs().max()),
        "padding_row_sums": to_array(weights.sum(-1)),
        "padding_output_first": to_array(output[0]),
        "unmasked_on_allowed_keys": to_array(_attend(attention, Q[:1], K[:1, :3], V[:1, :3])[0][0]),
        "padding_output_bool": caught(lambda: _attend(attention, Q, K, V, mask=padding.bool())[0]),
        "padding_output": to_array(output),
    }
    # Clues: the padding weights as one mistake would make them
    out["like_mask_after_softmax"] = clue(lambda: like(to_array(weights), _trusted_weights(Q, K) * padding))
    out["like_reversed"] = clue(lambda: like(to_array(weights), _trusted_weights(Q, K, mask=1 - padding)))
    out["large_scores_finite"] = _large_scores_finite(attention)
    causal_output, _ = _attend(attention, Q, K, V, mask=torch.tril(torch.ones(5, 5)))  # (T_q, T_k) mask
    out["causal_output"] = to_array(causal_output)
    out["causal_by_rows"] = to_array(torch.cat([_attend(attention, Q[:, i : i + 1], K[:, : i + 1], V[:, : i + 1])[0]
                                                for i in range(5)], 1))
    blocked_row = torch.ones(2, 5, 5)
    blocked_row[:, 1] = 0  # query 1 may attend to nothing
    output, weights = _attend(attention, Q, K, V, mask=blocked_row)
    out["blocked_row_finite"] = np.array(bool(torch.isfinite(output).all() and torch.isfinite(weights).all()))
    keep = [0, 2, 3, 4]
    out["blocked_row_other_outputs"] = to_array(output[:, keep])
    out["unmasked_other_outputs"] = to_array(_attend(attention, Q, K, V)[0][:, keep])
    return out


@probe("attention_dropout")
def probe_attention_dropout(ns):
    """Dropout must act once on your own attention weights."""
    attention = require(ns, "scaled_dot_product_attention")
    Q, K, V = _qkv(40, 2, t_q=4, t_k=4)
    dropout = nn.Dropout(0.5)
    plain_output, plain_weights = _attend(attention, Q, K, V)
    torch.manual_seed(4)
    train_output, _ = _attend(attention, Q, K, V, dropout=dropout.train())
    torch.manual_seed(4)
    dropped_weights_output = F.dropout(plain_weights, 0.5, training=True) @ V
    torch.manual_seed(4)  # in eval mode nothing may be dropped: what would be, at this seed, is the training output
    eval_output = _attend(attention, Q, K, V, dropout=dropout.eval())[0]
    out = {
        "eval_output": to_array(eval_output),
        "plain_output": to_array(plain_output),
        "train_output": to_array(train_output),
        "dropout_on_weights": to_array(dropped_weights_output),
    }
    out["eval_like_train"] = like(out["eval_output"], out["train_output"])  # clue: it drops in eval mode too
    return out


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


def _mha_clues(module: nn.Module, x: torch.Tensor, out: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Clues from the module's own projections (trusted attention): its weights and merged output as one mistake
    would make them."""
    layers = {name: getattr(module, name, None) for name in ("W_q", "W_k", "W_v")}
    clues = {key: np.array(False) for key in ("like_wrong_projection", "like_view_split", "like_other_scale",
                                              "like_merge_without_transpose")}
    if not all(isinstance(layer, nn.Linear) and layer.weight.shape == (12, 12) for layer in layers.values()):
        return clues
    B, T, H = 2, 5, 3
    projected = {name: layer(x) for name, layer in layers.items()}
    heads = {name: t.view(B, T, H, 4).transpose(1, 2) for name, t in projected.items()}
    weights = out["no_mask_weights"]
    pairs = [(q, k) for q in layers for k in layers if (q, k) != ("W_q", "W_k")]  # queries and keys from other layers
    clues["like_wrong_projection"] = clue(lambda: np.array(any(like(weights, _trusted_weights(heads[q], heads[k]))
                                                  for q, k in pairs)))
    clues["like_view_split"] = clue(lambda: like(weights, _trusted_weights(*(projected[n].view(B, H, T, 4) for n in ("W_q", "W_k")))))
    scores = heads["W_q"] @ heads["W_k"].transpose(-2, -1)
    scale = softmax_scale(weights, to_array(scores)) if weights.shape == (B, H, T, T) else 0.5
    clues["like_other_scale"] = clue(lambda: np.array(bool(abs(scale - 0.5) > 1e-3
                                              and like(weights, torch.softmax(scale * scores, -1)))))
    if "identity_projection_output" in out:  # W_o is the identity: the merged heads themselves
        merged = _trusted_weights(heads["W_q"], heads["W_k"]) @ heads["W_v"]  # (B, H, T, d_k)
        clues["like_merge_without_transpose"] = clue(lambda: like(out["identity_projection_output"], merged.reshape(B, T, 12)))
    return clues


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
        out["padding_like_no_mask"] = like(out["padding_output"], out["no_mask_output"])  # clue: the mask is lost
        if isinstance(getattr(module, "W_o", None), nn.Linear) and module.W_o.weight.shape == (12, 12):
            module.W_o.weight.copy_(torch.eye(12))  # with W_o the identity: wrong only if the merge is
            module.W_o.bias.zero_()
            out["identity_projection_output"] = to_array(module(x)[0])
        out.update(_mha_clues(module, x, out))
        fresh = cls(12, 3, dropout=0.0).eval()  # called on a second input, it must use that input alone
        fill_parameters(fresh, seed=5)
        fresh(x)
        out["second_input_output"] = to_array(_as_pair(fresh(randn(51, 2, 5, 12)), "MultiHeadAttention.forward")[0])
    dropping = cls(12, 3, dropout=0.5)  # dropout must act on the attention weights only
    fill_parameters(dropping, seed=5)
    with (torch.no_grad(), replaced(ns, scaled_dot_product_attention=_reference_attention),
          stand_in_dropout(dropping)):
        out["train_output"] = to_array(_as_pair(dropping(x), "MultiHeadAttention.forward")[0])
    return out


# ----------------------------------------------------- block components


def _trusted_norm(x: torch.Tensor, gamma, beta, eps: float, *, unbiased: bool = False, eps_outside: bool = False):
    """A layer norm over the last axis, or one with one mistake: the unbiased variance, eps outside the sqrt."""
    mean, var = x.mean(-1, keepdim=True), x.var(-1, keepdim=True, unbiased=unbiased)
    x_hat = (x - mean) / ((var.sqrt() + eps) if eps_outside else (var + eps).sqrt())
    return gamma * x_hat + beta


@probe("layer_norm")
def probe_layer_norm(ns):
    cls = require(ns, "LayerNorm")
    out = {}
    x = randn(60, 2, 3, 4) * torch.tensor([1.0, 3.0, 0.01]).view(1, 3, 1) + 2.0  # three scales
    given = x.clone()
    for name, eps in (("default_eps", None), ("large_eps", 0.5)):
        module = cls(4) if eps is None else cls(4, eps=eps)
        params = fill_parameters(module, seed=6)
        with torch.no_grad():
            out[f"{name}_output"] = to_array(module(x))
    out["input_unchanged"] = np.array(bool(torch.equal(x, given)))  # forward must leave the caller's tensor alone
    x = given
    exact = cls(4, eps=0.0)  # with eps 0, where eps goes makes no difference
    fill_parameters(exact, seed=6)
    with torch.no_grad():
        out["zero_eps_output"] = to_array(exact(x.clone()))
        out["rows_alone"] = to_array(torch.cat([module(row.clone()) for row in x.reshape(-1, 1, 4)]).reshape(x.shape))
    # Clues: the outputs as one mistake would make them, with the module's own gamma and beta
    out["eps_ignored"] = like(out["large_eps_output"], out["default_eps_output"])  # eps=0.5 changes nothing
    gamma, beta = getattr(module, "gamma", None), getattr(module, "beta", None)
    out["like_unbiased"] = out["like_eps_outside"] = out["like_gamma_beta_misuse"] = np.array(False)
    if all(isinstance(t, torch.Tensor) and t.shape == (4,) for t in (gamma, beta)):
        with torch.no_grad():
            gamma, beta = gamma.detach().clone(), beta.detach().clone()
            out["like_unbiased"] = clue(lambda: like(out["default_eps_output"], _trusted_norm(x, gamma, beta, 1e-6, unbiased=True)))
            out["like_eps_outside"] = clue(lambda: like(out["large_eps_output"],
                                           _trusted_norm(x, gamma, beta, 0.5, eps_outside=True)))
            one, zero = torch.ones(4), torch.zeros(4)
            out["like_gamma_beta_misuse"] = clue(lambda: np.array(any(  # swapped, beta left out, gamma left out, both left out
                like(out["default_eps_output"], _trusted_norm(x, g, b, 1e-6))
                for g, b in ((beta, gamma), (gamma, zero), (one, beta), (one, zero)))))
    leaf = x.clone().requires_grad_(True)  # the backward pass must work too (no in-place op on the input)
    out["backward_error"] = np.array("")
    try:
        (module(leaf) * randn(61, *x.shape)).sum().backward()
        out["input_gradient"] = to_array(leaf.grad)
    except RuntimeError as error:
        out["backward_error"] = error_output(error)
    out["parameters"] = params
    out["parameters_float32"] = np.array(all(p.dtype == torch.float32 for p in cls(4).parameters()))
    return out


ACTIVATIONS = (lambda h: h, F.gelu, lambda h: F.gelu(h, approximate="tanh"), torch.sigmoid, torch.tanh, F.silu, F.elu,
               F.leaky_relu, F.softplus)  # what a feed-forward may use in place of ReLU


@probe("feed_forward")
def probe_feed_forward(ns):
    module = require(ns, "FeedForward")(6, 10, dropout=0.5)
    params = fill_parameters(module, seed=7)
    x = randn(70, 2, 3, 6)
    with torch.no_grad():
        torch.manual_seed(7)  # in eval mode nothing may be dropped: what would be, at this seed, is the training output
        evaluated = module.eval()(x)
        torch.manual_seed(7)
        trained = module.train()(x)
    out = {"parameters": params, "eval_output": to_array(evaluated), "train_output": to_array(trained)}
    # Clues: the eval-mode output as one mistake would make it, with the module's own layers
    out["eval_like_train"] = like(out["eval_output"], out["train_output"])
    out["like_other_activation"] = out["like_residual"] = np.array(False)
    linear1, linear2 = getattr(module, "linear1", None), getattr(module, "linear2", None)
    if isinstance(linear1, nn.Linear) and isinstance(linear2, nn.Linear):
        with torch.no_grad():
            hidden = linear1(x)
            out["like_other_activation"] = clue(lambda: np.array(any(like(out["eval_output"], linear2(act(hidden)))
                                                        for act in ACTIVATIONS)))
            out["like_residual"] = clue(lambda: like(out["eval_output"], x + linear2(F.relu(hidden))))
    return out


def _stand_in_block(ns: Namespace, dropout: float) -> nn.Module:
    """The notebook's TransformerBlock (d_model 6) with stand-ins for its attention, feed-forward and norms."""
    with replaced(ns, MultiHeadAttention=StandInAttention, FeedForward=StandInFeedForward, LayerNorm=StandInNorm):
        block = require(ns, "TransformerBlock")(6, 2, 10, dropout=dropout)
    block.attention = StandInAttention()
    block.feed_forward = StandInFeedForward(6)
    block.norm1, block.norm2 = StandInNorm(6, seed=11), StandInNorm(6, seed=12)
    return block


def _block_variants(block: nn.Module, x: torch.Tensor) -> dict[str, torch.Tensor]:
    """The output of the block's (stand-in) parts put together as the post-norm block, and as mistakes would."""
    attend, feed, norm1, norm2 = block.attention, block.feed_forward, block.norm1, block.norm2
    a = attend(x)[0]
    h = norm1(x + a)
    return {
        "pre_norm": (lambda g: g + feed(norm2(g)))(x + attend(norm1(x))[0]),
        "no_attention_residual": (lambda g: norm2(g + feed(g)))(norm1(a)),
        "no_ffn_residual": norm2(feed(h)),
        "norms_swapped": (lambda g: norm1(g + feed(g)))(norm2(x + a)),
        "ffn_residual_from_input": norm2(x + feed(h)),
        "norm_inside_residual": (lambda g: norm2(g + feed(g)))(x + norm1(a)),
    }


@probe("transformer_block")
def probe_transformer_block(ns):
    with replaced(ns, MultiHeadAttention=StandInAttention, FeedForward=StandInFeedForward, LayerNorm=StandInNorm):
        built = require(ns, "TransformerBlock")(6, 2, 10, dropout=0.0)
    norms = [id(m) for _, m in built.named_modules(remove_duplicate=False) if isinstance(m, (StandInNorm, nn.LayerNorm))]
    block = _stand_in_block(ns, dropout=0.0).eval()
    x = randn(80, 2, 4, 6)
    padding = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]])[:, None, None, :]
    out = {"norms_distinct": np.array(len(set(norms)) == len(norms))}  # one norm object used twice shares gamma, beta
    with torch.no_grad():
        for name, mask in (("no_mask", None), ("padding", padding)):
            output, weights = _as_pair(block(x, mask), "TransformerBlock.forward")
            out[f"{name}_output"], out[f"{name}_weights"] = to_array(output), to_array(weights)
        # Clues: the outputs as one mistake would make them, from the same stand-in parts
        variants = _block_variants(block, x)
        out["like_weights_on_norm1"] = clue(lambda: like(out["no_mask_weights"], block.attention(block.norm1(x))[1]))
        out["like_pre_norm"] = clue(lambda: like(out["no_mask_output"], variants["pre_norm"]))
        out["like_residual_missing"] = clue(lambda: np.array(any(like(out["no_mask_output"], variants[name])
                                                    for name in ("no_attention_residual", "no_ffn_residual"))))
        out["like_norms_swapped"] = clue(lambda: like(out["no_mask_output"], variants["norms_swapped"]))
        out["like_residual_misplaced"] = clue(lambda: np.array(any(like(out["no_mask_output"], variants[name])
                                                      for name in ("ffn_residual_from_input", "norm_inside_residual"))))
        out["padding_like_no_mask"] = like(out["padding_weights"], out["no_mask_weights"])
        # in training mode, dropout acts on each sublayer's output, before its residual sum
        with stand_in_dropout(_stand_in_block(ns, dropout=0.5)) as dropping:
            out["train_output"] = to_array(_as_pair(dropping(x), "TransformerBlock.forward")[0])
    return out


# ----------------------------------------------------------- classifier


MODEL_CONFIG = dict(vocab_size=17, d_model=6, num_heads=2, d_ff=10, max_length=12, num_classes=3)


def _how_held(stacks: list, embeddings: list, num_layers: int) -> dict[str, np.ndarray]:
    """How a model built with stand-ins (dropout 0) held its parts: each stack of blocks in an nn.ModuleList
    (`blocks_in_module_list`), num_layers distinct blocks in each (`blocks_distinct`), and the dropout rate passed on
    to every stand-in part (`dropout_passed`)."""
    parts = [part for part in (*embeddings, *(block for stack in stacks for block in stack))
             if isinstance(part, (StandInEmbeddings, StandInBlock, StandInDecoderBlock))]
    return {"blocks_in_module_list": np.array(all(isinstance(stack, nn.ModuleList) for stack in stacks)),
            "blocks_distinct": np.array(all(len({id(block) for block in stack}) == num_layers for stack in stacks)),
            "dropout_passed": np.array(all(part.dropout_given == 0.0 for part in parts))}


def _stand_in_model(ns: Namespace, num_layers: int = 2) -> tuple[nn.Module, dict[str, np.ndarray]]:
    """The notebook's MiniTransformer with stand-ins for its parts, and how it held its blocks
    (`blocks_in_module_list`, `blocks_distinct`) and whether it passed its dropout on to them (`dropout_passed`)."""
    cls = require(ns, "MiniTransformer")
    with replaced(ns, TransformerEmbeddings=StandInEmbeddings, TransformerBlock=StandInBlock, LayerNorm=StandInNorm):
        model = cls(**MODEL_CONFIG, num_layers=num_layers, dropout=0.0)
    held = _how_held([getattr(model, "transformer_blocks", [])], [getattr(model, "embeddings", None)], num_layers)
    model.embeddings = StandInEmbeddings(17, 6)
    model.transformer_blocks = nn.ModuleList(StandInBlock(seed=300 + i) for i in range(num_layers))
    model.ln_f = StandInNorm(6, seed=13)
    fill_parameters(model, seed=8)  # the classifier head
    return model.eval(), held


def _device_error(error: Exception) -> bool:
    """Whether an error says that tensors on two devices met (the meta device and the CPU)."""
    text = str(error).lower()
    return "device" in text and ("cpu" in text or "meta" in text)


def _runs_on_meta(model: nn.Module, *inputs: torch.Tensor) -> np.ndarray:
    """Whether the model, moved with its inputs to torch's "meta" device, runs without its default mask: a tensor
    it creates on the CPU instead of the input's device meets the meta tensors and raises (as it would on a GPU).
    Other errors on meta tensors are no evidence: True."""
    try:
        model.to("meta")(*(t.to("meta") for t in inputs))
    except Exception as error:
        return np.array(not _device_error(error))
    return np.array(True)


def _trusted_logits(model: nn.Module, ids: torch.Tensor, mask: torch.Tensor, *, block_mask=None,
                    pool: str = "mean", final_norm: str = "tokens") -> torch.Tensor:
    """The stand-in model's logits as the notebook's MiniTransformer computes them, or with one mistake: another
    mask for the blocks (None: none), another pooling ("all": mean over padding too, "first", "sum", "max"), the
    final norm after pooling ("pooled") or never ("none")."""
    x = model.embeddings(ids)
    for block in model.transformer_blocks:
        x = block(x, mask[:, None, None, :] if block_mask == "given" else block_mask)[0]
    x = model.ln_f(x) if final_norm == "tokens" else x
    real = mask[..., None].to(x.dtype)
    pooled = {"mean": lambda: (x * real).sum(1) / real.sum(1), "all": lambda: x.mean(1), "first": lambda: x[:, 0],
              "sum": lambda: (x * real).sum(1), "max": lambda: (x * real).max(1).values}[pool]()
    return model.classifier(model.ln_f(pooled) if final_norm == "pooled" else pooled)


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
        out["mask_given_to_blocks"] = np.array(model.transformer_blocks[0].mask is not None)
        out["logits"], out["n_attention_maps"] = to_array(logits), np.array(len(weights))
        out["maps_in_list"] = np.array(isinstance(weights, (list, tuple)))
        out["n_attention_maps_again"] = np.array(len(_as_pair(model(ids, mask), "MiniTransformer.forward")[1]))
        out["logits_more_padding"] = to_array(model(more_padding, (more_padding != 0).long())[0])
        out["logits_other_padding_ids"] = to_array(model(other_padding, mask)[0])
        # Clue: the blocks got a mask built from the ids (the pads here are 15), not from attention_mask
        given = model.transformer_blocks[0].mask
        out["block_mask_from_ids"] = np.array(given is not None and given.numel() == mask.numel()
                                              and bool((given.reshape(mask.shape) != 0).all()))
        # Clues: the logits as one mistake would make them, from the same stand-in parts
        out["like_blocks_without_mask"] = clue(lambda: like(out["logits"], _trusted_logits(model, ids, mask)))
        out["like_pooling_over_padding"] = clue(lambda: like(out["logits"], _trusted_logits(model, ids, mask, block_mask="given",
                                                                               pool="all")))
        out["like_other_pooling"] = clue(lambda: np.array(any(
            like(out["logits"], _trusted_logits(model, ids, mask, block_mask="given", pool=pool))
            for pool in ("first", "sum", "max"))))
        out["like_final_norm_misplaced"] = clue(lambda: np.array(any(
            like(out["logits"], _trusted_logits(model, ids, mask, block_mask="given", final_norm=where))
            for where in ("pooled", "none"))))
        model.ln_f = nn.Identity()  # without a final norm, where it goes makes no difference
        out["logits_without_final_norm"] = to_array(model(ids, mask)[0])
        model.transformer_blocks = nn.ModuleList(StandInBlock(seed=300 + i, use_mask=False) for i in range(2))
        out["logits_blocks_ignoring_mask"] = to_array(model(ids, mask)[0])  # only the pooling sees the mask
    out["default_mask_on_input_device"] = _runs_on_meta(_stand_in_model(ns)[0], ids)
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


def history_keys() -> tuple[str, ...]:
    """The keys of the history train_transformer returns (the notebook's names, published: not probe data)."""
    return "train_loss", "train_acc", "val_loss", "val_acc"


def _fresh_classifier() -> nn.Module:
    """The BagOfWordsClassifier every training starts from, after the seed that fixes its dropout's draws."""
    torch.manual_seed(9)
    model = BagOfWordsClassifier()  # on the CPU; the notebook's global `device` is not: use the model's
    fill_parameters(model, seed=9)
    return model


def _number(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _trained(ns: Namespace, train_size: int, num_epochs: int, learning_rate: float) -> tuple[nn.Module, dict]:
    """A fresh BagOfWordsClassifier trained by the notebook's train_transformer, its history as arrays, and whether
    the history held plain numbers (`floats`)."""
    model = _fresh_classifier()
    with replaced(ns, device=torch.device("meta")):
        history = require(ns, "train_transformer")(model, training_batches(train_size, seed=91),
                                                    training_batches(9, seed=92), num_epochs=num_epochs,
                                                    learning_rate=learning_rate)
    if not isinstance(history, dict):
        raise TypeError(f"train_transformer must return the history dict, got {type(history).__name__}.")
    values = {key: list(history.get(key, [])) for key in history_keys()}
    floats = all(isinstance(v, numbers.Real) for listed in values.values() for v in listed)
    return model, {**{key: np.array([_number(v) for v in listed], dtype=float) for key, listed in values.items()},
                   "floats": np.array(floats)}


def _trusted_evaluate(model: nn.Module, loader) -> tuple[float, float]:
    """The notebook's evaluate (mean batch loss, accuracy), with the grader's own code."""
    model.eval()
    losses, correct, total = [], 0, 0
    with torch.no_grad():
        for batch in loader:
            logits, _ = model(batch["input_ids"], batch["attention_mask"])
            losses.append(F.cross_entropy(logits, batch["labels"]).item())
            correct += (logits.argmax(-1) == batch["labels"]).sum().item()
            total += len(batch["labels"])
    return sum(losses) / len(losses), correct / total


def _replay(num_epochs: int, learning_rate: float, *, optimizer: str = "adamw", zero_grad: str = "batch",
            recreate: bool = False, train_mode: bool = True, probabilities: bool = False,
            with_mask: bool = True) -> tuple[nn.Module, dict]:
    """train_transformer as the grader writes it (13 examples), or with one mistake: another optimizer ("adam",
    "sgd", with "_decay": weight decay 0.01 as an L2 penalty), gradients reset once per epoch ("epoch") or never
    ("never"), a new optimizer every epoch, no model.train() after the first evaluation, the loss on softmax
    probabilities."""
    model = _fresh_classifier()
    train, val = training_batches(13, seed=91), training_batches(9, seed=92)
    make = {"adamw": lambda: torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.01),
            "adam": lambda: torch.optim.Adam(model.parameters(), lr=learning_rate),
            "adam_decay": lambda: torch.optim.Adam(model.parameters(), lr=learning_rate, weight_decay=0.01),
            "sgd": lambda: torch.optim.SGD(model.parameters(), lr=learning_rate),
            "sgd_decay": lambda: torch.optim.SGD(model.parameters(), lr=learning_rate, weight_decay=0.01)}[optimizer]
    step = make()
    history = {key: [] for key in history_keys()}
    for epoch in range(num_epochs):
        if train_mode:
            model.train()
        if recreate and epoch:
            step = make()
        if zero_grad == "epoch":
            step.zero_grad()
        losses, correct, total = [], 0, 0
        batch_accuracies, flat_correct = [], 0
        for batch in train:
            if zero_grad == "batch":
                step.zero_grad()
            logits, _ = model(batch["input_ids"], batch["attention_mask"]) if with_mask else model(batch["input_ids"])
            loss = F.cross_entropy(logits.softmax(-1) if probabilities else logits, batch["labels"])
            loss.backward()
            step.step()
            losses.append(loss.item())
            right = (logits.argmax(-1) == batch["labels"]).sum().item()
            correct += right
            total += len(batch["labels"])
            batch_accuracies.append(right / len(batch["labels"]))
            flat_correct += (logits.argmax() == batch["labels"]).sum().item()
        val_loss, val_acc = _trusted_evaluate(model, val)
        for key, value in zip(history_keys(), (sum(losses) / len(losses), correct / total, val_loss, val_acc)):
            history[key].append(value)
        # train_acc as two counting mistakes would make it: the mean of the batches' accuracies, and correct over
        # len(batch) of each dict batch (its 3 keys); and as argmax without a dim (one flat index) makes it
        history.setdefault("acc_per_batch", []).append(sum(batch_accuracies) / len(batch_accuracies))
        history.setdefault("acc_batch_keys", []).append(correct / (3 * len(train)))
        history.setdefault("acc_flat_argmax", []).append(flat_correct / total)
    return model, {key: np.array(value) for key, value in history.items()}


def _has_gradients(model: nn.Module) -> bool:
    return any(p.grad is not None and bool(p.grad.abs().sum() > 0) for p in model.parameters())


@probe("train_transformer")
def probe_train_transformer(ns):
    try:  # 13 and 9 examples: the last batch is smaller, so averages over batches and over examples differ
        model, out = _trained(ns, 13, num_epochs=3, learning_rate=0.05)
    except (NotImplementedError, RuntimeError) as error:
        if "meta" not in str(error):
            raise
        return {"uses_model_device": np.array(False)}  # it used the notebook's global `device`
    out["uses_model_device"] = np.array(True)
    out["history_floats"] = out.pop("floats")
    out["final_parameters"] = params = flat_parameters(model)
    out["epochs_recorded"] = np.array(len(out["train_loss"]))
    # Clues: the final parameters and the history as one mistake would make them, from the grader's own loop (the
    # mistakes' loops only where the parameters differ from the right loop's)
    right_model, right_history = _replay(3, 0.05)
    initial, stepped = flat_parameters(_fresh_classifier()), _has_gradients(model)
    unchanged = bool(like(params, initial, atol=1e-7))
    optimizers = ("adam", "adam_decay", "sgd", "sgd_decay")
    mistakes = (*((name, dict(optimizer=name)) for name in optimizers), ("never", dict(zero_grad="never")),
                ("epoch", dict(zero_grad="epoch")), ("recreate", dict(recreate=True)),
                ("no_train", dict(train_mode=False)), ("probabilities", dict(probabilities=True)),
                ("no_mask", dict(with_mask=False)))
    as_right = bool(like(params, flat_parameters(right_model)))
    replays = {name: None if as_right else flat_parameters(_replay(3, 0.05, **options)[0]) for name, options in mistakes}

    def like_replay(*names: str) -> bool:
        return any(replays[name] is not None and bool(like(params, replays[name])) for name in names)

    out["like_wrong_optimizer"] = clue(lambda: np.array(like_replay(*optimizers) or (unchanged and stepped)))  # or never stepped
    out["like_zero_grad_missing"] = clue(lambda: np.array(like_replay("never", "epoch")
                                             or (unchanged and not stepped)))  # or gradients reset before the step
    out["like_optimizer_recreated"] = clue(lambda: np.array(like_replay("recreate")))
    out["like_no_train_mode"] = clue(lambda: np.array(like_replay("no_train")))
    out["like_loss_on_probabilities"] = clue(lambda: np.array(like_replay("probabilities")))
    out["like_mask_not_passed"] = clue(lambda: np.array(like_replay("no_mask")))
    out["like_percent"] = clue(lambda: like(out["train_acc"], 100 * right_history["train_acc"]))
    out["like_accuracy_per_batch"] = clue(lambda: np.array(as_right and (bool(like(out["train_acc"], right_history["acc_per_batch"]))
                                                            or bool(like(out["train_acc"], right_history["acc_batch_keys"])))))
    out["like_argmax_flattened"] = clue(lambda: np.array(as_right and bool(like(out["train_acc"], right_history["acc_flat_argmax"]))))
    n = len(out["train_loss"])
    out["params_match_epochs_recorded"] = np.array(as_right if n == 3 else 0 < n <= 6 and bool(
        like(params, flat_parameters(_replay(n, 0.05)[0]))))
    frozen, _ = _trained(ns, 13, num_epochs=2, learning_rate=0.0)  # nothing may learn
    out["frozen_parameters_unchanged"] = like(flat_parameters(frozen), initial, atol=1e-7)
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
        next((n for n in range(1, 10 * f) if attention(n, d) >= feed_forward(n, d, f)), None) == length
        for (d, f), length in zip(CROSSOVER_SHAPES, found)))
    out["lengths_at_least_1"] = np.array(all(_number(n) >= 1 for n in found))
    return out


# ---------------------------------------------------- cross-attention and the encoder-decoder


def _cross_attention(ns: Namespace, dropout: float = 0.0) -> nn.Module:
    """The notebook's CrossAttention with the grader's own projections (d_model 12, 3 heads), set by name.

    It is built without running its __init__, which it inherits from the notebook's MultiHeadAttention: a mistake
    there costs the multi-head attention's points, not these."""
    cls = require(ns, "CrossAttention")
    module = cls.__new__(cls)
    nn.Module.__init__(module)
    module.d_model, module.num_heads, module.d_k = 12, 3, 4
    for name in ("W_q", "W_k", "W_v", "W_o"):
        setattr(module, name, nn.Linear(12, 12))
    module.dropout = nn.Dropout(dropout)
    fill_parameters(module, seed=6)
    return module.eval()


def _heads(t: torch.Tensor) -> torch.Tensor:  # (B, n, 12) -> (B, 3, n, 4)
    return t.view(t.size(0), t.size(1), 3, 4).transpose(1, 2)


def _cross_clues(module: nn.Module, x: torch.Tensor, memory: torch.Tensor, out: dict) -> dict[str, np.ndarray]:
    """The weights as mistakes would make them, from the module's own projections: queries from the memory, keys
    from the decoder's side, or self-attention of x alone; heads split by a bare view."""
    weights = out["no_mask_weights"]
    q, k = (lambda t: _heads(module.W_q(t))), (lambda t: _heads(module.W_k(t)))
    B = x.size(0)
    return {
        "like_queries_from_memory": clue(lambda: np.array(bool(
            like(weights, _trusted_weights(q(memory), k(x))) or like(weights, _trusted_weights(q(memory), k(memory)))
            or like(weights, _trusted_weights(k(x), q(memory)))))),
        "like_self_attention": clue(lambda: like(weights, _trusted_weights(q(x), k(x)))),
        "like_view_split": clue(lambda: like(weights, _trusted_weights(module.W_q(x).view(B, 3, 3, 4),
                                                          module.W_k(memory).view(B, 3, 5, 4)))),
    }


@probe("cross_attention")
def probe_cross_attention(ns):
    module = _cross_attention(ns)
    x, memory = randn(60, 2, 3, 12), randn(61, 2, 5, 12)  # 3 decoder positions, 5 source positions
    padding = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])[:, None, None, :]  # (B, 1, 1, S)
    other_memory = memory.clone()
    other_memory[0, 3:] = randn(62, 2, 12) * 10  # other values at the padded source positions
    out = {}
    with torch.no_grad(), replaced(ns, scaled_dot_product_attention=_reference_attention):
        output, weights = _as_pair(module(x, memory), "CrossAttention.forward")
        out["no_mask_output"], out["no_mask_weights"] = to_array(output), to_array(weights)
        out["weights_shape"] = np.array(tuple(weights.shape))
        out.update(_cross_clues(module, x, memory, out))
        for name, source in (("padding", memory), ("other_padding", other_memory)):  # a padding mask of (B, 1, 1, S)
            out[f"{name}_output"] = caught(lambda: _as_pair(module(x, source, mask=padding), "CrossAttention.forward")[0])
        out["padding_like_no_mask"] = like(out["padding_output"], out["no_mask_output"])
        fresh = _cross_attention(ns)  # called on a second input, it must use that input alone
        fresh(x, memory)
        out["second_input_output"] = to_array(_as_pair(fresh(randn(63, 2, 3, 12), randn(64, 2, 5, 12)),
                                                        "CrossAttention.forward")[0])
    with (torch.no_grad(), replaced(ns, scaled_dot_product_attention=_reference_attention),
          stand_in_dropout(_cross_attention(ns, dropout=0.5)) as dropping):
        out["train_output"] = to_array(_as_pair(dropping(x, memory), "CrossAttention.forward")[0])
    return out


@stand_in("CrossAttention")
class StandInCrossAttention(nn.Module):
    """Masked averaging of the memory in place of CrossAttention: returns (output, weights (B, 1, T, S))."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x, memory, mask=None):
        return _masked_mixing(x, mask, seed=205, memory=memory)


def _stand_in_decoder_block(ns: Namespace, dropout: float) -> nn.Module:
    """The notebook's DecoderBlock (d_model 6) with stand-ins for its attentions, feed-forward and norms."""
    with replaced(ns, MultiHeadAttention=StandInAttention, CrossAttention=StandInCrossAttention,
                  FeedForward=StandInFeedForward, LayerNorm=StandInNorm):
        block = require(ns, "DecoderBlock")(6, 2, 10, dropout=dropout)
    block.self_attention, block.cross_attention = StandInAttention(), StandInCrossAttention()
    block.feed_forward = StandInFeedForward(6)
    block.norm1, block.norm2, block.norm3 = StandInNorm(6, seed=14), StandInNorm(6, seed=15), StandInNorm(6, seed=16)
    return block


def _as_triple(result, what: str) -> tuple:
    if not (isinstance(result, tuple) and len(result) == 3):
        raise TypeError(f"{what} must return (output, self_weights, cross_weights), got {type(result).__name__}"
                        + (f" of length {len(result)}" if isinstance(result, tuple) else ""))
    return result


def _decoder_variants(block: nn.Module, x, memory, causal, padding) -> dict[str, torch.Tensor]:
    """The decoder block's output from its (stand-in) parts, put together as mistakes would."""
    attend, cross, feed = block.self_attention, block.cross_attention, block.feed_forward
    n1, n2, n3 = block.norm1, block.norm2, block.norm3

    def last(g):  # the feed-forward sub-layer, as it should be
        return n3(g + feed(g))

    h = n1(x + attend(x, causal)[0])
    c = n1(x + cross(x, memory, padding)[0])
    return {
        "cross_first": last(n2(c + attend(c, causal)[0])),
        "cross_on_input": last(n2(h + cross(x, memory, padding)[0])),
        "no_cross_residual": last(n2(cross(h, memory, padding)[0])),
        "no_self_residual": last(n2((lambda a: a + cross(a, memory, padding)[0])(n1(attend(x, causal)[0])))),
        "pre_norm": (lambda g: g + feed(n3(g)))((lambda a: a + cross(n2(a), memory, padding)[0])(
            x + attend(n1(x), causal)[0])),
    }


@probe("decoder_block")
def probe_decoder_block(ns):
    with replaced(ns, MultiHeadAttention=StandInAttention, CrossAttention=StandInCrossAttention,
                  FeedForward=StandInFeedForward, LayerNorm=StandInNorm):
        built = require(ns, "DecoderBlock")(6, 2, 10, dropout=0.0)
    norms = [id(m) for _, m in built.named_modules(remove_duplicate=False) if isinstance(m, (StandInNorm, nn.LayerNorm))]
    block = _stand_in_decoder_block(ns, dropout=0.0).eval()
    x, memory = randn(81, 2, 4, 6), randn(82, 2, 5, 6)
    causal = torch.tril(torch.ones(4, 4))
    padding = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])[:, None, None, :]
    out = {"norms_distinct": np.array(len(set(norms)) == len(norms) == 3)}
    with torch.no_grad():
        output, self_weights, cross_weights = _as_triple(block(x, memory, causal, padding), "DecoderBlock.forward")
        out["output"], out["self_weights"], out["cross_weights"] = (to_array(t) for t in (output, self_weights,
                                                                                            cross_weights))
        out["no_mask_output"] = to_array(_as_triple(block(x, memory), "DecoderBlock.forward")[0])
        out["other_memory_output"] = to_array(_as_triple(block(x, randn(83, 2, 5, 6), causal, padding),
                                                         "DecoderBlock.forward")[0])
        variants = _decoder_variants(block, x, memory, causal, padding)
        out["like_cross_first"] = clue(lambda: like(out["output"], variants["cross_first"]))
        out["like_cross_on_input"] = clue(lambda: like(out["output"], variants["cross_on_input"]))
        out["like_residual_missing"] = clue(lambda: np.array(any(like(out["output"], variants[name])
                                                    for name in ("no_cross_residual", "no_self_residual"))))
        out["like_pre_norm"] = clue(lambda: like(out["output"], variants["pre_norm"]))
        out["like_self_mask_lost"] = clue(lambda: like(out["self_weights"], block.self_attention(x, None)[1]))
        h = block.norm1(x + block.self_attention(x, causal)[0])
        out["like_memory_mask_lost"] = clue(lambda: like(out["cross_weights"], block.cross_attention(h, memory, None)[1]))
        out["like_memory_ignored"] = clue(lambda: like(out["other_memory_output"], out["output"]))
        with stand_in_dropout(_stand_in_decoder_block(ns, dropout=0.5)) as dropping:
            out["train_output"] = to_array(_as_triple(dropping(x, memory, causal, padding), "DecoderBlock.forward")[0])
    return out


@stand_in("DecoderBlock")
class StandInDecoderBlock(nn.Module):
    """Masked averaging over its own positions and over the memory, with residuals, in place of DecoderBlock; it
    records the masks and the memory it got and the dropout it was given."""

    def __init__(self, d_model: int = 0, num_heads: int = 0, d_ff: int = 0, dropout: float = 0.1, *, seed: int = 206,
                 **others):  # DecoderBlock's signature, and the probe's own keyword
        super().__init__()
        self.seed, self.self_mask, self.memory_mask, self.memory = seed, None, None, None
        self.dropout_given = float(dropout)
        self.cross = StandInCrossAttention()

    def forward(self, x, memory, self_mask=None, memory_mask=None):
        self.self_mask, self.memory_mask, self.memory = self_mask, memory_mask, memory
        for mask in (self_mask, memory_mask):  # as a GPU's attention would, refuse a mask on another device
            if isinstance(mask, torch.Tensor) and mask.device != x.device:
                raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                                   f"{mask.device} and {x.device}!")
        mixed, self_weights = _masked_mixing(x, self_mask, seed=self.seed)
        x = x + torch.tanh(mixed)
        read, cross_weights = self.cross(x, memory, memory_mask)
        return x + torch.tanh(read), self_weights, cross_weights


SEQ2SEQ_CONFIG = dict(vocab_size=17, d_model=6, num_heads=2, d_ff=10, max_length=12)


def _stand_in_seq2seq(ns: Namespace, num_layers: int = 2) -> tuple[nn.Module, dict[str, np.ndarray]]:
    """The notebook's EncoderDecoder with stand-ins for its parts (the two embeddings with tables of their own),
    and how it held them: blocks in nn.ModuleLists, distinct blocks, its dropout passed on."""
    cls = require(ns, "EncoderDecoder")
    with replaced(ns, TransformerEmbeddings=StandInEmbeddings, TransformerBlock=StandInBlock,
                  DecoderBlock=StandInDecoderBlock):
        model = cls(**SEQ2SEQ_CONFIG, num_layers=num_layers, dropout=0.0)
    held = _how_held([getattr(model, name, []) for name in ("encoder_blocks", "decoder_blocks")],
                     [getattr(model, name, None) for name in ("src_embeddings", "tgt_embeddings")], num_layers)
    model.src_embeddings = StandInEmbeddings(17, 6)
    model.tgt_embeddings = StandInEmbeddings(17, 6, table_seed=102)
    model.encoder_blocks = nn.ModuleList(StandInBlock(seed=310 + i) for i in range(num_layers))
    model.decoder_blocks = nn.ModuleList(StandInDecoderBlock(seed=320 + i) for i in range(num_layers))
    fill_parameters(model, seed=9)  # the output layer
    return model.eval(), held


def _mask_pattern(mask, B: int, T: int, S: int) -> np.ndarray:
    """Which keys a mask lets each query see, (B, T, S) flags, or the error of a mask that does not broadcast."""
    if mask is None:
        return np.array("no mask")
    try:
        return np.array(_keep(mask, (B, 1, T, S))[:, 0].cpu())
    except ValueError as error:
        return np.array(str(error))


def _map_counts(attention) -> np.ndarray:
    """How many maps each of the lists "encoder", "decoder" and "cross" holds (none where it is no dict)."""
    maps = attention if isinstance(attention, dict) else {}
    return np.array([len(maps.get(key, ())) for key in ("encoder", "decoder", "cross")])


@probe("encoder_decoder")
def probe_encoder_decoder(ns):
    model, held = _stand_in_seq2seq(ns)
    src = torch.tensor([[3, 4, 5, 6, 0, 0], [7, 8, 9, 10, 11, 12]])
    tgt = torch.tensor([[1, 6, 5, 4, 3], [1, 12, 11, 10, 9]])
    src_mask = (src != 0).long()
    out = dict(held)
    with torch.no_grad():
        logits, attention = _as_pair(model(src, tgt, src_mask), "EncoderDecoder.forward")
        out["logits"], out["map_counts"] = to_array(logits), _map_counts(attention)
        out["map_counts_again"] = _map_counts(_as_pair(model(src, tgt, src_mask), "EncoderDecoder.forward")[1])
        first, last = model.decoder_blocks[0], model.decoder_blocks[-1]
        out["encoder_mask"] = _mask_pattern(model.encoder_blocks[0].mask, 2, 6, 6)
        out["self_mask"] = _mask_pattern(first.self_mask, 2, 5, 5)
        out["self_mask_given"] = np.array(first.self_mask is not None)
        out["memory_mask"] = _mask_pattern(first.memory_mask, 2, 5, 6)
        encoded = model.src_embeddings(src)
        for block in model.encoder_blocks:
            encoded = block(encoded, src_mask[:, None, None, :])[0]
        out["memory_is_encoder_output"] = np.array(all(
            block.memory is not None and like(to_array(block.memory), encoded) for block in (first, last)))
        out["like_memory_from_embeddings"] = clue(lambda: np.array(first.memory is not None
                                                      and like(to_array(first.memory), model.src_embeddings(src))))
        more_padding = F.pad(src, (0, 3))
        out["logits_more_padding"] = to_array(model(more_padding, tgt, (more_padding != 0).long())[0])
        changed = tgt.clone()
        changed[:, 3:] = 16
        out["logits_first_three_later_input_changed"] = to_array(model(src, changed, src_mask)[0][:, :3])
        out["logits_first_three"] = out["logits"][:, :3]
        full = src[1:]
        out["logits_no_mask"] = to_array(model(full, tgt[1:])[0])
        out["logits_all_real"] = to_array(model(full, tgt[1:], torch.ones_like(full))[0])
        given = model.src_embeddings, model.tgt_embeddings
        mixed = []  # the logits with one table for both sides, or the two tables swapped
        for source_table, target_table in ((given[0], given[0]), (given[1], given[1]), (given[1], given[0])):
            model.src_embeddings, model.tgt_embeddings = source_table, target_table
            mixed.append(like(out["logits"], model(src, tgt, src_mask)[0]))
        model.src_embeddings, model.tgt_embeddings = given
        out["like_embeddings_mixed"] = clue(lambda: np.array(any(mixed)))
    out["default_mask_on_input_device"] = _runs_on_meta(_stand_in_seq2seq(ns)[0], src, tgt)
    return out


# The trained check: the notebook's EncoderDecoder, with torch's own encoder and decoder layers and embeddings in
# place of the notebook's pieces, trained to reverse short sequences and judged on sequences it never saw.


def _blocked(mask, B: int, H: int, T: int, S: int):
    """A mask of the notebook's convention (1 = may attend) as torch's (B * H, T, S) flags, True = blocked."""
    return None if mask is None else (~_keep(mask, (B, H, T, S))).reshape(B * H, T, S)


@stand_in("TransformerEmbeddings")
class TorchEmbeddings(nn.Module):
    """Token and learned position embeddings, in place of TransformerEmbeddings."""

    def __init__(self, vocab_size: int, d_model: int, max_length: int = 512, *args, **kwargs):
        super().__init__()
        self.tokens, self.positions = nn.Embedding(vocab_size, d_model), nn.Embedding(max_length, d_model)

    def forward(self, input_ids):
        return self.tokens(input_ids) + self.positions(torch.arange(input_ids.size(1), device=input_ids.device))


@stand_in("TransformerBlock")
class TorchEncoderBlock(nn.Module):
    """torch's post-norm nn.TransformerEncoderLayer, in place of TransformerBlock: returns (output, None)."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, *args, **kwargs):
        super().__init__()
        self.num_heads = num_heads
        self.layer = nn.TransformerEncoderLayer(d_model, num_heads, d_ff, dropout=0.0, batch_first=True)

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        return self.layer(x, src_mask=_blocked(mask, B, self.num_heads, T, T)), None


@stand_in("DecoderBlock")
class TorchDecoderBlock(nn.Module):
    """torch's post-norm nn.TransformerDecoderLayer, in place of DecoderBlock: returns (output, None, None); it
    records the self_mask it got."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, *args, **kwargs):
        super().__init__()
        self.num_heads, self.self_mask = num_heads, None
        self.layer = nn.TransformerDecoderLayer(d_model, num_heads, d_ff, dropout=0.0, batch_first=True)

    def forward(self, x, memory, self_mask=None, memory_mask=None):
        (B, T, _), S = x.shape, memory.size(1)
        self.self_mask = self_mask
        return self.layer(x, memory, tgt_mask=_blocked(self_mask, B, self.num_heads, T, T),
                          memory_mask=_blocked(memory_mask, B, self.num_heads, T, S)), None, None


REVERSAL = dict(symbols=5, min_length=3, max_length=5, steps=200, batch=64, held_out=200)
REVERSAL_MODEL = dict(vocab_size=3 + 5, d_model=32, num_heads=2, num_layers=1, d_ff=64, max_length=6)


def reversal_data(n: int, seed: int, exclude: frozenset = frozenset()) -> tuple[torch.Tensor, torch.Tensor]:
    """n sequences of REVERSAL's symbols (ids 3 and up; none in `exclude`): sources (n, 5) padded with 0, targets
    (n, 6): the source reversed, then the end id 2, then padding."""
    g, S = generator(seed), REVERSAL["max_length"]
    src, tgt = torch.zeros(n, S, dtype=torch.long), torch.zeros(n, S + 1, dtype=torch.long)
    row = 0
    while row < n:
        length = int(torch.randint(REVERSAL["min_length"], S + 1, (1,), generator=g))
        digits = torch.randint(3, 3 + REVERSAL["symbols"], (length,), generator=g)
        if tuple(digits.tolist()) not in exclude:
            src[row, :length], tgt[row, :length], tgt[row, length] = digits, digits.flip(0), 2
            row += 1
    return src, tgt


def _reversal_accuracy(model: nn.Module, src: torch.Tensor, tgt: torch.Tensor) -> float:
    """Share of sources that greedy decoding from the start id 1 reverses exactly, the end id included."""
    written = torch.ones(src.size(0), 1, dtype=torch.long)
    with torch.no_grad():
        for _ in range(tgt.size(1)):
            logits = _as_pair(model(src, written, (src != 0).long()), "EncoderDecoder.forward")[0]
            written = torch.cat([written, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return float(((written[:, 1:] == tgt) | (tgt == 0)).all(1).float().mean())


TRAINED: dict[str, dict[str, np.ndarray]] = {}  # code fingerprint -> outputs: one training per EncoderDecoder code


@functools.cache
def _reversal_batches() -> tuple[tuple[torch.Tensor, torch.Tensor], tuple[tuple[torch.Tensor, torch.Tensor], ...]]:
    """The held-out (sources, targets) and the training batches of every step, made once (no code of the student's
    makes them): ((200, 5), (200, 6)) and REVERSAL["steps"] batches of ((64, 5), (64, 6)), none of a held-out source."""
    test_src, test_tgt = reversal_data(REVERSAL["held_out"], seed=70)
    held_out = frozenset(tuple(row[row != 0].tolist()) for row in test_src)
    return (test_src, test_tgt), tuple(reversal_data(REVERSAL["batch"], seed=1000 + step, exclude=held_out)
                                       for step in range(REVERSAL["steps"]))


def _train_reversal(ns: Namespace) -> dict[str, np.ndarray]:
    torch.manual_seed(0)
    model = require(ns, "EncoderDecoder")(**REVERSAL_MODEL, dropout=0.0)
    (test_src, test_tgt), batches = _reversal_batches()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1 - step / REVERSAL["steps"])
    for src, tgt in batches:
        src, tgt = src.clone(), tgt.clone()  # the student's model gets its own copies
        decoder_input = torch.cat([torch.ones_like(tgt[:, :1]), tgt[:, :-1]], dim=1)
        logits = _as_pair(model.train()(src, decoder_input, (src != 0).long()), "EncoderDecoder.forward")[0]
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt.reshape(-1), ignore_index=0)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
    accuracy = _reversal_accuracy(model.eval(), test_src.clone(), test_tgt.clone())  # the last step writes 6 tokens
    blocks = [block for block in getattr(model, "decoder_blocks", []) if isinstance(block, TorchDecoderBlock)]
    self_mask = blocks[0].self_mask if blocks else None
    keep = None if self_mask is None else torch.as_tensor(self_mask) != 0
    while keep is not None and keep.dim() > 2:
        keep = keep[0]  # the first of every leading axis: (T, T)
    return {"reverses_held_out": np.array(accuracy >= 0.9),
            "self_mask_given": np.array(self_mask is not None),
            "self_mask_causal": np.array(keep is not None and keep.shape == (6, 6)
                                         and bool(torch.equal(keep.cpu(), torch.ones(6, 6).tril().bool())))}


@probe("encoder_decoder_trained")
def probe_encoder_decoder_trained(ns):
    with replaced(ns, TransformerEmbeddings=TorchEmbeddings, TransformerBlock=TorchEncoderBlock,
                  DecoderBlock=TorchDecoderBlock):
        key = code_fingerprint(require(ns, "EncoderDecoder"), ns)
        if key not in TRAINED:
            TRAINED[key] = _train_reversal(ns)
    return dict(TRAINED[key])
