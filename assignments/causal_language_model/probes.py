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

from course.probe_tools import (Namespace, Probe, StandInDropout, caught, clue, error_output, fill_parameters,
                                flat_parameters, generator, like, randn, registry, replaced, require,
                                stand_in_dropout, stand_in_registry, to_array)

PROBES, probe = registry()  # check id -> probe; the grader runs them all (course.probe_runner.run_probes)


# ---------------------------------------------------------------- helpers


def _kinds(module: nn.Module, names: tuple[str, ...]) -> np.ndarray:
    return np.array([type(getattr(module, name, None)).__name__ for name in names])


def like_with_nan(got: np.ndarray, want) -> np.ndarray:
    """Whether an output equals a trusted re-computation of a mistake, NaN where it has NaN (like, for mistakes
    whose output is NaN somewhere)."""
    want = to_array(want)
    return np.array(bool(got.dtype.kind == "f" and got.shape == want.shape
                         and np.allclose(got, want, atol=1e-5, equal_nan=True)))


def flag(compute: Callable[[], object], if_error: bool) -> np.ndarray:
    """bool(compute()) as an array, or `if_error` when it raises (an error is no evidence for this flag: other
    outputs show it)."""
    try:
        return np.array(bool(compute()))
    except Exception:
        return np.array(if_error)


def simulated(compute: Callable[[], torch.Tensor]) -> torch.Tensor | np.ndarray:
    """A trusted re-computation of a mistake, or an empty array when it cannot be made (the student's objects
    lack what it needs): then no output is like it."""
    try:
        with torch.no_grad():
            return compute()
    except Exception:
        return np.zeros(0)


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
# fixed. None is a transformer piece. Messages never name them (course.probe_runner).

STAND_INS, stand_in = stand_in_registry()  # stand-in class name -> how a message names it
stand_in("dropout")(StandInDropout)


@stand_in("DecoderBlock")
class StandInBlock(nn.Module):
    """Single-head attention with fixed weights and a residual, reading attn_mask as nn.MultiheadAttention does
    (bool True = blocked; a float mask is added to the scores; a fully blocked row gives NaN, as there).
    It records the pattern of the last mask it got (None: no mask), the devices of the masks it got, and its last
    input."""

    made: list[StandInBlock] = []  # every stand-in since the last reset, in order

    def __init__(self, d_model: int = 8, *args, **kwargs):
        super().__init__()
        StandInBlock.made.append(self)
        seed = 300 + len(StandInBlock.made)
        self.register_buffer("W", randn(seed, 3, d_model, d_model) / math.sqrt(d_model))
        self.last_mask, self.last_input, self.calls, self.mask_devices = None, None, 0, []
        self.arguments = dict(zip(("d_model", "num_heads", "d_ff", "dropout"), (d_model, *args))) | kwargs

    def forward(self, x, attn_mask=None, *args, **kwargs):
        attn_mask = kwargs.get("mask", attn_mask)
        self.calls += 1
        if attn_mask is not None:
            self.mask_devices.append(torch.as_tensor(attn_mask).device)
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
    """Clues to a masked softmax's mistake: the sums of its rows that allow a key (only when there are weights:
    an error is no evidence of a wrong axis), and whether its weights are those of the usual masked softmax taken
    over the queries, of the opposite mask, of the mask added to the scores, or of no mask at all."""
    sums = {}
    if weights.dtype.kind == "f" and weights.shape == tuple(scores.shape):
        any_allowed = (torch.as_tensor(mask) != 0).any(dim=-1).expand(scores.shape[:-1]).numpy()
        sums["row_sums"] = weights.sum(axis=-1)[any_allowed]
    allowed = torch.as_tensor(mask) != 0
    over_queries = torch.softmax(scores.masked_fill(~allowed, torch.finfo(scores.dtype).min), dim=-2) * allowed
    return sums | {"like_masked_query_axis": clue(lambda: like_with_nan(weights, over_queries)),
                   "like_reversed": clue(lambda: like(weights, trusted_masked_softmax(scores, torch.as_tensor(mask) == 0))),
                   "like_additive": clue(lambda: like(weights, torch.softmax(scores + torch.as_tensor(mask, dtype=scores.dtype),
                                                                dim=-1))),
                   "like_no_mask": clue(lambda: like(weights, torch.softmax(scores, dim=-1)))}


@probe("masked_softmax_values")
def probe_masked_softmax_values(ns):
    """Weights without a mask, with bool, 0/1 int, 0/1 float and broadcast masks, and in float16 and float64, each
    call on its own copy of the scores; whether the caller's scores were left as they were; whether the weights
    keep the scores' dtype (float64 scores, and float32 scores with a float64 mask); clues: the weights with a mask
    of the scores' own shape, a softmax over the queries, and the mask's (_mask_clues)."""
    masked_softmax = require(ns, "masked_softmax")
    scores = randn(10, *SCORES_SHAPE) * 2

    def weights(mask=None, dtype=torch.float32):
        return caught(lambda: masked_softmax(scores.clone().to(dtype), mask))

    out = {"no_mask": weights(), "bool_mask": weights(PAIR_MASK), "int_mask": weights(PAIR_MASK.long()),
           "float_mask": weights(PAIR_MASK.float()), "key_mask": weights(KEY_MASK), "batch_mask": weights(BATCH_MASK),
           "full_shape_mask": weights(PAIR_MASK.expand(SCORES_SHAPE)), "float16": weights(PAIR_MASK, torch.float16)}
    kept = scores.clone()
    try:
        masked_softmax(kept, PAIR_MASK)
    except Exception:
        pass
    out["scores_unchanged"] = np.array(bool(torch.equal(kept, scores)))
    out["dtype_kept"] = np.array([  # True unless the weights came back in another dtype than the scores'
        flag(lambda: masked_softmax(scores.double(), PAIR_MASK).dtype == torch.float64, True),
        flag(lambda: masked_softmax(scores.clone(), PAIR_MASK.double()).dtype == torch.float32, True)])
    out["like_query_axis"] = clue(lambda: like(out["no_mask"], torch.softmax(scores, dim=-2)))
    return out | _mask_clues(out["float_mask"], scores, PAIR_MASK.float())


FAR_MASK = torch.tensor([[1, 0, 1, 0], [0, 1, 1, 1], [1, 0, 0, 0]], dtype=torch.bool)  # every row allowed
LARGE_MASK = PAIR_MASK


def _far_scores() -> torch.Tensor:
    """(2, 3, 4) scores: the blocked ones near +100, the allowed ones near -100 (unscaled scores reach such
    sizes, section 1.2)."""
    return randn(14, 2, 3, 4) + torch.where(FAR_MASK, -100.0, 100.0)


def _large_scores() -> torch.Tensor:
    """(2, 3, 5) scores near 100."""
    return randn(15, *SCORES_SHAPE) * 3 + 100


def _softmax_then_mask(scores: torch.Tensor, mask) -> torch.Tensor:
    """The mistake: a plain softmax, the blocked weights zeroed, the row renormalised."""
    weights = torch.softmax(scores, dim=-1) * (torch.as_tensor(mask) != 0)
    return weights / weights.sum(dim=-1, keepdim=True)


def _softmax_without_max_shift(scores: torch.Tensor, mask=None) -> torch.Tensor:
    """The mistake: exp(x) / exp(x).sum() (after the usual fill), without subtracting the row's maximum."""
    if mask is None:
        return scores.exp() / scores.exp().sum(dim=-1, keepdim=True)
    allowed = torch.as_tensor(mask) != 0
    filled = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)
    return filled.exp() / filled.exp().sum(dim=-1, keepdim=True) * allowed


@probe("masked_softmax_empty_rows")
def probe_masked_softmax_empty_rows(ns):
    """A mask with a row that allows nothing: the weights, that row alone, and the gradient of a fixed weighted
    sum of the weights (finite, 0 for the empty row); whether a NaN score of an allowed key (a bug upstream) still
    shows as NaN, and the weights of that call's other rows; the weights at large magnitudes: blocked scores far
    above the allowed ones, and scores near 100 (with a mask and without); clues: whether the empty row is NaN or
    uniform, whether the weights are those of a softmax masked afterwards and renormalised, or of
    exp(x) / exp(x).sum(), and the mask's."""
    masked_softmax = require(ns, "masked_softmax")
    leaf = randn(11, 2, 3, 4).requires_grad_()
    scores = leaf * 1.0  # not a leaf: an in-place change of it is another output's business (masked_softmax_values)
    weights = masked_softmax(scores, EMPTY_MASK)
    out = {"weights": to_array(weights), "empty_rows": to_array(weights[:, 1])} | _mask_clues(
        to_array(weights), leaf.detach(), EMPTY_MASK)
    out["empty_rows_nan"] = np.array(bool(torch.isnan(weights[:, 1]).any()))
    out["empty_rows_uniform"] = np.array(bool(torch.allclose(weights[:, 1], torch.full((2, 4), 0.25))))
    far, large = _far_scores(), _large_scores()
    out["far_blocked"] = caught(lambda: masked_softmax(far.clone(), FAR_MASK))
    out["large_scores"] = caught(lambda: torch.stack([masked_softmax(large.clone(), LARGE_MASK),
                                                      masked_softmax(large.clone())]))
    out["like_after_softmax"] = clue(lambda: like_with_nan(
        np.concatenate([out["weights"].ravel(), out["far_blocked"].ravel()]) if out["far_blocked"].dtype.kind == "f"
        else out["far_blocked"],
        torch.cat([_softmax_then_mask(leaf.detach(), EMPTY_MASK).ravel(), _softmax_then_mask(far, FAR_MASK).ravel()])))
    out["like_no_max_shift"] = clue(lambda: like_with_nan(out["large_scores"], torch.stack(
        [_softmax_without_max_shift(large, LARGE_MASK), _softmax_without_max_shift(large)])))
    try:
        (weights * randn(12, 2, 3, 4)).sum().backward()
    except Exception as error:
        return out | {"grad": error_output(error)}
    out["grad"] = np.array("no gradient") if leaf.grad is None else to_array(leaf.grad)
    out["grad_finite"] = np.array(leaf.grad is not None and bool(torch.isfinite(leaf.grad).all()))
    broken = randn(13, 3, 4).index_put((torch.tensor([0]), torch.tensor([1])), torch.tensor(float("nan")))
    out["nan_score_shows"] = flag(lambda: torch.isnan(masked_softmax(broken, EMPTY_MASK[0])[0]).any(), True)
    out["nan_other_rows"] = caught(lambda: masked_softmax(broken.clone(), EMPTY_MASK[0].clone())[1:])
    return out


@probe("attention_entropy")
def probe_attention_entropy(ns):
    """Entropies of rows with zeros, batched and of one row, and of a batch with an all-zero row (as masked_softmax
    gives); clues: whether the entropies have NaN, are in bits, summed over the queries, divided by ln T_k, of the
    opposite sign, or of shape (..., T_q, 1)."""
    entropy = require(ns, "attention_entropy")
    weights = torch.softmax(randn(20, 2, 3, 6) * 2, dim=-1)
    weights[0, 1] = torch.tensor([0.5, 0.0, 0.25, 0.0, 0.25, 0.0])
    weights[1, 2] = torch.tensor([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    with_zero_row = weights.clone()
    with_zero_row[1, 0] = 0.0
    out = {"entropy": caught(lambda: entropy(weights.clone())), "one_row": caught(lambda: entropy(weights[0, 0].clone())),
           "zero_row": caught(lambda: entropy(with_zero_row))}
    out["finite"] = np.array(not (out["entropy"].dtype.kind == "f" and bool(np.any(np.isnan(out["entropy"])))))
    xlogy = torch.special.xlogy(weights, weights)
    out["like_log2"] = clue(lambda: like(out["entropy"], trusted_entropy(weights) / math.log(2)))
    out["like_over_queries"] = clue(lambda: like(out["entropy"], -xlogy.sum(dim=-2)))
    out["like_normalised"] = clue(lambda: like(out["entropy"], trusted_entropy(weights) / math.log(weights.shape[-1])))
    out["like_negated"] = clue(lambda: like(out["entropy"], -trusted_entropy(weights)))
    out["like_keepdim"] = clue(lambda: like(out["entropy"], trusted_entropy(weights)[..., None]))
    return out


def _saturated_weights() -> torch.Tensor:
    """(2, 4, 6) rows from nearly uniform to nearly one-hot."""
    scales = torch.tensor([0.3, 1.0, 3.0, 10.0])[:, None]
    return torch.softmax(randn(30, 2, 4, 6) * scales, dim=-1)


@probe("saturation_stats")
def probe_saturation_stats(ns):
    """The three statistics of rows from flat to saturated (with the grader's attention_entropy), the keys of
    the dict returned and whether its values are Python floats; clues: the statistics a global max, a max over
    the rows, a spectral or squared norm, or torch.diag (the diagonal of the (rows, T_k) matrix) would give."""
    weights = _saturated_weights()
    with replaced(ns, attention_entropy=trusted_entropy):
        stats = require(ns, "saturation_stats")(weights.clone())
    if not isinstance(stats, dict):
        raise TypeError(f"saturation_stats must return a dict, got {type(stats).__name__}")
    names = ("entropy", "jacobian_norm", "max_weight")
    out = {"keys": np.array(sorted(map(str, stats))),
           "value_types": np.array([("float" if isinstance(stats[key], float) else type(stats[key]).__name__)
                                    if key in stats else "missing" for key in names])}
    out |= {key: caught(lambda key=key: float(stats[key])) for key in names}
    p = weights.reshape(-1, 6)
    outer = p[:, :, None] * p[:, None, :]
    jacobians = torch.diag_embed(p) - outer
    out["max_like_global"] = like(out["max_weight"], weights.max())
    out["max_like_over_rows"] = like(out["max_weight"], p.max(dim=0).values.mean())
    out["jacobian_like_spectral"] = like(out["jacobian_norm"], torch.linalg.matrix_norm(jacobians, ord=2).mean())
    out["jacobian_like_squared"] = like(out["jacobian_norm"], torch.linalg.matrix_norm(jacobians).pow(2).mean())
    out["jacobian_like_torch_diag"] = like(out["jacobian_norm"],
                                           torch.linalg.matrix_norm(torch.diag(p) - outer).mean())
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
    an x that requires gradients; clues: the transposed matrix, the column norms of d out.sum() / d x, the squared
    norms, and one gradient per output row of the row's sum."""
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
    out["like_transposed"] = clue(lambda: like(out["causal"], trusted.T))
    summed = torch.autograd.functional.jacobian(lambda y: _causal_layer(y).sum(), x).norm(dim=1)  # one per input
    out["like_sum_gradient"] = clue(lambda: like(out["causal"], summed.expand(5, 5)) | like(out["causal"], summed[:, None].expand(5, 5)))
    out["like_squared"] = clue(lambda: like(out["causal"], trusted ** 2))
    jacobian = torch.autograd.functional.jacobian(_causal_layer, x.clone())  # (T, d_out, T, d_in)
    out["like_row_sums"] = clue(lambda: like(out["causal"], jacobian.sum(dim=1).norm(dim=-1)))
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
    T = 5, whether the mask is made on the device asked for (meta: no memory, and never the default), whether a
    float mask holds only 0 and -inf (as the visible test asks); clues: the
    mask's dtype, whether it is one of the usual wrong masks, and whether it holds NaN."""
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
    out["has_nan"] = np.array(bool(isinstance(mask, torch.Tensor) and mask.is_floating_point()
                                   and torch.isnan(mask).any()))
    out["float_values"] = np.array(bool(not (isinstance(mask, torch.Tensor) and mask.is_floating_point())
                                        or set(mask.unique().tolist()) <= {0.0, -math.inf}))
    return out


@probe("make_examples")
def probe_make_examples(ns):
    """Windows of 6 from three starts, and the window whose target is the data's last id; the dtypes; clues:
    whether the targets are the inputs, the inputs shifted by two, or the inputs rolled by one (the last target
    wrapping round)."""
    data = torch.randint(0, 50, (60,), generator=generator(60))
    make_examples, starts = require(ns, "make_examples"), torch.tensor([0, 11, 30])
    x, y = make_examples(data, starts, 6)
    out = {"x": to_array(x), "y": to_array(y), "dtypes": np.array([str(x.dtype), str(y.dtype)]),
           "last_window": caught(lambda: torch.cat(make_examples(data, torch.tensor([53]), 6)))}
    indices = starts[:, None] + torch.arange(6)
    shifts = [k for k in (0, 1, 2) if tuple(y.shape) == (3, 6) and torch.equal(y.long(), data[indices + k])]
    out["targets_like_inputs"], out["targets_shifted_by_2"] = np.array(shifts[:1] == [0]), np.array(shifts[:1] == [2])
    out["targets_rolled"] = np.array(bool(tuple(y.shape) == (3, 6) and torch.equal(y.long(), torch.roll(data[indices], -1, 1))))
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


def _block_variant(block: nn.Module, x: torch.Tensor, mask, variant: str) -> torch.Tensor:
    """The block's output in eval mode under one of the usual slips of its formula: the feed-forward normalised
    with ln1 ("ff_ln1"), reading the block's input instead of the stream after attention ("ff_reads_input"), or
    with ReLU in place of GELU ("relu")."""
    h = block.ln1(x)
    h = x + block.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
    if variant == "ff_ln1":
        return h + block.ff(block.ln1(h))
    if variant == "ff_reads_input":
        return h + block.ff(block.ln2(x))
    return h + block.ff[2](torch.relu(block.ff[0](block.ln2(h))))


def _held_tensors(module: nn.Module) -> int:
    """How many tensors the module and its children hold in plain attributes (lists, dicts and tuples included),
    beside their parameters and buffers."""
    def count(value, depth=0) -> int:
        if isinstance(value, torch.Tensor):
            return 1
        if depth < 2 and isinstance(value, (list, tuple)):
            return sum(count(v, depth + 1) for v in value)
        if depth < 2 and isinstance(value, dict):
            return sum(count(v, depth + 1) for v in value.values())
        return 0
    return sum(count(value) for m in module.modules() for name, value in vars(m).items()
               if name not in ("_parameters", "_buffers", "_modules"))


@probe("decoder_block")
def probe_decoder_block(ns):
    """Outputs in eval mode with the causal mask (bool and float), with none, and in training mode with a stand-in
    dropout; the structure; whether the tensors the block holds grow from call to call; clues: post-norm, a mask
    that changes nothing, eval outputs that change at random, and slips of the formula (_block_variant)."""
    block, out = _block(ns, dropout=0.5)
    x = randn(71, 2, 5, BLOCK_SIZES["d_model"])
    mask, float_mask = trusted_causal_mask(5), torch.zeros(5, 5).masked_fill(trusted_causal_mask(5), float("-inf"))
    with torch.no_grad():
        block.eval()
        out["masked_output"] = caught(lambda: block(x, mask))
        held = _held_tensors(block)
        out["float_mask_output"] = caught(lambda: block(x, float_mask))
        out["unmasked_output"] = caught(lambda: block(x, None))
        out["mask_changes_output"] = ~like(out["masked_output"], out["unmasked_output"])
        out["eval_deterministic"] = like(out["masked_output"], caught(lambda: block(x, mask)), atol=0)
        out["holds_no_more"] = np.array(_held_tensors(block) <= held)
        out["like_post_norm"] = clue(lambda: like(out["masked_output"], caught(lambda: _post_norm(block, x, mask))))
        for variant in ("ff_ln1", "ff_reads_input", "relu"):
            out[f"like_{variant}"] = clue(lambda: like(out["masked_output"], simulated(lambda: _block_variant(block, x, mask, variant))))
        with stand_in_dropout(block):
            out["train_output"] = caught(lambda: block(x, mask))
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


def _first_block_input(ns: Namespace, ids: torch.Tensor) -> np.ndarray:
    """What the first stand-in block of a fresh model gets for `ids` (empty if it gets nothing)."""
    model, blocks, _ = _gpt(ns)
    with torch.no_grad():
        try:
            model(ids)
        except Exception:
            pass
    return to_array(blocks[0].last_input) if blocks and blocks[0].last_input is not None else np.zeros(0)


def _on_meta(model: nn.Module, blocks: list[StandInBlock]) -> dict[str, np.ndarray]:
    """The model and ids moved to the meta device (no memory, and never the CPU): whether the positions given to
    pos_emb and the masks given to the blocks were on it. A tensor made on the CPU there is what, on a GPU, fails
    with "expected all tensors to be on the same device"."""
    devices = []
    pos_emb = getattr(model, "pos_emb", None)
    hook = pos_emb.register_forward_pre_hook(lambda module, args: devices.append(args[0].device)) \
        if isinstance(pos_emb, nn.Module) else None
    for block in blocks:
        block.mask_devices = []
    try:
        with torch.no_grad():
            model.to("meta")(IDS.to("meta"))
    except Exception:
        pass
    finally:
        if hook is not None:
            hook.remove()
    meta = torch.device("meta")
    return {"positions_on_device": np.array(all(device == meta for device in devices)),
            "mask_on_device": np.array(all(device == meta for block in blocks for device in block.mask_devices))}


@probe("tiny_gpt")
@_with_grader_pieces
def probe_tiny_gpt(ns):
    """Logits with stand-in blocks at T = block_size; the structure (the position table's rows too); whether the
    positions and the mask are made on the device of idx; clues: what the first block got (token + position
    embeddings, or scaled by sqrt(d_model)), also at T = 4, whether every block got the causal mask, whether the
    blocks all read the same input (not chained), the logits without the final norm, and whether the full-length
    input raised a ValueError; the arguments the blocks got; built with the signature's defaults, the blocks it
    makes and the arguments they get, and the dropout they get when one is given."""
    model, blocks, out = _gpt(ns)
    out["arguments_passed"] = caught(lambda: _arguments(blocks))
    pos_emb = getattr(model, "pos_emb", None)
    out["position_rows"] = np.array(getattr(getattr(pos_emb, "weight", None), "shape", (-1,))[0])
    with torch.no_grad():
        out["logits"] = caught(lambda: model(IDS))
        out["value_error_at_block_size"] = np.array(str(out["logits"]).startswith("ValueError"))
        causal = trusted_causal_mask(6)
        if blocks and all(b.calls for b in blocks):
            out["masks_causal"] = np.array(all(b.last_mask is not None and b.last_mask.shape == causal.shape
                                               and torch.equal(b.last_mask, causal) for b in blocks))
            out["blocks_share_input"] = np.array(len(blocks) > 1 and all(
                b.last_input.shape == blocks[0].last_input.shape and torch.equal(b.last_input, blocks[0].last_input)
                for b in blocks[1:]))
        if blocks and blocks[0].last_input is not None:
            embedded = model.tok_emb.weight[IDS], model.pos_emb.weight[:6]
            out["block_input"] = to_array(blocks[0].last_input)
            out["input_like_scaled"] = like(out["block_input"], embedded[0] * math.sqrt(GPT_SIZES["d_model"]) +
                                             embedded[1])
            hidden = blocks[0].last_input
            for block in blocks:
                hidden = block(hidden, trusted_causal_mask(6))
            out["like_no_final_norm"] = clue(lambda: like(out["logits"], hidden @ model.tok_emb.weight.T))
    out["short_block_input"] = _first_block_input(ns, IDS[:, :4])
    out |= _on_meta(model, blocks)
    out["defaults"] = caught(lambda: _block_arguments(ns))
    out["dropout_passed"] = caught(lambda: _block_arguments(ns, dropout=0.3)[-1:])
    return out


def _block_arguments(ns: Namespace, **given) -> np.ndarray:
    """A TinyGPT built with only vocab_size and block_size (and `given`): how many blocks it made, its token
    embedding's width, and the num_heads, d_ff and dropout its first block got (_arguments)."""
    StandInBlock.made = []
    model = require(ns, "TinyGPT")(GPT_SIZES["vocab_size"], GPT_SIZES["block_size"], **given)
    blocks = list(StandInBlock.made)
    width = getattr(getattr(getattr(model, "tok_emb", None), "weight", None), "shape", (0, math.nan))[1]
    return np.array([float(len(blocks)), float(width)] + list(_arguments(blocks)[1:]))


def _arguments(blocks: list[StandInBlock]) -> np.ndarray:
    """The d_model, num_heads, d_ff and dropout the first block got (dropout: DecoderBlock's default 0.1 when not
    given; NaN for an argument it did not get)."""
    got = {"dropout": 0.1} | (blocks[0].arguments if blocks else {})
    return np.array([float(got.get(name, math.nan)) for name in ("d_model", "num_heads", "d_ff", "dropout")])


@probe("tiny_gpt_causal")
@_with_grader_pieces
def probe_tiny_gpt_causal(ns):
    """On sequences of 5 ids: the mask the blocks were given (1 = blocked, or 'none'), whether earlier logits
    ignore later tokens and a prefix gets the same logits; whether a sequence of block_size ids raises a ValueError
    (it must not), and whether a longer one does."""
    model, blocks, out = _gpt(ns)
    ids = IDS[:, :5]
    with torch.no_grad():
        logits = model(ids)
        given = {"none" if block.last_mask is None else str(to_array(block.last_mask).astype(int).tolist()) for block in blocks}
        out["masks_given"] = np.array(sorted(given))  # the distinct masks the blocks got (1 = blocked)
        changed = ids.clone()
        changed[:, 3:] = (changed[:, 3:] + 5) % GPT_SIZES["vocab_size"]
        out["future_independent"] = np.array(bool(torch.allclose(model(changed)[:, :3], logits[:, :3], atol=1e-6)))
        out["prefix_consistent"] = np.array(bool(torch.allclose(model(ids[:, :3]), logits[:, :3], atol=1e-6)))
        try:
            model(IDS)
            out["value_error_at_block_size"] = np.array(False)
        except Exception as error:
            out["value_error_at_block_size"] = np.array(isinstance(error, ValueError))
    try:
        model(torch.zeros(1, GPT_SIZES["block_size"] + 1, dtype=torch.long))
        out["too_long"] = np.array("no error")
    except Exception as error:
        out["too_long"] = np.array(type(error).__name__)
    return out


@probe("lm_loss")
def probe_lm_loss(ns):
    """The loss of fixed logits and targets (id 0 among them: a real character), its shape and its gradient;
    clues: whether no gradient came back, the sum, softmax first, id 0 ignored, nll_loss of the raw logits, and
    F.cross_entropy given the (B, T, V) logits unflattened (its value, or its error)."""
    logits = (randn(90, 3, 4, 7) * 2).requires_grad_()
    targets = torch.randint(0, 7, (3, 4), generator=generator(91))
    targets[0, :2], targets[2, 3] = 0, 0
    unflattened = caught(lambda: F.cross_entropy(logits.detach(), targets))
    try:
        loss = require(ns, "lm_loss")(logits, targets.clone())
    except Exception as error:
        found = error_output(error)
        return {"loss": found, "like_unflattened": clue(lambda: np.array(str(found) == str(unflattened)))}
    out = {"loss": to_array(loss), "shape": np.array(tuple(getattr(loss, "shape", (-1,))))}
    try:
        loss.backward()
        out["grad"] = np.array("no gradient") if logits.grad is None else to_array(logits.grad)
    except Exception as error:
        out["grad"] = error_output(error)
    out["no_gradient"] = np.array(logits.grad is None)
    with torch.no_grad():
        flat_logits, flat_targets = logits.reshape(-1, 7), targets.reshape(-1)
        out["like_sum"] = clue(lambda: like(out["loss"], trusted_lm_loss(logits, targets) * 12))
        out["like_softmax_first"] = clue(lambda: like(out["loss"], trusted_lm_loss(torch.softmax(logits, dim=-1), targets)))
        out["like_ignore_0"] = clue(lambda: like(out["loss"], F.cross_entropy(flat_logits, flat_targets, ignore_index=0)))
        out["like_nll_on_logits"] = clue(lambda: like(out["loss"], F.nll_loss(flat_logits, flat_targets)))
    out["like_unflattened"] = clue(lambda: np.array(str(out["loss"]) == str(unflattened)) if unflattened.dtype.kind in "US" \
        else like(out["loss"], unflattened))
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


def _replay(ns: Namespace, optimizer: str = "adamw", zero_grad: bool = True, train_mode: bool = True,
            reseed: bool = False, new_optimizer: bool = False) -> np.ndarray:
    """The final parameters of the grader's own training loop, with one of the usual mistakes on request: Adam,
    no zero_grad, no train mode, the generator re-seeded at every step, a new optimizer at every step."""
    model = _stand_in_lm()

    def make_optimizer():
        kind = torch.optim.AdamW if optimizer == "adamw" else torch.optim.Adam
        return kind(model.parameters(), lr=TRAIN_RUN["learning_rate"], weight_decay=0.01)

    opt = make_optimizer()
    batches = generator(0)
    for step in range(1, TRAIN_RUN["steps"] + 1):
        if reseed:
            batches = generator(0)
        if new_optimizer:
            opt = make_optimizer()
        model.train(train_mode)
        x, y = trusted_make_examples(TRAIN_DATA, ns["sample_starts"](len(TRAIN_DATA), model.block_size,
                                                                    TRAIN_RUN["batch_size"], batches), model.block_size)
        loss = trusted_lm_loss(model(x), y)
        if zero_grad:
            opt.zero_grad()
        loss.backward()
        opt.step()
    return flat_parameters(model)


def _trained(ns: Namespace, seed: int | None = None, **changes) -> tuple[nn.Module, dict]:
    """A stand-in model trained by the notebook's train_lm (with the grader's make_examples and lm_loss), with
    TRAIN_RUN's settings or `changes` to them."""
    model = _stand_in_lm()
    seeded = {} if seed is None else {"seed": seed}
    with replaced(ns, make_examples=trusted_make_examples, lm_loss=trusted_lm_loss):
        history = require(ns, "train_lm")(model, TRAIN_DATA.clone(), VAL_DATA.clone(), **(TRAIN_RUN | changes), **seeded)
    if not isinstance(history, dict):
        raise TypeError(f"train_lm must return the history dict, got {type(history).__name__}")
    return model, history


@probe("train_lm")
def probe_train_lm(ns):
    """History and final parameters of a short run (default seed), the final parameters with seed 5; clues:
    the final parameters the usual mistakes give, whether training changed them at all, whether another learning
    rate or seed changes them, and whether the validation losses are the training losses."""
    model, history = _trained(ns)
    out = {"history_keys": np.array(sorted(map(str, history)))}
    out |= {key: caught(lambda key=key: np.array([float(v) for v in history[key]]))
            for key in ("step", "train_loss", "val_loss")}
    out["final_parameters"] = flat_parameters(model)
    out["seed_5_parameters"] = flat_parameters(_trained(ns, seed=5)[0])
    for name, options in (("adam", dict(optimizer="adam")), ("no_zero_grad", dict(zero_grad=False)),
                          ("eval_mode", dict(train_mode=False)), ("same_batch", dict(reseed=True)),
                          ("new_optimizer", dict(new_optimizer=True))):
        out[f"like_{name}"] = clue(lambda: like(out["final_parameters"], _replay(ns, **options)))
    out["val_like_train"] = like(out["val_loss"], out["train_loss"])
    out["seed_5_like_default"] = like(out["seed_5_parameters"], out["final_parameters"], atol=0)
    out["trained"] = ~like(out["final_parameters"], flat_parameters(_stand_in_lm()), atol=0)
    out["learning_rate_used"] = ~like(flat_parameters(_trained(ns, learning_rate=0.02)[0]), out["final_parameters"], atol=0)
    return out


# ---------------------------------------------------------------- Part 5: generation

LOGITS = randn(110, 3, 8) * 2


@probe("next_token_probs")
def probe_next_token_probs(ns):
    """Probabilities at several temperatures and top-k (one above the vocabulary size), batched and of one row,
    each call on its own copy of the logits; whether the caller's logits were left as they were; clues: the row
    sums, a temperature multiplied in, top-k applied after the softmax, and k - 1, k + 1 or another number of
    logits kept (fewer than all)."""
    probs = require(ns, "next_token_probs")

    def call(logits, *args):
        return caught(lambda: probs(logits.clone(), *args))

    out = {"plain": call(LOGITS), "cold": call(LOGITS, 0.5), "hot_top_3": call(LOGITS, 2.0, 3),
           "top_20": call(LOGITS, 1.0, 20), "one_row": call(LOGITS[0], 0.7, 2)}
    kept = LOGITS.clone()
    try:
        probs(kept, 0.5, 3)
    except Exception:
        pass
    out["logits_unchanged"] = np.array(bool(torch.equal(kept, LOGITS)))
    out["top_3_sums"] = out["hot_top_3"].sum(axis=-1) if out["hot_top_3"].dtype.kind == "f" else out["hot_top_3"]
    out["like_multiplied"] = clue(lambda: like(out["cold"], torch.softmax(LOGITS * 0.5, dim=-1)))
    out["like_unnormalised"] = clue(lambda: like(out["hot_top_3"], torch.softmax(LOGITS / 2.0, dim=-1) * (trusted_probs(LOGITS, 2.0, 3) > 0)))
    out["like_k_minus_1"] = clue(lambda: like(out["hot_top_3"], trusted_probs(LOGITS, 2.0, 2)))
    out["like_k_plus_1"] = clue(lambda: like(out["hot_top_3"], trusted_probs(LOGITS, 2.0, 4)))
    out["like_other_k"] = clue(lambda: np.array(any(bool(like(out["hot_top_3"], trusted_probs(LOGITS, 2.0, k)))
                                       for k in range(1, LOGITS.shape[-1]) if k != 3)))
    return out


def _with_trusted_probs(ns: Namespace) -> Callable:
    """The notebook's generate, calling the grader's next_token_probs."""
    generate = require(ns, "generate")

    def call(*args, **kwargs):
        with replaced(ns, next_token_probs=trusted_probs):
            return generate(*args, **kwargs)

    return call


def _trusted_greedy(model: nn.Module, idx: torch.Tensor, steps: int, position: int = -1,
                    first_ids: bool = False, crop: int | None = None) -> torch.Tensor:
    """Greedy decoding; `position` 0, `first_ids` (the context cropped to its first block_size ids) or a `crop`
    shorter than block_size are mistakes."""
    for _ in range(steps):
        context = idx[:, :model.block_size] if first_ids else idx[:, -(crop or model.block_size):]
        idx = torch.cat([idx, model(context)[:, position].argmax(-1, keepdim=True)], dim=1)
    return idx


def _greedy_of_other_length(got: np.ndarray, model: nn.Module, prompts: torch.Tensor, steps: int) -> bool:
    """Whether `got` is the prompts and their right greedy ids, but more or fewer of them than `steps`."""
    length = prompts.shape[1]
    if got.ndim != 2 or got.dtype.kind not in "iuf" or got.shape[0] != len(prompts) \
            or got.shape[1] in (length, length + steps) or got.shape[1] < length:
        return False
    with torch.no_grad():
        return bool(np.array_equal(got, to_array(_trusted_greedy(model, prompts, got.shape[1] - length))))


@probe("generate_greedy")
def probe_generate_greedy(ns):
    """Greedy continuations of a scripted model from a short and a long prompt; whether gradients were off;
    clues: the logits of position 0, the context cropped to its first ids, an error of the model about an
    uncropped context, the context cropped shorter than block_size, only the right new ids returned, the right
    greedy ids but another number of them."""
    generate = _with_trusted_probs(ns)
    model, prompts, long_prompts = ScriptedLM(), torch.tensor([[1, 4, 2], [6, 0, 3]]), IDS[:, :6] % 7
    out = {"greedy": caught(lambda: generate(model, prompts, 6, greedy=True)),
           "long_prompt": caught(lambda: generate(model, long_prompts, 3, greedy=True))}
    out["grad_off"] = np.array(bool(model.grad_enabled) and not any(model.grad_enabled))
    with torch.no_grad():
        right_new_ids = to_array(_trusted_greedy(model, prompts, 6))[:, 3:]
    out["new_only"] = np.array(bool(out["greedy"].shape == (2, 6) and np.array_equal(out["greedy"], right_new_ids)))
    out["other_count"] = np.array(_greedy_of_other_length(out["greedy"], model, prompts, 6))
    with torch.no_grad():
        out["like_position_0"] = clue(lambda: like(out["greedy"], _trusted_greedy(model, prompts, 6, position=0)))
        out["like_first_ids"] = clue(lambda: like(out["greedy"], _trusted_greedy(model, prompts, 6, first_ids=True)))
        out["like_short_crop"] = clue(lambda: np.array(any(bool(like(out["greedy"], _trusted_greedy(model, prompts, 6, crop=c)))
                                              for c in range(1, model.block_size))))
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
    gives the same samples; whether, with no generator given, torch.manual_seed decides the samples; clues: the
    exact probabilities after the first prompt id (position 0's logits) and at temperature 1, whether only the
    new ids came back, and an error of the model about an uncropped context."""
    generate = _with_trusted_probs(ns)
    model, out = BigramLM(), {"uncropped": np.array(False)}
    prompts = torch.tensor([[2, 5]]).repeat(SAMPLED_ROWS, 1)
    for name, setting in SAMPLING.items():
        out[f"{name}_exact"] = to_array(trusted_probs(model.table[5], **setting))
        out[f"{name}_exact_position_0"] = to_array(trusted_probs(model.table[2], **setting))
        out[f"{name}_exact_temperature_1"] = to_array(trusted_probs(model.table[5], top_k=setting.get("top_k")))
        try:
            ids = generate(model, prompts, 3, generator=generator(7), **setting)
        except Exception as error:
            out[f"{name}_shape"] = error_output(error)
            out["uncropped"] = np.array("crop it to the last block_size" in str(error))
            continue
        out[f"{name}_shape"] = np.array(tuple(ids.shape))
        out[f"{name}_new_only"] = np.array(tuple(ids.shape) == (SAMPLED_ROWS, 3))
        out[f"{name}_prompt_kept"] = np.array(bool(ids.ndim == 2 and ids.shape[0] == SAMPLED_ROWS and ids.shape[1] >= 2
                                                   and torch.equal(ids[:, :2], prompts)))
        again = generate(model, prompts, 3, generator=generator(7), **setting)
        out[f"{name}_repeatable"] = np.array(bool(torch.equal(again, ids)))
        if tuple(ids.shape) != (SAMPLED_ROWS, 5):
            continue
        out[f"{name}_frequencies"] = _sample_frequencies(ids, 2)
        if setting.get("top_k"):
            allowed = trusted_probs(model.table[ids[:, 1:4]], **setting) > 0  # (rows, 3 steps, V)
            out[f"{name}_outside_top_k"] = np.array(int((~allowed.gather(-1, ids[:, 2:5, None])).sum()))
    out["default_generator"] = _follows_global_seed(generate, model)
    return out


def _follows_global_seed(generate: Callable, model: nn.Module) -> np.ndarray:
    """Whether, with no generator given, the samples follow torch.manual_seed: the same seed gives the same ids,
    another seed others (200 rows of 3 ids: two seeds agree by chance with probability far below 1e-100). The
    global random state is restored afterwards. An error is no evidence here (True): other outputs show it."""
    prompts = torch.tensor([[2, 5]]).repeat(200, 1)
    try:
        with torch.random.fork_rng(devices=[]):
            runs = []
            for seed in (11, 11, 12):
                torch.manual_seed(seed)
                runs.append(generate(model, prompts, 3, temperature=1.5))
    except Exception:
        return np.array(True)
    return np.array(bool(torch.equal(runs[0], runs[1]) and not torch.equal(runs[0], runs[2])))
