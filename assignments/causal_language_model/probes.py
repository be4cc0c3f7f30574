"""Hidden probes of A Causal Language Model: instructor-only, never released.

A probe builds one of the student's pieces from the notebook's namespace, runs
it on the grader's own inputs at fixed seeds, on the CPU, and returns plain
data: a dict of numpy arrays. The judge compares it with the instructor's
(reference.npz) in a process where no student code ran.

Pieces built from other pieces are probed with the grader's own versions of
the others: TinyGPT with stand-in blocks and the grader's causal mask,
saturation_stats with the grader's entropy, train_lm with the grader's
make_examples and lm_loss and a tiny stand-in model, generate with scripted
stand-in models. A caught error becomes an output, so that the other outputs
still tell what went wrong; flags computed here from trusted re-computations
(`like_*`) are clues that name the mistake.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from course.probe_tools import (Namespace, Probe, StandInDropout, caught, error_output, fill_parameters, generator,
                               like, randn, registry, replaced, require, stand_in_registry, to_array,
                               with_stand_in_dropout)

PROBES, probe = registry()  # check id -> probe; the grader runs them all (course.probes.run_probes)


# ---------------------------------------------------------------- helpers


def _kinds(module: nn.Module, names: tuple[str, ...]) -> np.ndarray:
    return np.array([type(getattr(module, name, None)).__name__ for name in names])


# ---------------------------------------------------------------- the grader's own pieces


def trusted_masked_softmax(scores: torch.Tensor, mask=None) -> torch.Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    allowed = torch.as_tensor(mask) != 0
    return torch.softmax(scores.masked_fill(~allowed, torch.finfo(scores.dtype).min), dim=-1) * allowed


def trusted_entropy(weights: torch.Tensor) -> torch.Tensor:
    return -torch.special.xlogy(weights, weights).sum(dim=-1)


def trusted_causal_mask(T: int, device=None) -> torch.Tensor:
    return torch.triu(torch.ones(T, T, dtype=torch.bool, device=device), diagonal=1)


def trusted_make_examples(data: torch.Tensor, starts: torch.Tensor, block_size: int):
    indices = torch.as_tensor(starts)[:, None] + torch.arange(block_size)
    return data[indices], data[indices + 1]


def trusted_lm_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def trusted_probs(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None) -> torch.Tensor:
    logits = logits / temperature
    if top_k is not None:
        kth = torch.topk(logits, min(top_k, logits.shape[-1]), dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)


def blocked_by(mask) -> torch.Tensor:
    """Where nn.MultiheadAttention blocks attention with this attn_mask: bool True, or a float at most -1e4."""
    mask = torch.as_tensor(mask)
    return mask if mask.dtype == torch.bool else mask <= -1e4


# ------------------------------------------------------------ stand-ins
# Simple modules with the interface of the pieces they replace, so that one piece is checked with the others held
# fixed. None is a transformer piece. Messages never name them (course.probes).

STAND_INS, stand_in = stand_in_registry()  # stand-in class name -> how a message names it
stand_in("dropout")(StandInDropout)


@stand_in("DecoderBlock")
class StandInBlock(nn.Module):
    """Single-head attention with fixed weights and a residual, reading attn_mask as nn.MultiheadAttention does
    (bool True = blocked; a float mask is added to the scores; a fully blocked row gives NaN, as there).
    It records the pattern of the last mask it got (None: no mask) and its last input."""

    made: list[StandInBlock] = []  # every stand-in since the last reset, in order

    def __init__(self, d_model: int = 8, *args, **kwargs):
        super().__init__()
        StandInBlock.made.append(self)
        seed = 300 + len(StandInBlock.made)
        self.register_buffer("W", randn(seed, 3, d_model, d_model) / math.sqrt(d_model))
        self.last_mask, self.last_input, self.calls = None, None, 0

    def forward(self, x, attn_mask=None, *args, **kwargs):
        attn_mask = kwargs.get("mask", attn_mask)
        self.calls += 1
        self.last_input = x.detach().clone()
        self.last_mask = None if attn_mask is None else blocked_by(attn_mask).detach().clone()
        q, k, v = (x @ w for w in self.W)
        scores = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])
        if attn_mask is not None:
            mask = torch.as_tensor(attn_mask)
            scores = scores.masked_fill(mask, float("-inf")) if mask.dtype == torch.bool else scores + mask
        return x + torch.tanh(torch.softmax(scores, dim=-1) @ v)


@stand_in("language model")
class StandInLM(nn.Module):
    """A tiny language model with TinyGPT's interface, for the training loop: embedding, a stand-in dropout (so
    that training and eval mode differ), a position bias and a linear head."""

    block_size = 4

    def __init__(self, vocab_size: int = 9, d_model: int = 6):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model)
        self.positions = nn.Parameter(torch.zeros(self.block_size, d_model))
        self.dropout = StandInDropout()
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, idx):
        return self.head(self.dropout(self.embedding(idx) + self.positions[: idx.shape[1]]))


@stand_in("language model")
class ScriptedLM(nn.Module):
    """A language model whose logits are a fixed function of the whole context window, for greedy decoding:
    at position t, row (3 * (idx[0] + ... + idx[t]) + t) mod V of a fixed table. It refuses a context longer than
    its block size (a generator must crop) and records whether gradients were on."""

    block_size, vocab_size = 5, 7

    def __init__(self):
        super().__init__()
        self.register_buffer("table", randn(500, self.vocab_size, self.vocab_size) * 3)
        self.weight = nn.Parameter(torch.ones(()))  # so that a forward with gradients on builds a graph
        self.grad_enabled = []

    def forward(self, idx):
        if idx.shape[1] > self.block_size:
            raise ValueError(f"context of {idx.shape[1]} ids is longer than block_size {self.block_size}: "
                             "crop it to the last block_size ids")
        self.grad_enabled.append(torch.is_grad_enabled())
        rows = (3 * torch.cumsum(idx, dim=1) + torch.arange(idx.shape[1])) % self.vocab_size
        return self.table[rows] * self.weight


@stand_in("language model")
class BigramLM(nn.Module):
    """A language model whose logits at each position depend on that position's id only, for sampling."""

    block_size, vocab_size = 4, 6

    def __init__(self):
        super().__init__()
        self.register_buffer("table", randn(501, self.vocab_size, self.vocab_size) * 1.5)

    def forward(self, idx):
        if idx.shape[1] > self.block_size:
            raise ValueError(f"context of {idx.shape[1]} ids is longer than block_size {self.block_size}: "
                             "crop it to the last block_size ids")
        return self.table[idx]


# ---------------------------------------------------------------- Part 1: diagnostics

SCORES_SHAPE = (2, 3, 5)
KEY_MASK = torch.tensor([1, 1, 0, 1, 0])  # (T_k,): broadcasts over batches and queries
PAIR_MASK = torch.tensor([[1, 0, 0, 1, 1], [0, 1, 1, 0, 0], [1, 1, 1, 1, 0]], dtype=torch.bool)  # every row allowed
BATCH_MASK = torch.tensor([[[1.0, 1, 1, 0, 0]], [[0.0, 0, 1, 1, 1]]])  # (B, 1, T_k), floats
EMPTY_MASK = torch.tensor([[1, 1, 0, 1], [0, 0, 0, 0], [0, 0, 1, 0]]).expand(2, 3, 4)  # row 1: nothing allowed


def _mask_clues(weights: np.ndarray, scores: torch.Tensor, mask: torch.Tensor) -> dict[str, np.ndarray]:
    """Clues to a masked softmax's mistake: its row sums, and whether its weights are those of the opposite mask, of
    the mask added to the scores, or of no mask at all."""
    return {"row_sums": weights.sum(axis=-1) if weights.dtype.kind == "f" else weights,
            "like_reversed": like(weights, trusted_masked_softmax(scores, torch.as_tensor(mask) == 0)),
            "like_additive": like(weights, torch.softmax(scores + torch.as_tensor(mask, dtype=scores.dtype), dim=-1)),
            "like_no_mask": like(weights, torch.softmax(scores, dim=-1))}


@probe("masked_softmax_values")
def probe_masked_softmax_values(ns):
    """Weights without a mask, with bool, 0/1 int, 0/1 float and broadcast masks, and in float16 and float64;
    clues: the weights with a mask of the scores' own shape, and the mask's (_mask_clues)."""
    masked_softmax = require(ns, "masked_softmax")
    scores = randn(10, *SCORES_SHAPE) * 2
    out = {"no_mask": caught(lambda: masked_softmax(scores)),
           "bool_mask": caught(lambda: masked_softmax(scores, PAIR_MASK)),
           "int_mask": caught(lambda: masked_softmax(scores, PAIR_MASK.long())),
           "float_mask": caught(lambda: masked_softmax(scores, PAIR_MASK.float())),
           "key_mask": caught(lambda: masked_softmax(scores, KEY_MASK)),
           "batch_mask": caught(lambda: masked_softmax(scores, BATCH_MASK)),
           "full_shape_mask": caught(lambda: masked_softmax(scores, PAIR_MASK.expand(SCORES_SHAPE))),
           "float16": caught(lambda: masked_softmax(scores.half(), PAIR_MASK)),
           "float64_dtype": caught(lambda: np.array(str(masked_softmax(scores.double(), PAIR_MASK).dtype)))}
    return out | _mask_clues(out["float_mask"], scores, PAIR_MASK.float())


@probe("masked_softmax_empty_rows")
def probe_masked_softmax_empty_rows(ns):
    """A mask with a row that allows nothing: the weights, that row alone, and the gradient of a fixed weighted
    sum of the weights (finite, 0 for the empty row); whether a NaN score of an allowed key (a bug upstream) still
    shows as NaN; clues: whether the empty row is NaN or uniform, and the mask's."""
    masked_softmax = require(ns, "masked_softmax")
    scores = randn(11, 2, 3, 4).requires_grad_()
    weights = masked_softmax(scores, EMPTY_MASK)
    out = {"weights": to_array(weights), "empty_rows": to_array(weights[:, 1])} | _mask_clues(to_array(weights), scores.detach(),
                                                                                     EMPTY_MASK)
    out["empty_rows_nan"] = np.array(bool(torch.isnan(weights[:, 1]).any()))
    out["empty_rows_uniform"] = np.array(bool(torch.allclose(weights[:, 1], torch.full((2, 4), 0.25))))
    try:
        (weights * randn(12, 2, 3, 4)).sum().backward()
    except Exception as error:
        return out | {"grad": error_output(error)}
    out["grad"] = np.array("no gradient") if scores.grad is None else to_array(scores.grad)
    out["grad_finite"] = np.array(scores.grad is not None and bool(torch.isfinite(scores.grad).all()))
    broken = randn(13, 3, 4).index_put((torch.tensor([0]), torch.tensor([1])), torch.tensor(float("nan")))
    out["nan_score_shows"] = caught(lambda: torch.isnan(masked_softmax(broken, EMPTY_MASK[0])[0]).any())
    return out


@probe("attention_entropy")
def probe_attention_entropy(ns):
    """Entropies of rows with zeros (and of an all-zero row, as masked_softmax gives), batched and of one row."""
    entropy = require(ns, "attention_entropy")
    weights = torch.softmax(randn(20, 2, 3, 6) * 2, dim=-1)
    weights[0, 1] = torch.tensor([0.5, 0.0, 0.25, 0.0, 0.25, 0.0])
    weights[1, 2] = 0.0
    out = {"entropy": caught(lambda: entropy(weights)), "one_row": caught(lambda: entropy(weights[0, 0]))}
    out["finite"] = np.array(out["entropy"].dtype.kind == "f" and bool(np.all(np.isfinite(out["entropy"]))))
    out["like_log2"] = like(out["entropy"], trusted_entropy(weights) / math.log(2))
    return out


def _saturated_weights() -> torch.Tensor:
    """(2, 4, 6) rows from nearly uniform to nearly one-hot."""
    scales = torch.tensor([0.3, 1.0, 3.0, 10.0])[:, None]
    return torch.softmax(randn(30, 2, 4, 6) * scales, dim=-1)


@probe("saturation_stats")
def probe_saturation_stats(ns):
    """The three statistics of rows from flat to saturated (with the grader's attention_entropy), the keys of
    the dict returned, and clues: the statistics a global max or a spectral norm would give."""
    weights = _saturated_weights()
    with replaced(ns, attention_entropy=trusted_entropy):
        stats = require(ns, "saturation_stats")(weights)
    if not isinstance(stats, dict):
        raise TypeError(f"saturation_stats must return a dict, got {type(stats).__name__}")
    out = {"keys": np.array(sorted(map(str, stats)))}
    out |= {key: caught(lambda key=key: float(stats[key])) for key in ("max_weight", "entropy", "jacobian_norm")}
    p = weights.reshape(-1, 6)
    jacobians = torch.diag_embed(p) - p[:, :, None] * p[:, None, :]
    out["max_like_global"] = like(out["max_weight"], weights.max())
    out["jacobian_like_spectral"] = like(out["jacobian_norm"], torch.linalg.matrix_norm(jacobians, ord=2).mean())
    return out


def _causal_layer(x: torch.Tensor) -> torch.Tensor:
    """A causal attention layer with fixed weights, (5, 3) -> (5, 2): the grader's own."""
    W = randn(40, 3, 3, 2)
    q, k, v = (x @ w for w in W)
    weights = trusted_masked_softmax(q @ k.T, torch.tril(torch.ones(len(x), len(x))))
    return torch.tanh(weights @ v) + x[:, :2] ** 2


def _dense_layer(x: torch.Tensor) -> torch.Tensor:
    """Every output depends on every input, (5, 3) -> (5, 4)."""
    return torch.sin(x @ randn(41, 3, 4)) * x.sum(dim=0, keepdim=True)[:, :1] + torch.roll(x, 1, dims=0)[:, :1]


def _trusted_dependency(fn, x: torch.Tensor) -> torch.Tensor:
    return torch.autograd.functional.jacobian(fn, x.detach().clone()).pow(2).sum(dim=(1, 3)).sqrt()


@probe("dependency_matrix")
def probe_dependency_matrix(ns):
    """D of a causal and of a dense layer; whether x was left as it was (values, requires_grad, .grad), also for
    an x that requires gradients; clues: the transposed matrix, and the column norms of d out.sum() / d x."""
    dependency = require(ns, "dependency_matrix")
    x = randn(42, 5, 3)
    before = x.clone()
    out = {"causal": caught(lambda: dependency(_causal_layer, x))}
    out["x_unchanged"] = np.array(bool(torch.equal(x, before) and not x.requires_grad and x.grad is None))
    out["upper_exactly_zero"] = np.array(out["causal"].shape == (5, 5) and out["causal"].dtype.kind == "f"
                                         and bool(np.all(np.triu(out["causal"], 1) == 0)))
    leaf = randn(43, 5, 3).requires_grad_()
    out["dense"] = caught(lambda: dependency(_dense_layer, leaf))
    out["leaf_unchanged"] = np.array(bool(leaf.requires_grad and leaf.grad is None))
    trusted = _trusted_dependency(_causal_layer, x)
    out["like_transposed"] = like(out["causal"], trusted.T)
    summed = torch.autograd.functional.jacobian(lambda y: _causal_layer(y).sum(), x).norm(dim=1)  # one per input
    out["like_sum_gradient"] = like(out["causal"], summed.expand(5, 5)) | like(out["causal"], summed[:, None].expand(5, 5))
    return out


# ---------------------------------------------------------------- Part 2: mask and examples


def _mha_output(mask) -> torch.Tensor:
    """A fixed nn.MultiheadAttention (eval mode, no gradients) on a fixed input, with attn_mask = mask."""
    torch.manual_seed(50)
    mha = nn.MultiheadAttention(6, 2, batch_first=True).eval()
    fill_parameters(mha, seed=50)
    with torch.no_grad():
        x = randn(51, 2, 5, 6)
        return mha(x, x, x, attn_mask=mask, need_weights=False)[0]


@probe("causal_mask")
def probe_causal_mask(ns):
    """Which keys nn.MultiheadAttention blocks with the mask for T = 1, 4, 7, what it computes with the mask for
    T = 5, whether the mask is made on the device asked for (meta: no memory, and never the default); clues: the mask's dtype and whether it is one of the usual
    wrong masks."""
    causal_mask = require(ns, "causal_mask")
    out = {f"blocked_{T}": caught(lambda T=T: blocked_by(causal_mask(T))) for T in (1, 4, 7)}
    mask = causal_mask(5)
    out["attention_output"] = caught(lambda: _mha_output(mask))
    out["device"] = caught(lambda: np.array(str(causal_mask(3, device=torch.device("meta")).device)))
    out["dtype"] = np.array(str(getattr(mask, "dtype", type(mask).__name__)))
    blocked = to_array(blocked_by(mask)).astype(bool) if isinstance(mask, torch.Tensor) else np.zeros((5, 5), bool)
    upper = np.triu(np.ones((5, 5), bool), 1)
    out["may_attend_convention"] = np.array(bool(np.array_equal(blocked, ~upper)))
    out["diagonal_blocked"] = np.array(bool(np.array_equal(blocked, np.triu(np.ones((5, 5), bool)))))
    out["float_zero_one"] = np.array(bool(isinstance(mask, torch.Tensor) and mask.is_floating_point()
                                          and set(mask.unique().tolist()) <= {0.0, 1.0}))
    return out


@probe("make_examples")
def probe_make_examples(ns):
    """Windows of 6 from three starts, and the window whose target is the data's last id; the dtypes; clues:
    whether the targets are the inputs, or the inputs shifted by two."""
    data = torch.randint(0, 50, (60,), generator=generator(60))
    make_examples, starts = require(ns, "make_examples"), torch.tensor([0, 11, 30])
    x, y = make_examples(data, starts, 6)
    out = {"x": to_array(x), "y": to_array(y), "dtypes": np.array([str(x.dtype), str(y.dtype)]),
           "last_window": caught(lambda: torch.cat(make_examples(data, torch.tensor([53]), 6)))}
    indices = starts[:, None] + torch.arange(6)
    shifts = [k for k in (0, 1, 2) if tuple(y.shape) == (3, 6) and torch.equal(y.long(), data[indices + k])]
    out["targets_like_inputs"], out["targets_shifted_by_2"] = np.array(shifts[:1] == [0]), np.array(shifts[:1] == [2])
    return out


# ---------------------------------------------------------------- Part 3: the model

BLOCK_SIZES = dict(d_model=8, num_heads=2, d_ff=12)
BLOCK_PARTS = ("ln1", "attn", "ln2", "ff", "drop")


def _block(ns: Namespace, dropout: float) -> tuple[nn.Module, dict[str, np.ndarray]]:
    """The notebook's DecoderBlock with its parameters set by name, and its structure."""
    block = require(ns, "DecoderBlock")(BLOCK_SIZES["d_model"], BLOCK_SIZES["num_heads"], BLOCK_SIZES["d_ff"],
                                         dropout)
    structure = {"kinds": _kinds(block, BLOCK_PARTS),
                 "batch_first": np.array(bool(getattr(getattr(block, "attn", None), "batch_first", False))),
                 "parameters": fill_parameters(block, seed=70)}
    return block, structure


def _post_norm(block: nn.Module, x: torch.Tensor, mask) -> torch.Tensor:
    h = block.ln1(x + block.attn(x, x, x, attn_mask=mask, need_weights=False)[0])
    return block.ln2(h + block.ff(h))


@probe("decoder_block")
def probe_decoder_block(ns):
    """Outputs in eval mode with the causal mask (bool and float), with none, and in training mode with a stand-in
    dropout; the structure; clues: post-norm, a mask that changes nothing, eval outputs that change at random."""
    block, out = _block(ns, dropout=0.5)
    x = randn(71, 2, 5, BLOCK_SIZES["d_model"])
    mask, float_mask = trusted_causal_mask(5), torch.zeros(5, 5).masked_fill(trusted_causal_mask(5), float("-inf"))
    with torch.no_grad():
        block.eval()
        out["masked_output"] = caught(lambda: block(x, mask))
        out["float_mask_output"] = caught(lambda: block(x, float_mask))
        out["unmasked_output"] = caught(lambda: block(x, None))
        out["mask_changes_output"] = ~like(out["masked_output"], out["unmasked_output"])
        out["eval_deterministic"] = like(out["masked_output"], caught(lambda: block(x, mask)), atol=0)
        out["like_post_norm"] = like(out["masked_output"], caught(lambda: _post_norm(block, x, mask)))
        out["train_output"] = caught(lambda: with_stand_in_dropout(block)(x, mask))
    return out


GPT_SIZES = dict(vocab_size=11, block_size=6, d_model=8, num_heads=2, num_layers=2, d_ff=12, dropout=0.0)
GPT_PARTS = ("tok_emb", "pos_emb", "blocks", "ln_f", "head")
IDS = torch.tensor([[3, 7, 1, 9, 0, 4], [10, 2, 2, 5, 8, 6]])


def _gpt(ns: Namespace) -> tuple[nn.Module, list[StandInBlock], dict[str, np.ndarray]]:
    """The notebook's TinyGPT built with stand-in blocks (run it with the grader's pieces, _with_grader_pieces),
    its embeddings and final norm set by name (the tied head follows the token embedding); eval mode. Returns the
    model, the stand-ins it made, and its structure."""
    StandInBlock.made = []  # the same seeds for every model built
    model = require(ns, "TinyGPT")(**GPT_SIZES)
    blocks = list(StandInBlock.made)
    head = getattr(model, "head", None)
    structure = {"kinds": _kinds(model, GPT_PARTS), "blocks_made": np.array(len(blocks)),
                 "blocks_registered": np.array(sum(isinstance(m, StandInBlock) for m in model.modules())),
                 "head_tied": np.array(head is not None and getattr(head, "weight", None) is getattr(
                     getattr(model, "tok_emb", None), "weight", 0)),
                 "head_bias": np.array(getattr(head, "bias", None) is not None)}
    with torch.no_grad():
        for name, seed in (("tok_emb", 80), ("pos_emb", 81)):
            getattr(model, name).weight.copy_(randn(seed, *getattr(model, name).weight.shape))
        model.ln_f.weight.copy_(0.5 + torch.rand(GPT_SIZES["d_model"], generator=generator(82)))
        model.ln_f.bias.copy_(randn(83, GPT_SIZES["d_model"]) * 0.1)
    return model.eval(), blocks, structure


def _with_grader_pieces(gpt_probe: Probe) -> Probe:
    """A TinyGPT probe run with the grader's DecoderBlock (a stand-in) and causal_mask in the namespace."""

    def run(ns: Namespace) -> dict[str, np.ndarray]:
        with replaced(ns, DecoderBlock=StandInBlock, causal_mask=trusted_causal_mask):
            return gpt_probe(ns)

    return run


@probe("tiny_gpt")
@_with_grader_pieces
def probe_tiny_gpt(ns):
    """Logits with stand-in blocks; the structure; clues: what the first block got (token + position embeddings,
    or scaled by sqrt(d_model)), whether every block got the causal mask, and the logits without the final norm."""
    model, blocks, out = _gpt(ns)
    with torch.no_grad():
        out["logits"] = caught(lambda: model(IDS))
        causal = trusted_causal_mask(6)
        out["masks_causal"] = np.array(bool(blocks) and all(b.last_mask is not None and b.last_mask.shape == causal.shape
                                                            and torch.equal(b.last_mask, causal) for b in blocks))
        if blocks and blocks[0].last_input is not None:
            embedded = model.tok_emb.weight[IDS], model.pos_emb.weight[:6]
            out["block_input"] = to_array(blocks[0].last_input)
            out["input_like_scaled"] = like(out["block_input"], embedded[0] * math.sqrt(GPT_SIZES["d_model"]) +
                                             embedded[1])
            hidden = blocks[0].last_input
            for block in blocks:
                hidden = block(hidden, trusted_causal_mask(6))
            out["like_no_final_norm"] = like(out["logits"], hidden @ model.tok_emb.weight.T)
    return out


@probe("tiny_gpt_causal")
@_with_grader_pieces
def probe_tiny_gpt_causal(ns):
    """The mask the blocks were given (1 = blocked, or 'none'), whether earlier logits ignore later tokens and a
    prefix gets the same logits, and whether a sequence longer than block_size raises a ValueError."""
    model, blocks, out = _gpt(ns)
    with torch.no_grad():
        logits = model(IDS)
        given = {"none" if block.last_mask is None else str(to_array(block.last_mask).astype(int).tolist()) for block in blocks}
        out["masks_given"] = np.array(sorted(given))  # the distinct masks the blocks got (1 = blocked)
        changed = IDS.clone()
        changed[:, 3:] = (changed[:, 3:] + 5) % GPT_SIZES["vocab_size"]
        out["future_independent"] = np.array(bool(torch.allclose(model(changed)[:, :3], logits[:, :3], atol=1e-6)))
        out["prefix_consistent"] = np.array(bool(torch.allclose(model(IDS[:, :4]), logits[:, :4], atol=1e-6)))
    try:
        model(torch.zeros(1, GPT_SIZES["block_size"] + 1, dtype=torch.long))
        out["too_long"] = np.array("no error")
    except Exception as error:
        out["too_long"] = np.array(type(error).__name__)
    return out


@probe("lm_loss")
def probe_lm_loss(ns):
    """The loss of fixed logits and targets, its shape and its gradient; clues: the sum, and softmax first."""
    logits = (randn(90, 3, 4, 7) * 2).requires_grad_()
    targets = torch.randint(0, 7, (3, 4), generator=generator(91))
    try:
        loss = require(ns, "lm_loss")(logits, targets)
    except Exception as error:
        return {"loss": error_output(error)}
    out = {"loss": to_array(loss), "shape": np.array(tuple(getattr(loss, "shape", (-1,))))}
    try:
        loss.backward()
        out["grad"] = np.array("no gradient") if logits.grad is None else to_array(logits.grad)
    except Exception as error:
        out["grad"] = error_output(error)
    with torch.no_grad():
        out["like_sum"] = like(out["loss"], trusted_lm_loss(logits, targets) * 12)
        out["like_softmax_first"] = like(out["loss"], trusted_lm_loss(torch.softmax(logits, dim=-1), targets))
    return out


# ---------------------------------------------------------------- Part 4: training

TRAIN_DATA = torch.randint(0, 9, (80,), generator=generator(100))
VAL_DATA = torch.randint(0, 9, (40,), generator=generator(101))
TRAIN_RUN = dict(steps=7, batch_size=3, learning_rate=0.05, eval_every=3)


def _stand_in_lm() -> nn.Module:
    torch.manual_seed(102)
    model = StandInLM()
    fill_parameters(model, seed=102)
    return model.eval()  # estimate_loss leaves models in eval mode: train_lm must switch back


def _parameters(model: nn.Module) -> np.ndarray:
    return np.concatenate([to_array(p).ravel() for _, p in sorted(model.named_parameters())])


def _replay(ns: Namespace, optimizer: str = "adamw", zero_grad: bool = True, train_mode: bool = True) -> np.ndarray:
    """The final parameters of the grader's own training loop, with one of the usual mistakes on request."""
    model = _stand_in_lm()
    if optimizer == "adamw":
        opt = torch.optim.AdamW(model.parameters(), lr=TRAIN_RUN["learning_rate"], weight_decay=0.01)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=TRAIN_RUN["learning_rate"], weight_decay=0.01)
    batches = generator(0)
    for step in range(1, TRAIN_RUN["steps"] + 1):
        model.train(train_mode)
        x, y = trusted_make_examples(TRAIN_DATA, ns["sample_starts"](len(TRAIN_DATA), model.block_size,
                                                                    TRAIN_RUN["batch_size"], batches), model.block_size)
        loss = trusted_lm_loss(model(x), y)
        if zero_grad:
            opt.zero_grad()
        loss.backward()
        opt.step()
    return _parameters(model)


def _trained(ns: Namespace, seed: int | None = None) -> tuple[nn.Module, dict]:
    """A stand-in model trained by the notebook's train_lm (with the grader's make_examples and lm_loss)."""
    model = _stand_in_lm()
    seeded = {} if seed is None else {"seed": seed}
    with replaced(ns, make_examples=trusted_make_examples, lm_loss=trusted_lm_loss):
        history = require(ns, "train_lm")(model, TRAIN_DATA, VAL_DATA, **TRAIN_RUN, **seeded)
    if not isinstance(history, dict):
        raise TypeError(f"train_lm must return the history dict, got {type(history).__name__}")
    return model, history


@probe("train_lm")
def probe_train_lm(ns):
    """History and final parameters of a short run (default seed), the final parameters with seed 5; clues:
    the final parameters the usual mistakes give, and whether the validation losses are the training losses."""
    model, history = _trained(ns)
    out = {"history_keys": np.array(sorted(map(str, history)))}
    out |= {key: caught(lambda key=key: np.array([float(v) for v in history[key]]))
            for key in ("step", "train_loss", "val_loss")}
    out["final_parameters"] = _parameters(model)
    out["seed_5_parameters"] = _parameters(_trained(ns, seed=5)[0])
    for name, options in (("adam", dict(optimizer="adam")), ("no_zero_grad", dict(zero_grad=False)),
                          ("eval_mode", dict(train_mode=False))):
        out[f"like_{name}"] = like(out["final_parameters"], _replay(ns, **options))
    out["val_like_train"] = like(out["val_loss"], out["train_loss"])
    return out


# ---------------------------------------------------------------- Part 5: generation

LOGITS = randn(110, 3, 8) * 2


@probe("next_token_probs")
def probe_next_token_probs(ns):
    """Probabilities at several temperatures and top-k (one above the vocabulary size), batched and of one row;
    clues: the row sums, a temperature multiplied in, and top-k applied after the softmax."""
    probs = require(ns, "next_token_probs")
    out = {"plain": caught(lambda: probs(LOGITS)), "cold": caught(lambda: probs(LOGITS, 0.5)),
           "hot_top_3": caught(lambda: probs(LOGITS, 2.0, 3)), "top_20": caught(lambda: probs(LOGITS, 1.0, 20)),
           "one_row": caught(lambda: probs(LOGITS[0], 0.7, 2))}
    out["top_3_sums"] = caught(lambda: probs(LOGITS, 2.0, 3).sum(dim=-1))
    out["like_multiplied"] = like(out["cold"], torch.softmax(LOGITS * 0.5, dim=-1))
    kept = torch.softmax(LOGITS / 2.0, dim=-1)
    out["like_unnormalised"] = like(out["hot_top_3"], kept * (trusted_probs(LOGITS, 2.0, 3) > 0))
    return out


def _with_trusted_probs(ns: Namespace) -> Callable:
    """The notebook's generate, calling the grader's next_token_probs."""
    generate = require(ns, "generate")

    def call(*args, **kwargs):
        with replaced(ns, next_token_probs=trusted_probs):
            return generate(*args, **kwargs)

    return call


def _trusted_greedy(model: nn.Module, idx: torch.Tensor, steps: int, position: int = -1) -> torch.Tensor:
    for _ in range(steps):
        idx = torch.cat([idx, model(idx[:, -model.block_size:])[:, position].argmax(-1, keepdim=True)], dim=1)
    return idx


@probe("generate_greedy")
def probe_generate_greedy(ns):
    """Greedy continuations of a scripted model from a short and a long prompt; whether gradients were off;
    clues: the logits of position 0, an error of the model about an uncropped context, only new ids returned."""
    generate = _with_trusted_probs(ns)
    model, prompts, long_prompts = ScriptedLM(), torch.tensor([[1, 4, 2], [6, 0, 3]]), IDS[:, :6] % 7
    out = {"greedy": caught(lambda: generate(model, prompts, 6, greedy=True)),
           "long_prompt": caught(lambda: generate(model, long_prompts, 3, greedy=True))}
    out["grad_off"] = np.array(bool(model.grad_enabled) and not any(model.grad_enabled))
    out["new_only"] = np.array(out["greedy"].shape == (2, 6))
    with torch.no_grad():
        out["like_position_0"] = like(out["greedy"], _trusted_greedy(model, prompts, 6, position=0))
    out["uncropped"] = np.array("crop it to the last block_size" in str(out["greedy"]) + str(out["long_prompt"]))
    return out


SAMPLED_ROWS = 4000
SAMPLING = {"cool_top_3": dict(temperature=0.8, top_k=3), "hot": dict(temperature=1.5)}


def _sample_frequencies(ids: torch.Tensor, prompt_length: int) -> np.ndarray:
    """How often each id is the first new one."""
    return to_array(torch.bincount(ids[:, prompt_length], minlength=BigramLM.vocab_size).double() / len(ids))


@probe("generate_sampling")
def probe_generate_sampling(ns):
    """For two settings, 4,000 seeded continuations of 3 ids of a bigram model from the same prompt: the first
    new id's frequencies next to its exact probabilities (the judge compares them, checks.py), how many sampled
    ids fall outside the top-k of their step, whether the prompts are kept, and whether the same generator seed
    gives the same samples; clues: the exact probabilities after the first prompt id (position 0's logits), and
    an error of the model about an uncropped context."""
    generate = _with_trusted_probs(ns)
    model, out = BigramLM(), {"uncropped": np.array(False)}
    prompts = torch.tensor([[2, 5]]).repeat(SAMPLED_ROWS, 1)
    for name, setting in SAMPLING.items():
        out[f"{name}_exact"] = to_array(trusted_probs(model.table[5], **setting))
        out[f"{name}_exact_position_0"] = to_array(trusted_probs(model.table[2], **setting))
        try:
            ids = generate(model, prompts, 3, generator=generator(7), **setting)
        except Exception as error:
            out[f"{name}_shape"] = error_output(error)
            out["uncropped"] = np.array("crop it to the last block_size" in str(error))
            continue
        out[f"{name}_shape"] = np.array(tuple(ids.shape))
        if tuple(ids.shape) != (SAMPLED_ROWS, 5):
            continue
        out[f"{name}_frequencies"] = _sample_frequencies(ids, 2)
        out[f"{name}_prompt_kept"] = np.array(bool(torch.equal(ids[:, :2], prompts)))
        if setting.get("top_k"):
            allowed = trusted_probs(model.table[ids[:, 1:4]], **setting) > 0  # (rows, 3 steps, V)
            out[f"{name}_outside_top_k"] = np.array(int((~allowed.gather(-1, ids[:, 2:5, None])).sum()))
        again = generate(model, prompts, 3, generator=generator(7), **setting)
        out[f"{name}_repeatable"] = np.array(bool(torch.equal(again, ids)))
    return out
