"""The registry of named functions a constraint expression may call: `FUNCTIONS`.

Each `Function` pairs a signature and doc with a static type rule (`type_rules`, used when
specs are loaded) and an implementation (used when descs or data are checked), which lives in
the module of its concern: `lists` (integer lists, tensor arrays), `layout` (sizes and
strides), `scalars` (data-type values), `indices`, `masks` and `cells` (masks over tensor data
for `requires` constraints). Functions that need DirectML facts, such as element sizes, read
them from the `Facts` the evaluator is given, which the loader builds from the common spec: no
data-type table is typed here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import cells, indices, layout, lists, masks, scalars
from .errors import Absent
from .facts import Facts
from .type_rules import (
    DATA_TYPE,
    DIRECTION,
    LEVEL,
    REDUCE_FUNCTION,
    TypeRule,
    all_alike,
    any_one,
    array_and_bound,
    first_of_alike,
    fixed,
    flags_and_member,
    list_or_numbers,
    one_countable,
    pad_left_args,
    tensors_and_tensor,
    tensors_tensor_and_axis,
)
from .types import ARRAY, BOOL, INT, LIST, MASK, NUMBER, TENSORS

__all__ = ["FUNCTIONS", "Function"]


@dataclass(frozen=True)
class Function:
    """One function of the language: its call form and doc, type rule and implementation."""

    name: str
    signature: str
    doc: str
    type_rule: TypeRule
    impl: Callable[..., Any]  # impl(facts, *args)
    data_only: bool = False  # only meaningful on tensor data (requires constraints)


def _present(facts: Facts, read: Callable[[], Any]) -> bool:
    """`read` is a thunk: reading an absent optional value raises `Absent`."""
    try:
        read()
    except Absent:
        return False
    return True


def _first_present(facts: Facts, *reads: Callable[[], Any]) -> Any:
    """The first thunk's value that reads no absent optional value; `Absent` when none does."""
    for read in reads:
        try:
            return read()
        except Absent:
            continue
    raise Absent("first_present")


_FUNCTION_LIST = [
    Function(
        "len",
        "len(xs: list | tensors | operators) -> int",
        "Number of items (of a list, a tensor array or an operator-desc array).",
        one_countable,
        lambda facts, xs: len(xs),
    ),
    Function(
        "present",
        "present(field) -> bool",
        "Whether the desc gives an optional field (or a definition that reads only given ones).",
        any_one,
        _present,
    ),
    Function(
        "first_present",
        "first_present(a, b, ...) -> same type",
        "The first argument that reads no absent optional value (an operator's alternative "
        "forms: MULTIHEAD_ATTENTION's head size from QueryTensor or a stacked tensor); absent "
        "when none is given.",
        first_of_alike,
        _first_present,
    ),
    Function(
        "level_at_least",
        "level_at_least(level: enum DML_FEATURE_LEVEL, since: enum DML_FEATURE_LEVEL) -> bool",
        "Whether `level` is `since` or a later feature level (`FeatureLevel` is the level a "
        "desc is validated at).",
        fixed(LEVEL, LEVEL, returns=BOOL),
        lambda facts, level, since: facts.level_rank(level) >= facts.level_rank(since),
    ),
    Function(
        "all_less",
        "all_less(xs: list, bound: number) -> bool",
        "Every item is less than `bound` (true for an empty list).",
        fixed(LIST, NUMBER, returns=BOOL),
        lambda facts, xs, bound: all(x < bound for x in xs),
    ),
    Function(
        "all_greater",
        "all_greater(xs: list, bound: number) -> bool",
        "Every item is greater than `bound` (true for an empty list).",
        fixed(LIST, NUMBER, returns=BOOL),
        lambda facts, xs, bound: all(x > bound for x in xs),
    ),
    Function(
        "all_at_least",
        "all_at_least(xs: list, bound: number) -> bool",
        "Every item is at least `bound` (true for an empty list).",
        fixed(LIST, NUMBER, returns=BOOL),
        lambda facts, xs, bound: all(x >= bound for x in xs),
    ),
    Function(
        "distinct",
        "distinct(xs: list) -> bool",
        "No item appears twice.",
        fixed(LIST, returns=BOOL),
        lambda facts, xs: len(set(xs)) == len(xs),
    ),
    Function(
        "effective_rank",
        "effective_rank(sizes: list) -> int",
        "The number of dimensions after the leading 1s (at least 1): a {1,1,3,4} tensor has "
        "effective rank 2.",
        fixed(LIST, returns=INT),
        lambda facts, sizes: max(
            len(sizes) - next((i for i, s in enumerate(sizes) if s != 1), len(sizes)), 1
        ),
    ),
    Function(
        "same_data_type",
        "same_data_type(ts: tensors, t: tensor) -> bool",
        "Every tensor of the array has t's DataType.",
        tensors_and_tensor,
        lambda facts, ts, t: all(
            lists.member(x, "DataType") == lists.member(t, "DataType") for x in ts
        ),
    ),
    Function(
        "same_dimension_count",
        "same_dimension_count(ts: tensors, t: tensor) -> bool",
        "Every tensor of the array has t's DimensionCount.",
        tensors_and_tensor,
        lambda facts, ts, t: all(
            lists.member(x, "DimensionCount") == lists.member(t, "DimensionCount") for x in ts
        ),
    ),
    Function(
        "same_sizes_except",
        "same_sizes_except(ts: tensors, t: tensor, axis: int) -> bool",
        "Every tensor of the array has t's Sizes in every dimension but `axis`.",
        tensors_tensor_and_axis,
        lambda facts, ts, t, axis: all(
            lists.sizes_except(list(lists.member(x, "Sizes")), axis)
            == lists.sizes_except(list(lists.member(t, "Sizes")), axis)
            for x in ts
        ),
    ),
    Function(
        "sum_along",
        "sum_along(ts: tensors, axis: int) -> int",
        "The sum of the tensors' sizes along `axis` (JOIN's output, SPLIT's input).",
        fixed(TENSORS, INT, returns=INT),
        lambda facts, ts, axis: sum(list(lists.member(x, "Sizes"))[axis] for x in ts),
    ),
    Function(
        "sizes_along",
        "sizes_along(ts: tensors, axis: int) -> list",
        "Each tensor's size along `axis`, in array order (where SPLIT cuts its input).",
        fixed(TENSORS, INT, returns=LIST),
        lambda facts, ts, axis: [list(lists.member(x, "Sizes"))[axis] for x in ts],
    ),
    Function(
        "item_sizes",
        "item_sizes(ts: tensors, k: int) -> list",
        "The Sizes of item k of a tensor array (QUANTIZE's scale or zero point); absent when "
        "the array holds no item k, so a rule reading it does not apply.",
        fixed(TENSORS, INT, returns=LIST),
        lambda facts, ts, k: list(lists.item_member(ts, k, "Sizes")),
    ),
    Function(
        "item_data_type",
        "item_data_type(ts: tensors, k: int) -> enum DML_TENSOR_DATA_TYPE",
        "The DataType of item k of a tensor array; absent when the array holds no item k.",
        fixed(TENSORS, INT, returns=DATA_TYPE),
        lambda facts, ts, k: lists.item_member(ts, k, "DataType"),
    ),
    Function(
        "item_values",
        "item_values(ts: tensors, k: int) -> array",
        "The data of item k of a tensor array (QUANTIZE's scales); absent when the array holds "
        "no item k.",
        fixed(TENSORS, INT, returns=ARRAY),
        lambda facts, ts, k: lists.item_member(ts, k, "Values"),
        data_only=True,
    ),
    Function(
        "each_divides",
        "each_divides(xs: list, ys: list) -> bool",
        "xs[i] is positive and divides ys[i] for every i, for two lists of one length (a "
        "blocked quantization tensor's sizes: one value per block of ys[i] // xs[i]).",
        fixed(LIST, LIST, returns=BOOL),
        lambda facts, xs, ys: all(x > 0 and y % x == 0 for x, y in lists.paired(xs, ys)),
    ),
    Function(
        "broadcastable",
        "broadcastable(sizes: list, target: list) -> bool",
        "Same length, and every size is 1 or equals the target's size in that dimension.",
        fixed(LIST, LIST, returns=BOOL),
        lists.broadcastable,
    ),
    Function(
        "prod",
        "prod(xs: list) -> int",
        "Product of the items (1 for an empty list).",
        fixed(LIST, returns=INT),
        lists.prod,
    ),
    Function(
        "add_each",
        "add_each(xs: list, ys: list) -> list",
        "Item-wise sums xs[i] + ys[i] of two lists of one length (PADDING's output sizes).",
        fixed(LIST, LIST, returns=LIST),
        lambda facts, xs, ys: [x + y for x, y in lists.paired(xs, ys)],
    ),
    Function(
        "mul_each",
        "mul_each(xs: list, ys: list) -> list",
        "Item-wise products xs[i] * ys[i] of two lists of one length (TILE's output sizes).",
        fixed(LIST, LIST, returns=LIST),
        lambda facts, xs, ys: [x * y for x, y in lists.paired(xs, ys)],
    ),
    Function(
        "set_items",
        "set_items(xs: list, at: list, value: int) -> list",
        "xs with the items at the positions in `at` set to `value` (REDUCE's output sizes: "
        "the input's with 1 at the reduced axes).",
        fixed(LIST, LIST, INT, returns=LIST),
        lists.set_items,
    ),
    Function(
        "each_at_most",
        "each_at_most(xs: list, ys: list) -> bool",
        "xs[i] <= ys[i] for every i, for two lists of one length.",
        fixed(LIST, LIST, returns=BOOL),
        lambda facts, xs, ys: all(x <= y for x, y in lists.paired(xs, ys)),
    ),
    Function(
        "each_less",
        "each_less(xs: list, ys: list) -> bool",
        "xs[i] < ys[i] for every i, for two lists of one length.",
        fixed(LIST, LIST, returns=BOOL),
        lambda facts, xs, ys: all(x < y for x, y in lists.paired(xs, ys)),
    ),
    Function(
        "strided_count",
        "strided_count(sizes: list, strides: list) -> list",
        "Per item 1 + (sizes[i] - 1) // abs(strides[i]): how many elements a window of that "
        "size visits at that (non-zero) stride, from either end.",
        fixed(LIST, LIST, returns=LIST),
        lists.strided_count,
    ),
    Function(
        "window_output_sizes",
        "window_output_sizes(sizes: list, windows: list, strides: list, dilations: list, "
        "start: list, end: list) -> list",
        "Per spatial dimension (sizes[i] + start[i] + end[i] - ((windows[i] - 1) * "
        "dilations[i] + 1)) // strides[i] + 1: how many windows, dilated, fit in the padded "
        "input at that (positive) stride (a forward convolution's or a pooling's output sizes; "
        "DirectMLX.h computes them so).",
        fixed(LIST, LIST, LIST, LIST, LIST, LIST, returns=LIST),
        lists.window_output_sizes,
    ),
    Function(
        "transposed_output_sizes",
        "transposed_output_sizes(sizes: list, windows: list, strides: list, dilations: list, "
        "start: list, end: list, output_padding: list) -> list",
        "Per spatial dimension (sizes[i] - 1) * strides[i] + (windows[i] - 1) * dilations[i] "
        "+ 1 - start[i] - end[i] + output_padding[i]: the output sizes of a transposed "
        "(BACKWARD) convolution, whose forward form would map them back to `sizes` "
        "(DirectMLX.h computes them so).",
        fixed(LIST, LIST, LIST, LIST, LIST, LIST, LIST, returns=LIST),
        lists.transposed_output_sizes,
    ),
    Function(
        "windows_holding_input",
        "windows_holding_input(sizes: list, windows: list, strides: list, dilations: list, "
        "start: list, end: list) -> mask",
        "A mask of shape window_output_sizes(...): true where the window holds at least one "
        "element of the unpadded input (not wholly in the padding): a pooling's maximum, or "
        "its average without the padding, has a value there.",
        fixed(LIST, LIST, LIST, LIST, LIST, LIST, returns=MASK),
        lists.windows_holding_input,
        data_only=True,
    ),
    Function(
        "windows_all",
        "windows_all(ok: mask, windows: list, strides: list, dilations: list, start: list, "
        "end: list) -> mask",
        "Per window of a pooling over `ok` ({N, C, spatial...}, windows over the spatial "
        "dimensions): true where `ok` holds at every input element the window covers (the "
        "padding left out). Shape {N, C, window_output_sizes(...)}.",
        fixed(MASK, LIST, LIST, LIST, LIST, LIST, returns=MASK),
        masks.windows_all,
        data_only=True,
    ),
    Function(
        "windows_cover",
        "windows_cover(ok: mask, sizes: list, windows: list, strides: list, dilations: list, "
        "start: list, end: list) -> mask",
        "A mask of shape `sizes` (a pooling's input): true at each element a window with a "
        "false `ok` (one per window, {N, C, window_output_sizes(...)}) holds: where a pooling "
        "gradient may send that window's gradient.",
        fixed(MASK, LIST, LIST, LIST, LIST, LIST, LIST, returns=MASK),
        masks.windows_cover,
        data_only=True,
    ),
    Function(
        "sum",
        "sum(xs: list) -> int",
        "Sum of the items.",
        fixed(LIST, returns=INT),
        lambda facts, xs: sum(xs),
    ),
    Function(
        "min",
        "min(xs: list) | min(a: number, b: number, ...) -> number",
        "Smallest item.",
        list_or_numbers,
        lists.smallest,
    ),
    Function(
        "max",
        "max(xs: list) | max(a: number, b: number, ...) -> number",
        "Largest item.",
        list_or_numbers,
        lists.largest,
    ),
    Function(
        "abs",
        "abs(x: number) -> number",
        "Absolute value.",
        fixed(NUMBER, returns=NUMBER),
        lambda facts, x: abs(x),
    ),
    Function(
        "pad_left",
        "pad_left(xs: list, n: int, value: int = 1) -> list",
        "Prepends `value` until the list has n items (a longer list is returned as is).",
        pad_left_args,
        lists.pad_left,
    ),
    Function(
        "all_equal",
        "all_equal(a, b, ...) -> bool",
        "True when all arguments (of one type) are equal.",
        all_alike,
        lambda facts, *xs: all(x == xs[0] for x in xs[1:]),
    ),
    Function(
        "all_ones",
        "all_ones(xs: list) -> bool",
        "True when every item is 1 (or none).",
        fixed(LIST, returns=BOOL),
        lambda facts, xs: all(x == 1 for x in xs),
    ),
    Function(
        "is_power_of_two",
        "is_power_of_two(x: int) -> bool",
        "x is 1, 2, 4, 8, ...",
        fixed(INT, returns=BOOL),
        lambda facts, x: x > 0 and x & (x - 1) == 0,
    ),
    Function(
        "element_bits",
        "element_bits(t: enum DML_TENSOR_DATA_TYPE) -> int",
        "Size of one element of data type t, in bits (from the common spec).",
        fixed(DATA_TYPE, returns=INT),
        lambda facts, t: facts.element_bits(t),
    ),
    Function(
        "packed_strides",
        "packed_strides(sizes: list) -> list",
        "Strides, in elements, of a packed row-major tensor of these sizes.",
        fixed(LIST, returns=LIST),
        layout.packed_strides,
    ),
    Function(
        "buffer_tensor_size",
        "buffer_tensor_size(t: enum DML_TENSOR_DATA_TYPE, sizes: list, strides: list) -> int",
        "DMLCalcBufferTensorSize: bytes up to the one-past-the-end element, rounded up to 4.",
        fixed(DATA_TYPE, LIST, LIST, returns=INT),
        layout.buffer_tensor_size,
    ),
    Function(
        "distinct_offsets",
        "distinct_offsets(sizes: list, strides: list) -> bool",
        "True when no two elements of a tensor of these sizes and strides share a buffer "
        "offset (exact up to 2^22 elements; above, only nested layouts count as distinct).",
        fixed(LIST, LIST, returns=BOOL),
        layout.distinct_offsets,
    ),
    Function(
        "has_flag",
        "has_flag(flags: flags X, name: enum X) -> bool",
        "Whether the flag is set.",
        flags_and_member,
        lambda facts, flags, name: name in flags,
    ),
    Function(
        "as_type",
        "as_type(x: number, t: enum DML_TENSOR_DATA_TYPE) -> number",
        "The value x takes when stored as data type t: integers wrap modulo 2^bits, "
        "floats round to nearest.",
        fixed(NUMBER, DATA_TYPE, returns=NUMBER),
        scalars.as_type,
    ),
    Function(
        "all",
        "all(m: mask) -> bool",
        "True when every element of the mask is true.",
        fixed(MASK, returns=BOOL),
        lambda facts, m: bool(np.all(m)),
        data_only=True,
    ),
    Function(
        "in_bounds",
        "in_bounds(a: array, bound: int | list) -> mask",
        "Element-wise -bound <= a < bound; a list bound applies along the last axis.",
        array_and_bound,
        indices.in_bounds,
        data_only=True,
    ),
    Function(
        "unique_targets",
        "unique_targets(a: array, bounds: list) -> mask",
        "Per index tuple (the last axis of a, negative entries counted from bounds): "
        "true unless another tuple addresses the same target.",
        fixed(ARRAY, LIST, returns=MASK),
        indices.unique_targets,
        data_only=True,
    ),
    Function(
        "each_tuple",
        "each_tuple(m: mask) -> mask",
        "Per index tuple: true when the mask is true for all of its coordinates (last axis).",
        fixed(MASK, returns=MASK),
        indices.each_tuple,
        data_only=True,
    ),
    Function(
        "row_cells",
        "row_cells(ok: mask, sizes: list) -> mask",
        "A mask of shape `sizes`, true in the row-major block of each false element of `ok` "
        "(one block per element): the output rows a gather writes from a bad index tuple.",
        fixed(MASK, LIST, returns=MASK),
        indices.row_cells,
        data_only=True,
    ),
    Function(
        "slice_cells",
        "slice_cells(ok: mask, a: array, bounds: list, sizes: list) -> mask",
        "A mask of shape `sizes`, true in the slice each index tuple of `a` with a false `ok` "
        "addresses (tuples index the leading `bounds` dimensions after any leading 1s).",
        fixed(MASK, ARRAY, LIST, LIST, returns=MASK),
        indices.slice_cells,
        data_only=True,
    ),
    Function(
        "target_cells",
        "target_cells(ok: mask, a: array, axis: int, sizes: list) -> mask",
        "A mask of shape `sizes`, true at the target of each element of `a` with a false `ok`: "
        "its own position with the coordinate along `axis` replaced by its value.",
        fixed(MASK, ARRAY, INT, LIST, returns=MASK),
        indices.target_cells,
        data_only=True,
    ),
    Function(
        "unique_values",
        "unique_values(a: array) -> mask",
        "Per element: true unless another element of `a` holds the same value (flat indices "
        "that write one cell).",
        fixed(ARRAY, returns=MASK),
        indices.unique_values,
        data_only=True,
    ),
    Function(
        "flat_cells",
        "flat_cells(ok: mask, a: array, sizes: list) -> mask",
        "A mask of shape `sizes`, true at the row-major cell each element of `a` with a false "
        "`ok` addresses (a flat index into the tensor as one array).",
        fixed(MASK, ARRAY, LIST, returns=MASK),
        indices.flat_cells,
        data_only=True,
    ),
    Function(
        "unique_along",
        "unique_along(a: array, axis: int, bound: int) -> mask",
        "Per element: true unless another element, with its coordinate along `axis` "
        "replaced by its (normalised) value, addresses the same target.",
        fixed(ARRAY, INT, INT, returns=MASK),
        indices.unique_along,
        data_only=True,
    ),
    Function(
        "is_float",
        "is_float(t: enum DML_TENSOR_DATA_TYPE) -> bool",
        "Whether data type t is a floating-point type (from the common spec).",
        fixed(DATA_TYPE, returns=BOOL),
        lambda facts, t: scalars.data_type_kind(facts, t) == "f",
    ),
    Function(
        "lowest",
        "lowest(t: enum DML_TENSOR_DATA_TYPE) -> number",
        "The most negative finite value of data type t (0 for unsigned types).",
        fixed(DATA_TYPE, returns=NUMBER),
        scalars.lowest,
    ),
    Function(
        "highest",
        "highest(t: enum DML_TENSOR_DATA_TYPE) -> number",
        "The largest finite value of data type t.",
        fixed(DATA_TYPE, returns=NUMBER),
        scalars.highest,
    ),
    Function(
        "not_nan",
        "not_nan(a: array) -> mask",
        "Element-wise: a is not NaN (true everywhere for integer data).",
        fixed(ARRAY, returns=MASK),
        masks.not_nan,
        data_only=True,
    ),
    Function(
        "spans",
        "spans(a: array, x: number) -> bool",
        "min(a) <= x <= max(a) and min(a) < max(a), NaN left out: the elements' range holds x "
        "and is more than one value (DYNAMIC_QUANTIZE_LINEAR's input range and 0).",
        fixed(ARRAY, NUMBER, returns=BOOL),
        masks.spans,
        data_only=True,
    ),
    Function(
        "finite",
        "finite(a: array) -> mask",
        "Element-wise: a is neither NaN nor infinite (true everywhere for integer data).",
        fixed(ARRAY, returns=MASK),
        masks.finite,
        data_only=True,
    ),
    Function(
        "not_equal",
        "not_equal(a: array, x: number) -> mask",
        "Element-wise a != x, compared exactly (NaN differs from every x).",
        fixed(ARRAY, NUMBER, returns=MASK),
        masks.not_equal,
        data_only=True,
    ),
    Function(
        "fits",
        "fits(a: array, t: enum DML_TENSOR_DATA_TYPE) -> mask",
        "Element-wise: a, rounded toward zero, lies in the range of integer type t (NaN and "
        "infinities never do); true everywhere for a float type.",
        fixed(ARRAY, DATA_TYPE, returns=MASK),
        masks.fits,
        data_only=True,
    ),
    Function(
        "power_fits",
        "power_fits(a: array, b: array, t: enum DML_TENSOR_DATA_TYPE) -> mask",
        "Element-wise: a ** b is an integer in the range of integer type t (a negative b "
        "only for a of 1 or -1); true everywhere for a float type.",
        fixed(ARRAY, ARRAY, DATA_TYPE, returns=MASK),
        masks.power_fits,
        data_only=True,
    ),
    Function(
        "same_parity",
        "same_parity(a: array, b: array) -> mask",
        "Element-wise: a + b is even (integer data).",
        fixed(ARRAY, ARRAY, returns=MASK),
        masks.same_parity,
        data_only=True,
    ),
    Function(
        "whole",
        "whole(a: array) -> mask",
        "Element-wise: a is a finite whole number (true everywhere for integer data).",
        fixed(ARRAY, returns=MASK),
        masks.whole,
        data_only=True,
    ),
    Function(
        "not_greater",
        "not_greater(a: array, b: array) -> mask",
        "Element-wise (broadcast): a <= b, compared exactly (NaN is never <= anything).",
        fixed(ARRAY, ARRAY, returns=MASK),
        masks.not_greater,
        data_only=True,
    ),
    Function(
        "column",
        "column(a: array, k: int) -> array",
        "Element k of each row of a (its last axis), the other axes kept: a[..., k] (an ROI's "
        "batch index or one of its coordinates).",
        fixed(ARRAY, INT, returns=ARRAY),
        masks.column,
        data_only=True,
    ),
    Function(
        "either",
        "either(m: mask, n: mask) -> mask",
        "Element-wise m or n (broadcast).",
        fixed(MASK, MASK, returns=MASK),
        masks.either,
        data_only=True,
    ),
    Function(
        "both",
        "both(m: mask, n: mask) -> mask",
        "Element-wise m and n (broadcast).",
        fixed(MASK, MASK, returns=MASK),
        masks.both,
        data_only=True,
    ),
    Function(
        "at_least",
        "at_least(a: array, x: number) -> mask",
        "Element-wise a >= x, compared exactly.",
        fixed(ARRAY, NUMBER, returns=MASK),
        cells.at_least,
        data_only=True,
    ),
    Function(
        "all_along",
        "all_along(m: mask, axes: list) -> mask",
        "Per reduced set (the elements that differ only along `axes`, which are kept as "
        "size-1 dimensions): true when m holds for all of them.",
        fixed(MASK, LIST, returns=MASK),
        cells.all_along,
        data_only=True,
    ),
    Function(
        "reduced_fits",
        "reduced_fits(a: array, f: enum DML_REDUCE_FUNCTION, axes: list, "
        "t: enum DML_TENSOR_DATA_TYPE) -> mask",
        "Per reduced set along `axes` (kept as size-1 dimensions): what reduction f "
        "accumulates, on |a| (sum, sum of squares, product; for floats over the finite "
        "elements, products and LOG_SUM_EXP's sum of exp also above the smallest normal), "
        "stays within type t, so no partial result overflows in any order.",
        fixed(ARRAY, REDUCE_FUNCTION, LIST, DATA_TYPE, returns=MASK),
        cells.reduced_fits,
        data_only=True,
    ),
    Function(
        "gather_cells",
        "gather_cells(ok: mask, count: int, inner: int, sizes: list) -> mask",
        "A mask of shape `sizes`, true at every cell whose `count` coordinates before the "
        "last `inner` address a false element of `ok` (its last `count` dimensions): the "
        "output cells a gather along an axis writes from a bad index.",
        fixed(MASK, INT, INT, LIST, returns=MASK),
        cells.gather_cells,
        data_only=True,
    ),
    Function(
        "rows_written",
        "rows_written(a: array, sizes: list) -> mask",
        "A mask of shape `sizes` (..., M, N), true in the first c of the M rows, c the "
        "number of non-zero elements of `a` (-0.0 counts as zero, NaN as non-zero).",
        fixed(ARRAY, LIST, returns=MASK),
        cells.rows_written,
        data_only=True,
    ),
    Function(
        "direction_count",
        "direction_count(d: enum DML_RECURRENT_NETWORK_DIRECTION) -> int",
        "num_directions of a recurrent network (RNN, LSTM, GRU): 2 for BIDIRECTIONAL, 1 for "
        "FORWARD and BACKWARD.",
        fixed(DIRECTION, returns=INT),
        lambda facts, d: (
            2 if d.removeprefix("DML_RECURRENT_NETWORK_DIRECTION_") == "BIDIRECTIONAL" else 1
        ),
    ),
    Function(
        "steps_past",
        "steps_past(lengths: array, sizes: list) -> mask",
        "A mask of shape `sizes` ({seq_length, num_directions, batch_size, hidden_size}), true "
        "at the steps t >= lengths[b] of each batch element b: a recurrent network's output "
        "rows past a sequence's length.",
        fixed(ARRAY, LIST, returns=MASK),
        cells.steps_past,
        data_only=True,
    ),
    Function(
        "cells_where_not",
        "cells_where_not(ok: mask, sizes: list) -> mask",
        "A mask of shape `sizes`, true where the element-wise mask `ok` (broadcast to `sizes`) "
        "is false: the output cells of an element-wise operator a bad input element leaves "
        "undefined.",
        fixed(MASK, LIST, returns=MASK),
        masks.cells_where_not,
        data_only=True,
    ),
]


FUNCTIONS: dict[str, Function] = {f.name: f for f in _FUNCTION_LIST}
