"""The recurrent family (RNN, LSTM, GRU), written from the DirectML pages: a loop over the time
steps in FLOAT64, one direction at a time, the batch elements side by side.

Layouts as the pages give them (the gates' blocks per direction: RNN i; LSTM i, o, f, c; GRU
z, r, h; the biases Wb[gates] then Rb[gates]; peepholes P[i, o, f]); the equations as the specs'
pseudocode states them. The forward direction visits t = 0 .. length - 1, the backward one
t = length - 1 .. 0; a step past a batch element's length keeps its state and writes 0 into
OutputSequenceTensor (rows the specs leave undefined, R1); a length beyond seq_length runs
seq_length steps (R2).

`EXACT` also carries, beside each output's FLOAT64 value, a bound on how far a backend's result
may lie from it, as the specs' accuracy notes derive: each step's pre-activations are dot
products judged by the dot-product model (KS * u times the sum of the terms' absolute values,
the previous state's own bound included), plus the previous state's bound carried through the
recurrence weights' absolute values (and the peepholes'); an activation carries its input's
bound through its Lipschitz constant (`LIPSCHITZ`), adds its jump where a discontinuity lies
within that bound, and its own rounding (its spec's ULPs, at least four); the element-wise
products and sums that form the state add their roundings. u and tiny are the output type's
widest accumulation type's (FLOAT32 for FLOAT32; FLOAT16 for FLOAT16, which covers a FLOAT32
accumulation too); the bound is returned divided by KS * u, which the dot-product check
multiplies back.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..binding import bind_desc
from .element_wise import fused_activation
from .element_wise_numbers import Params
from .fields import Fields, Inputs, Outputs, catalog
from .tensors import WriteLog

__all__ = ["EXACT", "LIPSCHITZ", "RECURRENT", "UNDEFINED_NOTES"]

Exact = dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]
ACTIVATION_ULPS = 4  # as a FusedActivation's own allowance (conformance/dot_product.py)

_GATES = {"RNN": 1, "LSTM": 4, "GRU": 3}
_ACTIVATIONS = {"RNN": 1, "LSTM": 3, "GRU": 2}


def _p(p: Params, name: str) -> float:
    return abs(p.float32(name))


# Each element-wise activation's Lipschitz constant, sup |f'| over the reals, from its
# parameters (the derivative of each formula of the element-wise reference): GELU's
# Phi(x) + x phi(x) peaks at 1.1289 (x = sqrt(2)), SWISH's s(y) + y s'(y) at 1.0998 whatever
# its input scale; HARD_SWISH's slope (Alpha x + Beta) + Alpha x is at most 1 + max(|Beta|,
# |1 - Beta|) where Alpha x + Beta lies in [0, 1]; CELU's exp(x / Alpha) for x < 0 is at most 1
# for a positive Alpha, unbounded otherwise. Row-wise ones bound the largest change of a step
# by the largest change of its inputs (the infinity norm of their Jacobians): SOFTMAX's
# diag(p) - p p^T has rows summing to 2 p (1 - p) <= 1/2 in absolute value, LOG_SOFTMAX's
# I - 1 p^T to 2 (1 - p) <= 2.
LIPSCHITZ: dict[str, Callable[[Params], float]] = {
    "ACTIVATION_CELU": lambda p: 1.0 if p.float32("Alpha") > 0 else math.inf,
    "ACTIVATION_ELU": lambda p: max(1.0, _p(p, "Alpha")),
    "ACTIVATION_GELU": lambda p: 1.13,
    "ACTIVATION_HARD_SIGMOID": lambda p: _p(p, "Alpha"),
    "ACTIVATION_HARD_SWISH": lambda p: 1 + max(_p(p, "Beta"), abs(1 - p.float32("Beta"))),
    "ACTIVATION_HARDMAX": lambda p: 0.0,
    "ACTIVATION_HARDMAX1": lambda p: 0.0,
    "ACTIVATION_IDENTITY": lambda p: 1.0,
    "ACTIVATION_LEAKY_RELU": lambda p: max(1.0, _p(p, "Alpha")),
    "ACTIVATION_LINEAR": lambda p: _p(p, "Alpha"),
    "ACTIVATION_LOG_SOFTMAX": lambda p: 2.0,
    "ACTIVATION_LOG_SOFTMAX1": lambda p: 2.0,
    "ACTIVATION_PARAMETRIC_SOFTPLUS": lambda p: _p(p, "Alpha") * _p(p, "Beta"),
    "ACTIVATION_RELU": lambda p: 1.0,
    "ACTIVATION_SCALED_ELU": lambda p: _p(p, "Gamma") * max(1.0, _p(p, "Alpha")),
    "ACTIVATION_SCALED_TANH": lambda p: _p(p, "Alpha") * _p(p, "Beta"),
    "ACTIVATION_SHRINK": lambda p: 1.0,
    "ACTIVATION_SIGMOID": lambda p: 0.25,
    "ACTIVATION_SOFTMAX": lambda p: 0.5,
    "ACTIVATION_SOFTMAX1": lambda p: 0.5,
    "ACTIVATION_SOFTPLUS": lambda p: 1.0,
    "ACTIVATION_SOFTSIGN": lambda p: 1.0,
    "ACTIVATION_SWISH": lambda p: 1.1,
    "ACTIVATION_TANH": lambda p: 1.0,
    "ACTIVATION_THRESHOLDED_RELU": lambda p: 1.0,
}
_ROW_WISE = frozenset(
    {
        "ACTIVATION_SOFTMAX",
        "ACTIVATION_SOFTMAX1",
        "ACTIVATION_LOG_SOFTMAX",
        "ACTIVATION_LOG_SOFTMAX1",
    }
)


class _Units:
    """u and tiny of the bound's type, and KS (the spec's terms)."""

    def __init__(self, f: Fields, output_type: str) -> None:
        widest = np.float16 if output_type == "FLOAT16" else np.float32
        info = np.finfo(widest)
        self.u = 2.0 ** (-1 - info.nmant)
        self.tiny = float(info.tiny)
        spec = f.spec
        env = bind_desc(catalog().common, spec, f.desc)
        rule = spec.checked_semantics.comparison_for("OutputSingleTensor", "float", output_type)
        assert rule.terms is not None  # the recurrent specs' outputs are dot_product rules
        self.terms = float(rule.terms.evaluate(env))  # type: ignore[arg-type]


def _jump(kind: str, p: Params, a: np.ndarray, e: np.ndarray) -> np.ndarray:
    """A discontinuity's jump where one lies within e of a (the result may be either side)."""
    zero = np.zeros_like(a)
    if kind == "ACTIVATION_THRESHOLDED_RELU":
        alpha = p.float32("Alpha")
        return np.where(np.abs(a - alpha) <= e, abs(alpha), zero)
    if kind == "ACTIVATION_SHRINK":
        threshold, bias = p.float32("Threshold"), p.float32("Bias")
        near = (np.abs(a - threshold) <= e) | (np.abs(a + threshold) <= e)
        return np.where(near, abs(threshold - bias), zero)
    if kind in ("ACTIVATION_HARDMAX", "ACTIVATION_HARDMAX1"):
        # 0 or 1 swap where the two largest lie within twice the largest bound: any of [0, 1]
        ordered = np.sort(a.reshape(-1))
        close = ordered.size > 1 and ordered[-1] - ordered[-2] <= 2 * float(e.max())
        return np.ones_like(a) if close else zero
    return zero


def _activate(
    operator: str, activation: Mapping[str, Any], a: np.ndarray, e: np.ndarray, units: _Units
) -> tuple[np.ndarray, np.ndarray]:
    """f(a) on a step's {batch, hidden} values (seen as {1, 1, batch, hidden}) and its bound,
    given the bound e of a."""
    kind = str(activation.get("Type", "")).removeprefix("DML_OPERATOR_")
    fields = activation.get("Desc", activation)
    params = Params(f"{operator}'s activation {kind}", fields, np.dtype(np.float64))
    value = fused_activation(operator, activation, a[None, None])[0, 0]
    slope = LIPSCHITZ[kind](params) if kind in LIPSCHITZ else math.inf
    carried = slope * (np.full_like(a, e.max()) if kind in _ROW_WISE else e)
    with np.errstate(invalid="ignore"):
        carried = np.where(carried == carried, carried, np.inf)  # inf * 0: unbounded
    carried = carried + _jump(kind, params, a, e)
    own = ACTIVATION_ULPS * (2 * units.u * (np.abs(value) + carried) + units.tiny)
    return value, carried + own


def _dot(v: np.ndarray, w: np.ndarray) -> np.ndarray:
    return v @ w.T  # type: ignore[no-any-return]


class _Direction:
    """One direction's weights and activations."""

    def __init__(self, f: Fields, x: Inputs, d: int, units: _Units) -> None:
        name = f.spec.name
        gated = np.asarray(x["WeightTensor"]).shape[2]
        self.name, self.units = name, units
        self.w = np.asarray(x["WeightTensor"], np.float64)[0, d]
        self.r = np.asarray(x["RecurrenceTensor"], np.float64)[0, d]
        bias = x.get("BiasTensor")
        b = np.zeros(2 * gated) if bias is None else np.asarray(bias, np.float64)[0, 0, d]
        self.wb, self.rb = b[:gated], b[gated:]
        peephole = x.get("PeepholeTensor")
        hidden = self.r.shape[1]
        self.p = (
            np.zeros(3 * hidden) if peephole is None else np.asarray(peephole, np.float64)[0, 0, d]
        )
        count = _ACTIVATIONS[name]
        self.acts = list(f.raw("ActivationDescs"))[d * count : (d + 1) * count]
        self.hidden = hidden

    def pre(self, xt: np.ndarray, h: np.ndarray, eh: np.ndarray, block: slice) -> tuple[Any, ...]:
        """A gate block's pre-activation x W^T + h R^T + Wb + Rb, the sum of its terms' absolute
        values, and its bound (the dot-product model's, plus eh carried through |R|)."""
        w, r = self.w[block], self.r[block]
        value = _dot(xt, w) + _dot(h, r) + self.wb[block] + self.rb[block]
        size = _dot(np.abs(xt), np.abs(w)) + _dot(np.abs(h) + eh, np.abs(r))
        size = size + np.abs(self.wb[block]) + np.abs(self.rb[block])
        return value, size, self._model(size) + _dot(eh, np.abs(r))

    def _model(self, size: np.ndarray) -> np.ndarray:
        u = self.units
        return u.terms * (u.u * size + u.tiny)

    def gates(self, k: int) -> slice:
        return slice(k * self.hidden, (k + 1) * self.hidden)


def _rnn_step(dn: _Direction, f: Fields, xt: np.ndarray, state: list[np.ndarray]) -> Any:
    h, eh = state
    a, size, ea = dn.pre(xt, h, eh, dn.gates(0))
    h, eh = _activate("RNN", dn.acts[0], a, ea, dn.units)
    return [h, eh], size


def _lstm_step(dn: _Direction, f: Fields, xt: np.ndarray, state: list[np.ndarray]) -> Any:
    h, eh, c, ec = state
    u = dn.units.u
    clip = f.float32("ClipThreshold") if f.flag("UseClipThreshold") else None
    p_i, p_o, p_f = (dn.p[dn.gates(k)] for k in range(3))

    def peeped(k: int, p: np.ndarray, cell: np.ndarray, e_cell: np.ndarray) -> tuple[Any, ...]:
        value, size, bound = dn.pre(xt, h, eh, dn.gates(k))
        value = value + p * cell
        size = size + np.abs(p) * (np.abs(cell) + e_cell)
        return (
            value,
            size,
            bound + dn._model(np.abs(p) * (np.abs(cell) + e_cell)) + np.abs(p) * e_cell,
        )

    def act(index: int, a: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A gate's activation of its clipped input (clipping moves no two values apart)."""
        if clip is not None:
            a = np.minimum(np.maximum(a, -clip), clip)
        return _activate("LSTM", dn.acts[index], a, e, dn.units)

    i_pre, i_size, ei_pre = peeped(0, p_i, c, ec)
    f_pre, f_size, ef_pre = peeped(2, p_f, c, ec)
    c_pre, c_size, ec_pre = dn.pre(xt, h, eh, dn.gates(3))
    i, ei = act(0, i_pre, ei_pre)
    if f.flag("CoupleInputForget"):
        forget, ef = 1 - i, ei + u * np.abs(1 - i)
    else:
        forget, ef = act(0, f_pre, ef_pre)
    candidate, e_candidate = act(1, c_pre, ec_pre)
    kept, added = forget * c, i * candidate
    e_new = np.abs(forget) * ec + (np.abs(c) + ec) * ef
    e_new = e_new + np.abs(candidate) * ei + (np.abs(i) + ei) * e_candidate
    c_new = kept + added
    ec_new = e_new + 2 * u * (np.abs(kept) + np.abs(added)) + 2 * u * e_new
    o_pre, o_size, eo_pre = peeped(1, p_o, c_new, ec_new)
    o, eo = act(0, o_pre, eo_pre)
    hc, ehc = _activate("LSTM", dn.acts[2], c_new, ec_new, dn.units)  # Ct unclipped
    h_new = o * hc
    eh_new = np.abs(o) * ehc + (np.abs(hc) + ehc) * eo + u * np.abs(h_new)
    size = np.maximum.reduce([i_size, f_size, c_size, o_size])
    return [h_new, eh_new, c_new, ec_new], size


def _gru_step(dn: _Direction, f: Fields, xt: np.ndarray, state: list[np.ndarray]) -> Any:
    h, eh = state
    u = dn.units.u
    z_pre, z_size, ez_pre = dn.pre(xt, h, eh, dn.gates(0))
    r_pre, r_size, er_pre = dn.pre(xt, h, eh, dn.gates(1))
    z, ez = _activate("GRU", dn.acts[0], z_pre, ez_pre, dn.units)
    reset, er = _activate("GRU", dn.acts[0], r_pre, er_pre, dn.units)
    block = dn.gates(2)
    w_h, r_h, wb_h, rb_h = dn.w[block], dn.r[block], dn.wb[block], dn.rb[block]
    x_part = _dot(xt, w_h) + wb_h
    x_size = _dot(np.abs(xt), np.abs(w_h)) + np.abs(wb_h)
    if f.flag("LinearBeforeReset"):
        linear = _dot(h, r_h) + rb_h
        l_size = _dot(np.abs(h) + eh, np.abs(r_h)) + np.abs(rb_h)
        el = dn._model(l_size) + _dot(eh, np.abs(r_h))
        h_pre = x_part + reset * linear
        h_size = x_size + (np.abs(reset) + er) * (np.abs(linear) + el)
        eh_pre = dn._model(h_size) + np.abs(reset) * el + (np.abs(linear) + el) * er
    else:
        gated = reset * h
        eg = np.abs(reset) * eh + (np.abs(h) + eh) * er + u * np.abs(gated)
        h_pre = x_part + _dot(gated, r_h) + rb_h
        h_size = x_size + _dot(np.abs(gated) + eg, np.abs(r_h)) + np.abs(rb_h)
        eh_pre = dn._model(h_size) + _dot(eg, np.abs(r_h))
    candidate, ec = _activate("GRU", dn.acts[1], h_pre, eh_pre, dn.units)
    kept, new = z * h, (1 - z) * candidate
    e_new = np.abs(1 - z) * ec + (np.abs(candidate) + ec) * ez + np.abs(z) * eh
    e_new = e_new + (np.abs(h) + eh) * ez
    e_new = e_new + 4 * u * (np.abs(kept) + np.abs(new) + np.abs(1 - z) * np.abs(candidate))
    size = np.maximum.reduce([z_size, r_size, h_size])
    return [new + kept, e_new], size


_STEPS = {"RNN": _rnn_step, "LSTM": _lstm_step, "GRU": _gru_step}


def _lengths(x: Inputs, steps: int, batch: int) -> np.ndarray:
    given = x.get("SequenceLengthsTensor")
    if given is None:
        return np.full(batch, steps, np.int64)
    return np.minimum(np.asarray(given).reshape(-1).astype(np.int64), steps)


def _exact(f: Fields, x: Inputs) -> Exact:
    """Every output's FLOAT64 value, bound (as the module's docstring derives, divided by
    KS * u) and largest intermediate (the steps' pre-activation sizes so far, per batch)."""
    name = f.spec.name
    data = np.asarray(x["InputTensor"], np.float64)[0]  # {seq_length, batch, input}
    steps, batch = data.shape[:2]
    dirs = np.asarray(x["WeightTensor"]).shape[1]
    hidden = np.asarray(x["RecurrenceTensor"]).shape[3]
    units = _Units(f, str(f.dtype("InputTensor")).upper())
    direction = f.enum("Direction")
    lengths = _lengths(x, steps, batch)
    shape = (steps, dirs, batch, hidden)
    seq = [np.zeros(shape) for _ in range(3)]
    single = [np.zeros((1, dirs, batch, hidden)) for _ in range(3)]
    cell = [np.zeros((1, dirs, batch, hidden)) for _ in range(3)]
    rows = np.arange(batch)
    for d in range(dirs):
        dn = _Direction(f, x, d, units)
        zero = np.zeros((batch, hidden))
        h0 = x.get("HiddenInitTensor")
        state = [zero if h0 is None else np.asarray(h0, np.float64)[0, d], zero]
        if name == "LSTM":
            c0 = x.get("CellMemInitTensor")
            state += [zero if c0 is None else np.asarray(c0, np.float64)[0, d], zero]
        reach = np.zeros((batch, 1))
        backward = direction == "BACKWARD" or (direction == "BIDIRECTIONAL" and d == 1)
        for s in range(steps):
            active = s < lengths
            t = np.clip(lengths - 1 - s, 0, steps - 1) if backward else np.full(batch, s)
            new, size = _STEPS[name](dn, f, data[t, rows], state)
            state = [np.where(active[:, None], n, o) for n, o in zip(new, state, strict=True)]
            reach = np.where(
                active[:, None], np.maximum(reach, size.max(axis=1, keepdims=True)), reach
            )
            for k, part in enumerate((state[0], state[1], np.broadcast_to(reach, (batch, hidden)))):
                seq[k][t[active], d, rows[active]] = part[active]
        for k, part in enumerate((state[0], state[1], np.broadcast_to(reach, (batch, hidden)))):
            single[k][0, d] = part
        if name == "LSTM":
            for k, part in enumerate((state[2], state[3], np.broadcast_to(reach, (batch, hidden)))):
                cell[k][0, d] = part
    scale = units.terms * units.u
    results = {"OutputSequenceTensor": seq, "OutputSingleTensor": single}
    if name == "LSTM":
        results["OutputCellSingleTensor"] = cell
    return {
        field: (value, bound / scale, np.maximum(reached, bound / scale))
        for field, (value, bound, reached) in results.items()
        if f.present(field)
    }


def _rounded(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    with np.errstate(all="ignore"):
        return {
            field: value.astype(f.dtype(field)) for field, (value, _, _) in _exact(f, x).items()
        }


EXACT = {name: _exact for name in _GATES}
RECURRENT = {name: _rounded for name in _GATES}

_LENGTHS = (
    "Rows of OutputSequenceTensor past a batch element's length (R1) are 0; a length of 0 "
    "runs no step (the outputs are the initial state) and one beyond seq_length runs "
    "seq_length steps (R2)."
)
UNDEFINED_NOTES = {name: _LENGTHS for name in _GATES}
