"""The recurrent family as JAX: RNN, LSTM and GRU, one primitive (`recurrent`), each direction
one `lax.scan` over the time steps.

The pages' layouts: InputTensor {1, seq_length, batch_size, input_size}; per direction d (0 the
forward one, 1 the backward one of BIDIRECTIONAL; BACKWARD alone holds its weights at 0) the
WeightTensor rows {G * hidden_size, input_size} and RecurrenceTensor rows {G * hidden_size,
hidden_size} hold the gates' blocks in the pages' order (RNN: i; LSTM: i, o, f, c; GRU: z, r,
h), BiasTensor {1, 1, d, 2 * G * hidden_size} the input weights' biases then the recurrence
weights' (Wb[gates], Rb[gates]), PeepholeTensor {1, 1, d, 3 * hidden_size} P[i, o, f]. The
activations are the operator's ActivationDescs, per direction in order (RNN f; LSTM f, g, h;
GRU f, g), each run by the element-wise family's activation table on one step's {1, 1,
batch_size, hidden_size} state.

Per step (x the step's input, h and c the state, (.) the element-wise product):
  RNN   h = f(x W^T + h R^T + Wb + Rb)
  LSTM  i = f(x Wi^T + h Ri^T + Pi (.) c + Wbi + Rbi)
        f' = f(x Wf^T + h Rf^T + Pf (.) c + Wbf + Rbf), or 1 - i with CoupleInputForget
        c~ = g(x Wc^T + h Rc^T + Wbc + Rbc);  c = f' (.) c + i (.) c~
        o = f(x Wo^T + h Ro^T + Po (.) c + Wbo + Rbo);  h = o (.) h(c)
        with UseClipThreshold, the four gates' inputs clipped to [-ClipThreshold, ClipThreshold]
  GRU   z = f(x Wz^T + h Rz^T + Wbz + Rbz);  r = f(x Wr^T + h Rr^T + Wbr + Rbr)
        h~ = g(x Wh^T + (r (.) h) Rh^T + Rbh + Wbh), or with LinearBeforeReset
        h~ = g(x Wh^T + r (.) (h Rh^T + Rbh) + Wbh);  h = (1 - z) (.) h~ + z (.) h

The forward direction runs t = 0 .. length - 1, the backward one t = length - 1 .. 0, length a
batch element's SequenceLengthsTensor entry (seq_length without one); a step past it leaves the
state as it was and writes 0 into OutputSequenceTensor (the specs leave those rows undefined).
FLOAT16 is computed in FLOAT32 (the accumulation type) and rounded once when stored; products
at the highest precision.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from .element_wise import fused_activation
from .indexing import member

__all__ = ["FUNCTIONS", "recurrent"]

Array = jax.Array
Activation = tuple[tuple[str, Any], ...]
# A step: (the input's projection x W^T + Wb for this step, the state, direction's weights)
# -> (new state, the step's hidden output).
Step = Callable[[Array, tuple[Array, ...]], tuple[tuple[Array, ...], Array]]

_GATES = {"RNN": 1, "LSTM": 4, "GRU": 3}
_ACTIVATIONS = {"RNN": 1, "LSTM": 3, "GRU": 2}


def _compute_type(dtype: Any) -> Any:
    return jnp.float32 if dtype == jnp.float16 else dtype


def _apply(activation: Activation, x: Array) -> Array:
    """One activation of the element-wise family on a step's {batch, hidden} values, seen as
    {1, 1, batch, hidden} (the axes a SOFTMAX1's Axes count in)."""
    return fused_activation(x[None, None], activation)[0, 0]


def _matmul(a: Array, b: Array) -> Array:
    """a x b^T at the highest precision."""
    return lax.dot_general(a, b, (((a.ndim - 1,), (1,)), ((), ())), precision=lax.Precision.HIGHEST)


def _rnn_step(acts: tuple[Activation, ...], r: Array, rb: Array, **_: Any) -> Step:
    (f,) = acts

    def step(projected: Array, state: tuple[Array, ...]) -> tuple[tuple[Array, ...], Array]:
        (h,) = state
        h = _apply(f, projected + _matmul(h, r) + rb)
        return (h,), h

    return step


def _lstm_step(
    acts: tuple[Activation, ...],
    r: Array,
    rb: Array,
    peephole: Array,
    clip: float | None,
    couple: bool,
    **_: Any,
) -> Step:
    f, g, h_act = acts
    hidden = r.shape[1]
    p_i, p_o, p_f = (peephole[k * hidden : (k + 1) * hidden] for k in range(3))

    def clipped(x: Array) -> Array:
        return x if clip is None else jnp.clip(x, -clip, clip)

    def step(projected: Array, state: tuple[Array, ...]) -> tuple[tuple[Array, ...], Array]:
        h, c = state
        pre = projected + _matmul(h, r) + rb
        i_pre, o_pre, f_pre, c_pre = (pre[:, k * hidden : (k + 1) * hidden] for k in range(4))
        i = _apply(f, clipped(i_pre + p_i * c))
        forget = 1 - i if couple else _apply(f, clipped(f_pre + p_f * c))
        c = forget * c + i * _apply(g, clipped(c_pre))
        o = _apply(f, clipped(o_pre + p_o * c))
        h = o * _apply(h_act, c)
        return (h, c), h

    return step


def _gru_step(
    acts: tuple[Activation, ...], r: Array, rb: Array, linear_before_reset: bool, **_: Any
) -> Step:
    f, g = acts
    hidden = r.shape[1]
    r_zr, r_h = r[: 2 * hidden], r[2 * hidden :]
    rb_zr, rb_h = rb[: 2 * hidden], rb[2 * hidden :]

    def step(projected: Array, state: tuple[Array, ...]) -> tuple[tuple[Array, ...], Array]:
        (h,) = state
        gates = projected[:, : 2 * hidden] + _matmul(h, r_zr) + rb_zr
        z = _apply(f, gates[:, :hidden])
        reset = _apply(f, gates[:, hidden:])
        x_h = projected[:, 2 * hidden :]
        if linear_before_reset:
            candidate = _apply(g, x_h + reset * (_matmul(h, r_h) + rb_h))
        else:
            candidate = _apply(g, x_h + _matmul(reset * h, r_h) + rb_h)
        h = (1 - z) * candidate + z * h
        return (h,), h

    return step


_STEPS: dict[str, Callable[..., Step]] = {"RNN": _rnn_step, "LSTM": _lstm_step, "GRU": _gru_step}


def _direction(
    step: Step, projected: Array, state: tuple[Array, ...], lengths: Array, backward: bool
) -> tuple[tuple[Array, ...], Array]:
    """One direction's scan over the steps: (final state, {seq_length, batch, hidden} outputs
    at their steps t, 0 past each batch element's length)."""
    steps, batch = projected.shape[:2]
    s = jnp.arange(steps)[:, None]
    # the step each scan iteration s reads, per batch element: s, or length - 1 - s backward
    order = (
        jnp.clip(lengths[None, :] - 1 - s, 0, steps - 1) if backward else jnp.tile(s, (1, batch))
    )
    active = s < lengths[None, :]
    gathered = jnp.take_along_axis(projected, order[:, :, None], axis=0)

    def body(
        carry: tuple[Array, ...], item: tuple[Array, Array]
    ) -> tuple[tuple[Array, ...], Array]:
        x, on = item
        new, out = step(x, carry)
        kept = tuple(jnp.where(on[:, None], n, c) for n, c in zip(new, carry, strict=True))
        return kept, jnp.where(on[:, None], out, jnp.zeros_like(out))

    final, outputs = lax.scan(body, state, (gathered, active))
    if backward:  # iteration s wrote step length - 1 - s: the same map takes it back
        outputs = jnp.take_along_axis(outputs, order[:, :, None], axis=0)
        outputs = jnp.where(active[:, :, None], outputs, jnp.zeros_like(outputs))
    return final, outputs


def _recurrent(
    name: str,
    x: Array,
    w: Array,
    r: Array,
    bias: Array | None,
    hidden_init: Array | None,
    sequence_lengths: Array | None,
    cell_init: Array | None = None,
    peephole: Array | None = None,
    *,
    direction: str,
    activations: tuple[Activation, ...],
    clip_threshold: float = 0.0,
    use_clip_threshold: bool = False,
    couple_input_forget: bool = False,
    linear_before_reset: bool = False,
) -> tuple[Array, ...]:
    storage = x.dtype
    wide = _compute_type(storage)
    x, w, r = (a.astype(wide) for a in (x, w, r))
    _, steps, batch, _ = x.shape
    dirs, gated, hidden = w.shape[1], w.shape[2], r.shape[3]
    kind = member(direction, "DML_RECURRENT_NETWORK_DIRECTION_")
    lengths = (
        jnp.full((batch,), steps, jnp.int64)
        if sequence_lengths is None
        else jnp.minimum(sequence_lengths.reshape(-1).astype(jnp.int64), steps)
    )
    count = _ACTIVATIONS[name]
    sequences, singles, cells = [], [], []
    for d in range(dirs):
        rb = jnp.zeros((2 * gated,), wide) if bias is None else bias[0, 0, d].astype(wide)
        projected = _matmul(x[0], w[0, d]) + rb[:gated]  # every step's x W^T + Wb at once
        h = jnp.zeros((batch, hidden), wide) if hidden_init is None else hidden_init[0, d]
        state: tuple[Array, ...] = (h.astype(wide),)
        if name == "LSTM":
            c = jnp.zeros((batch, hidden), wide) if cell_init is None else cell_init[0, d]
            state = (*state, c.astype(wide))
        step = _STEPS[name](
            activations[d * count : (d + 1) * count],
            r=r[0, d],
            rb=rb[gated:],
            peephole=(
                jnp.zeros((3 * hidden,), wide)
                if peephole is None
                else peephole[0, 0, d].astype(wide)
            ),
            clip=float(clip_threshold) if use_clip_threshold else None,
            couple=bool(couple_input_forget),
            linear_before_reset=bool(linear_before_reset),
        )
        backward = kind == "BACKWARD" or (kind == "BIDIRECTIONAL" and d == 1)
        final, outputs = _direction(step, projected, state, lengths, backward)
        sequences.append(outputs)
        singles.append(final[0])
        if name == "LSTM":
            cells.append(final[1])
    results = [jnp.stack(sequences, axis=1), jnp.stack(singles)[None]]
    if name == "LSTM":
        results.append(jnp.stack(cells)[None])
    return tuple(result.astype(storage) for result in results)


FUNCTIONS: dict[str, Callable[..., tuple[Array, ...]]] = {
    name: (lambda *inputs, _name=name, **parameters: _recurrent(_name, *inputs, **parameters))
    for name in _GATES
}


def recurrent(*inputs: Array | None, function: str, **parameters: Any) -> Any:
    """Run one operator of the family: its inputs in the kernel section's order (None for an
    optional one left out), static parameters by name; (OutputSequenceTensor,
    OutputSingleTensor[, OutputCellSingleTensor])."""
    name = member(function, "DML_OPERATOR_")
    if name not in FUNCTIONS:
        raise ValueError(f"no recurrent function {function!r} (known: {sorted(FUNCTIONS)})")
    return FUNCTIONS[name](*inputs, **parameters)
