"""Hidden probes of Attention Designed by Hand: instructor-only, never released.

The PyTorch module is probed at sizes that are all different (so that a
mixed-up dimension shows), with its parameters set by name in the notebook's
convention (Km = model.Km.weight.T), so that neither layer creation order nor
initialisation matters; any bias is zeroed, so that a bias costs the layers'
points only. Outputs are plain arrays; a probe that catches an error records it
as an output, and the other outputs still tell what went wrong.

The design probes only call the student's three functions and record the
matrices they return: the judge runs them on every sequence of each task with
the notebook's own reference_attention and check_design (checks.py, EVIDENCE),
in a process where no student code ran.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import numpy as np
import torch
import torch.nn as nn

from course.probe_tools import Namespace, caught, error_output, registry, require, to_array

PROBES, probe = registry()  # check id -> probe; the grader runs them all (course.probes.run_probes)

LAYERS = ("Qm", "Km", "Vm")
# Sizes of the probed modules. Every size differs from the others within a configuration.
PLAIN = dict(input_dim=5, qk_dim=3, v_dim=4)  # no positional table
WITH_POSITIONS = dict(input_dim=4, qk_dim=6, v_dim=2, pos_dim=3, max_seq_len=7)
# Tokens = the identity and Vm = the identity: the output of a sequence of 6 is its attention weights.
WEIGHTS_SHOWN = dict(input_dim=6, qk_dim=2, v_dim=6)
PLAIN_LENGTHS, POSITION_LENGTHS, GRADIENT_LENGTH = (1, 4, 5), (1, 3, 7), 4


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


def _forward(seq: np.ndarray, design: dict[str, np.ndarray], positions_first: bool = False,
             transposed: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The layer in float64 NumPy, with one of two known mistakes on request: (output, weights)."""
    x = seq
    if "pos" in design:
        parts = [seq, design["pos"][: len(seq)]]
        x = np.concatenate(parts[::-1] if positions_first else parts, axis=1)
    Q, K, V = x @ design["Qm"], x @ design["Km"], x @ design["Vm"]
    scores = (K @ Q.T if transposed else Q @ K.T) / np.sqrt(Q.shape[1])
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return weights @ V, weights


def _matches(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    return np.array(got.shape == want.shape and got.dtype.kind == "f" and bool(np.allclose(got, want, atol=1e-4)))


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


# ---------------------------------------------------------------- the module


def _weights(layers: list) -> list:
    return [layer.weight if isinstance(layer, nn.Linear) else layer for layer in layers]


def _registered(model: nn.Module, layers: list) -> list[bool]:
    """Whether each layer's weight is one of the module's parameters (those an optimizer is given)."""
    parameters = {id(p) for p in model.parameters()}
    return [id(weight) in parameters for weight in _weights(layers)]


def _distinct(layers: list) -> bool:
    return len({id(layer) for layer in layers}) == len(layers)


def _layers(cls, sizes: dict, suffix: str) -> dict[str, np.ndarray]:
    """A new module's structure (_structure), its layers' biases and weight shapes, and its parameters by name."""
    model = cls(**sizes)
    layers = [getattr(model, name, None) for name in LAYERS]
    return {f"{key}_{suffix}": value for key, value in _structure(model).items()} | {
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


def _formula(cls) -> dict[str, np.ndarray]:
    """Evidence on the attention formula, from a module whose output is its attention weights (tokens and Vm
    the identity): the weights' row sums and whether they are all alike (a scale applied after the softmax),
    the fitted scale, whether the scores are transposed, the weights in eval mode (dropout shows as train-mode
    weights that differ), the output's dtype, and the weights of the same module in float64 (where an error of
    float32 goes away if it came from mixing dtypes)."""
    design = dict(_design(WEIGHTS_SHOWN, seed=3), Vm=np.eye(WEIGHTS_SHOWN["input_dim"]))
    model, tokens = cls(**WEIGHTS_SHOWN), torch.eye(WEIGHTS_SHOWN["input_dim"])
    double_weights = caught(lambda: _load(cls(**WEIGHTS_SHOWN), design).double()(tokens.double()))
    try:
        output = _load(model, design)(tokens)
        weights = to_array(output)
    except Exception as error:
        return {"weight_row_sums": error_output(error), "output_dtype": error_output(error),
                "double_weights": double_weights}
    scores = design["Qm"] @ design["Km"].T  # x = the identity: Q = Qm, K = Km
    row_sums = weights.sum(axis=-1)
    return {"weight_row_sums": row_sums, "rows_sum_alike": np.array(bool(row_sums.size and np.ptp(row_sums) < 1e-6)),
            "scale": caught(lambda: _fitted_scale(weights, scores)),
            "like_scores_transposed": _matches(weights, _forward(np.eye(len(scores)), design, transposed=True)[1]),
            "eval_weights": caught(lambda: model.eval()(tokens)), "output_dtype": np.array(str(output.dtype)),
            "double_weights": double_weights}


@probe("pytorch_transformer_attention")
def pytorch_transformer_attention(ns: Namespace) -> dict[str, np.ndarray]:
    cls = require(ns, "PytorchTransformer")
    model = cls(**PLAIN)
    found = _structure(model) | _formula(cls)
    try:
        _load(model, _design(PLAIN, seed=1))
    except Exception as error:
        return found | {"output_4": error_output(error)}
    return found | _outputs(model, PLAIN_LENGTHS, PLAIN["input_dim"], seed=2)


@probe("pytorch_transformer_positions")
def pytorch_transformer_positions(ns: Namespace) -> dict[str, np.ndarray]:
    """Outputs with a positional table, and whether they are those of [pos, seq] (the module's own formula, on
    inputs the grader concatenates in the wrong order, given to a module without a table)."""
    cls = require(ns, "PytorchTransformer")
    model, design = cls(**WITH_POSITIONS), _design(WITH_POSITIONS, seed=4)
    found = _structure(model) | _formula(cls)
    try:
        _load(model, design)
    except Exception as error:
        return found | {"output_3": error_output(error)}
    found |= _outputs(model, POSITION_LENGTHS, WITH_POSITIONS["input_dim"], seed=5)
    d_in = WITH_POSITIONS["input_dim"] + WITH_POSITIONS["pos_dim"]
    without_table = dict(input_dim=d_in, qk_dim=WITH_POSITIONS["qk_dim"], v_dim=WITH_POSITIONS["v_dim"])
    without_pos = {name: matrix for name, matrix in design.items() if name != "pos"}
    seq = _sequence(5, 3, WITH_POSITIONS["input_dim"])
    positions_first = torch.cat([torch.as_tensor(design["pos"][:3], dtype=seq.dtype), seq], dim=1)
    found["like_positions_first"] = _matches(
        found["output_3"], caught(lambda: _load(cls(**without_table), without_pos)(positions_first)))
    return found


def _numeric_gradient(f: Callable[[], torch.Tensor], tensor: torch.Tensor, eps: float = 1e-6) -> np.ndarray:
    """d f() / d tensor by central differences (float64), changing tensor's entries in place one at a time."""
    gradient = np.zeros(tuple(tensor.shape))
    with torch.no_grad():
        for index in np.ndindex(*gradient.shape):
            saved = tensor[index].item()
            tensor[index] = saved + eps
            above = f().item()
            tensor[index] = saved - eps
            below = f().item()
            tensor[index] = saved
            gradient[index] = (above - below) / (2 * eps)
    return gradient


@probe("pytorch_transformer_gradients")
def pytorch_transformer_gradients(ns: Namespace) -> dict[str, np.ndarray]:
    """Backpropagated gradients of a fixed weighted sum of the outputs, for every parameter (by name) and the
    input, next to the gradients of the same function by finite differences: in float64, in eval mode."""
    model = require(ns, "PytorchTransformer")(**WITH_POSITIONS)
    found = _structure(model)
    try:
        _load(model, _design(WITH_POSITIONS, seed=6)).double().eval()
        seq = _sequence(7, GRADIENT_LENGTH, WITH_POSITIONS["input_dim"]).double().requires_grad_()
        loss_weights = torch.as_tensor(_rng(8, "loss").normal(size=(GRADIENT_LENGTH, WITH_POSITIONS["v_dim"])))

        def loss() -> torch.Tensor:
            return (model(seq) * loss_weights).sum()

        value = loss()
    except Exception as error:
        return found | {"forward_error": error_output(error)}
    found["forward_error"] = np.array("none")
    found["loss_requires_grad"] = np.array(bool(value.requires_grad))
    try:
        value.backward()
    except Exception as error:
        return found | {"backward_error": error_output(error)}
    found["backward_error"] = np.array("none")
    tensors = {"Qm": model.Qm.weight, "Km": model.Km.weight, "Vm": model.Vm.weight, "pos": model.pos.weight,
               "seq": seq}
    for name, tensor in tensors.items():
        found[f"grad_{name}"] = np.array("no gradient") if tensor.grad is None else to_array(tensor.grad)
        found[f"numeric_grad_{name}"] = caught(lambda tensor=tensor: _numeric_gradient(loss, tensor))
    found["gradients_nonzero"] = np.array([tensor.grad is not None and bool(tensor.grad.abs().sum() > 0)
                                           for tensor in tensors.values()])
    return found


# ---------------------------------------------------------------- the designs


def _returned(ns: Namespace, function: str) -> dict[str, np.ndarray]:
    """The matrices a design function returns, as float64 arrays: n_matrices (-1: not a tuple or list), matrix_i.

    Copies, so that a function that changes its arrays at every call shows different outputs on its second run.
    """
    result = require(ns, function)()
    if not isinstance(result, (tuple, list)):
        return {"n_matrices": np.array(-1)}
    return {"n_matrices": np.array(len(result))} | {
        f"matrix_{i}": np.array(matrix, dtype=np.float64) for i, matrix in enumerate(result)}  # copies: snapshots


@probe("attention_by_content")
def attention_by_content(ns: Namespace) -> dict[str, np.ndarray]:
    return _returned(ns, "attention_by_content")


@probe("attention_by_position")
def attention_by_position(ns: Namespace) -> dict[str, np.ndarray]:
    return _returned(ns, "attention_by_position")


@probe("attention_by_content_and_position")
def attention_by_content_and_position(ns: Namespace) -> dict[str, np.ndarray]:
    return _returned(ns, "attention_by_content_and_position")
