"""The ROI family (regions of interest), written from the DirectML pages: ROI_ALIGN, ROI_ALIGN1
and ROI_POOLING, one region at a time (ROI_ALIGN1's sample positions per axis, since each
depends on its own axis alone; ROI_POOLING one bin at a time).

ROI_ALIGN1: the page's "general logic" per region, its sample coordinates in FLOAT32 one
operation at a time in the page's order (as the fields are FLOAT), each sample read by
nearest-neighbour or bilinear interpolation and reduced in FLOAT64; `EXACT` gives that FLOAT64
result and the bound the dot-product accuracy model judges it by (the spec's notes derive it:
each element's KS and the coordinates' own rounding folded in). ROI_ALIGN is ROI_ALIGN1 with
InputPixelOffset 0.5 and OutputPixelOffset -0.5.

ROI_POOLING: the page's integer formulas with Python integers (exact), the maximum of each bin
picked (exact; 0 where a bin covers no input element).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .fields import Fields, Inputs, Operator, Outputs
from .tensors import WriteLog

__all__ = ["EXACT", "ROI", "UNDEFINED_NOTES"]

Exact = Callable[[Fields, Inputs], dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]]
f32 = np.float32
# Roundings along one axis's coordinate path (the scaled corners, the region size, its
# quotient, the sample offset, its product and the two additions), each within u times the
# largest magnitude on the way.
COORDINATE_ROUNDINGS = 8
UNIT = 2.0**-24  # FLOAT32's unit roundoff: the coordinates' type
# A nearest-neighbour average whose samples sit within a rounding of a tie may pick either
# neighbour: the distance between its smallest and largest sums joins its bound, TIE_SLACK
# times over, so that a backend picking the other side at every tie stays within the error
# statistics (each such element's error at most 1 / TIE_SLACK in units of its bound).
TIE_SLACK = 8


class _Axis:
    """One axis of one region: the page's scaledRegion*1, outputSampleToInputScale* and
    inputSamplesPerOutputSample*, and every sample's position along it (the positions are
    separable: inputTensorX depends on sampleX alone), with the allowance its FLOAT32
    roundings give it."""

    def __init__(
        self,
        start: Any,
        end: Any,
        scale: float,
        size: int,
        limits: tuple[int, int],
        offsets: tuple[float, float],
    ) -> None:
        minimum, maximum = limits
        self.first = f32(start) * f32(scale)
        self.last = f32(end) * f32(scale)
        region = f32(self.last - self.first)
        ratio = float(np.ceil(f32(region / f32(size))))
        self.samples = minimum if math.isnan(ratio) else int(min(max(ratio, minimum), maximum))
        step = f32(region / f32(f32(size) * f32(self.samples)))
        # inputTensorX = (sampleX - OutputPixelOffset) * outputSampleToInputScaleX +
        # scaledRegionX1 - InputPixelOffset, in FLOAT32 one operation at a time
        offset = np.arange(size * self.samples, dtype=f32) - f32(offsets[1])
        moved = offset * step
        self.positions = ((moved + self.first) - f32(offsets[0])).astype(np.float64)
        magnitude = abs(float(self.first)) + abs(float(self.last)) + np.abs(self.positions)
        self.allowance = COORDINATE_ROUNDINGS * UNIT * (magnitude + np.abs(moved))


def _read(image: np.ndarray, rows: np.ndarray, columns: np.ndarray, outside: float) -> np.ndarray:
    """image {C, H, W} at every (row, column) pair of the two index vectors, {C, rows,
    columns} in FLOAT64; OutOfBoundsInputValue outside the input."""
    height, width = image.shape[-2:]
    inside = ((rows >= 0) & (rows < height))[:, None] & ((columns >= 0) & (columns < width))
    picked = image[:, np.clip(rows, 0, height - 1)][:, :, np.clip(columns, 0, width - 1)]
    return np.where(inside, picked.astype(np.float64), outside)


def _bilinear(
    image: np.ndarray, ay: _Axis, ax: _Axis, outside: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every bilinear sample of the region, {C, samples y, samples x}: its value, the sum of
    |weight * element| over its four elements, and its allowance for the coordinates'
    rounding (each axis's allowance times the sum of the four elements' magnitudes)."""
    top, left = np.floor(ay.positions), np.floor(ax.positions)
    fy, fx = ay.positions - top, ax.positions - left
    value = weighted = size = np.zeros(1)
    for dy, wy in ((0, 1.0 - fy), (1, fy)):
        for dx, wx in ((0, 1.0 - fx), (1, fx)):
            element = _read(image, top.astype(np.int64) + dy, left.astype(np.int64) + dx, outside)
            term = wy[:, None] * wx[None, :] * element
            value, weighted, size = value + term, weighted + np.abs(term), size + np.abs(element)
    moved = (ay.allowance[:, None] + ax.allowance[None, :]) / UNIT * size
    return value, weighted, moved


def _nearest(
    image: np.ndarray, ay: _Axis, ax: _Axis, outside: float
) -> tuple[np.ndarray, np.ndarray]:
    """Every nearest-neighbour sample of the region: the element at the nearest pixel centre
    (ties toward the lower index), {C, samples y, samples x}, and the elements it may pick,
    {4, C, samples y, samples x}: the lower and the upper choice along each axis, which
    differ where a position lies within its allowance of a tie (another order of the FLOAT32
    operations, or a fused multiply-add, may put it on the other side, a tie the page's order
    reaches by rounding included)."""

    def nearest(axis: _Axis, shift: float) -> np.ndarray:
        index: np.ndarray = np.ceil(axis.positions + shift * axis.allowance - 0.5)
        return index.astype(np.int64)

    picked = _read(image, nearest(ay, 0), nearest(ax, 0), outside)
    options = np.stack(
        [
            _read(image, nearest(ay, sy), nearest(ax, sx), outside)
            for sy in (-1.0, 1.0)
            for sx in (-1.0, 1.0)
        ]
    )
    return picked, options


def _per_output(samples: np.ndarray, ny: int, nx: int) -> np.ndarray:
    """{..., C, OH * ny, OW * nx} -> {..., C, OH, OW, ny * nx}: each output element's samples."""
    *lead, c, sy, sx = samples.shape
    split = samples.reshape(*lead, c, sy // ny, ny, sx // nx, nx)
    return np.moveaxis(split, -3, -2).reshape(*lead, c, sy // ny, sx // nx, ny * nx)


Alternatives = dict[tuple[int, ...], list[float]]


def _align(
    f: Fields, x: Inputs, offsets: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, Alternatives]:
    """ROI_ALIGN1 per output element: its value (ties toward the lower index), the value and
    bound it is judged by, and the cells a nearest-neighbour maximum may fill with more than
    one value (their values).

    LINEAR: the average's bound is (KS sum |w v| + the coordinates' allowance) / n with KS =
    4n + 4, the maximum's the largest over its samples of 8 sum |w v| + that allowance.
    NEAREST_NEIGHBOR with AVERAGE lies between the sums of each sample's smallest and largest
    option: it is judged against its value, TIE_SLACK times their distance joining the bound
    (in units of FLOAT32's u, the rule's terms being 1) beside (n + 1) times the mean
    magnitude.
    NEAREST_NEIGHBOR with MAX is exact: its value, or where a sample may pick another element,
    any option no smaller than every sample's smallest option."""
    data = np.asarray(x["InputTensor"])
    count, channels, out_h, out_w = f.sizes("OutputTensor")
    boxes = np.asarray(x["ROITensor"]).reshape(count, 4)
    batches = np.asarray(x["BatchIndicesTensor"]).reshape(count)
    linear = f.enum("InterpolationMode") == "LINEAR"
    average = f.enum("ReductionFunction") == "AVERAGE"
    outside = f.float32("OutOfBoundsInputValue")
    limits = (f.integer("MinimumSamplesPerOutput"), f.integer("MaximumSamplesPerOutput"))
    value = np.zeros((count, channels, out_h, out_w))
    judged = np.zeros_like(value)
    bound = np.zeros_like(value)
    alternatives: Alternatives = {}
    for r in range(count):
        batch = int(batches[r])
        if not 0 <= batch < data.shape[0] or not np.isfinite(boxes[r]).all():
            continue  # undefined (R1, R2)
        image, box = data[batch], boxes[r]
        ax = _Axis(box[0], box[2], f.float32("SpatialScaleX"), out_w, limits, offsets)
        ay = _Axis(box[1], box[3], f.float32("SpatialScaleY"), out_h, limits, offsets)
        n = ax.samples * ay.samples

        def grouped(samples: np.ndarray, ny: int = ay.samples, nx: int = ax.samples) -> Any:
            return _per_output(samples, ny, nx)

        if linear:
            got, weighted, moved = (grouped(a) for a in _bilinear(image, ay, ax, outside))
            if average:
                value[r] = judged[r] = got.sum(-1) / n
                bound[r] = ((4 * n + 4) * weighted.sum(-1) + moved.sum(-1)) / n
            else:
                value[r] = judged[r] = got.max(-1)
                bound[r] = (8 * weighted + moved).max(-1)
            continue
        picked, options = _nearest(image, ay, ax, outside)
        picked, options = grouped(picked), grouped(options)
        low, high = options.min(0), options.max(0)  # per sample
        if average:
            spread = high.sum(-1) - low.sum(-1)
            value[r] = judged[r] = picked.sum(-1) / n
            bound[r] = ((n + 1) * np.abs(options).max(0).sum(-1) + TIE_SLACK * spread / UNIT) / n
            continue
        value[r] = judged[r] = picked.max(-1)
        floor = low.max(-1)  # no choice of options gives a maximum below it
        for c, oy, ox in zip(*np.nonzero((low != high).any(-1)), strict=True):
            cell = ((r * channels + c) * out_h + oy) * out_w + ox
            values = options[:, c, oy, ox].reshape(-1)
            choices = sorted({float(v) for v in values if v >= floor[c, oy, ox]})
            if len(choices) > 1:
                alternatives[(int(cell),)] = choices
    return value, judged, bound, alternatives


# ROI_ALIGN is ROI_ALIGN1 with InputPixelOffset 0.5 and OutputPixelOffset -0.5 ("the same
# behavior as DML_ROI_ALIGN_OPERATOR_DESC", ROI_ALIGN1's page).
_OFFSETS: dict[str, Callable[[Fields], tuple[float, float]]] = {
    "ROI_ALIGN": lambda f: (0.5, -0.5),
    "ROI_ALIGN1": lambda f: (f.float32("InputPixelOffset"), f.float32("OutputPixelOffset")),
}


def _exact(name: str) -> Exact:
    def exact(f: Fields, x: Inputs) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        _, judged, bound, _ = _align(f, x, _OFFSETS[name](f))
        return {"OutputTensor": (judged, bound, bound)}

    return exact


# ROI_ALIGN_GRAD: where the gradient of an output element may go to more than one place (a
# MAX whose winner a rounding, a tie or a value read outside the input decides, a nearest
# neighbour within a rounding of a tie), every place it may reach gets AMBIGUOUS_SLACK times
# its share in its bound, so a backend sending it to any of them, or splitting it, passes.
AMBIGUOUS_SLACK = 2
# The roundings of one gradient term besides its sum: the share g / n, the weights 1 - f and
# their product, the product with the share (LINEAR; NEAREST_NEIGHBOR has the share alone).
GRAD_TERM_ROUNDINGS = 5


class _Weights:
    """One axis of one region as ROI_ALIGN_GRAD spreads it back, {samples, input size} per
    matrix: the weight each sample gives each element (the bilinear hat, or 1 at the nearest
    element, elements outside the input left out), `upper` and `moved` the largest weight and
    its change where the FLOAT32 position may move by its allowance (LINEAR), `options` the
    elements a nearest-neighbour sample may pick (1 each), `either` the samples whose nearest
    element a rounding decides and `outside` the samples that may read outside the input."""

    def __init__(self, axis: _Axis, size: int, linear: bool) -> None:
        self.linear = linear
        p, d = axis.positions[:, None], axis.allowance[:, None]
        index = np.arange(size)[None, :]
        if linear:
            self.weights = np.maximum(0.0, 1.0 - np.abs(p - index))
            reach = np.abs(p - index) < 1.0 + d
            self.upper = np.where(reach, np.minimum(1.0, self.weights + d), 0.0)
            self.moved = np.where(reach, d, 0.0)
            self.options = self.upper
            self.either = np.zeros(len(axis.positions), bool)
            # a weight on an element outside, once the position moves by its allowance
            self.outside = (p[:, 0] < d[:, 0]) | (p[:, 0] > size - 1 - d[:, 0])
        else:
            nearest = np.ceil(axis.positions - 0.5)
            low = np.ceil(axis.positions - axis.allowance - 0.5)
            high = np.ceil(axis.positions + axis.allowance - 0.5)
            self.weights = (index == nearest[:, None]).astype(np.float64)
            self.options = ((index == low[:, None]) | (index == high[:, None])).astype(np.float64)
            self.upper, self.moved = self.weights, np.zeros_like(self.weights)
            self.either = low != high
            self.outside = (low < 0) | (high > size - 1)


def _spread(shares: np.ndarray, wy: np.ndarray, wx: np.ndarray) -> np.ndarray:
    """Each sample's share {C, OH, OW, ny, nx} times its weights along each axis (wy {OH * ny,
    H}, wx {OW * nx, W}), summed: {C, H, W}."""
    _, out_h, out_w, ny, nx = shares.shape
    rows = wy.reshape(out_h, ny, -1)
    columns = wx.reshape(out_w, nx, -1)
    spread: np.ndarray = np.einsum("cabyx,ayh,bxw->chw", shares, rows, columns, optimize=True)
    return spread


def _samples(mask: np.ndarray, ny: int, nx: int) -> np.ndarray:
    """A per-sample mask {Sy, Sx} as {1, OH, OW, ny, nx}."""
    sy, sx = mask.shape
    return np.moveaxis(mask.reshape(sy // ny, ny, sx // nx, nx), 1, 2)[None]


def _max_shares(
    image: np.ndarray, ay: _Axis, ax: _Axis, ways: tuple[_Weights, _Weights], unit: float
) -> tuple[np.ndarray, np.ndarray]:
    """MAX: the first sample holding each output element's maximum (elements outside the input
    read as 0), one-hot {C, OH, OW, ny, nx}, and the samples that may hold it instead: every
    sample reading outside the input (whose value the desc does not give) and every sample
    within TIE_SLACK times its rounding of the largest of the others; none where the winner
    is alone and its nearest element no rounding decides."""
    wy, wx = ways
    ny, nx = ay.samples, ax.samples
    with np.errstate(all="ignore"):
        if wy.linear:
            sample, weighted, allowance = (
                _per_output(a, ny, nx) for a in _bilinear(image, ay, ax, 0.0)
            )
            error = TIE_SLACK * (8 * weighted + allowance) * unit
            low, high = sample - error, sample + error
        else:
            picked, options = _nearest(image, ay, ax, 0.0)
            sample = _per_output(picked, ny, nx)
            low, high = (_per_output(o, ny, nx) for o in (options.min(0), options.max(0)))
    shape = (*sample.shape[:-1], ny, nx)
    flat = (1, *shape[1:3], ny * nx)
    outside = _samples(wy.outside[:, None] | wx.outside[None, :], ny, nx).reshape(flat)
    either = _samples(wy.either[:, None] | wx.either[None, :], ny, nx).reshape(flat)
    floor = np.where(outside, -np.inf, low).max(-1, keepdims=True)
    candidates = outside | (high >= floor)
    winner = np.eye(ny * nx, dtype=bool)[sample.argmax(-1)]  # the first maximum
    unsure = (candidates.sum(-1) > 1) | (winner & either).any(-1)
    return winner.reshape(shape), (candidates & unsure[..., None]).reshape(shape)


def _align_grad(
    f: Fields, x: Inputs, offsets: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ROI_ALIGN_GRAD's OutputGradientTensor: its value (the gradient of ROI_ALIGN1 with
    respect to its input), the bound it is judged by and the largest magnitude summed.

    Per region, each sample's share of its output element's gradient g (AVERAGE: g / n to
    every sample; MAX: g to the first sample holding the maximum) spread back by one dense
    weight matrix per axis (Wy^T S Wx per channel). The bound: (KS + the term's roundings)
    times the sum of |terms| (KS the terms each element sums, counted), the weights' change
    where the FLOAT32 positions move (times |share|), and AMBIGUOUS_SLACK times every share
    that may go elsewhere (a nearest element a rounding decides; a MAX another sample may
    win) at every element it may reach."""
    gradient = np.asarray(x["InputGradientTensor"], dtype=np.float64)
    batches, channels, height, width = f.sizes("OutputGradientTensor")
    count = gradient.shape[0]
    boxes = np.asarray(x["ROITensor"]).reshape(count, 4)
    indices = np.asarray(x["BatchIndicesTensor"]).reshape(count)
    linear = f.enum("InterpolationMode") == "LINEAR"
    average = f.enum("ReductionFunction") == "AVERAGE"
    limits = (f.integer("MinimumSamplesPerOutput"), f.integer("MaximumSamplesPerOutput"))
    dtype = f.dtype("InputGradientTensor")
    unit = UNIT if dtype == np.float32 else float(np.finfo(dtype).eps) / 2
    value = np.zeros((batches, channels, height, width))
    absolute, terms, moved, ambiguous = (np.zeros_like(value) for _ in range(4))
    for r in range(count):
        batch = int(indices[r])
        if not 0 <= batch < batches or not np.isfinite(boxes[r]).all():
            continue  # undefined (R1, R2)
        box = boxes[r]
        _, _, out_h, out_w = gradient.shape
        ax = _Axis(box[0], box[2], f.float32("SpatialScaleX"), out_w, limits, offsets)
        ay = _Axis(box[1], box[3], f.float32("SpatialScaleY"), out_h, limits, offsets)
        ny, nx = ay.samples, ax.samples
        wy, wx = _Weights(ay, height, linear), _Weights(ax, width, linear)
        g = gradient[r][..., None, None]
        either = _samples(wy.either[:, None] | wx.either[None, :], ny, nx)
        if average:
            used = np.ones((channels, out_h, out_w, ny, nx), bool)
            shares = np.broadcast_to(g / (ny * nx), used.shape)
            unsure = used & either
        else:
            image = np.asarray(x["InputTensor"])[batch]
            used, unsure = _max_shares(image, ay, ax, (wy, wx), unit)
            shares = np.where(used, g, 0.0)
        size = np.abs(shares)
        value[batch] += _spread(shares, wy.weights, wx.weights)
        absolute[batch] += _spread(size, wy.weights, wx.weights)
        terms[batch] += _spread(used * 1.0, wy.upper > 0, wx.upper > 0)
        moved[batch] += _spread(size, wy.moved, wx.upper) + _spread(size, wy.upper, wx.moved)
        reach = np.abs(np.broadcast_to(g / (ny * nx) if average else g, unsure.shape)) * unsure
        ambiguous[batch] += _spread(reach, wy.options, wx.options)
    rounding = GRAD_TERM_ROUNDINGS if linear else 1
    bound = (terms + rounding) * absolute + (moved + AMBIGUOUS_SLACK * ambiguous) / UNIT
    return value, bound, absolute


def _rounded(value: Any, scale: float) -> int:
    """round(value * SpatialScale): the FLOAT32 product, halves away from zero (C's round). A
    product beyond +-2^40 (infinity, where FLOAT32 overflows) is taken as +-2^40: far outside
    any input, as the kernel clips it."""
    with np.errstate(over="ignore"):
        product = min(max(float(f32(f32(value) * f32(scale))), -(2.0**40)), 2.0**40)
    return int(math.copysign(math.floor(abs(product) + 0.5), product))


def _bin(index: int, first: int, last: int, pooled: int, size: int) -> range:
    """The page's Start and End (integer divisions of non-negative values), clamped to the
    input: the positions [Start, End) of bin `index`."""
    region = last - first + 1
    start = index * region // pooled + first
    end = ((index + 1) * region + pooled - 1) // pooled + first
    return range(min(max(start, 0), size), min(max(end, 0), size))


def _roi_pooling(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    data = np.asarray(x["InputTensor"])
    count, channels, pooled_h, pooled_w = f.sizes("OutputTensor")
    boxes = np.asarray(x["ROITensor"]).reshape(count, 5)
    scale = f.float32("SpatialScale")
    height, width = data.shape[-2:]
    output = np.zeros((count, channels, pooled_h, pooled_w), dtype=data.dtype)
    for r in range(count):
        batch, *corners = boxes[r].tolist()
        if not (math.isfinite(batch) and all(math.isfinite(c) for c in corners)):
            continue  # undefined (R1, R2)
        if batch != int(batch) or not 0 <= int(batch) < data.shape[0]:
            continue  # undefined (R1)
        x1, y1, x2, y2 = (_rounded(c, scale) for c in corners)
        for py, px in np.ndindex(pooled_h, pooled_w):
            rows = _bin(py, y1, y2, pooled_h, height)
            columns = _bin(px, x1, x2, pooled_w, width)
            if len(rows) and len(columns):
                window = data[int(batch), :, rows.start : rows.stop, columns.start : columns.stop]
                output[r, :, py, px] = window.max(axis=(1, 2))
    return {"OutputTensor": output}


def _grad_exact(f: Fields, x: Inputs) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    with np.errstate(all="ignore"):
        return {"OutputGradientTensor": _align_grad(f, x, _OFFSETS["ROI_ALIGN1"](f))}


def _roi_align_grad(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
    """ROI_ALIGN_GRAD's present outputs: the input's gradient rounded once, and zeros for the
    ROIs' gradient, which is undefined (R5)."""
    outputs = {}
    if f.present("OutputGradientTensor"):
        value, _, _ = _grad_exact(f, x)["OutputGradientTensor"]
        with np.errstate(all="ignore"):
            outputs["OutputGradientTensor"] = value.astype(f.dtype("OutputGradientTensor"))
    if f.present("OutputROIGradientTensor"):
        sizes = f.sizes("OutputROIGradientTensor")
        outputs["OutputROIGradientTensor"] = np.zeros(sizes, f.dtype("OutputROIGradientTensor"))
    return outputs


EXACT: dict[str, Exact] = {
    **{name: _exact(name) for name in _OFFSETS},
    "ROI_ALIGN_GRAD": _grad_exact,
}


def _aligned(name: str) -> Operator:
    """The operator as the reference runs it: the FLOAT64 value rounded once; a
    nearest-neighbour maximum's other possible values recorded as alternatives."""

    def run(f: Fields, x: Inputs, log: dict[str, WriteLog]) -> Outputs:
        with np.errstate(all="ignore"):
            value, _, _, alternatives = _align(f, x, _OFFSETS[name](f))
        dtype = f.dtype("OutputTensor")
        writes = log.setdefault("OutputTensor", [])
        for (cell,), choices in alternatives.items():
            writes.append((np.full(len(choices), cell), np.asarray(choices, dtype=dtype)))
        with np.errstate(all="ignore"):
            return {"OutputTensor": value.astype(dtype)}

    return run


ROI: dict[str, Operator] = {
    **{name: _aligned(name) for name in _OFFSETS},
    "ROI_ALIGN_GRAD": _roi_align_grad,
    "ROI_POOLING": _roi_pooling,
}

UNDEFINED_NOTES: dict[str, str] = {
    "ROI_ALIGN": "A batch index outside [0, BatchCount) (R1): the ROI's rows are left 0.",
    "ROI_ALIGN1": "A batch index outside [0, BatchCount) (R1): the ROI's rows are left 0.",
    "ROI_POOLING": (
        "A BatchID that is not a whole number in [0, BatchCount) (R1) or corners that are not "
        "finite (R2): the ROI's rows are left 0. An empty bin (a region outside the input "
        "after clamping) is 0, as ONNX MaxRoiPool and Caffe's ROIPooling write it."
    ),
}
