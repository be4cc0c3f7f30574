# Instructor notebook of "Attention Designed by Hand", in jupytext percent format:
# valid Python that Jupyter (with jupytext) opens as a notebook. `make source` builds
# source/hand_designed_attention/ from this folder; cell headers are explained in course/notebook_format.py.

# %% [markdown]
# # Attention Designed by Hand
#
# A transformer layer decides, for every position of a sequence, which other
# positions to read from. Usually gradient descent chooses the weights that
# make those decisions. In this assignment **you** choose them: you write a
# one-layer, one-head transformer in PyTorch, then set its query, key and value
# matrices by hand so that it solves three small tasks exactly, and finally
# train the same layer on the same tasks and compare what it learned with what
# you designed.
#
# | Part | You write | Points |
# |---|---|---|
# | 1 | `PytorchTransformer`: `__init__` and `forward` | 10 |
# | 2 | `attention_by_content`, `attention_by_position`, `attention_by_content_and_position` (challenge) | 11 |
# | 3 | nothing: you train the layer and read the plots | 0 |
# | 4 | three written answers (graded by hand) | 12 |
# | | **total** | **33** |
#
# **Learning goals.** After this notebook you can
# - turn a loop-by-loop description of attention into a vectorised PyTorch
#   module that keeps gradients;
# - predict the attention weights from the query, key and value matrices, and
#   choose matrices that select by content, by position, or by both;
# - explain why the *size* of the attention scores matters, and why a softmax
#   must subtract the maximum score before exponentiating;
# - explain why two very different sets of weights can compute the same
#   function (only $Q_m K_m^\top$ and the values are identifiable), and why a
#   layer that *can* represent a task may still fail to *learn* it.
#
# **How this notebook is graded.**
# - Write code only between the `# YOUR CODE HERE` marker and the end of its
#   cell region, replacing `raise NotImplementedError(...)`. Keep every given
#   name, argument and attribute: the grader builds your class and calls your
#   functions by these names.
# - Cells marked *visible tests* check your work as you go; read their messages.
#   Each *graded check* cell is worth the points it names: after you submit,
#   the grader runs your code on its own inputs, outside your notebook, and
#   writes its verdict there and in your feedback. Passing the visible tests is
#   a good sign, not a guarantee.
# - Do not edit or delete the given cells; they are restored at grading.
# - Before you submit: **Kernel → Restart & Run All**. The last cell writes
#   `submission_log.json` from your code; submit it with the notebook.
# - The whole notebook runs in well under a minute on a laptop CPU. It uses a
#   GPU for training if there is one (these layers are so small that the CPU is
#   just as fast).
#
# **How your designs (Part 2) are judged.** Many different matrices solve each
# task, so the grader never compares your matrices with ours. It judges what
# they *do*, on **every** sequence of the task:
#
# | task | sequences judged | an output passes when |
# |---|---|---|
# | attention by content | all 1,092 sequences of length 1 to 6 over {A, B, C} | it is within 0.01 of its target |
# | attention by position | all 120 sequences of length 1 to 4 over {A, B, C} | it is within 0.01 of its target |
# | content and position (challenge) | all 120 sequences of length 1 to 4 over {A, B, C}, each with CLS in front; every position except CLS's | its sign is right **and** its size is at least 0.001 |
#
# "Within 0.01" means $\max |\text{output} - \text{target}| \le 0.01$ over every
# entry of every output vector. A design passes only if **every** judged output
# of **every** sequence passes, all outputs are finite numbers, and the matrices
# have the shapes the task asks for (with `qk_dim`, `pos_dim` and the rows of
# `pos` at most 64; the tasks need far fewer). The grader computes the outputs
# with the given `reference_attention` (float64 NumPy, a numerically stable
# softmax) and judges them with the given `check_design` of Part 2: the very
# code you run, so the verdict you see before you submit is the grader's.
# (Given cells are restored at grading: editing them changes nothing.)

# %% code id="setup-imports"
import math

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
from matplotlib.colors import TwoSlopeNorm
from tqdm.auto import tqdm

torch.manual_seed(0)
np.random.seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print(f"PyTorch {torch.__version__}, training on {device}")


def set_weights(model, Km, Qm, Vm, pos=None):
    """Copy a design into a PytorchTransformer, by parameter name.

    Designs use the NumPy convention K = x @ Km, so Km has shape (input_dim + pos_dim, qk_dim).
    nn.Linear stores the transpose (weight: (out_features, in_features), output x @ weight.T),
    so model.Km.weight becomes Km.T. pos is copied as it is: row i is the vector of position i.
    """
    dtype = model.Km.weight.dtype
    with torch.no_grad():
        for name, matrix in (("Km", Km), ("Qm", Qm), ("Vm", Vm)):
            getattr(model, name).weight.copy_(torch.as_tensor(np.asarray(matrix, dtype=np.float64).T, dtype=dtype))
        if pos is not None:
            model.pos.weight.copy_(torch.as_tensor(np.asarray(pos, dtype=np.float64), dtype=dtype))
    return model


def get_weights(model):
    """A PytorchTransformer's (Km, Qm, Vm, pos) as float64 NumPy arrays in the design convention (x @ Km)."""
    def numpy(t):
        return t.detach().cpu().double().numpy()
    pos = None if model.pos is None else numpy(model.pos.weight)
    return numpy(model.Km.weight).T, numpy(model.Qm.weight).T, numpy(model.Vm.weight).T, pos


def annotate(ax, matrix, fmt="{:.2g}", threshold=0.6, norm=None):
    """Write each value on its cell (small matrices only), white on dark cells."""
    rows, cols = matrix.shape
    if rows * cols > 64:
        return
    for (i, j), value in np.ndenumerate(matrix):
        if not np.isfinite(value):
            ax.text(j, i, "–", ha="center", va="center", fontsize=8)
            continue
        strength = abs(norm(value) - 0.5) * 2 if norm is not None else value
        ax.text(j, i, fmt.format(value), ha="center", va="center", fontsize=8,
                color="white" if strength > threshold else "black")


def plot_attention(ax, weights, title, query_labels=None, key_labels=None, colorbar=True):
    """Attention weights (queries x keys) on the fixed scale 0 to 1, values written on the cells."""
    weights = np.asarray(weights)
    image = ax.imshow(weights, cmap="Blues", vmin=0, vmax=1)
    annotate(ax, weights, fmt="{:.2f}")
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="weight")
    ax.set(title=title, xlabel="key", ylabel="query",
           xticks=range(weights.shape[1]), yticks=range(weights.shape[0]))
    if key_labels is not None:
        ax.set_xticklabels(key_labels)
    if query_labels is not None:
        ax.set_yticklabels(query_labels)


def plot_signed(ax, matrix, title, xlabel, ylabel, xticklabels=None, yticklabels=None, limit=None, colorbar=True):
    """A signed matrix on a diverging scale centred at 0 (white), from -limit (blue) to +limit (red).

    limit defaults to the largest |value|; pass the same limit to panels you want to compare.
    """
    matrix = np.asarray(matrix, dtype=np.float64)
    if limit is None:
        limit = float(np.abs(matrix).max()) if matrix.size else 1.0
    limit = max(limit, 1e-9)
    norm = TwoSlopeNorm(vcenter=0.0, vmin=-limit, vmax=limit)
    image = ax.imshow(matrix, cmap="RdBu_r", norm=norm, aspect="auto" if matrix.shape[1] > 12 else None)
    annotate(ax, matrix, norm=norm)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    if matrix.shape[1] <= 12:
        ax.set_xticks(range(matrix.shape[1]))
    if xticklabels is not None:
        ax.set(xticks=range(len(xticklabels)), xticklabels=xticklabels)
    if yticklabels is not None:
        ax.set(yticks=range(len(yticklabels)), yticklabels=yticklabels)

# %% [markdown]
# # Part 1: From a NumPy loop to a PyTorch module
#
# Our transformer is deliberately bare: one layer, one head, one sequence at a
# time (no batch), no residual connection, no normalization, no feed-forward
# network, no mask. What is left is attention itself. For a sequence of
# $n$ tokens, each a row of `input_dim` numbers:
#
# 1. If the layer has a positional table `pos` (one learned row per position),
#    **concatenate** row $i$ of the table to token $i$, *after* the token's
#    features: $x_i = [\,\text{token}_i,\ \text{pos}_i\,]$. The rows $x_i$ form
#    $X$, of shape $(n,\ \text{input\_dim} + \text{pos\_dim})$. (Real
#    transformers *add* positions to tokens; concatenating keeps the two apart,
#    which makes hand design easier.)
# 2. Project: $K = X K_m$, $Q = X Q_m$, $V = X V_m$.
# 3. Attend: $\text{out} = \text{softmax}\!\left(\dfrac{Q K^\top}{\sqrt{d_{qk}}}\right) V$,
#    with the softmax over each row (each query's scores over all keys), and
#    $d_{qk}$ the number of columns of $Q$.
#
# The given function `reference_attention` below computes this in NumPy,
# **one query at a time**. Your job is the PyTorch version, computing all
# queries at once with matrix products. The grader judges your designs of
# Part 2 with this same function.

# %% code id="setup-reference"
import numpy as np  # this cell and the task definitions of Part 2 need only NumPy


def stable_softmax(scores: np.ndarray) -> np.ndarray:
    """Softmax over the last axis. Subtracting the largest score first changes nothing mathematically
    (the factor exp(-max) cancels) but keeps exp() from overflowing: exp(710.0) is already inf."""
    shifted = scores - scores.max(axis=-1, keepdims=True)
    exps = np.exp(shifted)
    return exps / exps.sum(axis=-1, keepdims=True)


def reference_attention(seq, Km, Qm, Vm, pos=None):
    """One attention layer in float64 NumPy, one query at a time: the reference your PyTorch module must match.

    seq: (seq_len, input_dim), one row per token.
    Km, Qm: (input_dim + pos_dim, qk_dim); Vm: (input_dim + pos_dim, v_dim); pos: (max_seq_len, pos_dim) or None.
    Returns the output (seq_len, v_dim) and the attention weights (seq_len queries, seq_len keys).
    """
    seq = np.asarray(seq, dtype=np.float64)
    Km, Qm, Vm = (np.asarray(m, dtype=np.float64) for m in (Km, Qm, Vm))
    seq_len = seq.shape[0]
    if pos is not None:  # positions are CONCATENATED after the token features (not added)
        x = np.concatenate([seq, np.asarray(pos, dtype=np.float64)[:seq_len]], axis=1)
    else:
        x = seq
    K, Q, V = x @ Km, x @ Qm, x @ Vm  # one key, query and value per position (rows)
    qk_dim = Qm.shape[1]
    outputs, weights = [], []
    for q in Q:  # each query, on its own
        scores = K @ q / np.sqrt(qk_dim)  # one score per key
        w = stable_softmax(scores)  # attention weights: positive, sum to 1
        weights.append(w)
        outputs.append(w @ V)  # a weighted average of the values
    return np.array(outputs), np.array(weights)

# %% [markdown]
#
# **The weight convention.** In this notebook, as in the formulas, weight
# matrices multiply from the right: $K_m$ and $Q_m$ have shape
# `(input_dim + pos_dim, qk_dim)` and $V_m$ has shape `(input_dim + pos_dim, v_dim)`.
# PyTorch's `nn.Linear(in_features, out_features)` stores the *transpose*: its
# `weight` has shape `(out_features, in_features)` and `layer(x)` computes
# `x @ layer.weight.T`. So for a `PytorchTransformer`, `model.Km.weight` is
# $K_m^\top$. The given helpers `set_weights(model, Km, Qm, Vm, pos)` and
# `get_weights(model)` convert between the two.
#
# **What to write.**
# - In `__init__` (after the given lines): create `self.Qm`, `self.Km` and
#   `self.Vm`, each an `nn.Linear` **without bias** from `total_input_dim`
#   inputs to `qk_dim` (queries, keys) or `v_dim` (values) outputs.
#   `total_input_dim` already counts the positional features.
# - In `forward(seq)`: `seq` is a float tensor of shape `(seq_len, input_dim)`.
#   If `self.pos` is not `None`, concatenate `self.pos.weight[:seq_len]` after
#   the token features (`torch.cat(..., dim=-1)`). Project with the three layers,
#   compute the scores $QK^\top/\sqrt{d_{qk}}$, apply `torch.softmax` over the
#   last dimension, multiply by $V$, and return the `(seq_len, v_dim)` result.
# - Keep the computation in PyTorch from start to end, so that gradients reach
#   every parameter: no `.detach()`, `.numpy()`, `.item()`, `torch.tensor(...)`
#   on intermediate results, and no `torch.no_grad()`. Part 3 trains this module.
#
# *Hints.* `K.T` transposes a 2-D tensor. `self.qk_dim` is stored for you; use
# `math.sqrt(self.qk_dim)`. Softmax over `dim=0` would normalise over the
# *queries*, not the keys: each row of the attention matrix must sum to 1.

# %% solution id="answer-pytorch-transformer"
class PytorchTransformer(nn.Module):
    """One unbatched attention layer: seq (seq_len, input_dim) -> (seq_len, v_dim), positions concatenated."""

    def __init__(self, input_dim: int, qk_dim: int, v_dim: int, pos_dim: int | None = None, max_seq_len: int = 10):
        super().__init__()
        self.input_dim, self.qk_dim, self.v_dim = input_dim, qk_dim, v_dim
        self.pos = nn.Embedding(max_seq_len, pos_dim) if pos_dim else None  # row i: the vector of position i
        total_input_dim = input_dim + (pos_dim or 0)
        ### BEGIN SOLUTION
        self.Qm = nn.Linear(total_input_dim, qk_dim, bias=False)
        self.Km = nn.Linear(total_input_dim, qk_dim, bias=False)
        self.Vm = nn.Linear(total_input_dim, v_dim, bias=False)
        ### END SOLUTION

    def forward(self, seq: torch.Tensor) -> torch.Tensor:
        ### BEGIN SOLUTION
        seq_len = seq.shape[0]
        x = seq if self.pos is None else torch.cat([seq, self.pos.weight[:seq_len]], dim=-1)
        Q, K, V = self.Qm(x), self.Km(x), self.Vm(x)  # (seq_len, qk_dim), (seq_len, qk_dim), (seq_len, v_dim)
        weights = torch.softmax(Q @ K.T / math.sqrt(self.qk_dim), dim=-1)  # each query's row sums to 1
        return weights @ V  # (seq_len, v_dim)
        ### END SOLUTION

# %% code id="visible-pytorch-transformer"
# Visible tests: PytorchTransformer, against reference_attention (float64) with the same weights
def common_mistake(seq, Km, Qm, Vm, pos, out):
    """Name the usual mistake whose output matches `out`, if one does."""
    x = np.concatenate([seq, pos[: len(seq)]], axis=1) if pos is not None else seq
    x_swapped = np.concatenate([pos[: len(seq)], seq], axis=1) if pos is not None else seq
    K, Q, V, d = x @ Km, x @ Qm, x @ Vm, Qm.shape[1]
    mistakes = {
        "the scores are not divided by sqrt(qk_dim)": stable_softmax(Q @ K.T) @ V,
        "the scores are divided by qk_dim instead of sqrt(qk_dim)": stable_softmax(Q @ K.T / d) @ V,
        "the scores are K @ Q.T instead of Q @ K.T": stable_softmax(K @ Q.T / np.sqrt(d)) @ V,
        "the softmax runs over the queries (dim=0) instead of the keys (dim=-1)":
            stable_softmax((Q @ K.T / np.sqrt(d)).T).T @ V,
        "the positions come before the tokens; concatenate [seq, pos]":
            stable_softmax((x_swapped @ Qm) @ (x_swapped @ Km).T / np.sqrt(d)) @ (x_swapped @ Vm),
    }
    return next((name for name, wrong in mistakes.items() if np.allclose(out, wrong, atol=1e-4)), None)


def check_against_reference(input_dim, qk_dim, v_dim, pos_dim, seq_len, seed):
    rng = np.random.default_rng(seed)
    total = input_dim + (pos_dim or 0)
    Km, Qm, Vm = rng.normal(size=(total, qk_dim)), rng.normal(size=(total, qk_dim)), rng.normal(size=(total, v_dim))
    pos = rng.normal(size=(6, pos_dim)) if pos_dim else None
    seq = rng.normal(size=(seq_len, input_dim))
    model = set_weights(PytorchTransformer(input_dim, qk_dim, v_dim, pos_dim, max_seq_len=6), Km, Qm, Vm, pos)
    out = model(torch.tensor(seq, dtype=torch.float32))
    assert isinstance(out, torch.Tensor), f"forward must return a tensor, got {type(out).__name__}"
    assert tuple(out.shape) == (seq_len, v_dim), f"expected output shape (seq_len, v_dim) = {(seq_len, v_dim)}, got {tuple(out.shape)}"
    expected, _ = reference_attention(seq, Km, Qm, Vm, pos)
    out = out.detach().double().numpy()
    if not np.allclose(out, expected, atol=1e-4, rtol=0):
        mistake = common_mistake(seq, Km, Qm, Vm, pos, out)
        raise AssertionError(f"input_dim={input_dim}, qk_dim={qk_dim}, v_dim={v_dim}, pos_dim={pos_dim}, "
                             f"seq_len={seq_len}: largest difference from reference_attention "
                             f"{np.abs(out - expected).max():.3g}. " + (f"It looks like {mistake}." if mistake else ""))


layers = PytorchTransformer(input_dim=5, qk_dim=3, v_dim=4, pos_dim=2, max_seq_len=6)
for name, out_features in (("Qm", 3), ("Km", 3), ("Vm", 4)):
    layer = getattr(layers, name, None)
    assert isinstance(layer, nn.Linear), f"self.{name} should be an nn.Linear, got {type(layer).__name__}"
    assert layer.bias is None, f"self.{name} must have no bias: nn.Linear(..., bias=False)"
    assert tuple(layer.weight.shape) == (out_features, 7), (
        f"self.{name}.weight should have shape ({out_features}, 7): 5 token + 2 position features in, "
        f"{out_features} out; got {tuple(layer.weight.shape)}")
assert PytorchTransformer(5, 3, 4).Km.in_features == 5, "without positions, the layers take input_dim features"

for seq_len in (1, 4, 5):  # sizes all different, so that a mixed-up dimension shows
    check_against_reference(input_dim=5, qk_dim=3, v_dim=4, pos_dim=None, seq_len=seq_len, seed=seq_len)
    check_against_reference(input_dim=4, qk_dim=2, v_dim=3, pos_dim=2, seq_len=seq_len, seed=10 + seq_len)
check_against_reference(input_dim=4, qk_dim=2, v_dim=3, pos_dim=2, seq_len=6, seed=20)  # every row of pos

# Gradients: the same loss through your forward and through a direct formula must give the same gradients
model = PytorchTransformer(input_dim=4, qk_dim=3, v_dim=2, pos_dim=2, max_seq_len=6)
seq, loss_weights = torch.randn(3, 4, requires_grad=True), torch.randn(3, 2)
(model(seq) * loss_weights).sum().backward()
for name, parameter in model.named_parameters():
    assert parameter.grad is not None and parameter.grad.abs().sum() > 0, (
        f"no gradient reached {name}: keep the whole forward pass in PyTorch "
        "(no .detach(), .numpy(), .item(), torch.tensor(...) or torch.no_grad() on intermediate results)")
assert seq.grad is not None, "no gradient reached the input sequence"
assert torch.all(model.pos.weight.grad[3:] == 0), "a sequence of length 3 must use only the first 3 rows of pos"
x = torch.cat([seq, model.pos.weight[:3]], dim=-1)
Q, K, V = x @ model.Qm.weight.T, x @ model.Km.weight.T, x @ model.Vm.weight.T
parameters = dict(model.named_parameters())
expected = torch.autograd.grad((torch.softmax(Q @ K.T / math.sqrt(3), dim=-1) @ V * loss_weights).sum(),
                               list(parameters.values()))
for (name, parameter), grad in zip(parameters.items(), expected):
    assert torch.allclose(parameter.grad, grad, atol=1e-5), f"the gradient of {name} is wrong"
print("Visible PytorchTransformer tests passed.")

# %% tests id="pytorch_transformer_layers" points=2

# %% tests id="pytorch_transformer_attention" points=4

# %% tests id="pytorch_transformer_positions" points=3

# %% tests id="pytorch_transformer_gradients" points=1

# %% [markdown]
# # Part 2: Attention designed by hand
#
# Now you choose the matrices yourself. Each output is a weighted average of
# the values, and the weights come from a softmax of the scores, so designing
# a layer comes down to two questions:
#
# 1. **Which keys should each query select?** Give those keys a higher score
#    than all others. The score of query $i$ for key $j$ is
#    $x_i^\top\, Q_m K_m^\top\, x_j / \sqrt{d_{qk}}$: the matrix
#    $Q_m K_m^\top$ says how much each input feature of the query "likes" each
#    input feature of the key.
# 2. **By how much?** A softmax never gives a weight of exactly 1. If the keys
#    you want score $\Delta$ more than each of the other $m$ keys, the others
#    still get a total weight of $\dfrac{m e^{-\Delta}}{1 + m e^{-\Delta}}$. With
#    one wanted key and $m = 5$ others (a sequence of 6) and $\Delta = 5$, that
#    is 0.033, an error of 3% in every output. For an error below 0.01 you need
#    $e^{\Delta} \gtrsim 100\,m$, so $\Delta \ge \ln 500 \approx 6.2$. The gap
#    $\Delta$ grows with the *square* of the matrices' scale (both $Q$ and $K$
#    grow), so multiplying both $Q_m$ and $K_m$ by 10 multiplies every score
#    by 100.
#
# Large scores bring their own danger: $e^{710}$ overflows to infinity in
# float64, and a softmax written as `np.exp(s) / np.exp(s).sum()` then returns
# `nan`. The given `stable_softmax` subtracts each row's largest score first,
# which changes nothing mathematically and keeps every exponent at most 0.
# `torch.softmax` does the same.
#
# The tokens are one-hot vectors: $A = (1, 0, 0)$, $B = (0, 1, 0)$,
# $C = (0, 0, 1)$. The cell below defines them, lists every sequence of each
# task, and gives `check_design(task, design)`, which runs a design on every
# judged sequence exactly as the grader does and prints the largest error for
# each sequence length.

# %% code id="setup-tasks"
import itertools
from dataclasses import dataclass, field

import numpy as np

TOKEN_NAMES = ("A", "B", "C")
A, B, C = np.eye(3)  # the tokens of the content and position tasks
CLS = np.eye(4)[3]  # the challenge's tokens have a 4th feature, 1 only for CLS: A = (1, 0, 0, 0), ..., CLS = (0, 0, 0, 1)
MAX_LEN = {"content": 6, "position": 4, "challenge": 4}  # the longest sequence of each task (CLS not counted)
FUNCTION = {"content": "attention_by_content", "position": "attention_by_position",
            "challenge": "attention_by_content_and_position"}
TOLERANCE, MIN_SIZE = 0.01, 1e-3  # content and position: |output - target| <= 0.01; challenge: |output| >= 0.001
MAX_DIM = 64  # the most columns (qk_dim, pos_dim) and positional rows a design may have


def make_example(task, token_ids):
    """The input sequence and the target of one example. token_ids: 0 = A, 1 = B, 2 = C.

    content:   seq (n, 3), target = seq (every position outputs its own token)
    position:  seq (n, 3), target (n, 3) = the first token at every position
    challenge: seq (n + 1, 4) with CLS first; target (n, 1) for positions 1..n only:
               +1 where the token occurs once in the sequence, -1 where it occurs more than once
    """
    ids = np.asarray(token_ids)
    if task == "content":
        seq = np.eye(3)[ids]
        return seq, seq.copy()
    if task == "position":
        seq = np.eye(3)[ids]
        return seq, np.repeat(seq[:1], len(ids), axis=0)
    if task == "challenge":
        seq = np.eye(4)[np.concatenate([[3], ids])]
        counts = np.bincount(ids, minlength=3)
        return seq, np.where(counts[ids] == 1, 1.0, -1.0)[:, None]
    raise ValueError(f"unknown task {task!r}: use 'content', 'position' or 'challenge'")


def judged(task, output):
    """The outputs that are judged: all of them, except the CLS position (0) in the challenge."""
    return output[1:] if task == "challenge" else output


def all_examples(task):
    """Every sequence of the task, shortest first: yields (token_ids, seq, target)."""
    for length in range(1, MAX_LEN[task] + 1):
        for ids in itertools.product(range(3), repeat=length):
            yield (ids, *make_example(task, ids))


def random_example(task, rng):
    """A random example for training: a length from 1 to MAX_LEN, then random tokens."""
    ids = rng.integers(0, 3, size=rng.integers(1, MAX_LEN[task] + 1))
    return make_example(task, ids)


def as_design(task, design):
    """A design as float64 arrays (Km, Qm, Vm, pos or None), after checking its shapes; ValueError says what is wrong."""
    expected = 3 if task == "content" else 4
    names = "(Km, Qm, Vm)" if expected == 3 else "(Km, Qm, Vm, pos)"
    if not isinstance(design, (tuple, list)) or len(design) != expected:
        raise ValueError(f"{FUNCTION[task]}() must return a tuple {names}")
    arrays = []
    for name, matrix in zip(("Km", "Qm", "Vm", "pos"), design):
        array = np.asarray(matrix, dtype=np.float64)
        if array.ndim != 2:
            raise ValueError(f"{name} must be a 2-D matrix, got shape {array.shape}")
        arrays.append(array)
    Km, Qm, Vm = arrays[:3]
    pos = arrays[3] if expected == 4 else None
    token_dim = 4 if task == "challenge" else 3
    pos_dim = 0 if pos is None else pos.shape[1]
    d_in, v_dim = token_dim + pos_dim, 1 if task == "challenge" else 3
    if Km.shape[0] != d_in or Qm.shape[0] != d_in or Vm.shape[0] != d_in:
        raise ValueError(f"Km, Qm and Vm need {d_in} rows ({token_dim} token features + {pos_dim} position features), "
                         f"got Km {Km.shape}, Qm {Qm.shape}, Vm {Vm.shape}")
    if Km.shape != Qm.shape:
        raise ValueError(f"Km and Qm must have the same shape (d_in, qk_dim), got {Km.shape} and {Qm.shape}")
    if Vm.shape[1] != v_dim:
        raise ValueError(f"Vm must have shape ({d_in}, {v_dim}) for this task, got {Vm.shape}")
    if pos is not None and pos.shape[0] < rows_needed(task):
        raise ValueError(f"pos needs at least {rows_needed(task)} rows (one per position of the longest sequence), "
                         f"got {pos.shape[0]}")
    if max(Km.shape[1], pos_dim, 0 if pos is None else pos.shape[0]) > MAX_DIM:
        raise ValueError(f"qk_dim, pos_dim and the rows of pos must be at most {MAX_DIM}; these tasks need far fewer")
    return Km, Qm, Vm, pos


def rows_needed(task):
    """The rows a positional table needs: one per position of the longest sequence (CLS included)."""
    return MAX_LEN[task] + (task == "challenge")


def rule(task):
    """The pass rule of one judged output, in words."""
    if task == "challenge":
        return f"every judged output has the right sign and |output| >= {MIN_SIZE}"
    return f"every output is within {TOLERANCE} of its target"


@dataclass
class DesignReport:
    """What check_design found: the verdict, one row per sequence length, and the first problem."""

    task: str
    passed: bool = True
    rows: list = field(default_factory=list)
    problem: str = ""

    @property
    def verdict(self):
        """One line: PASSED or FAILED, and why (the grader reports the same line)."""
        if self.passed:
            return f"PASSED: {rule(self.task)}."
        return f"FAILED: not {rule(self.task)}; {self.problem}" if self.rows else f"FAILED: {self.problem}"


def check_design(task, design, verbose=True):
    """Run a design on every judged sequence of the task with reference_attention, and judge it as the grader does."""
    report = DesignReport(task)
    try:
        Km, Qm, Vm, pos = as_design(task, design)
    except ValueError as error:
        report.passed, report.problem = False, str(error)
        if verbose:
            print(f"{FUNCTION[task]}: {report.verdict}")
        return report
    for length in range(1, MAX_LEN[task] + 1):
        row = dict(length=length, sequences=0, max_error=0.0, wrong_signs=0, smallest=np.inf, first_bad=None)
        for ids, seq, target in all_examples(task):
            if len(ids) != length:
                continue
            out = judged(task, reference_attention(seq, Km, Qm, Vm, pos)[0])
            row["sequences"] += 1
            if task == "challenge":
                bad = ~np.isfinite(out) | (np.sign(out) != target) | (np.abs(out) < MIN_SIZE)
                row["wrong_signs"] += int(bad.sum())
                row["smallest"] = min(row["smallest"], float(np.abs(np.nan_to_num(out)).min()))
            else:
                error = np.abs(out - target).max() if np.all(np.isfinite(out)) else np.inf
                row["max_error"] = max(row["max_error"], float(error))
                bad = np.array([error > TOLERANCE])
            if bad.any() and row["first_bad"] is None:
                row["first_bad"] = "".join(TOKEN_NAMES[i] for i in ids)
        report.rows.append(row)
        if row["first_bad"] is not None and report.passed:
            report.passed = False
            found = (f"{row['wrong_signs']} wrong outputs" if task == "challenge"
                     else f"largest error {row['max_error']:.2g}")
            report.problem = f"length {length}: {found}, first failing sequence {row['first_bad']}" + (
                " (with CLS in front)" if task == "challenge" else "")
    if verbose:
        count = sum(row["sequences"] for row in report.rows)
        print(f"{FUNCTION[task]}: {count:,} sequences of length 1 to {MAX_LEN[task]}")
        if task == "challenge":
            print(f"{'length':>6}{'sequences':>11}{'wrong outputs':>15}{'smallest |output|':>19}  first failing")
            for row in report.rows:
                print(f"{row['length']:>6}{row['sequences']:>11}{row['wrong_signs']:>15}{row['smallest']:>19.3g}  "
                      f"{row['first_bad'] or ''}")
        else:
            print(f"{'length':>6}{'sequences':>11}{'max error':>11}  first failing")
            for row in report.rows:
                print(f"{row['length']:>6}{row['sequences']:>11}{row['max_error']:>11.2g}  {row['first_bad'] or ''}")
        print(report.verdict)
    return report


def plot_example(task, design, tokens, title):
    """Attention weights and outputs of a design on one sequence (e.g. tokens="ABCC"), next to the target."""
    Km, Qm, Vm, pos = as_design(task, design)
    ids = ["ABC".index(t) for t in tokens]
    seq, target = make_example(task, ids)
    out, weights = reference_attention(seq, Km, Qm, Vm, pos)
    labels = (["CLS"] if task == "challenge" else []) + list(tokens)
    columns = 1 if task == "challenge" else 3
    fig, axes = plt.subplots(1, 3, figsize=(4 + len(labels) + 1.6 * columns, 3.6),
                             gridspec_kw=dict(width_ratios=[len(labels) + 1, columns + 1, columns + 1]))
    plot_attention(axes[0], weights, "attention weights", labels, labels)
    columns = ["out"] if task == "challenge" else list(TOKEN_NAMES)
    plot_signed(axes[1], out, "output", "output feature", "position", columns, labels, limit=1)
    shown = np.vstack([[np.nan], target]) if task == "challenge" else target  # CLS: not judged
    plot_signed(axes[2], shown, "target (CLS: not judged)" if task == "challenge" else "target",
                "output feature", "position", columns, labels, limit=1)
    fig.suptitle(title)
    plt.tight_layout()
    plt.show()


def visible_design_test(task, function, tokens):
    """A design's visible test: judge function() on every sequence of the task exactly as the grader does, show it
    on one sequence (e.g. tokens="ABCC"), and return it as float64 arrays (Km, Qm, Vm, pos or None) for Part 3."""
    answer = function()
    report = check_design(task, answer)
    if report.rows:  # the shapes are right: show one example
        shown = " ".join((["CLS"] if task == "challenge" else []) + list(tokens))
        plot_example(task, answer, tokens, f"Your {task} design on {shown}")
    assert report.passed, f"{FUNCTION[task]} fails the rule: {report.problem}. Read the table above."
    return as_design(task, answer)

# %% [markdown]
# To see what `check_design` reports, here it is on a design that is *not* a
# solution: all-zero query and key matrices give every key the same score, so
# each position outputs the *average* token of its sequence. Sequences of one
# token, or of one repeated token, come out right; the others do not.

# %% code id="demo-uniform-design"
uniform_design = (np.zeros((3, 2)), np.zeros((3, 2)), np.eye(3))
check_design("content", uniform_design)
plot_example("content", uniform_design, "ABCC", "All-zero Qm and Km: uniform attention, so every output is the average")

# %% [markdown]
# ## 2.1 Attention by content
#
# Design a layer (no positional table) whose output at every position **equals
# its own input token**:
#
# ```
# input sequence  -->  output sequence
# [A, B, C, C]    -->  [A, B, C, C]
# [C, A, C]       -->  [C, A, C]
# [B, B, C]       -->  [B, B, C]
# ```
#
# Write `attention_by_content()` so that it returns `(Km, Qm, Vm)` as NumPy
# arrays (or nested lists): `Km` and `Qm` of shape `(3, qk_dim)` (you choose
# `qk_dim`; 3 is natural) and `Vm` of shape `(3, 3)`. Your design passes when
# every output of all 1,092 sequences of length 1 to 6 is within 0.01 of its
# target.
#
# *Hints.*
# - Each output is a weighted average of the values. If a query attends only
#   to keys that hold **the same token as itself**, the average is that token's
#   value, however many copies there are: splitting attention between copies
#   is harmless, because they have the same value.
# - Keys are easiest to tell apart when they are orthogonal: then a query can
#   score high against one token's key and zero against the others.
# - Then make the gap big enough. The hardest sequence has one token and five
#   copies of another (`ABBBBB`): the lone `A` must outscore five keys by
#   $\Delta \ge 6.2$ (see above). Check your numbers with `check_design`.

# %% solution id="answer-attention-by-content"
def attention_by_content():
    """Return (Km, Qm, Vm): Km and Qm of shape (3, qk_dim), Vm of shape (3, 3); every output equals its own token."""
    ### BEGIN SOLUTION
    # A query scores 10 * 10 / sqrt(3) = 57.7 against a key with its own token and 0 against the others.
    Km = 10 * np.eye(3)
    Qm = 10 * np.eye(3)
    Vm = np.eye(3)  # each token's value is the token itself
    return Km, Qm, Vm
    ### END SOLUTION

# %% code id="visible-attention-by-content"
# Visible tests: attention_by_content, on all 1,092 sequences (the graded rule)
content_design = visible_design_test("content", attention_by_content, "ABCC")

# %% tests id="attention_by_content" points=4

# %% [markdown]
# ### Why the scale matters
#
# A design can select the right keys and still fail. Take the natural design
# $Q_m = K_m = s I$, $V_m = I$ with scale $s = 3$: the matching score is
# $s^2/\sqrt{3} \approx 5.2$, just short of the 6.2 computed above, and at
# length 6 the outputs are off by 0.027. That fails the 0.01 rule, although
# every output is closer to its target than to any other token. At $s = 10$ the
# gap is 57.7 and the error about $10^{-16}$: nothing but rounding.
#
# The cell below multiplies **your** $Q_m$ by a range of factors (all scores
# scale by the same factor) and shows the largest error at each sequence length.
# Longer sequences need larger gaps, because more wrong keys share the
# leftover weight. It also shows why the softmax must be stable: at a factor of
# 100 your scores are probably far above 709, where `np.exp` overflows.

# %% code id="demo-scale"
factors = [0.03, 0.1, 0.3, 1, 3, 10, 100]
errors = np.array([[row["max_error"] for row in check_design(
    "content", (content_design[0], content_design[1] * factor, content_design[2]), verbose=False).rows]
    for factor in factors])
fig, ax = plt.subplots(figsize=(7, 4))
for length in (2, 4, 6):
    ax.loglog(factors, np.maximum(errors[:, length - 1], 1e-17), "o-", label=f"sequences of length {length}")
ax.axhline(TOLERANCE, color="tab:red", linestyle="--", label="the 0.01 rule")
ax.set(title="Your content design with every score multiplied by a factor",
       xlabel="factor applied to Qm (and so to every score)", ylabel="largest |output - target|")
ax.legend()
plt.show()

tokens_abc = np.stack([A, B, C])  # the three queries and keys of the sequence A B C
scores = 100 * (tokens_abc @ content_design[1]) @ (tokens_abc @ content_design[0]).T / np.sqrt(content_design[1].shape[1])
with np.errstate(over="ignore", invalid="ignore"):
    naive = np.exp(scores) / np.exp(scores).sum(axis=-1, keepdims=True)
print(f"Largest score at factor 100: {scores.max():.0f}")
print("Naive softmax (exp, then divide), first row:", np.round(naive[0], 3))
print("Stable softmax (subtract the max first), first row:", np.round(stable_softmax(scores)[0], 3))

# %% [markdown]
# ## 2.2 Attention by position
#
# Now the layer has a positional table `pos`: row $i$ is concatenated to token
# $i$, so each input row is `[token (3 numbers), pos[i] (pos_dim numbers)]`.
# Design a layer whose output at **every** position is the **first** token of
# the sequence:
#
# ```
# input sequence  -->  input with positions              -->  output sequence
# [A, B, C, C]    -->  [A:pos0, B:pos1, C:pos2, C:pos3]    -->  [A, A, A, A]
# [C, A, C]       -->  [C:pos0, A:pos1, C:pos2]            -->  [C, C, C]
# [B, B, C]       -->  [B:pos0, B:pos1, C:pos2]            -->  [B, B, B]
# ```
#
# Write `attention_by_position()` so that it returns `(Km, Qm, Vm, pos)`:
# `pos` of shape `(max_seq_len, pos_dim)` with at least 4 rows (you choose
# `pos_dim`), `Km` and `Qm` of shape `(3 + pos_dim, qk_dim)`, and `Vm` of shape
# `(3 + pos_dim, 3)`. Rows 0 to 2 of each matrix act on the token features,
# the remaining rows on the position features. Your design passes when every
# output of all 120 sequences of length 1 to 4 is within 0.01 of its target.
#
# *Hints.*
# - You choose the positional table too. Make position 0 easy to recognise,
#   for instance with one-hot rows (`np.eye(4)`).
# - Every query should ask the same question, "are you position 0?", whatever
#   its own token. A query that is the same for A, B and C needs the same
#   numbers in the token rows of `Qm`: exactly one token feature is 1 in every
#   row, so such a query is never zero.
# - The values should carry the token and ignore the position: which rows of
#   `Vm` must then be zero?

# %% solution id="answer-attention-by-position"
def attention_by_position():
    """Return (Km, Qm, Vm, pos): Km and Qm of shape (3 + pos_dim, qk_dim), Vm of shape (3 + pos_dim, 3),
    pos of shape (at least 4, pos_dim); every output is the first token of the sequence."""
    ### BEGIN SOLUTION
    pos = np.eye(4)  # one-hot positions: input rows are [A, B, C, p0, p1, p2, p3]
    Km = np.zeros((7, 1))
    Km[3, 0] = 1.0  # a key is 1 at position 0 and 0 elsewhere
    Qm = np.zeros((7, 1))
    Qm[:3, 0] = 20.0  # every query is 20, whatever its token: score 20 for position 0, 0 for the others
    Vm = np.zeros((7, 3))
    Vm[:3] = np.eye(3)  # values carry the token, not the position
    return Km, Qm, Vm, pos
    ### END SOLUTION

# %% code id="visible-attention-by-position"
# Visible tests: attention_by_position, on all 120 sequences (the graded rule)
position_design = visible_design_test("position", attention_by_position, "CABB")

# %% tests id="attention_by_position" points=4

# %% [markdown]
# ## 2.3 Challenge: attention by content and position
#
# The last task needs both. Given a sequence of tokens, output a **positive**
# number at every token that occurs **once** in the sequence and a **negative**
# number at every token that occurs **more than once**.
#
# To make this possible, a `CLS` token is put in front of every sequence, and
# the tokens get a fourth feature that is 1 only for CLS:
# $A = (1, 0, 0, 0)$, $B = (0, 1, 0, 0)$, $C = (0, 0, 1, 0)$,
# $\text{CLS} = (0, 0, 0, 1)$. CLS is always at position 0, so a sequence of
# $n$ tokens becomes $n + 1$ input rows. **The output at the CLS position is
# not judged; the outputs at all other positions (1 to $n$) are.** You may use
# CLS for whatever helps, for instance as a key that every query can fall back
# on.
#
# ```
# input sequence  -->  input with CLS and positions                  -->  output signs
# [A, B, C, C]    -->  [CLS:pos0, A:pos1, B:pos2, C:pos3, C:pos4]    -->  [not judged, +, +, -, -]
# [C, A, C]       -->  [CLS:pos0, C:pos1, A:pos2, C:pos3]            -->  [not judged, -, +, -]
# [B, B, C]       -->  [CLS:pos0, B:pos1, B:pos2, C:pos3]            -->  [not judged, -, -, +]
# ```
#
# Write `attention_by_content_and_position()` so that it returns
# `(Km, Qm, Vm, pos)`: `pos` with at least 5 rows (CLS plus 4 tokens), `Km` and
# `Qm` of shape `(4 + pos_dim, qk_dim)`, and `Vm` of shape `(4 + pos_dim, 1)`:
# one output number per position. Your design passes when, over all 120
# sequences of length 1 to 4 (each with CLS in front), every judged output has
# the right sign and a size of at least 0.001. Only the sign is judged: the
# outputs need not be exactly +1 or -1.
#
# *Hints.*
# - Write down the score you want query $i$ to give key $j$ in each of four
#   cases: (a) $j$ holds the same token as $i$ at another position; (b) $j$ is
#   $i$ itself; (c) $j$ holds another token; (d) $j$ is CLS. Then build `Qm` and
#   `Km` from blocks, one block of `qk_dim` columns per idea, because scores
#   from separate columns add up.
# - From 2.1: a content block makes (a) and (b) high. From 2.2: a position
#   block can add a *penalty* when query and key share a position, which
#   cancels (b).
# - Give CLS a key that every query scores *between* the other cases, so that a
#   token with no copy attends to CLS, and a token with a copy attends to it.
# - Values: what should the value of CLS be, and what the value of a token, so
#   that the output's sign says which of the two it attended to?

# %% solution id="answer-attention-by-content-and-position"
def attention_by_content_and_position():
    """Return (Km, Qm, Vm, pos): Km and Qm of shape (4 + pos_dim, qk_dim), Vm of shape (4 + pos_dim, 1),
    pos of shape (at least 5, pos_dim); at every position after CLS, the output is > 0 for a token that
    occurs once and < 0 for a token that occurs more than once."""
    ### BEGIN SOLUTION
    # Input rows: [A, B, C, CLS, p0, ..., p4]. Three blocks of qk columns, whose scores add up
    # (each divided by sqrt(qk_dim) = 3):
    #   content (3 columns): +20 when query and key hold the same token (A, B or C);
    #   position (5 columns): -20 when query and key are the same position, cancelling a query's own match;
    #   CLS (1 column): +10 for the CLS key, whatever the query.
    # So a token with a copy elsewhere attends to the copy (20 > 10), a lone token to CLS (10 > 0).
    pos = np.eye(5)
    Km, Qm = np.zeros((9, 9)), np.zeros((9, 9))
    Qm[:3, :3], Km[:3, :3] = 60 * np.eye(3), np.eye(3)  # content block
    Qm[4:, 3:8], Km[4:, 3:8] = 60 * np.eye(5), -np.eye(5)  # same-position penalty
    Qm[:4, 8], Km[3, 8] = 30.0, 1.0  # every query asks for CLS with score 30 / 3 = 10
    Vm = np.zeros((9, 1))
    Vm[:3, 0], Vm[3, 0] = -1.0, 1.0  # attending to a copy gives -1, to CLS +1
    return Km, Qm, Vm, pos
    ### END SOLUTION

# %% code id="visible-attention-by-content-and-position"
# Visible tests: attention_by_content_and_position, on all 120 sequences (the graded rule)
challenge_design = visible_design_test("challenge", attention_by_content_and_position, "CACB")

# %% tests id="attention_by_content_and_position" points=3

# %% [markdown]
# # Part 3: What does gradient descent find?
#
# You know a solution to each task exists, because you built one. Now train the
# same `PytorchTransformer` on each task, from random weights, and compare.
# The given function `train_on_task` uses plain SGD with learning rate 0.3 on
# the mean squared error between the judged outputs and the targets, one random
# example per step (a length from 1 to the task's maximum, then random tokens),
# for 1,500 steps. Everything is seeded, so running it again on your machine
# gives the same numbers; another CPU or another version of PyTorch rounds
# differently and can train to other ones (the comparisons below hold on each).
#
# The learned layers have the same sizes for everyone (below), not the sizes
# of your designs; comparisons that matter work across sizes, as you will see.
# Each run takes about a second. The final "task loss" is the training loss
# averaged over *every* sequence of the task, computed with the float64
# reference, like the design checks.

# %% code id="given-training"
TRAINING_SIZES = {  # PytorchTransformer arguments of the learned layers
    "content": dict(input_dim=3, qk_dim=3, v_dim=3),
    "position": dict(input_dim=3, qk_dim=1, v_dim=3, pos_dim=4, max_seq_len=4),
    "challenge": dict(input_dim=4, qk_dim=9, v_dim=1, pos_dim=5, max_seq_len=5),
}


def train_on_task(task, steps=1500, lr=0.3, seed=0):
    """Train a fresh PytorchTransformer on random examples of `task` with SGD + MSE; returns (model, losses)."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = PytorchTransformer(**TRAINING_SIZES[task]).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = nn.MSELoss()
    losses = []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tensors this small gain nothing from threads, and threads stall on a busy CPU
    try:
        for _ in tqdm(range(steps), desc=f"{task}, seed {seed}", leave=False):
            seq, target = random_example(task, rng)
            seq = torch.tensor(seq, dtype=torch.float32, device=device)
            target = torch.tensor(target, dtype=torch.float32, device=device)
            optimizer.zero_grad()
            loss = loss_fn(judged(task, model(seq)), target)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    finally:
        torch.set_num_threads(threads)
    return model.cpu(), np.array(losses)


def task_outputs(task, design):
    """Judged outputs and targets of a design on every sequence of the task: two lists of arrays."""
    Km, Qm, Vm, pos = design
    pairs = [(judged(task, reference_attention(seq, Km, Qm, Vm, pos)[0]), target)
             for _, seq, target in all_examples(task)]
    return [out for out, _ in pairs], [target for _, target in pairs]


def task_loss(task, design):
    """The training loss (mean squared error) averaged over every sequence of the task."""
    outputs, targets = task_outputs(task, design)
    return float(np.mean([np.mean((out - target) ** 2) for out, target in zip(outputs, targets)]))


def sign_accuracy_by_length(design):
    """Challenge: the fraction of judged outputs with the right sign, for each length 1..4 and overall."""
    outputs, targets = task_outputs("challenge", design)
    right = {length: [] for length in range(1, MAX_LEN["challenge"] + 1)}
    for out, target in zip(outputs, targets):
        right[len(target)] += list(np.sign(out[:, 0]) == target[:, 0])
    overall = float(np.mean(sum(right.values(), [])))
    return {length: float(np.mean(r)) for length, r in right.items()}, overall

# %% code id="demo-train" runtime="long"
learned, loss_curves, task_losses = {}, {}, {}
for task in ("content", "position", "challenge"):
    learned[task], loss_curves[task] = train_on_task(task, seed=0)
    task_losses[task] = task_loss(task, get_weights(learned[task]))
_, challenge_sign_accuracy = sign_accuracy_by_length(get_weights(learned["challenge"]))

print(f"{'task':<10}{'task loss':>11}{'loss, last 100 steps':>22}")
for task in learned:
    print(f"{task:<10}{task_losses[task]:>11.2g}{loss_curves[task][-100:].mean():>22.2g}")
print(f"Learned challenge layer: {challenge_sign_accuracy:.1%} of judged outputs have the right sign")

# %% code id="demo-loss-curves"
fig, ax = plt.subplots(figsize=(8, 4))
window = 50
for task, color in zip(learned, ("tab:blue", "tab:orange", "tab:red")):
    curve = loss_curves[task]
    ax.semilogy(curve, color=color, alpha=0.15)
    smooth = np.convolve(curve, np.ones(window) / window, mode="valid")
    ax.semilogy(np.arange(window - 1, len(curve)), smooth, color=color, label=f"{task} ({window}-step mean)")
ax.set(title="Training loss: SGD, learning rate 0.3, one random example per step",
       xlabel="step", ylabel="mean squared error (log scale)", ylim=(1e-6, 10))
ax.legend(loc="lower left")
plt.show()

# %% [markdown]
# Content and position are learned in a few hundred steps; the challenge's loss
# hardly moves. Before we look at why, compare what was learned for the two
# easy tasks with what you designed.
#
# ## 3.1 Two sets of weights, one function
#
# The first figure shows your design (top row) and the learned layer (bottom
# row) on the same sequence: the weight matrices, then the keys, queries and
# values of each position, then the attention weights and the output. Each
# column of panels shares one colour scale, so a pale panel means small
# numbers.
#
# Do not expect the learned $K_m$ and $Q_m$ to look like yours. The scores
# depend on them only through the product $Q_m K_m^\top$ (score $=
# x_i^\top Q_m K_m^\top x_j / \sqrt{d_{qk}}$), and infinitely many pairs of
# matrices have the same product. The second figure therefore compares
# $Q_m K_m^\top / \sqrt{d_{qk}}$, a `(d_in, d_in)` matrix whatever `qk_dim` is:
# entry $(a, b)$ is the score a query with feature $a$ gives a key with
# feature $b$. One more freedom remains, but only for some inputs. Adding $c$
# to row $a$ of this matrix adds $c \, x_a \sum_b y_b$ to the score a query
# $x$ gives a key $y$. When every key's features sum to the same number (true
# here: a one-hot token, or a one-hot token and a one-hot position), that is
# the same number for all of a query's keys, which no softmax sees: each
# **row** may then be shifted by a constant, so compare differences within a
# row, not raw values. When the keys' sums differ (the learned positional
# table of 3.2 has rows of any sum), the shift changes which key wins, and
# this freedom is gone.

# %% code id="given-comparison-plots"
def feature_names(task, design):
    """Names of the input features: the token features, then pos0, pos1, ...: the COLUMNS of the positional table."""
    tokens = ["A", "B", "C", "CLS"] if task == "challenge" else ["A", "B", "C"]
    pos = design[3]
    return tokens + ([] if pos is None else [f"pos{i}" for i in range(pos.shape[1])])


def plot_hand_vs_learned(task, hand, learned_design, tokens):
    """Top row: your design; bottom row: the learned layer; on one sequence. Shared colour scale per column."""
    ids = ["ABC".index(t) for t in tokens]
    seq, _ = make_example(task, ids)
    labels = (["CLS"] if task == "challenge" else []) + list(tokens)
    panels = {}
    for name, (Km, Qm, Vm, pos) in (("your design", hand), ("learned", learned_design)):
        x = seq if pos is None else np.concatenate([seq, pos[: len(seq)]], axis=1)
        out, weights = reference_attention(seq, Km, Qm, Vm, pos)
        panels[name] = dict(Km=Km, Qm=Qm, Vm=Vm, K=x @ Km, Q=x @ Qm, V=x @ Vm, attention=weights, output=out)
    fig, axes = plt.subplots(2, 8, figsize=(21, 6.5))
    features = {"your design": feature_names(task, hand), "learned": feature_names(task, learned_design)}
    for col, key in enumerate(panels["learned"]):
        limit = max(np.abs(panels[name][key]).max() for name in panels)
        for row, name in enumerate(panels):  # one colour scale per column, its colour bar on the bottom row
            ax, matrix, bar = axes[row, col], panels[name][key], row == 1
            if key == "attention":
                plot_attention(ax, matrix, f"{name}: attention", labels, labels, colorbar=bar)
            elif key in ("Km", "Qm", "Vm"):
                plot_signed(ax, matrix, f"{name}: {key}", "output column", "input feature",
                            yticklabels=features[name], limit=limit, colorbar=bar)
            else:
                plot_signed(ax, matrix, f"{name}: {key}", "column", "position", yticklabels=labels, limit=limit,
                            colorbar=bar)
    fig.suptitle(f"{task}: your design (top) and the learned layer (bottom) on {' '.join(labels)}; "
                 "one colour scale per column")
    plt.tight_layout()
    plt.show()


def plot_bilinear(task, hand, learned_design):
    """Qm Km^T / sqrt(qk_dim) of your design and of the learned layer, side by side."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    for ax, (name, design) in zip(axes, (("your design", hand), ("learned", learned_design))):
        Km, Qm, features = design[0], design[1], feature_names(task, design)
        plot_signed(ax, Qm @ Km.T / np.sqrt(Qm.shape[1]), f"{name}: Qm Km^T / sqrt(qk_dim)",
                    "key feature", "query feature", features, features)
    fig.suptitle(f"{task}: the score a query feature (row) gives a key feature (column)")
    plt.tight_layout()
    plt.show()

# %% code id="demo-compare-content"
learned_designs = {task: get_weights(model) for task, model in learned.items()}
plot_hand_vs_learned("content", content_design, learned_designs["content"], "ABCC")
plot_bilinear("content", content_design, learned_designs["content"])
print("The learned content layer, judged by the rule your design passed:")
check_design("content", learned_designs["content"][:3]);

# %% [markdown]
# Two things to notice. The learned values $V_m$ are close to yours: on a
# sequence of one token the output *is* that token's value, so the task pins
# the values down. The learned scores have the same *pattern* as yours (each
# row highest on its own token) but gaps of a few units instead of yours, so
# the learned attention is blurrier. Its average loss looks tiny, yet it fails
# the rule your design passed, at every length: its values are a few percent
# off (length 1), and its soft attention leaks more weight to wrong keys as
# sequences grow. A small *average* loss can hide large errors on the hardest
# cases. Question 1 asks you to explain the differences.
#
# ## 3.2 How the learned layer finds position 0
#
# The same comparison for the position task, then a closer look at the learned
# positional table. Careful with the labels: `pos0`, `pos1`, ... are the
# *columns* (features) of the positional table, while positions are its
# *rows*. For a one-hot table the two coincide; for a learned table they do
# not. The middle panel shows the part of each key that comes from its
# position, `pos @ Km[3:]` (rows: positions), and the right panel the
# attention averaged over all 81 sequences of length 4.

# %% code id="demo-compare-position"
plot_hand_vs_learned("position", position_design, learned_designs["position"], "CABB")
plot_bilinear("position", position_design, learned_designs["position"])

fig, axes = plt.subplots(1, 3, figsize=(16, 4))
learned_Km, _, _, learned_pos = learned_designs["position"]
positions = [f"position {i}" for i in range(len(learned_pos))]
plot_signed(axes[0], learned_pos, "learned positional table pos", "column of pos", "row of pos",
            [f"pos{i}" for i in range(learned_pos.shape[1])], positions)
plot_signed(axes[1], learned_pos @ learned_Km[3:], "position part of each key: pos @ Km[3:]", "key column",
            "key position", yticklabels=positions)
length4 = [reference_attention(seq, *learned_designs["position"])[1]
           for ids, seq, _ in all_examples("position") if len(ids) == 4]
plot_attention(axes[2], np.mean(length4, axis=0), "learned: mean attention, length 4", range(4), range(4))
axes[2].set(xlabel="key position", ylabel="query position")
fig.suptitle("The learned position layer")
plt.tight_layout()
plt.show()
print("The learned position layer, judged by the rule your design passed:")
check_design("position", learned_designs["position"]);

# %% [markdown]
# ## 3.3 The challenge: representable is not the same as learned
#
# Your design proves that one attention layer of these sizes can solve the
# challenge exactly. The layer trained above does not: its loss hardly fell.
# Is that bad luck? The next cell trains it from four more random starts and
# measures, for each, the fraction of judged outputs with the right sign, by
# sequence length. For comparison, always answering "repeated" is right on
# 279 of the 426 judged outputs (65.5%), because in a long sequence over three
# letters most tokens have a copy.

# %% code id="demo-challenge" runtime="long"
seeds = [0, 1, 2, 3, 4]
accuracy = {0: sign_accuracy_by_length(learned_designs["challenge"])}
for seed in seeds[1:]:
    model, _ = train_on_task("challenge", seed=seed)
    accuracy[seed] = sign_accuracy_by_length(get_weights(model))
targets = task_outputs("challenge", challenge_design)[1]
lengths = range(1, MAX_LEN["challenge"] + 1)
always_repeated = [np.mean([np.mean(t == -1) for t in targets if len(t) == n]) for n in lengths]

fig, ax = plt.subplots(figsize=(8, 4.2))
ax.plot(lengths, [1.0] * len(lengths), "k-", lw=3, label="your design")
for seed in seeds:
    ax.plot(lengths, list(accuracy[seed][0].values()), "o-", alpha=0.9 if seed == 0 else 0.4,
            label=f"learned, seed {seed}: {accuracy[seed][1]:.1%} overall")
ax.plot(lengths, always_repeated, "s--", color="gray", label="always answer 'repeated': 65.5% overall")
ax.set(title="Challenge: fraction of judged outputs with the right sign", xlabel="sequence length (CLS not counted)",
       ylabel="sign accuracy", xticks=list(lengths), ylim=(-0.02, 1.05))
ax.legend(fontsize=8, loc="lower right")
plt.show()

# %% code id="demo-challenge-signs"
def sign_map(design):
    """Judged outputs of all 81 sequences of length 4, one column per sequence."""
    outputs, _ = task_outputs("challenge", design)
    return np.hstack([out for out in outputs if len(out) == 4])


length4_targets = np.hstack([t for t in targets if len(t) == 4])
learned_map = sign_map(learned_designs["challenge"])
fig, axes = plt.subplots(4, 1, figsize=(15, 6.5), sharex=True)
for ax, (name, matrix) in zip(axes, (("target", length4_targets), ("sign of your design's output",
                                                                      np.sign(sign_map(challenge_design))),
                                     ("sign of the learned output (seed 0)", np.sign(learned_map)),
                                     ("learned output (seed 0), clipped to [-1, 1]", np.clip(learned_map, -1, 1)))):
    plot_signed(ax, matrix, name, "", "position", yticklabels=["1", "2", "3", "4"], limit=1)
axes[-1].set_xlabel("the 81 sequences of length 4, from AAAA (left) to CCCC (right)")
fig.suptitle("Challenge, sequences of length 4 (red: 'occurs once', blue: 'repeated')")
plt.tight_layout()
plt.show()

# %% [markdown]
# Whatever the seed, the learned layer is far from your design, and on
# average only a little better than always answering "repeated" (your runs
# are in the legend; ours, over the five seeds and on three kinds of CPU
# kernels, which round differently and so train differently, ranged from 55%
# to 86%; even single tokens, which always occur once, are sometimes wrong).
# It is not a question of capacity: your
# design *is* a one-layer solution of these sizes. It is a question of what
# this training finds.
#
# The recipe that learned the first two tasks in a few hundred steps is a poor
# fit here. Each step follows the gradient of **one** random example, and for
# this task examples disagree: the same token at the same position must push
# the output up in `ABC` and down in `ABA`, and only the rest of the sequence
# tells them apart. What separates them is a small difference in attention
# (does a copy outscore CLS?), which only becomes a large difference in the
# output once the content match, the same-position penalty and the CLS offset
# are all in place and balanced. With a learning rate of 0.3, each noisy step
# undoes much of the last, and the weights wander around a compromise.
#
# Slower and longer training does better. In our runs,
# `train_on_task("challenge", steps=15000, lr=0.05, seed=s)` (about 5 seconds
# each) reached 100% correct signs for seeds 1, 2 and 3, and stalled at 91% and
# 87% for seeds 0 and 4: exact solutions exist and gradient descent can find
# them, but not from every start. Try it in a scratch cell if you are curious,
# and check the result with `sign_accuracy_by_length(get_weights(model))`.
#
# # Part 4: Written questions (graded by hand)
#
# Answer in your own words, 80 to 200 words each, and refer to the figures and
# numbers of Part 3.
#
# **Question 1.** Compare your content design with the learned content layer:
# which of $K_m$, $Q_m$, $V_m$ and $Q_m K_m^\top$ are similar, which differ,
# and why? Show that replacing $Q_m \to Q_m M$ and $K_m \to K_m M^{-\top}$ for
# any invertible `(qk_dim, qk_dim)` matrix $M$ leaves every output unchanged.

# %% answer [markdown] id="reflection-content" points=4
# ### BEGIN SOLUTION
# *Model answer.* The values are nearly the same: $V_m \approx I$ in both
# (the learned diagonal is about 1.03), because on a one-token sequence the
# output is exactly that token's value, so the task fixes $V_m$. $K_m$ and
# $Q_m$ look nothing alike: mine are $10I$, the learned ones are dense, with
# no visible structure. Their product $Q_m K_m^\top/\sqrt{d}$ tells the same
# story in both, though: each row is highest on the diagonal, so a query
# prefers keys of its own token. My gaps are about 58, the learned gaps about
# 3.5 to 4, so the learned attention is soft and its errors exceed 0.01
# although its average loss is small. Each row can also be shifted by a
# constant: the keys are one-hot tokens, whose features all sum to 1, so that
# adds the same number to all of a query's scores, which the softmax ignores.
#
# The scores are $QK^\top = X Q_m K_m^\top X^\top$. With $Q_m M$ and
# $K_m M^{-\top}$ they become
# $X Q_m M (K_m M^{-\top})^\top X^\top = X Q_m M M^{-1} K_m^\top X^\top = X Q_m K_m^\top X^\top$:
# the same scores, the same softmax, and $V_m$ is untouched, so every output
# is the same. Gradient descent lands on one of infinitely many equivalent
# factorisations, picked by its random start; only $Q_m K_m^\top$ (up to row
# shifts) and $V_m$ can be compared.
#
# *Rubric.* Full (4): V_m alike in both (fixed by one-token sequences), K_m
# and Q_m unlike while Q_m K_mᵀ / √d agrees (each row highest on its diagonal;
# the gaps compared), and the derivation that Q_m M and K_m M^{-⊤} give the
# same scores, so the same softmax and outputs. Partial (1 to 3): the
# comparison without the derivation, the derivation without the comparison, or
# raw K_m and Q_m compared as if they had to match. None (0): blank, or a
# claim that the learned layer found a different function.
# ### END SOLUTION

# %% [markdown]
# **Question 2.** How does the learned layer of 3.2 make every query attend to
# position 0? Use the figures: what do its positional table, $K_m$ and $Q_m$
# do, and how does that compare with your design? Which of its numbers could
# be different without changing any output?

# %% answer [markdown] id="reflection-position" points=4
# ### BEGIN SOLUTION
# *Model answer.* My design marks position 0 with a one-hot row of `pos`, gives
# only that feature a key, and makes every query the same constant (equal
# numbers in the token rows of $Q_m$): every query scores position 0 at 20 and
# every other key at 0. The learned table's rows are dense and look random;
# what matters is the position part of each key, `pos @ Km[3:]`, and there
# position 0 stands out from the other three (in our run it is about -2.7
# where the others are positive). The learned queries all point the same way
# whatever their token (the token rows of $Q_m$ are nearly equal, here all
# negative), so their product with the position-0 key is the largest score:
# the same rule as mine, "attend to position 0", found with the opposite sign
# ($M = -I$ in Question 1's symmetry) and a smaller margin. Mean attention on
# position 0 is 0.97 to 1.00, so outputs are slightly blurred and miss the
# 0.01 rule. Many numbers are free: any invertible mix of the table's columns
# (pos to pos $R$, with the position rows of $K_m$, $Q_m$, $V_m$ multiplied by
# $R^{-1}$), $Q_m M$ with $K_m M^{-\top}$, and, since only position 0's value
# is ever read, how that value is split between the token rows of $V_m$ and
# position 0's contribution `pos[0] @ Vm[3:]`.
#
# *Rubric.* Full (4): from the figures, how the learned layer sets position 0
# apart (the position part of each key, pos @ Km[3:]) and makes every query
# point the same way whatever its token, compared with the student's design
# (the same rule, maybe with another sign or margin), and at least one family
# of numbers that could differ without changing any output (Q_m M with K_m
# M^{-⊤}; the positional table's columns mixed with matching rows of K_m, Q_m,
# V_m; how position 0's value is split). Partial (1 to 3): the rule without
# the figures, or no free numbers. None (0): blank.
# ### END SOLUTION

# %% [markdown]
# **Question 3.** Your design solves the challenge with one layer, yet the
# trained layers of 3.3 get far fewer of the signs right (your figures are in
# the plot's legend; ours ranged from 55% to 86% over five seeds and three
# kinds of CPU kernels). Why? Use the
# sign-accuracy plot, what your design needs (the sizes of its scores and the
# balance between its parts), and what changed when training was slower and
# longer.

# %% answer [markdown] id="reflection-challenge" points=4
# ### BEGIN SOLUTION
# *Model answer.* The failure is not capacity: my design is an exact solution
# with the same sizes. It is the training. The solution needs three parts
# working together: a content match (+20), a same-position penalty (-20) that
# cancels a query's match with its own key exactly, and a CLS score (+10)
# between the two, with score gaps of several units where training starts near
# 0. Whether a token is repeated depends on the *other* tokens, so
# single-example gradients conflict: the same token at the same position is
# pushed up in one sequence and down in the next. Until the parts are in place
# the signal (does a copy outscore CLS?) barely changes the output, and with
# one example per step at learning rate 0.3 each step undoes much of the last:
# the loss stays high and accuracy scatters around the 65.5% of "always
# repeated" (a property of the data), differently for every seed, even on
# single tokens. MSE also asks for exact ±1 values while only the sign is
# judged. With a smaller learning rate and ten times more steps, some starts
# find exact solutions and others stall short of them (how many depends on the
# seed, and on the CPU, which rounds differently): the layer can represent the
# task and gradient descent can find it, but a recipe that suits easy tasks
# does not suit this one, and success depends on the start.
#
# *Rubric.* Full (4): not capacity (the student's one-layer design solves it
# with the same sizes) but training: the solution needs several large scores
# in balance (content match, same-position penalty, CLS in between) far from
# the start near 0, and single-example gradients conflict because whether a
# token repeats depends on the others; with the sign-accuracy plot (longer
# sequences worse) and the effect of slower, longer training. Partial (1 to
# 3): "needs more training" or "too hard" with one mechanism. None (0): blank,
# or a claim that one layer cannot represent the task.
# ### END SOLUTION

# %% [markdown]
# # Submit
#
# Run **Kernel → Restart & Run All**, check that every visible test passed, then
# run the cell below. It runs each graded piece of yours on the inputs of
# `visible_probes.py` (like those of the visible tests) and writes
# `submission_log.json` next to this notebook, with your training results and
# your code; submit both files. The grader re-runs the same probes on the code
# you submit and checks that the log agrees.

# %% code id="write-submission-log"
from submission_log import write_submission_log

# The metrics are None if training did not run; the log is written all the same.
training = globals().get("task_losses") or {}
submission_log = write_submission_log(globals(), metrics={
    "content_loss": training.get("content"),
    "position_loss": training.get("position"),
    "challenge_loss": training.get("challenge"),
    "challenge_sign_accuracy": globals().get("challenge_sign_accuracy"),
})
