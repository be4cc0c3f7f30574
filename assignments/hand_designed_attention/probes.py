"""Hidden probes of Attention Designed by Hand: instructor-only, never released.

The PyTorch module is probed at sizes that are all different (so that a
mixed-up dimension shows), with its parameters set by name in the notebook's
convention (Km = model.Km.weight.T), so that neither layer creation order nor
initialisation matters; any bias is zeroed, so that a bias costs the layers'
points only. Outputs are plain arrays; a probe that catches an error records it
as an output, and the other outputs still tell what went wrong. Clues named
like_* simulate one known mistake each: the probe computes in NumPy, from the
same matrices, the output that mistake gives, and records whether the module's
output is that one. New modules called once, with torch's dropout switched off,
and called again and again on the same sequence, tell randomness, state kept
between calls and keys cached at the first call apart (_calls).

The design probes only call the student's three functions and record the
matrices they return: the judge runs them on every sequence of each task with
the notebook's own reference_attention and check_design (checks.py, EVIDENCE),
in a process where no student code ran.
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Callable, Iterator

import numpy as np
import torch
import torch.nn as nn

from course.probe_tools import Namespace, caught, clue, error_output, like, registry, require, to_array

PROBES, probe = registry()  # check id -> probe; the grader runs them all (course.probe_runner.run_probes)

LAYERS = ("Qm", "Km", "Vm")
# Sizes of the probed modules. Every size differs from the others within a configuration.
PLAIN = dict(input_dim=5, qk_dim=3, v_dim=4)  # no positional table
WITH_POSITIONS = dict(input_dim=4, qk_dim=6, v_dim=2, pos_dim=3, max_seq_len=7)
# Tokens = the identity and Vm = the identity: the output of a sequence of 6 is its attention weights.
WEIGHTS_SHOWN = dict(input_dim=6, qk_dim=2, v_dim=6)
LARGE_SCORES = dict(input_dim=4, qk_dim=4, v_dim=4)  # scores of 450 (_large_scores)
PLAIN_LENGTHS, POSITION_LENGTHS, GRADIENT_LENGTH = (1, 4, 5), (1, 3, 7), 4
REPEATS = 8  # calls on the same sequence after a first one (_calls)
GRADIENT_DIRECTIONS = 4  # directions each gradient is measured along (pytorch_transformer_gradients)


# ---------------------------------------------------------------- helpers


def _rng(seed: int, what: str) -> np.random.Generator:
    return np.random.default_rng(seed + zlib.crc32(what.encode()))


def _design(sizes: dict, seed: int) -> dict[str, np.ndarray | None]:
    """Random float64 matrices for a module of these sizes, in the design convention: Km, Qm, Vm, pos."""
    d_in = sizes["input_dim"] + sizes.get("pos_dim", 0)
    shapes = {"Km": (d_in, sizes["qk_dim"]), "Qm": (d_in, sizes["qk_dim"]), "Vm": (d_in, sizes["v_dim"])}
    if "pos_dim" in sizes:
        shapes["pos"] = (sizes["max_seq_len"], sizes["pos_dim"])
    return {name: _rng(seed, name).normal(size=shape) for name, shape in shapes.items()}


def _load(model: nn.Module, design: dict[str, np.ndarray]) -> nn.Module:
    """Set the module's parameters by name: layer.weight = matrix.T (nn.Linear's convention), biases zeroed."""
    with torch.no_grad():
        for name in LAYERS:
            layer = getattr(model, name, None)
            if not isinstance(layer, nn.Linear):
                raise TypeError(f"self.{name} is a {type(layer).__name__}, not an nn.Linear")
            layer.weight.copy_(torch.as_tensor(design[name].T, dtype=layer.weight.dtype))
            if layer.bias is not None:
                layer.bias.zero_()
        if "pos" in design:
            model.pos.weight.copy_(torch.as_tensor(design["pos"], dtype=model.pos.weight.dtype))
    return model


def _inputs(seq: np.ndarray, design: dict[str, np.ndarray], positions_first: bool = False) -> np.ndarray:
    """The rows the layer attends over: the tokens, with the positional table's rows after them (or before)."""
    if "pos" not in design:
        return seq
    parts = [seq, design["pos"][: len(seq)]]
    return np.concatenate(parts[::-1] if positions_first else parts, axis=1)


def _softmax(scores: np.ndarray, axis: int = -1) -> np.ndarray:
    weights = np.exp(scores - scores.max(axis=axis, keepdims=True))
    return weights / weights.sum(axis=axis, keepdims=True)


def _forward(seq: np.ndarray, design: dict[str, np.ndarray], positions_first: bool = False, transposed: bool = False,
             values_from: str = "Vm", keys_from: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The layer in float64 NumPy, with one of a few known mistakes on request: (output, weights).

    positions_first: [pos, seq]; transposed: K @ Q.T; values_from: the layer the values come from; keys_from: the
    sequence whose keys and values are used (those of an earlier call, kept in a cache)."""
    x = _inputs(seq, design, positions_first)
    x_kv = x if keys_from is None else _inputs(keys_from, design)
    Q, K, V = x @ design["Qm"], x_kv @ design["Km"], x_kv @ design[values_from]
    scores = (K @ Q.T if transposed else Q @ K.T) / np.sqrt(Q.shape[1])
    weights = _softmax(scores)
    return weights @ V, weights


def _matches(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    return np.array(got.shape == want.shape and got.dtype.kind == "f" and bool(np.allclose(got, want, atol=1e-4)))


def _finite(got: np.ndarray) -> np.ndarray:
    return np.array(bool(got.dtype.kind == "f" and np.all(np.isfinite(got))))


def _structure(model: nn.Module) -> dict[str, np.ndarray]:
    """Clues to the layers' structure: the kind of each of Qm, Km, Vm, whether its weight is a registered
    parameter, whether the three are distinct objects, their in_features and out_features."""
    layers = [getattr(model, name, None) for name in LAYERS]
    return {"layer_kinds": np.array([type(layer).__name__ for layer in layers]),
            "registered": np.array(_registered(model, layers)),
            "distinct": np.array(_distinct(layers)),
            "in_features": np.array([getattr(layer, "in_features", -1) for layer in layers]),
            "out_features": np.array([getattr(layer, "out_features", -1) for layer in layers])}


def _sequence(seed: int, length: int, input_dim: int) -> torch.Tensor:
    return torch.as_tensor(_rng(seed, f"seq {length}").normal(size=(length, input_dim)), dtype=torch.float32)


def _identity_dropout(input: torch.Tensor, *args, **kwargs) -> torch.Tensor:
    return input


@contextlib.contextmanager
def _dropout_off() -> Iterator[None]:
    """torch's dropout functions (F.dropout, which nn.Dropout calls, and torch.dropout) doing nothing, inside the
    block: this layer has no dropout, and a module that applies one is right here if it is right otherwise."""
    saved = torch.nn.functional.dropout, torch.dropout
    torch.nn.functional.dropout = torch.dropout = _identity_dropout
    try:
        yield
    finally:
        torch.nn.functional.dropout, torch.dropout = saved


# ---------------------------------------------------------------- the module


def _weights(layers: list) -> list:
    return [layer.weight if isinstance(layer, nn.Linear) else layer for layer in layers]


def _registered(model: nn.Module, layers: list) -> list[bool]:
    """Whether each layer's weight is one of the module's parameters (those an optimizer is given)."""
    parameters = {id(p) for p in model.parameters()}
    return [id(weight) in parameters for weight in _weights(layers)]


def _distinct(layers: list) -> bool:
    return len({id(layer) for layer in layers}) == len(layers)


def _initialised(weight) -> bool:
    """Whether a new module's weight has a nonzero entry (nn.Linear's own random initialisation is never all zero)."""
    try:
        return bool(torch.as_tensor(weight).detach().abs().sum() > 0)
    except Exception:  # not a tensor: the layers' other outputs tell what it is
        return True


def _layers(cls, sizes: dict, suffix: str) -> dict[str, np.ndarray]:
    """A new module's structure (_structure), its layers' biases and weight shapes, its parameters by name, and
    whether each layer's weight, as created, has a nonzero entry (all zero: Qm and Km get no gradient, never train)."""
    model = cls(**sizes)
    layers = [getattr(model, name, None) for name in LAYERS]
    return {f"{key}_{suffix}": value for key, value in _structure(model).items()} | {
        f"initialised_{suffix}": np.array([_initialised(w) for w in _weights(layers)]),
        f"biases_{suffix}": np.array([getattr(layer, "bias", None) is not None for layer in layers]),
        f"weight_shapes_{suffix}": np.array([tuple(getattr(w, "shape", (-1, -1))) for w in _weights(layers)]),
        f"parameters_{suffix}": np.array(sorted(f"{n} {tuple(p.shape)}" for n, p in model.named_parameters())),
    }


@probe("pytorch_transformer_layers")
def pytorch_transformer_layers(ns: Namespace) -> dict[str, np.ndarray]:
    cls = require(ns, "PytorchTransformer")
    return _layers(cls, PLAIN, "plain") | _layers(cls, WITH_POSITIONS, "positions")


def _outputs(model: nn.Module, lengths: tuple[int, ...], input_dim: int, seed: int) -> dict[str, np.ndarray]:
    return {f"output_{n}": caught(lambda n=n: model(_sequence(seed, n, input_dim))) for n in lengths}


def _fitted_scale(weights: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """The c for which weights are closest to softmax(c * scores), row by row (least squares on centred logs)."""
    if weights.shape != scores.shape:
        raise ValueError(f"the attention weights have shape {weights.shape}, not {scores.shape}")
    logs = np.log(np.clip(weights, 1e-30, None))
    logs, scores = logs - logs.mean(axis=1, keepdims=True), scores - scores.mean(axis=1, keepdims=True)
    return np.array((logs * scores).sum() / (scores * scores).sum())


def _rescaled_softmax(weights: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Whether the weights, each row divided by its sum, are softmax(c * scores) for some c (the fitted one)."""
    if weights.shape != scores.shape or not np.all(np.isfinite(weights)) or np.any(weights.sum(axis=1) <= 0):
        return np.array(False)
    normalised = weights / weights.sum(axis=1, keepdims=True)
    return _matches(normalised, _softmax(_fitted_scale(normalised, scores) * scores))


def _broadcast_variants(scores: np.ndarray) -> list[np.ndarray]:
    """The softmax written by hand with a row maximum or a row sum of shape (n,) instead of (n, 1): broadcast along
    the last dimension, column j gets row j's value."""
    row_max, exps = scores.max(axis=1), np.exp(scores - scores.max(axis=1, keepdims=True))
    shifted = np.exp(scores - row_max[None, :])
    return [shifted / shifted.sum(axis=1, keepdims=True), shifted / shifted.sum(axis=1)[None, :],
            exps / exps.sum(axis=1)[None, :], np.exp(scores) / np.exp(scores).sum(axis=1)[None, :]]


def _weight_clues(weights: np.ndarray, design: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Clues to the attention formula from the weights of a module whose tokens and Vm are the identity (so that its
    output is its weights): whether they are those of a known mistake, computed here from the same matrices."""
    raw = design["Qm"] @ design["Km"].T  # x = the identity: Q = Qm, K = Km
    scores = raw / np.sqrt(design["Qm"].shape[1])
    causal = np.where(np.triu(np.ones(scores.shape, dtype=bool), k=1), -np.inf, scores)
    with np.errstate(over="ignore", invalid="ignore"):
        broadcast = _broadcast_variants(scores)
    return {"scale": caught(lambda: _fitted_scale(weights, raw)),
            "rescaled_softmax": _rescaled_softmax(weights, raw),
            "like_scores_transposed": clue(lambda: _matches(weights, _softmax(scores.T))),
            "like_softmax_over_queries": clue(lambda: _matches(weights, _softmax(scores, axis=0))),
            "like_weights_transposed": clue(lambda: _matches(weights, _softmax(scores).T)),
            "like_causal_mask": clue(lambda: _matches(weights, _softmax(causal))),
            "like_broadcast_row_stat": clue(lambda: np.array(any(bool(_matches(weights, variant)) for variant in broadcast)))}


def _large_scores(cls) -> dict[str, np.ndarray]:
    """The weights at scores of several hundred (Qm = Km = 30 I: 450 for a token against itself, 0 against the
    others), where exp overflows in float32: a stable softmax gives the identity."""
    sizes = LARGE_SCORES
    n = sizes["input_dim"]
    design = {"Qm": 30 * np.eye(n), "Km": 30 * np.eye(n), "Vm": np.eye(n)}
    weights = caught(lambda: _load(cls(**sizes), design)(torch.eye(n)))
    return {"large_weights": weights, "large_finite": _finite(weights)}


def _formula(cls) -> dict[str, np.ndarray]:
    """Evidence on the attention formula, from a module whose output is its attention weights (tokens and Vm
    the identity): the weights, their row sums and whether they are all alike (a scale applied after the softmax),
    the fitted scale, whether they are those of a known mistake (_weight_clues), the output's dtype and the weights
    of the same module in float64 (where an error of float32 goes away if it came from mixing dtypes), and the
    weights at large scores."""
    design = dict(_design(WEIGHTS_SHOWN, seed=3), Vm=np.eye(WEIGHTS_SHOWN["input_dim"]))
    model, tokens = cls(**WEIGHTS_SHOWN), torch.eye(WEIGHTS_SHOWN["input_dim"])
    found = {"double_weights": caught(lambda: _load(cls(**WEIGHTS_SHOWN), design).double()(tokens.double()))}
    found |= _large_scores(cls)
    try:
        output = _load(model, design)(tokens)
        weights = to_array(output)
    except Exception as error:
        return found | {key: error_output(error) for key in ("weights", "weight_row_sums", "output_dtype")}
    row_sums = weights.sum(axis=-1)
    return found | _weight_clues(weights, design) | {
        "weights": weights, "weight_row_sums": row_sums,
        "rows_sum_alike": np.array(bool(row_sums.size and np.ptp(row_sums) < 1e-6)),
        "output_dtype": np.array(str(getattr(output, "dtype", type(output).__name__)))}


def _calls(cls, sizes: dict, design: dict[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
    """Evidence on state and randomness, from new modules set to `design`: the first call's output (on a sequence
    of 2), the same with torch's dropout doing nothing, whether the second call (on a sequence of 3) gives the
    output of the first call's keys and values (a cache), and whether any of REPEATS more calls on the same sequence
    of 3 gives another output than the second (many: a dropout that happens to drop nothing once shows another
    time)."""
    first_seq, second_seq = (_sequence(seed, n, sizes["input_dim"]) for n in (2, 3))
    try:
        with _dropout_off():
            without_dropout = caught(lambda: _load(cls(**sizes), design)(first_seq))
        model = _load(cls(**sizes), design)
    except Exception as error:
        return {"first_call_without_dropout": error_output(error)}
    first, second = caught(lambda: model(first_seq)), caught(lambda: model(second_seq))
    again = [caught(lambda: model(second_seq)) for _ in range(REPEATS)]
    stale, _ = _forward(second_seq.double().numpy(), design, keys_from=first_seq.double().numpy())
    return {"first_call": first, "first_call_without_dropout": without_dropout,
            "like_stale_keys": clue(lambda: like(second, stale, atol=1e-4)),
            "changes_when_repeated": np.array(any(bool(_differ(second, other)) for other in again))}


def _differ(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether two results of the same call differ (NaN where both have NaN agrees)."""
    if a.shape != b.shape or a.dtype.kind != b.dtype.kind:
        return np.array(True)
    if a.dtype.kind == "f":
        return np.array(not np.allclose(a, b, atol=1e-6, equal_nan=True))
    return np.array(not np.array_equal(a, b))


@probe("pytorch_transformer_attention")
def pytorch_transformer_attention(ns: Namespace) -> dict[str, np.ndarray]:
    """Outputs without a positional table, and evidence on the formula (_formula) and on state (_calls); whether
    the output of a sequence of 4 is that of values computed with Qm."""
    cls = require(ns, "PytorchTransformer")
    model, design = cls(**PLAIN), _design(PLAIN, seed=1)
    found = _structure(model) | _formula(cls) | _calls(cls, PLAIN, design, seed=9)
    try:
        _load(model, design)
    except Exception as error:
        return found | {"output_4": error_output(error)}
    found |= _outputs(model, PLAIN_LENGTHS, PLAIN["input_dim"], seed=2)
    found |= _shape_clues(model, design, PLAIN["input_dim"], 2, found["output_1"])
    seq = _sequence(2, 4, PLAIN["input_dim"]).double().numpy()
    return found | {"like_values_from_queries": clue(lambda: like(found["output_4"], _forward(seq, design, values_from="Qm")[0],
                                                     atol=1e-4))}


@probe("pytorch_transformer_positions")
def pytorch_transformer_positions(ns: Namespace) -> dict[str, np.ndarray]:
    """Outputs with a positional table, the evidence of the attention probe, whether they are those of [pos, seq]
    (the module's own formula, on inputs the grader concatenates in the wrong order, given to a module without a
    table), and the outputs of the same calls when the grader concatenates [seq, pos] (concat_by_grader_n)."""
    cls = require(ns, "PytorchTransformer")
    model, design = cls(**WITH_POSITIONS), _design(WITH_POSITIONS, seed=4)
    found = _structure(model) | _formula(cls) | _calls(cls, WITH_POSITIONS, design, seed=10)
    try:
        _load(model, design)
    except Exception as error:
        return found | {"output_3": error_output(error)}
    found |= _outputs(model, POSITION_LENGTHS, WITH_POSITIONS["input_dim"], seed=5)
    found |= _shape_clues(model, design, WITH_POSITIONS["input_dim"], 5, found["output_1"])
    d_in = WITH_POSITIONS["input_dim"] + WITH_POSITIONS["pos_dim"]
    without_table = dict(input_dim=d_in, qk_dim=WITH_POSITIONS["qk_dim"], v_dim=WITH_POSITIONS["v_dim"])
    without_pos = {name: matrix for name, matrix in design.items() if name != "pos"}
    table = torch.as_tensor(design["pos"], dtype=torch.float32)
    try:
        by_grader = _load(cls(**without_table), without_pos)
        for n in POSITION_LENGTHS:
            seq = _sequence(5, n, WITH_POSITIONS["input_dim"])
            found[f"concat_by_grader_{n}"] = caught(lambda seq=seq, n=n: by_grader(torch.cat([seq, table[:n]], dim=1)))
        seq = _sequence(5, 3, WITH_POSITIONS["input_dim"])
        found["like_positions_first"] = clue(lambda: _matches(
            found["output_3"], caught(lambda: _load(cls(**without_table), without_pos)(torch.cat([table[:3], seq], 1)))))
    except Exception as error:
        found["concat_by_grader_3"] = error_output(error)
    seq = _sequence(5, 3, WITH_POSITIONS["input_dim"]).double().numpy()
    return found | {"like_values_from_queries": clue(lambda: like(found["output_3"], _forward(seq, design, values_from="Qm")[0],
                                                     atol=1e-4))}


def _shape_clues(model: nn.Module, design: dict[str, np.ndarray], input_dim: int, seed: int,
                 output_1: np.ndarray) -> dict[str, np.ndarray]:
    """Whether the module returns a tuple (output_is_tuple), and whether its output for one token is the right one
    with the dimensions of size 1 dropped (like_squeezed, computed here from the same matrices)."""
    seq = _sequence(seed, 1, input_dim)
    try:
        is_tuple = isinstance(model(seq), tuple)
    except Exception:  # the outputs tell what failed
        is_tuple = False
    squeezed = _forward(seq.double().numpy(), design)[0].squeeze()
    return {"output_is_tuple": np.array(is_tuple), "like_squeezed": clue(lambda: _matches(output_1, squeezed))}


def _directions(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """GRADIENT_DIRECTIONS random sign patterns of `shape` (entries +1 or -1), fixed by `name`: (directions, *shape).
    Along such a direction a gradient that is wrong in one entry is wrong by that entry's whole error."""
    return _rng(9, name).choice([-1.0, 1.0], size=(GRADIENT_DIRECTIONS, *shape))


def _directional_derivatives(f: Callable[[np.ndarray], float], matrix: np.ndarray, directions: np.ndarray,
                             eps: float = 1e-6) -> np.ndarray:
    """d f(matrix + t * direction) / dt at t = 0 for each direction, by central differences (float64): (directions,)."""
    return np.array([(f(matrix + eps * d) - f(matrix - eps * d)) / (2 * eps) for d in directions])


@probe("pytorch_transformer_gradients")
def pytorch_transformer_gradients(ns: Namespace) -> dict[str, np.ndarray]:
    """The backpropagated gradient of a fixed weighted sum of the outputs, for every parameter (by name) and the
    input, along GRADIENT_DIRECTIONS fixed directions each, next to the same directional derivatives by finite
    differences, each value the first call of a new module: in float64, in eval mode, with torch's dropout doing
    nothing (the forward checks judge those)."""
    cls = require(ns, "PytorchTransformer")
    design = _design(WITH_POSITIONS, seed=6)
    seq0 = _sequence(7, GRADIENT_LENGTH, WITH_POSITIONS["input_dim"]).double().numpy()
    loss_weights = torch.as_tensor(_rng(8, "loss").normal(size=(GRADIENT_LENGTH, WITH_POSITIONS["v_dim"])))

    def new_model(matrices: dict[str, np.ndarray]) -> nn.Module:
        return _load(cls(**WITH_POSITIONS).double(), matrices).eval()  # set in float64: nudges of 1e-6 stay

    with _dropout_off():
        model = cls(**WITH_POSITIONS)
        found = _structure(model) | {"output_is_tuple": np.array(False)}
        try:
            _load(model.double(), design).eval()
            seq = torch.as_tensor(seq0).requires_grad_()
            output = model(seq)
            found["output_is_tuple"] = np.array(isinstance(output, tuple))
            value = (output * loss_weights).sum()
        except Exception as error:
            return found | {"forward_error": error_output(error)}
        found |= {"forward_error": np.array("none"), "output": to_array(output),
                  "loss_requires_grad": np.array(bool(value.requires_grad))}
        try:
            value.backward()
        except Exception as error:
            return found | {"backward_error": error_output(error)}
        found["backward_error"] = np.array("none")
        tensors = {"Qm": model.Qm.weight, "Km": model.Km.weight, "Vm": model.Vm.weight, "pos": model.pos.weight,
                   "seq": seq}

        def loss(name: str, matrix: np.ndarray) -> float:
            if name == "seq":
                fresh, inputs = new_model(design), matrix
            else:  # a layer's weight is its matrix transposed
                fresh, inputs = new_model(dict(design, **{name: matrix.T if name in LAYERS else matrix})), seq0
            return float((fresh(torch.as_tensor(inputs)) * loss_weights).sum().detach())

        starts = {"Qm": design["Qm"].T, "Km": design["Km"].T, "Vm": design["Vm"].T, "pos": design["pos"], "seq": seq0}
        for name, tensor in tensors.items():
            directions = _directions(name, starts[name].shape)
            found[f"grad_{name}"] = (np.array("no gradient") if tensor.grad is None else
                                     (directions * to_array(tensor.grad).astype(np.float64)).sum(
                                         axis=tuple(range(1, directions.ndim))))
            found[f"numeric_grad_{name}"] = caught(lambda name=name, directions=directions: _directional_derivatives(
                lambda matrix: loss(name, matrix), starts[name], directions))
        shown = {"Qm": "Qm.weight", "Km": "Km.weight", "Vm": "Vm.weight", "pos": "pos.weight", "seq": "the input"}
        found["gradients_nonzero"] = np.array([
            f"{shown[name]}: " + ("a gradient" if tensor.grad is not None and bool(tensor.grad.abs().sum() > 0)
                                  else "no gradient, or an all-zero one") for name, tensor in tensors.items()])
    return found


# ---------------------------------------------------------------- the designs


def _returned(ns: Namespace, function: str) -> dict[str, np.ndarray]:
    """The matrices a design function returns, as float64 arrays: n_matrices (-1: not a tuple or list), matrix_i.

    Copies, so that a function that changes its arrays at every call shows different outputs on its second run.
    """
    result = require(ns, function)()
    if not isinstance(result, (tuple, list)):
        return {"n_matrices": np.array(-1)}
    return {"n_matrices": np.array(len(result)), "aliased": _aliased(result)} | {
        f"matrix_{i}": np.array(matrix, dtype=np.float64) for i, matrix in enumerate(result)}  # copies: snapshots


def _aliased(result) -> np.ndarray:
    """The pairs "i-j" of returned matrices that are one array (or views of one array): changing one in place changes
    the other."""
    arrays = [m if isinstance(m, np.ndarray) else None for m in result]
    return np.array([f"{i}-{j}" for i in range(len(arrays)) for j in range(i + 1, len(arrays))
                     if arrays[i] is not None and arrays[j] is not None and np.shares_memory(arrays[i], arrays[j])],
                    dtype=str)


@probe("attention_by_content")
def attention_by_content(ns: Namespace) -> dict[str, np.ndarray]:
    return _returned(ns, "attention_by_content")


@probe("attention_by_position")
def attention_by_position(ns: Namespace) -> dict[str, np.ndarray]:
    return _returned(ns, "attention_by_position")


@probe("attention_by_content_and_position")
def attention_by_content_and_position(ns: Namespace) -> dict[str, np.ndarray]:
    return _returned(ns, "attention_by_content_and_position")
