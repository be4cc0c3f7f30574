"""What every assignment's hidden probes (assignments/<assignment>/probes.py) are made of.

A probe builds one of the student's pieces from the notebook's namespace, runs it on the grader's own inputs at
fixed seeds and returns plain data: a dict of numpy arrays. These helpers register probes and stand-ins, make
seeded inputs, set parameters by name, and turn results (and errors) into arrays. They run in the grading sandbox,
beside the student's code, and in the instructor's processes for the reference data.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import math
import zlib
from collections.abc import Callable, Iterator

import numpy as np
import torch
import torch.nn as nn

from course.probe_runner import clue  # noqa: F401 (what a probe writes its clues with)

Namespace = dict
Probe = Callable[[Namespace], dict[str, np.ndarray]]


def registry() -> tuple[dict[str, Probe], Callable[[str], Callable[[Probe], Probe]]]:
    """A probe module's PROBES (check id -> probe; course.probe_runner.run_probes runs them all) and its decorator
    `probe(check_id)`, which registers a probe under the id of the check that judges its data."""
    probes: dict[str, Probe] = {}

    def probe(check_id: str) -> Callable[[Probe], Probe]:
        def register(fn: Probe) -> Probe:
            probes[check_id] = fn
            return fn

        return register

    return probes, probe


def stand_in_registry() -> tuple[dict[str, str], Callable]:
    """A probe module's STAND_INS (stand-in class name -> how a message names it: course.probe_runner never shows the
    class name) and its class decorator `stand_in(piece)`, which registers a stand-in for `piece`."""
    stand_ins: dict[str, str] = {}

    def stand_in(piece: str):
        def register(cls):
            stand_ins[cls.__name__] = f"the grader's own {piece}"
            return cls

        return register

    return stand_ins, stand_in


def generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def randn(seed: int, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=generator(seed))


def to_array(value) -> np.ndarray:
    """A tensor as a float64 array (detached, on the CPU), anything else as np.asarray makes it."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().double().numpy()
    return np.asarray(value)


def like(got: np.ndarray, want, atol: float = 1e-5) -> np.ndarray:
    """Whether an output equals a trusted re-computation (a clue that names a mistake): same shape, finite, close."""
    want = to_array(want)
    return np.array(bool(got.dtype.kind == "f" and got.shape == want.shape and np.all(np.isfinite(got))
                         and np.allclose(got, want, atol=atol)))


def require(ns: Namespace, name: str):
    """A name the notebook must define, or a NameError that says what to do."""
    if name not in ns:
        raise NameError(f"`{name}` is not defined: run its cell (and keep its name as given).")
    return ns[name]


def error_output(error: BaseException) -> np.ndarray:
    """An error a probe caught, as an output: the other outputs still tell what went wrong."""
    return np.array(f"{type(error).__name__}: {error}")


def caught(compute: Callable[[], object]) -> np.ndarray:
    """compute() as an array, or the error it raised."""
    try:
        return to_array(compute())
    except Exception as error:
        return error_output(error)


def fill_parameters(module: nn.Module, seed: int) -> np.ndarray:
    """Overwrite every parameter with values fixed by its name and `seed`.

    Weights (2-D and up) get N(0, 1/fan_in); vectors get U(0.5, 1.5). The result does not depend on how or in which
    order the layers were created, only on their names. Returns the sorted names with their shapes, e.g.
    'W_q.weight (12, 12)'.
    """
    described = []
    with torch.no_grad():
        for name, p in module.named_parameters():
            g = generator(seed + zlib.crc32(name.encode()))
            if p.dim() >= 2:
                values = torch.randn(p.shape, generator=g) / math.sqrt(p.shape[-1])
            else:
                values = 0.5 + torch.rand(p.shape, generator=g)
            p.copy_(values.to(p.device, p.dtype))
            described.append(f"{name} {tuple(p.shape)}")
    return np.array(sorted(described))


def flat_parameters(module: nn.Module) -> np.ndarray:
    """Every parameter of `module`, flattened and joined in the order of their sorted names: (total size,)."""
    return np.concatenate([to_array(p).ravel() for _, p in sorted(module.named_parameters())])


@contextlib.contextmanager
def replaced(ns: Namespace, **stand_ins) -> Iterator[None]:
    """Temporarily bind names in the notebook namespace to the grader's own versions."""
    missing = object()
    saved = {name: ns.get(name, missing) for name in stand_ins}
    ns.update(stand_ins)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is missing:
                ns.pop(name, None)
            else:
                ns[name] = value


def pattern_dropout(x: torch.Tensor, training: bool) -> torch.Tensor:
    """What the grader's dropout does: in training, x times a fixed 0 / 1 / 2 pattern over the last two axes (0 =
    dropped); otherwise x itself."""
    if not training:
        return x
    rows, cols = x.shape[-2:]
    pattern = (torch.arange(rows)[:, None] + 2 * torch.arange(cols)[None, :]) % 3  # 0 = dropped, 1, 2
    return x * pattern.to(x.device, x.dtype)


class StandInDropout(nn.Dropout):
    """A dropout that drops the same entries every time in training mode (pattern_dropout) and does nothing in eval
    mode. Put in place of a module's nn.Dropout, it shows where dropout acts, whatever random numbers the code draws
    (one call per head or one for all heads give the same result). It is an nn.Dropout with the replaced one's p, so
    every correct use of one works: the module called, its `p` and `training` read, F.dropout(x, self.drop.p,
    self.training) (under `stand_in_dropout`, functional dropout drops the same pattern). Register it in the probe
    module's STAND_INS (stand_in("dropout")) so that messages never name it."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return pattern_dropout(x, self.training)


def _functional_dropout(input: torch.Tensor, p: float = 0.5, training: bool = True, inplace: bool = False):
    """torch.nn.functional.dropout as the grader's dropout: the same pattern as StandInDropout when it drops."""
    return pattern_dropout(input, training and p > 0)


def _torch_dropout(input: torch.Tensor, p: float, train: bool) -> torch.Tensor:
    """torch.dropout as the grader's dropout."""
    return pattern_dropout(input, train and p > 0)


@contextlib.contextmanager
def stand_in_dropout(module: nn.Module) -> Iterator[nn.Module]:
    """`module` in training mode, each of its own nn.Dropout children replaced by a StandInDropout with the same p,
    and, inside the block, torch's functional dropout (F.dropout, torch.dropout) dropping the same pattern."""
    for name, child in list(module.named_children()):
        if isinstance(child, nn.Dropout):
            setattr(module, name, StandInDropout(child.p))
    saved = torch.nn.functional.dropout, torch.dropout
    torch.nn.functional.dropout, torch.dropout = _functional_dropout, _torch_dropout
    try:
        yield module.train()
    finally:
        torch.nn.functional.dropout, torch.dropout = saved


def _names(code) -> set[str]:
    """The global names a code object and the code nested in it (methods, comprehensions) look up."""
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _names(const)
    return names


def code_fingerprint(obj, ns: Namespace) -> str:
    """A digest of the code of a class or function the notebook defined, and of the notebook's own classes and
    functions it names (its bases included), as they are bound in `ns` now: two namespaces give the same digest
    when that code is the same. A constant it names counts by its value; anything else (torch, the grader's
    stand-ins) by its type and name.

    A probe that trains keeps its result by this digest: the grader-accuracy corpus runs hundreds of notebooks
    that differ elsewhere (a sandbox grades one notebook per process, so there it spares only the second run)."""
    own = ns.get("__name__")
    seen: set[int] = set()
    parts: list[bytes] = []

    def visit(item) -> None:
        if id(item) in seen:
            return
        seen.add(id(item))
        if isinstance(item, type):
            parts.append(item.__qualname__.encode())
            members = [getattr(m, "__func__", getattr(m, "fget", m)) for m in vars(item).values()]
            codes = [m.__code__ for m in members if hasattr(m, "__code__")]
            for base in item.__bases__:
                if getattr(base, "__module__", None) == own:
                    visit(base)
        else:
            codes = [item.__code__]
        for code in codes:
            parts.append(marshal.dumps(code))
            for name in sorted(_names(code)):
                value = ns.get(name)
                if getattr(value, "__module__", None) == own and (isinstance(value, type) or hasattr(value, "__code__")):
                    visit(value)
                elif isinstance(value, (bool, int, float, str, bytes, tuple, frozenset, type(None))):
                    parts.append(f"{name}={value!r}".encode())  # a constant: its value
                else:
                    parts.append(f"{name}={type(value).__qualname__}:{getattr(value, '__qualname__', '')}".encode())

    visit(obj)
    return hashlib.sha256(b"\0".join(parts)).hexdigest()
