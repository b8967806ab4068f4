"""The named functions a constraint expression may call.

Each function has a static type rule (used when specs are loaded) and an implementation
(used when descs or data are checked). Functions that need DirectML facts, such as element
sizes, read them from the `Facts` the evaluator is given, which the loader builds from the
common spec: no data-type table is typed here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import cells
from .errors import Absent
from .facts import Facts
from .types import (
    ARRAY,
    BOOL,
    INT,
    LIST,
    MASK,
    NUMBER,
    OPERATORS,
    TENSORS,
    EnumType,
    FlagsType,
    TensorType,
    Type,
    is_assignable,
)

__all__ = ["FUNCTIONS", "Function", "TypeRuleError", "scalar_union_value"]

DATA_TYPE = EnumType("DML_TENSOR_DATA_TYPE")
REDUCE_FUNCTION = EnumType("DML_REDUCE_FUNCTION")


class TypeRuleError(Exception):
    """A call's arguments do not fit; `arg` is the index of the offending argument or None."""

    def __init__(self, message: str, arg: int | None = None) -> None:
        super().__init__(message)
        self.arg = arg


TypeRule = Callable[[Sequence[Type]], Type]


@dataclass(frozen=True)
class Function:
    name: str
    signature: str
    doc: str
    type_rule: TypeRule
    impl: Callable[..., Any]  # impl(facts, *args)
    data_only: bool = False  # only meaningful on tensor data (requires constraints)


def _fixed(*params: Type, returns: Type) -> TypeRule:
    def rule(args: Sequence[Type]) -> Type:
        if len(args) != len(params):
            raise TypeRuleError(f"takes {len(params)} argument(s); got {len(args)}")
        for i, (arg, param) in enumerate(zip(args, params, strict=True)):
            if not is_assignable(arg, param):
                raise TypeRuleError(f"argument {i + 1} must be {param}; got {arg}", i)
        return returns

    return rule


def _list_or_numbers(args: Sequence[Type]) -> Type:
    if len(args) == 1 and args[0] == LIST:
        return INT
    if len(args) >= 2:
        for i, arg in enumerate(args):
            if not is_assignable(arg, NUMBER):
                raise TypeRuleError(f"argument {i + 1} must be int or number; got {arg}", i)
        return INT if all(arg == INT for arg in args) else NUMBER
    raise TypeRuleError("takes one list or at least two numbers")


def _all_equal(args: Sequence[Type]) -> Type:
    if len(args) < 2:
        raise TypeRuleError(f"takes at least 2 arguments; got {len(args)}")
    for i, arg in enumerate(args[1:], start=1):
        if arg != args[0]:
            raise TypeRuleError(f"argument {i + 1} must be {args[0]} like argument 1; got {arg}", i)
    return BOOL


def _pad_left(args: Sequence[Type]) -> Type:
    if len(args) not in (2, 3):
        raise TypeRuleError(f"takes 2 or 3 arguments; got {len(args)}")
    return _fixed(*(LIST, INT, INT)[: len(args)], returns=LIST)(args)


def _has_flag(args: Sequence[Type]) -> Type:
    if len(args) != 2 or not isinstance(args[0], FlagsType):
        raise TypeRuleError("takes a flags value and a flag name")
    if args[1] != EnumType(args[0].enum):
        raise TypeRuleError(f"argument 2 must be a member of {args[0].enum}; got {args[1]}", 1)
    return BOOL


def _in_bounds(args: Sequence[Type]) -> Type:
    if len(args) != 2 or args[0] != ARRAY:
        raise TypeRuleError("takes an array and a bound (int, or list for the last axis)")
    if args[1] not in (INT, LIST):
        raise TypeRuleError(f"argument 2 must be int or list; got {args[1]}", 1)
    return MASK


def _count(args: Sequence[Type]) -> Type:
    if len(args) != 1 or args[0] not in (LIST, TENSORS, OPERATORS):
        raise TypeRuleError("takes one list, tensor array or operator-desc array")
    return INT


def _present_rule(args: Sequence[Type]) -> Type:
    if len(args) != 1:
        raise TypeRuleError(f"takes 1 argument; got {len(args)}")
    return BOOL


def _present(facts: Facts, read: Callable[[], Any]) -> bool:
    """`read` is a thunk: reading an absent optional value raises `Absent`."""
    try:
        read()
    except Absent:
        return False
    return True


LEVEL = EnumType("DML_FEATURE_LEVEL")


def _member(tensor: Any, name: str) -> Any:
    """A member of a tensor as the validators (attributes) or the evaluator (.get) hold it."""
    reader = getattr(type(tensor), "get", None)  # TensorValue; TensorView reads attributes
    return reader(tensor, name) if callable(reader) else getattr(tensor, name)


def _tensors_and_tensor(args: Sequence[Type]) -> Type:
    if len(args) != 2 or args[0] != TENSORS or not isinstance(args[1], TensorType):
        raise TypeRuleError("takes a tensor array and a tensor")
    return BOOL


def _same_sizes_except(args: Sequence[Type]) -> Type:
    if len(args) != 3 or args[0] != TENSORS or not isinstance(args[1], TensorType):
        raise TypeRuleError("takes a tensor array, a tensor and an axis")
    if args[2] != INT:
        raise TypeRuleError(f"argument 3 must be int; got {args[2]}", 2)
    return BOOL


def _sizes_except(sizes: list[int], axis: int) -> list[int]:
    return [s for i, s in enumerate(sizes) if i != axis]


def _broadcastable(facts: Facts, sizes: list[int], target: list[int]) -> bool:
    return len(sizes) == len(target) and all(
        s in (1, t) for s, t in zip(sizes, target, strict=True)
    )


def _prod(facts: Facts, values: list[int]) -> int:
    return math.prod(values)


def _min(facts: Facts, *values: Any) -> Any:
    if len(values) == 1:
        return min(values[0])
    if any(isinstance(v, np.ndarray) for v in values):  # element-wise, e.g. over k
        return np.minimum.reduce(np.broadcast_arrays(*values))
    return min(values)


def _max(facts: Facts, *values: Any) -> Any:
    if len(values) == 1:
        return max(values[0])
    if any(isinstance(v, np.ndarray) for v in values):  # element-wise, e.g. over k
        return np.maximum.reduce(np.broadcast_arrays(*values))
    return max(values)


def _pad_left_impl(facts: Facts, values: list[int], count: int, fill: int = 1) -> list[int]:
    return [fill] * max(count - len(values), 0) + list(values)


def _paired(xs: Sequence[int], ys: Sequence[int]) -> zip[tuple[int, int]]:
    if len(xs) != len(ys):
        raise ValueError(f"lists of {len(xs)} and {len(ys)} items")
    return zip(xs, ys, strict=True)


def _set_items(facts: Facts, values: list[int], at: list[int], value: int) -> list[int]:
    if any(not 0 <= i < len(values) for i in at):
        raise ValueError(f"positions {at} out of range for {len(values)} items")
    return [value if i in at else v for i, v in enumerate(values)]


def _strided_count(facts: Facts, sizes: list[int], strides: list[int]) -> list[int]:
    if any(stride == 0 for stride in strides):
        raise ValueError("a stride of 0")
    return [1 + (size - 1) // abs(stride) for size, stride in _paired(sizes, strides)]


def _packed_strides(facts: Facts, sizes: list[int]) -> list[int]:
    strides, running = [], 1
    for size in reversed(sizes):
        strides.append(running)
        running *= size
    return strides[::-1]


def _buffer_tensor_size(facts: Facts, data_type: str, sizes: list[int], strides: list[int]) -> int:
    """DMLCalcBufferTensorSize (dml-helper-functions.md), generalised to sub-byte types."""
    if not sizes:
        return 0
    index_of_last_element = sum((s - 1) * t for s, t in zip(sizes, strides, strict=False))
    size_in_bytes = -(-(index_of_last_element + 1) * facts.element_bits(data_type) // 8)
    return (size_in_bytes + 3) & ~3


# Above this many elements, distinct_offsets decides by the nesting rule alone.
DISTINCT_OFFSETS_ENUMERATION_LIMIT = 1 << 22


def _distinct_offsets(facts: Facts, sizes: list[int], strides: list[int]) -> bool:
    """No two elements share a buffer offset (dml-strides.md: "each element has a unique
    address/offset"). Dimensions of size 1 never move; a zero stride repeats a dimension.
    Nested layouts (each stride, smallest first, beyond the reach of the smaller ones: packed,
    padded, permuted) are distinct; others are enumerated up to the limit."""
    moving = sorted((t, s) for s, t in zip(sizes, strides, strict=False) if s > 1)
    reach = 0
    for stride, size in moving:
        if stride <= reach:
            break
        reach += stride * (size - 1)
    else:
        return True
    count = math.prod(size for _, size in moving)
    if any(stride == 0 for stride, _ in moving) or count > DISTINCT_OFFSETS_ENUMERATION_LIMIT:
        return False
    offsets = np.zeros(1, dtype=np.int64)
    for stride, size in moving:
        offsets = (offsets[:, None] + np.arange(size, dtype=np.int64) * stride).reshape(-1)
    return bool(np.unique(offsets).size == offsets.size)


def scalar_union_value(value: int | float, dtype: Any) -> int | float:
    """The value a DML_SCALAR_UNION member of NumPy type `dtype` holds when given `value`: an
    integer member keeps the low bits (a fraction dropped first), a float one rounds."""
    info: np.dtype[Any] = np.dtype(dtype)
    if info.kind in "iu":
        if isinstance(value, float) and not value.is_integer():
            value = math.trunc(value)
        bits = info.itemsize * 8
        wrapped: int = int(value) % (1 << bits)
        if info.kind == "i" and wrapped >= 1 << (bits - 1):
            wrapped -= 1 << bits
        return wrapped
    with np.errstate(over="ignore"):  # past the type's range a float member holds +-inf
        return float(np.array(value, dtype=np.float64).astype(info))


def _as_type(facts: Facts, value: int | float, data_type: str) -> int | float:
    """The value a DML_SCALAR_UNION of `data_type` holds when given `value`."""
    dtype = facts.numpy_dtype(data_type)
    if dtype is None:
        raise ValueError(f"no NumPy type for {data_type}")
    return scalar_union_value(value, dtype)


def _normalised(values: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    signed = values.astype(object)
    return np.where(signed < 0, signed + bounds, signed)


def _in_bounds_impl(facts: Facts, values: np.ndarray, bounds: int | list[int]) -> np.ndarray:
    limit = np.asarray(bounds, dtype=object)
    signed = np.asarray(values).astype(object)
    return (signed >= -limit) & (signed < limit)


def _unique_targets(facts: Facts, values: np.ndarray, bounds: list[int]) -> np.ndarray:
    """Per index tuple (last axis): True unless another tuple addresses the same target."""
    tuples = _indices_normalised(np.asarray(values), bounds)
    return _only_once(tuples.reshape(-1, tuples.shape[-1])).reshape(tuples.shape[:-1])


def _unique_along(facts: Facts, values: np.ndarray, axis: int, bound: int) -> np.ndarray:
    """Per element: True unless another element writes the same target along `axis`."""
    array = _indices_normalised(np.asarray(values), bound)
    targets = np.indices(array.shape).reshape(array.ndim, -1).astype(array.dtype)
    targets[axis] = array.reshape(-1)
    return _only_once(targets.T).reshape(array.shape)


def _indices_normalised(values: np.ndarray, bounds: int | list[int]) -> np.ndarray:
    """`_normalised` in int64 where every value and bound fits (exact, and whole-array fast);
    else as Python ints (an object array)."""
    limits = np.asarray(bounds, dtype=object)
    fits = values.dtype.kind == "i" or (
        values.dtype.kind == "u" and (not values.size or int(values.max()) < 2**63)
    )
    if fits and all(-(2**62) < int(b) < 2**62 for b in limits.reshape(-1)):
        signed = values.astype(np.int64)
        return np.where(signed < 0, signed + limits.astype(np.int64), signed)
    return _normalised(values, limits)


def _only_once(rows: np.ndarray) -> np.ndarray:
    """Per row of a 2-D array of integers: True where no other row is equal."""
    if rows.dtype == object:  # indices past int64 (UINT64 data): compared as Python ints
        counts: dict[tuple[Any, ...], int] = {}
        flat = [tuple(row) for row in rows.tolist()]
        for key in flat:
            counts[key] = counts.get(key, 0) + 1
        return np.array([counts[key] == 1 for key in flat], dtype=bool)
    if not len(rows):
        return np.ones(0, dtype=bool)
    low = rows.min(axis=0)
    extent = [int(b) - int(a) + 1 for a, b in zip(low, rows.max(axis=0), strict=True)]
    if math.prod(extent) >= 2**62:  # no linear key fits: rows compared as rows
        _, inverse, repeats = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
        return np.asarray(repeats[inverse.reshape(-1)] == 1, dtype=bool)
    keys = np.ravel_multi_index(tuple((rows - low).T), extent)  # each row's place in its box
    if math.prod(extent) <= 4 * len(rows) + 4096:
        return np.asarray(np.bincount(keys)[keys] == 1, dtype=bool)
    _, inverse, repeats = np.unique(keys, return_inverse=True, return_counts=True)
    return np.asarray(repeats[inverse] == 1, dtype=bool)


def _each_tuple(facts: Facts, mask: np.ndarray) -> np.ndarray:
    return np.asarray(np.all(np.asarray(mask, dtype=bool), axis=-1))


def _row_cells(facts: Facts, ok: np.ndarray, sizes: list[int]) -> np.ndarray:
    """Output cells of the rows (row-major blocks, one per mask element) whose mask is False."""
    flags = np.asarray(ok, dtype=bool).reshape(-1)
    cells = np.zeros((flags.size, math.prod(sizes) // max(flags.size, 1)), dtype=bool)
    cells[~flags] = True
    return cells.reshape(sizes)


def _slice_cells(
    facts: Facts, ok: np.ndarray, values: np.ndarray, bounds: list[int], sizes: list[int]
) -> np.ndarray:
    """Output cells of the slices addressed by the index tuples whose mask is False."""
    tuples = _normalised(np.asarray(values), np.asarray(bounds, dtype=object))
    flat = tuples.reshape(-1, tuples.shape[-1])
    cells = np.zeros((math.prod(bounds), math.prod(sizes) // math.prod(bounds)), dtype=bool)
    for row, good in zip(
        flat.tolist(), np.asarray(ok, dtype=bool).reshape(-1).tolist(), strict=True
    ):
        if not good:
            cells[int(np.ravel_multi_index(tuple(int(i) for i in row), bounds))] = True
    return cells.reshape(sizes)


def _target_cells(
    facts: Facts, ok: np.ndarray, values: np.ndarray, axis: int, sizes: list[int]
) -> np.ndarray:
    """Output cells written by the elements whose mask is False (their index replacing the
    coordinate along `axis`)."""
    array = _normalised(np.asarray(values), np.asarray(sizes[axis], dtype=object))
    cells = np.zeros(sizes, dtype=bool)
    for position in zip(*np.nonzero(~np.asarray(ok, dtype=bool)), strict=True):
        target = list(position)
        target[axis] = int(array[position])
        cells[tuple(target)] = True
    return cells


def _data_type_kind(facts: Facts, data_type: str) -> str:
    """'f' (float), 'i' (signed) or 'u' (unsigned), from the common spec's NumPy type."""
    dtype = facts.numpy_dtype(data_type)
    if dtype is None:
        raise ValueError(f"no NumPy type for {data_type}")
    return np.dtype(dtype).kind


def _lowest(facts: Facts, data_type: str) -> int | float:
    dtype = np.dtype(facts.numpy_dtype(data_type) or "")
    return int(np.iinfo(dtype).min) if dtype.kind in "iu" else float(np.finfo(dtype).min)


def _highest(facts: Facts, data_type: str) -> int | float:
    dtype = np.dtype(facts.numpy_dtype(data_type) or "")
    return int(np.iinfo(dtype).max) if dtype.kind in "iu" else float(np.finfo(dtype).max)


def _exact(values: np.ndarray) -> np.ndarray:
    """Elements as Python ints and floats, so comparisons and arithmetic never wrap."""
    return np.asarray(values).astype(object)


def _not_nan(facts: Facts, values: np.ndarray) -> np.ndarray:
    array = np.asarray(values)
    return ~np.isnan(array) if array.dtype.kind == "f" else np.ones(array.shape, dtype=bool)


def _not_equal(facts: Facts, values: np.ndarray, value: int | float) -> np.ndarray:
    return np.asarray(_exact(values) != value, dtype=bool)


def _fits(facts: Facts, values: np.ndarray, data_type: str) -> np.ndarray:
    """Per element: rounded toward zero, the value lies in the range of integer type `data_type`
    (NaN and infinities never do); every value fits a float type."""
    array = np.asarray(values)
    if _data_type_kind(facts, data_type) == "f":
        return np.ones(array.shape, dtype=bool)
    info = np.iinfo(np.dtype(facts.numpy_dtype(data_type) or ""))
    if array.dtype.kind == "f":
        # Exact in float64: the bounds min and max + 1 are powers of two (or 0), and a
        # truncated value fits when min <= t < max + 1.
        with np.errstate(invalid="ignore"):
            truncated = np.trunc(array.astype(np.float64))
            return (
                np.isfinite(truncated)
                & (truncated >= float(info.min))
                & (truncated < float(info.max + 1))
            )
    if array.dtype.kind == "b":  # 0 and 1 fit every integer type
        return np.ones(array.shape, dtype=bool)
    if array.dtype.kind in "iu":
        # The bounds clipped to the array's own type compare exactly in that type.
        own = np.iinfo(array.dtype)
        low, high = max(info.min, own.min), min(info.max, own.max)
        if low > high:
            return np.zeros(array.shape, dtype=bool)
        typed = array.dtype.type
        return np.asarray((array >= typed(low)) & (array <= typed(high)), dtype=bool)

    def fits(value: int | float) -> bool:  # Python numbers (an object array)
        if isinstance(value, float) and not math.isfinite(value):
            return False
        return bool(info.min <= math.trunc(value) <= info.max)

    flat = [fits(v) for v in _exact(array).reshape(-1).tolist()]
    return np.array(flat, dtype=bool).reshape(array.shape)


def _integral(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(is an integer, as float64, is odd) per element, without converting to Python numbers;
    the float64 copy is exact below 2^53 and close enough above to compare magnitudes."""
    if values.dtype.kind in "iub":
        odd = (values % 2 != 0) if values.dtype.kind != "b" else values.astype(bool)
        return np.ones(values.shape, dtype=bool), values.astype(np.float64), odd
    wide = values.astype(np.float64)
    with np.errstate(invalid="ignore"):
        whole = np.isfinite(wide) & (np.trunc(wide) == wide)
        odd = whole & (np.fmod(wide, 2) != 0)
    return whole, wide, odd


def _power_fits(
    facts: Facts, bases: np.ndarray, exponents: np.ndarray, data_type: str
) -> np.ndarray:
    """Per element: base ** exponent is an integer within integer type `data_type` (always true
    for a float type)."""
    base, exponent = np.broadcast_arrays(np.asarray(bases), np.asarray(exponents))
    if _data_type_kind(facts, data_type) == "f":
        return np.ones(base.shape, dtype=bool)
    info = np.iinfo(np.dtype(facts.numpy_dtype(data_type) or ""))
    base_whole, b, _ = _integral(base)
    exponent_whole, e, e_odd = _integral(exponent)
    fits = np.zeros(base.shape, dtype=bool)
    whole = base_whole & exponent_whole
    # 0, 1 and -1 raised to an integer: 1, 0 (e >= 1), 1 or -1 (by the exponent's parity).
    fits |= whole & (e == 0)
    fits |= whole & (b == 0) & (e >= 1)
    fits |= whole & (b == 1)
    fits |= whole & (b == -1) & (~e_odd | (info.min <= -1))
    # |base| >= 2: a negative exponent gives a fraction, and |base| ** e > 2^65 fits no type;
    # what is left is computed exactly.
    with np.errstate(divide="ignore", invalid="ignore"):
        magnitude_bits = e * np.log2(np.abs(b))
    near = whole & (np.abs(b) >= 2) & (e >= 1) & (e < 64) & (magnitude_bits <= 65)
    where = np.flatnonzero(near)
    if where.size:
        exact_bases = base.reshape(-1)[where].tolist()
        exact_exponents = exponent.reshape(-1)[where].tolist()
        fits.reshape(-1)[where] = [
            info.min <= int(x) ** int(y) <= info.max
            for x, y in zip(exact_bases, exact_exponents, strict=True)
        ]
    return fits


def _same_parity(facts: Facts, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray((_exact(a) + _exact(b)) % 2 == 0, dtype=bool)


def _either(facts: Facts, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    result: np.ndarray = np.logical_or(np.asarray(a, dtype=bool), np.asarray(b, dtype=bool))
    return result


def _both(facts: Facts, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    result: np.ndarray = np.logical_and(np.asarray(a, dtype=bool), np.asarray(b, dtype=bool))
    return result


def _cells_where_not(facts: Facts, ok: np.ndarray, sizes: list[int]) -> np.ndarray:
    """Output cells (shape `sizes`) where the element-wise mask `ok`, broadcast, is False."""
    return np.broadcast_to(~np.asarray(ok, dtype=bool), tuple(sizes)).copy()


_FUNCTION_LIST = [
    Function(
        "len",
        "len(xs: list | tensors | operators) -> int",
        "Number of items (of a list, a tensor array or an operator-desc array).",
        _count,
        lambda facts, xs: len(xs),
    ),
    Function(
        "present",
        "present(field) -> bool",
        "Whether the desc gives an optional field (or a definition that reads only given ones).",
        _present_rule,
        _present,
    ),
    Function(
        "level_at_least",
        "level_at_least(level: enum DML_FEATURE_LEVEL, since: enum DML_FEATURE_LEVEL) -> bool",
        "Whether `level` is `since` or a later feature level (`FeatureLevel` is the level a "
        "desc is validated at).",
        _fixed(LEVEL, LEVEL, returns=BOOL),
        lambda facts, level, since: facts.level_rank(level) >= facts.level_rank(since),
    ),
    Function(
        "all_less",
        "all_less(xs: list, bound: number) -> bool",
        "Every item is less than `bound` (true for an empty list).",
        _fixed(LIST, NUMBER, returns=BOOL),
        lambda facts, xs, bound: all(x < bound for x in xs),
    ),
    Function(
        "all_at_least",
        "all_at_least(xs: list, bound: number) -> bool",
        "Every item is at least `bound` (true for an empty list).",
        _fixed(LIST, NUMBER, returns=BOOL),
        lambda facts, xs, bound: all(x >= bound for x in xs),
    ),
    Function(
        "distinct",
        "distinct(xs: list) -> bool",
        "No item appears twice.",
        _fixed(LIST, returns=BOOL),
        lambda facts, xs: len(set(xs)) == len(xs),
    ),
    Function(
        "effective_rank",
        "effective_rank(sizes: list) -> int",
        "The number of dimensions after the leading 1s (at least 1): a {1,1,3,4} tensor has "
        "effective rank 2.",
        _fixed(LIST, returns=INT),
        lambda facts, sizes: max(
            len(sizes) - next((i for i, s in enumerate(sizes) if s != 1), len(sizes)), 1
        ),
    ),
    Function(
        "same_data_type",
        "same_data_type(ts: tensors, t: tensor) -> bool",
        "Every tensor of the array has t's DataType.",
        _tensors_and_tensor,
        lambda facts, ts, t: all(_member(x, "DataType") == _member(t, "DataType") for x in ts),
    ),
    Function(
        "same_dimension_count",
        "same_dimension_count(ts: tensors, t: tensor) -> bool",
        "Every tensor of the array has t's DimensionCount.",
        _tensors_and_tensor,
        lambda facts, ts, t: all(
            _member(x, "DimensionCount") == _member(t, "DimensionCount") for x in ts
        ),
    ),
    Function(
        "same_sizes_except",
        "same_sizes_except(ts: tensors, t: tensor, axis: int) -> bool",
        "Every tensor of the array has t's Sizes in every dimension but `axis`.",
        _same_sizes_except,
        lambda facts, ts, t, axis: all(
            _sizes_except(list(_member(x, "Sizes")), axis)
            == _sizes_except(list(_member(t, "Sizes")), axis)
            for x in ts
        ),
    ),
    Function(
        "sum_along",
        "sum_along(ts: tensors, axis: int) -> int",
        "The sum of the tensors' sizes along `axis` (JOIN's output, SPLIT's input).",
        _fixed(TENSORS, INT, returns=INT),
        lambda facts, ts, axis: sum(list(_member(x, "Sizes"))[axis] for x in ts),
    ),
    Function(
        "sizes_along",
        "sizes_along(ts: tensors, axis: int) -> list",
        "Each tensor's size along `axis`, in array order (where SPLIT cuts its input).",
        _fixed(TENSORS, INT, returns=LIST),
        lambda facts, ts, axis: [list(_member(x, "Sizes"))[axis] for x in ts],
    ),
    Function(
        "broadcastable",
        "broadcastable(sizes: list, target: list) -> bool",
        "Same length, and every size is 1 or equals the target's size in that dimension.",
        _fixed(LIST, LIST, returns=BOOL),
        _broadcastable,
    ),
    Function(
        "prod",
        "prod(xs: list) -> int",
        "Product of the items (1 for an empty list).",
        _fixed(LIST, returns=INT),
        _prod,
    ),
    Function(
        "add_each",
        "add_each(xs: list, ys: list) -> list",
        "Item-wise sums xs[i] + ys[i] of two lists of one length (PADDING's output sizes).",
        _fixed(LIST, LIST, returns=LIST),
        lambda facts, xs, ys: [x + y for x, y in _paired(xs, ys)],
    ),
    Function(
        "mul_each",
        "mul_each(xs: list, ys: list) -> list",
        "Item-wise products xs[i] * ys[i] of two lists of one length (TILE's output sizes).",
        _fixed(LIST, LIST, returns=LIST),
        lambda facts, xs, ys: [x * y for x, y in _paired(xs, ys)],
    ),
    Function(
        "set_items",
        "set_items(xs: list, at: list, value: int) -> list",
        "xs with the items at the positions in `at` set to `value` (REDUCE's output sizes: "
        "the input's with 1 at the reduced axes).",
        _fixed(LIST, LIST, INT, returns=LIST),
        _set_items,
    ),
    Function(
        "each_at_most",
        "each_at_most(xs: list, ys: list) -> bool",
        "xs[i] <= ys[i] for every i, for two lists of one length.",
        _fixed(LIST, LIST, returns=BOOL),
        lambda facts, xs, ys: all(x <= y for x, y in _paired(xs, ys)),
    ),
    Function(
        "each_less",
        "each_less(xs: list, ys: list) -> bool",
        "xs[i] < ys[i] for every i, for two lists of one length.",
        _fixed(LIST, LIST, returns=BOOL),
        lambda facts, xs, ys: all(x < y for x, y in _paired(xs, ys)),
    ),
    Function(
        "strided_count",
        "strided_count(sizes: list, strides: list) -> list",
        "Per item 1 + (sizes[i] - 1) // abs(strides[i]): how many elements a window of that "
        "size visits at that (non-zero) stride, from either end.",
        _fixed(LIST, LIST, returns=LIST),
        _strided_count,
    ),
    Function(
        "sum",
        "sum(xs: list) -> int",
        "Sum of the items.",
        _fixed(LIST, returns=INT),
        lambda facts, xs: sum(xs),
    ),
    Function(
        "min",
        "min(xs: list) | min(a: number, b: number, ...) -> number",
        "Smallest item.",
        _list_or_numbers,
        _min,
    ),
    Function(
        "max",
        "max(xs: list) | max(a: number, b: number, ...) -> number",
        "Largest item.",
        _list_or_numbers,
        _max,
    ),
    Function(
        "abs",
        "abs(x: number) -> number",
        "Absolute value.",
        _fixed(NUMBER, returns=NUMBER),
        lambda facts, x: abs(x),
    ),
    Function(
        "pad_left",
        "pad_left(xs: list, n: int, value: int = 1) -> list",
        "Prepends `value` until the list has n items (a longer list is returned as is).",
        _pad_left,
        _pad_left_impl,
    ),
    Function(
        "all_equal",
        "all_equal(a, b, ...) -> bool",
        "True when all arguments (of one type) are equal.",
        _all_equal,
        lambda facts, *xs: all(x == xs[0] for x in xs[1:]),
    ),
    Function(
        "all_ones",
        "all_ones(xs: list) -> bool",
        "True when every item is 1 (or none).",
        _fixed(LIST, returns=BOOL),
        lambda facts, xs: all(x == 1 for x in xs),
    ),
    Function(
        "is_power_of_two",
        "is_power_of_two(x: int) -> bool",
        "x is 1, 2, 4, 8, ...",
        _fixed(INT, returns=BOOL),
        lambda facts, x: x > 0 and x & (x - 1) == 0,
    ),
    Function(
        "element_bits",
        "element_bits(t: enum DML_TENSOR_DATA_TYPE) -> int",
        "Size of one element of data type t, in bits (from the common spec).",
        _fixed(DATA_TYPE, returns=INT),
        lambda facts, t: facts.element_bits(t),
    ),
    Function(
        "packed_strides",
        "packed_strides(sizes: list) -> list",
        "Strides, in elements, of a packed row-major tensor of these sizes.",
        _fixed(LIST, returns=LIST),
        _packed_strides,
    ),
    Function(
        "buffer_tensor_size",
        "buffer_tensor_size(t: enum DML_TENSOR_DATA_TYPE, sizes: list, strides: list) -> int",
        "DMLCalcBufferTensorSize: bytes up to the one-past-the-end element, rounded up to 4.",
        _fixed(DATA_TYPE, LIST, LIST, returns=INT),
        _buffer_tensor_size,
    ),
    Function(
        "distinct_offsets",
        "distinct_offsets(sizes: list, strides: list) -> bool",
        "True when no two elements of a tensor of these sizes and strides share a buffer "
        "offset (exact up to 2^22 elements; above, only nested layouts count as distinct).",
        _fixed(LIST, LIST, returns=BOOL),
        _distinct_offsets,
    ),
    Function(
        "has_flag",
        "has_flag(flags: flags X, name: enum X) -> bool",
        "Whether the flag is set.",
        _has_flag,
        lambda facts, flags, name: name in flags,
    ),
    Function(
        "as_type",
        "as_type(x: number, t: enum DML_TENSOR_DATA_TYPE) -> number",
        "The value x takes when stored as data type t: integers wrap modulo 2^bits, "
        "floats round to nearest.",
        _fixed(NUMBER, DATA_TYPE, returns=NUMBER),
        _as_type,
    ),
    Function(
        "all",
        "all(m: mask) -> bool",
        "True when every element of the mask is true.",
        _fixed(MASK, returns=BOOL),
        lambda facts, m: bool(np.all(m)),
        data_only=True,
    ),
    Function(
        "in_bounds",
        "in_bounds(a: array, bound: int | list) -> mask",
        "Element-wise -bound <= a < bound; a list bound applies along the last axis.",
        _in_bounds,
        _in_bounds_impl,
        data_only=True,
    ),
    Function(
        "unique_targets",
        "unique_targets(a: array, bounds: list) -> mask",
        "Per index tuple (the last axis of a, negative entries counted from bounds): "
        "true unless another tuple addresses the same target.",
        _fixed(ARRAY, LIST, returns=MASK),
        _unique_targets,
        data_only=True,
    ),
    Function(
        "each_tuple",
        "each_tuple(m: mask) -> mask",
        "Per index tuple: true when the mask is true for all of its coordinates (last axis).",
        _fixed(MASK, returns=MASK),
        _each_tuple,
        data_only=True,
    ),
    Function(
        "row_cells",
        "row_cells(ok: mask, sizes: list) -> mask",
        "A mask of shape `sizes`, true in the row-major block of each false element of `ok` "
        "(one block per element): the output rows a gather writes from a bad index tuple.",
        _fixed(MASK, LIST, returns=MASK),
        _row_cells,
        data_only=True,
    ),
    Function(
        "slice_cells",
        "slice_cells(ok: mask, a: array, bounds: list, sizes: list) -> mask",
        "A mask of shape `sizes`, true in the slice each index tuple of `a` with a false `ok` "
        "addresses (tuples index the leading `bounds` dimensions after any leading 1s).",
        _fixed(MASK, ARRAY, LIST, LIST, returns=MASK),
        _slice_cells,
        data_only=True,
    ),
    Function(
        "target_cells",
        "target_cells(ok: mask, a: array, axis: int, sizes: list) -> mask",
        "A mask of shape `sizes`, true at the target of each element of `a` with a false `ok`: "
        "its own position with the coordinate along `axis` replaced by its value.",
        _fixed(MASK, ARRAY, INT, LIST, returns=MASK),
        _target_cells,
        data_only=True,
    ),
    Function(
        "unique_along",
        "unique_along(a: array, axis: int, bound: int) -> mask",
        "Per element: true unless another element, with its coordinate along `axis` "
        "replaced by its (normalised) value, addresses the same target.",
        _fixed(ARRAY, INT, INT, returns=MASK),
        _unique_along,
        data_only=True,
    ),
    Function(
        "is_float",
        "is_float(t: enum DML_TENSOR_DATA_TYPE) -> bool",
        "Whether data type t is a floating-point type (from the common spec).",
        _fixed(DATA_TYPE, returns=BOOL),
        lambda facts, t: _data_type_kind(facts, t) == "f",
    ),
    Function(
        "lowest",
        "lowest(t: enum DML_TENSOR_DATA_TYPE) -> number",
        "The most negative finite value of data type t (0 for unsigned types).",
        _fixed(DATA_TYPE, returns=NUMBER),
        _lowest,
    ),
    Function(
        "highest",
        "highest(t: enum DML_TENSOR_DATA_TYPE) -> number",
        "The largest finite value of data type t.",
        _fixed(DATA_TYPE, returns=NUMBER),
        _highest,
    ),
    Function(
        "not_nan",
        "not_nan(a: array) -> mask",
        "Element-wise: a is not NaN (true everywhere for integer data).",
        _fixed(ARRAY, returns=MASK),
        _not_nan,
        data_only=True,
    ),
    Function(
        "not_equal",
        "not_equal(a: array, x: number) -> mask",
        "Element-wise a != x, compared exactly (NaN differs from every x).",
        _fixed(ARRAY, NUMBER, returns=MASK),
        _not_equal,
        data_only=True,
    ),
    Function(
        "fits",
        "fits(a: array, t: enum DML_TENSOR_DATA_TYPE) -> mask",
        "Element-wise: a, rounded toward zero, lies in the range of integer type t (NaN and "
        "infinities never do); true everywhere for a float type.",
        _fixed(ARRAY, DATA_TYPE, returns=MASK),
        _fits,
        data_only=True,
    ),
    Function(
        "power_fits",
        "power_fits(a: array, b: array, t: enum DML_TENSOR_DATA_TYPE) -> mask",
        "Element-wise: a ** b is an integer in the range of integer type t (a negative b "
        "only for a of 1 or -1); true everywhere for a float type.",
        _fixed(ARRAY, ARRAY, DATA_TYPE, returns=MASK),
        _power_fits,
        data_only=True,
    ),
    Function(
        "same_parity",
        "same_parity(a: array, b: array) -> mask",
        "Element-wise: a + b is even (integer data).",
        _fixed(ARRAY, ARRAY, returns=MASK),
        _same_parity,
        data_only=True,
    ),
    Function(
        "either",
        "either(m: mask, n: mask) -> mask",
        "Element-wise m or n (broadcast).",
        _fixed(MASK, MASK, returns=MASK),
        _either,
        data_only=True,
    ),
    Function(
        "both",
        "both(m: mask, n: mask) -> mask",
        "Element-wise m and n (broadcast).",
        _fixed(MASK, MASK, returns=MASK),
        _both,
        data_only=True,
    ),
    Function(
        "at_least",
        "at_least(a: array, x: number) -> mask",
        "Element-wise a >= x, compared exactly.",
        _fixed(ARRAY, NUMBER, returns=MASK),
        cells.at_least,
        data_only=True,
    ),
    Function(
        "all_along",
        "all_along(m: mask, axes: list) -> mask",
        "Per reduced set (the elements that differ only along `axes`, which are kept as "
        "size-1 dimensions): true when m holds for all of them.",
        _fixed(MASK, LIST, returns=MASK),
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
        _fixed(ARRAY, REDUCE_FUNCTION, LIST, DATA_TYPE, returns=MASK),
        cells.reduced_fits,
        data_only=True,
    ),
    Function(
        "gather_cells",
        "gather_cells(ok: mask, count: int, inner: int, sizes: list) -> mask",
        "A mask of shape `sizes`, true at every cell whose `count` coordinates before the "
        "last `inner` address a false element of `ok` (its last `count` dimensions): the "
        "output cells a gather along an axis writes from a bad index.",
        _fixed(MASK, INT, INT, LIST, returns=MASK),
        cells.gather_cells,
        data_only=True,
    ),
    Function(
        "rows_written",
        "rows_written(a: array, sizes: list) -> mask",
        "A mask of shape `sizes` (..., M, N), true in the first c of the M rows, c the "
        "number of non-zero elements of `a` (-0.0 counts as zero, NaN as non-zero).",
        _fixed(ARRAY, LIST, returns=MASK),
        cells.rows_written,
        data_only=True,
    ),
    Function(
        "cells_where_not",
        "cells_where_not(ok: mask, sizes: list) -> mask",
        "A mask of shape `sizes`, true where the element-wise mask `ok` (broadcast to `sizes`) "
        "is false: the output cells of an element-wise operator a bad input element leaves "
        "undefined.",
        _fixed(MASK, LIST, returns=MASK),
        _cells_where_not,
        data_only=True,
    ),
]

FUNCTIONS: dict[str, Function] = {f.name: f for f in _FUNCTION_LIST}
