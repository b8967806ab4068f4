"""Rules that drawing solves for instead of leaving to chance and rejection.

A desc is drawn value by value and kept when the validator accepts it. Where a rule ties many
values together (every dimension of a window inside a tensor, items that partition an axis, sizes
that must be 1), one random draw of each rarely holds; these helpers recognise such rules by
their shape in the spec's expressions and set the values so that they hold. Nothing here names
an operator.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping
from typing import Any

from ..binding import bind_desc
from ..expr import Absent, ExpressionError, nodes
from ..expr.evaluate import Environment, TensorValue, evaluate
from ..expr.solve import guard_of
from ..model import Catalog, OperatorSpec

__all__ = [
    "items_as_required",
    "ones_where_required",
    "partition_along_axis",
    "presence_allows",
    "presence_as_required",
    "shape_alternatives",
    "values_as_required",
    "windows_inside",
]


def ones_where_required(spec: OperatorSpec, desc: dict[str, Any]) -> None:
    """Drawn sizes that rules such as all_ones(T.Sizes) or all_ones(T.Sizes[:-2]) require to be
    1 are set to 1 (NONZERO_COORDINATES' count and leading coordinate dimensions)."""
    for constraint in spec.constraints:
        if constraint.constraint_class != "error":
            continue
        match constraint.expr.tree:
            case nodes.Call(func="all_ones", args=(argument,)):
                pass
            case _:
                continue
        stop: int | None = None
        match argument:
            case nodes.Member(obj=nodes.Name(id=name), member="Sizes"):
                pass
            case nodes.Slice(
                obj=nodes.Member(obj=nodes.Name(id=name), member="Sizes"),
                lower=None,
                upper=nodes.Unary(op="-", operand=nodes.Literal(value=int() as stop)),
            ):
                stop = -stop
            case nodes.Slice(
                obj=nodes.Member(obj=nodes.Name(id=name), member="Sizes"),
                lower=None,
                upper=nodes.Literal(value=int() as stop),
            ):
                pass
            case _:
                continue
        tensor = desc.get(name)
        if isinstance(tensor, dict) and isinstance(tensor.get("Sizes"), list):
            sizes = tensor["Sizes"]
            end = len(sizes) if stop is None else len(sizes) + stop if stop < 0 else stop
            tensor["Sizes"] = [1 if i < end else n for i, n in enumerate(sizes)]


def _present_only(node: nodes.Node) -> set[str] | None:
    """The fields a rule made only of present() calls, `and`, `or` and `not` asks about; None
    for any other rule."""
    match node:
        case nodes.Call(func="present", args=(nodes.Name(id=name),)):
            return {name}
        case nodes.Unary(op="not", operand=operand):
            return _present_only(operand)
        case nodes.BoolOp(values=values):
            found: set[str] = set()
            for value in values:
                names = _present_only(value)
                if names is None:
                    return None
                found |= names
            return found
    return None


def _holds(node: nodes.Node, given: frozenset[str]) -> bool:
    match node:
        case nodes.Call(args=(nodes.Name(id=name),)):
            return name in given
        case nodes.Unary(operand=operand):
            return not _holds(operand, given)
        case nodes.BoolOp(op="and", values=values):
            return all(_holds(v, given) for v in values)
        case nodes.BoolOp(values=values):
            return any(_holds(v, given) for v in values)
    return False


_PresenceChoices = tuple[tuple[str, ...], tuple[frozenset[str], ...]]
# per spec (by identity: a spec may hold lists, so it is not always hashable), the spec kept
# so that its id stays its own
_PRESENCE: dict[int, tuple[OperatorSpec, _PresenceChoices]] = {}


def _presence_choices(spec: OperatorSpec) -> _PresenceChoices:
    """The optional fields the spec's presence rules ask about, and every set of them given
    that all those rules allow (MULTIHEAD_ATTENTION's exactly one query, key and value); found
    once per spec."""
    if id(spec) not in _PRESENCE:
        _PRESENCE[id(spec)] = (spec, _find_presence_choices(spec))
    return _PRESENCE[id(spec)][1]


def _find_presence_choices(spec: OperatorSpec) -> _PresenceChoices:
    rules = []
    fields: set[str] = set()
    for constraint in spec.constraints:
        names = _present_only(constraint.expr.tree)
        if constraint.constraint_class == "error" and names:
            rules.append(constraint.expr.tree)
            fields |= names
    if not rules or len(fields) > 16:
        return (), ()
    ordered = tuple(sorted(fields))
    allowed = tuple(
        given
        for picks in itertools.product((False, True), repeat=len(ordered))
        if all(
            _holds(rule, given := frozenset(f for f, p in zip(ordered, picks, strict=True) if p))
            for rule in rules
        )
    )
    return ordered, allowed


def undefining_inputs(spec: OperatorSpec) -> frozenset[str]:
    """Optional inputs whose presence alone breaks a requires rule made only of present()
    calls, one that holds without them (MULTIHEAD_ATTENTION1's PastSequenceLengthsTensor,
    whose effect is undefined): a case given one judges none of the outputs that rule leaves
    undefined, so draws leave them out unless a cell forces them."""
    found: set[str] = set()
    for constraint in spec.constraints:
        tree = constraint.expr.tree
        names = _present_only(tree)
        if constraint.constraint_class == "requires" and names and _holds(tree, frozenset()):
            found |= {name for name in names if not _holds(tree, frozenset({name}))}
    return frozenset(
        f.name for f in spec.fields if f.name in found and f.kind == "input_tensor" and f.optional
    )


def presence_allows(spec: OperatorSpec, given: set[str]) -> bool:
    """Whether the spec's presence rules let every field of `given` be given together (not
    MULTIHEAD_ATTENTION's QueryTensor with its StackedQueryKeyTensor)."""
    fields, allowed = _presence_choices(spec)
    asked = given & set(fields)
    return not fields or any(asked <= choice for choice in allowed)


def presence_as_required(
    spec: OperatorSpec, forced: set[str], rng: random.Random
) -> dict[str, bool]:
    """Which optional fields to give, where rules made only of present() tie them (`exactly
    one of QueryTensor, StackedQueryKeyTensor, StackedQueryKeyValueTensor`): one of the sets
    the rules allow, at random, among those that give every `forced` field. Empty where the
    spec has no such rule (each optional field is then drawn alone)."""
    fields, allowed = _presence_choices(spec)
    fitting = [given for given in allowed if forced & set(fields) <= given]
    if not fitting:
        return {}
    given = rng.choice(fitting)
    return {field: field in given for field in fields}


def partition_along_axis(spec: OperatorSpec, desc: dict[str, Any], rng: random.Random) -> None:
    """Tensor arrays whose items must match another tensor except along an axis, where their
    sizes sum to its size (JOIN's inputs, SPLIT's outputs: `same_sizes_except(Items, Tensor,
    Axis)` with `sum_along(Items, Axis)`): the items get the other tensor's sizes with a part
    of the axis each, instead of being left to chance."""
    for constraint in spec.constraints:
        for node in nodes.walk(constraint.expr.tree):
            if not (isinstance(node, nodes.Call) and node.func == "same_sizes_except"):
                continue
            items, other, axis = node.args
            if not (
                isinstance(items, nodes.Name)
                and isinstance(other, nodes.Name)
                and isinstance(axis, nodes.Name)
                and isinstance(desc.get(items.id), list)
                and isinstance(desc.get(other.id), dict)
                and isinstance(desc.get(axis.id), int)
            ):
                continue
            tensors, index = desc[items.id], desc[axis.id]
            base = list(tensors[0]["Sizes"])
            if not 0 <= index < len(base):
                continue
            parts = [rng.choice((1, 1, 2, 3)) for _ in tensors]
            for tensor, part in zip(tensors, parts, strict=True):
                tensor["Sizes"] = [part if d == index else n for d, n in enumerate(base)]
            desc[other.id]["Sizes"] = [sum(parts) if d == index else n for d, n in enumerate(base)]


def _item(node: nodes.Node, desc: dict[str, Any]) -> dict[str, Any] | None:
    """The tensor desc `item_sizes(Ts, k)` or `item_data_type(Ts, k)` names, if drawn."""
    match node:
        case nodes.Call(
            func="item_sizes" | "item_data_type",
            args=(nodes.Name(id=name), nodes.Literal(value=int() as index)),
        ):
            items = desc.get(name)
            if isinstance(items, list) and 0 <= index < len(items):
                item = items[index]
                return item if isinstance(item, dict) else None
    return None


def items_as_required(
    spec: OperatorSpec,
    desc: dict[str, Any],
    rng: random.Random,
    allowed: Mapping[str, set[str]] | None = None,
) -> None:
    """Items of a tensor array that rules give a type and sizes of their own (QUANTIZE's scale
    and zero point: `item_data_type(Ts, k) == T.DataType`, `item_sizes(Ts, 1) ==
    item_sizes(Ts, 0)`, `each_divides(item_sizes(Ts, 0), T.Sizes)`): set so that the rules
    hold, the divisors drawn per dimension (1, the whole size, or another divisor). A type rule
    keeps the item's drawn type (a forced cell) and gives it to T where T's `allowed` types hold
    it, else the item takes T's."""
    copies = []
    for constraint in spec.constraints:
        if constraint.constraint_class != "error":
            continue
        match constraint.expr.tree:
            case nodes.Compare(
                ops=("==",),
                first=left,
                rest=(nodes.Member(obj=nodes.Name(id=name), member="DataType"),),
            ):
                item = _item(left, desc)
                if item is None or not isinstance(desc.get(name), dict):
                    continue
                if item["DataType"] in (allowed or {}).get(name, ()):
                    desc[name]["DataType"] = item["DataType"]
                else:
                    item["DataType"] = desc[name]["DataType"]
            case nodes.Call(
                func="each_divides",
                args=(divisor, nodes.Member(obj=nodes.Name(id=name), member="Sizes")),
            ):
                item = _item(divisor, desc)
                sizes = desc.get(name, {}).get("Sizes")
                if item is None or not isinstance(sizes, list):
                    continue
                item["Sizes"] = [_divisor(n, rng) for n in sizes]
            case nodes.Compare(
                ops=("==",),
                first=nodes.Call(func="item_sizes") as left,
                rest=(nodes.Call(func="item_sizes") as right,),
            ):
                copies.append((left, right))
    for left, right in copies:  # after the sizes they copy were drawn
        target, source = _item(left, desc), _item(right, desc)
        if target is not None and source is not None:
            target["Sizes"] = list(source["Sizes"])


def _divisor(size: int, rng: random.Random) -> int:
    """1 (per tensor along this dimension), the size (per element), or another divisor (a
    block of size // divisor elements), at random."""
    divisors = [d for d in range(2, size) if size % d == 0]
    choice = rng.random()
    if choice < 0.5 or size == 1:
        return 1
    if choice < 0.75 or not divisors:
        return size
    return rng.choice(divisors)


def windows_inside(
    catalog: Catalog, spec: OperatorSpec, desc: dict[str, Any], rng: random.Random
) -> None:
    """Windows solved for instead of left to chance (SLICE1, SLICE_GRAD): arrays a rule such
    as `each_at_most(add_each(Offsets, Sizes), T.Sizes)` keeps inside a tensor get, per
    dimension, a size from 1 to the tensor's and an offset that keeps the window inside; a
    drawn tensor that a rule such as `each_at_most(T.Sizes, strided_count(Sizes, Strides))`
    bounds by the elements a window visits is cut to them. One random draw of every dimension
    rarely held (50 rejected descs per SLICE1 case)."""
    for constraint in spec.constraints:
        if constraint.constraint_class != "error":
            continue
        match constraint.expr.tree:
            case nodes.Call(
                func="each_at_most",
                args=(
                    nodes.Call(
                        func="add_each", args=(nodes.Name(id=offsets), nodes.Name(id=sizes))
                    ),
                    nodes.Member(obj=nodes.Name(id=name), member="Sizes"),
                ),
            ):
                bound = desc.get(name, {}).get("Sizes")
                if not _same_lengths(bound, desc.get(offsets), desc.get(sizes)):
                    continue
                for i, size in enumerate(bound):
                    desc[sizes][i] = rng.randint(1, max(1, size))
                    desc[offsets][i] = rng.randint(0, max(0, size - desc[sizes][i]))
            case nodes.Call(
                func="each_at_most",
                args=(nodes.Member(obj=nodes.Name(id=name), member="Sizes"), nodes.Call() as count),
            ):
                drawn = desc.get(name, {}).get("Sizes")
                env = bind_desc(catalog.common, spec, {k: v for k, v in desc.items()})
                try:
                    limits = evaluate(count, env, constraint.id)
                except (Absent, ExpressionError, ArithmeticError, TypeError, ValueError):
                    continue
                if _same_lengths(drawn, limits):
                    cut = zip(drawn, limits, strict=True)
                    desc[name]["Sizes"] = [min(n, max(1, m)) for n, m in cut]


def shape_alternatives(
    catalog: Catalog, spec: OperatorSpec, desc: dict[str, Any], rng: random.Random
) -> None:
    """A tensor whose sizes a rule allows in a few shapes (the quantized operators' scales and
    zero points: `not present(T) or all_ones(T.Sizes) or pad_left(T.Sizes, 4) == [1, 1, M,
    1]`; the length may be an expression, `OutputTensor.DimensionCount`) gets one of them,
    picked at random: all 1s, or the target list (evaluated on the desc drawn so far) at the
    tensor's drawn rank, where the dimensions it leaves out are 1s.
    A shape the drawn rank cannot take falls back to all 1s. Run once the sizes the targets
    read are drawn and derived."""
    for constraint in spec.constraints:
        if constraint.constraint_class != "error":
            continue
        tree = constraint.expr.tree
        if not (isinstance(tree, nodes.BoolOp) and tree.op == "or"):
            continue
        tensor: str | None = None
        shapes: list[tuple[nodes.Node, nodes.Node] | None] = []  # None: all 1s
        for alternative in tree.values:
            match alternative:
                case nodes.Call(
                    func="all_ones", args=(nodes.Member(obj=nodes.Name(id=name), member="Sizes"),)
                ):
                    shapes.append(None)
                case nodes.Compare(
                    first=nodes.Call(
                        func="pad_left",
                        args=(
                            nodes.Member(obj=nodes.Name(id=name), member="Sizes"),
                            length,
                        ),
                    ),
                    ops=("==",),
                    rest=(target,),
                ):
                    shapes.append((target, length))
                case nodes.Unary(op="not", operand=nodes.Call(func="present")):
                    continue
                case _:
                    shapes = []
                    break
            if tensor not in (None, name):
                shapes = []
                break
            tensor = name
        entry = desc.get(tensor or "")
        if not shapes or not isinstance(entry, dict) or not isinstance(entry.get("Sizes"), list):
            continue
        rank = len(entry["Sizes"])
        entry["Sizes"] = [1] * rank
        shape = rng.choice(shapes)
        if shape is None:
            continue
        target, length_node = shape
        env = bind_desc(catalog.common, spec, desc)
        try:
            padded = evaluate(target, env, constraint.id)
            length = evaluate(length_node, env, constraint.id)
        except (Absent, ExpressionError, ArithmeticError, TypeError, ValueError):
            continue
        if not isinstance(padded, list) or len(padded) != length:
            continue
        left_out = padded[: max(0, length - rank)]
        if all(n == 1 for n in left_out):
            entry["Sizes"] = [1] * max(0, rank - length) + padded[len(left_out) :]


def _same_lengths(*values: Any) -> bool:
    return all(isinstance(v, list) for v in values) and len({len(v) for v in values}) == 1


def values_as_required(
    catalog: Catalog, spec: OperatorSpec, desc: dict[str, Any], rng: random.Random
) -> None:
    """Drawn values set so that rules tying them hold (CONVOLUTION's channels, groups and
    windows), each rule under its guards (`Direction != "FORWARD" or ...` where Direction is
    FORWARD; `not present(T) or MaskType != "BOOLEAN" or ...` where T is given and MaskType
    BOOLEAN). In passes, so a later one keeps what an earlier one set: leading sizes that must
    be 1 (`all_ones(T.Sizes[:-3])`), scalars and array items at their least (`GroupCount >=
    1`, `all_at_least(Strides, 1)`, `all_greater(Scales, 0)`), sizes rounded up to a multiple
    (`FilterTensor.Sizes[0] % GroupCount == 0`), sizes one item of a rule defines
    (`InputTensor.Sizes[1] == FilterTensor.Sizes[1] * GroupCount`, negative indices too),
    sizes that must broadcast to a target (each the target's or 1), then windows that must fit
    (`all_at_least(window_output_sizes(...), 1)`: the window shrunk;
    `all_at_least(transposed_output_sizes(...), 1)`: the paddings cut)."""
    bound = _Bound(catalog, spec, desc)
    for solve in (_ones, _at_least, _multiple, _item_equal, _broadcast, _window_fits):
        for constraint in spec.constraints:
            if constraint.constraint_class != "error":
                continue
            guards, rule = _guards(constraint.expr.tree)
            try:
                if not all(evaluate(guard, bound.env(), constraint.id) for guard in guards):
                    continue
            except (Absent, ExpressionError, ArithmeticError, TypeError, ValueError):
                continue
            terms = rule.values if isinstance(rule, nodes.BoolOp) and rule.op == "and" else (rule,)
            for term in terms:
                try:
                    solve(term, desc, bound.env(), constraint.id, rng)
                except (Absent, ExpressionError, ArithmeticError, TypeError, ValueError):
                    continue


class _Bound:
    """A desc being solved, bound for the rules' expressions again only once it changed: the
    passes read it for every rule and term, and most leave it as it was (bound each time,
    MULTIHEAD_ATTENTION's 26 rules took 560 bindings, about 2 s, per draw); only the tensors
    that changed are bound again."""

    def __init__(self, catalog: Catalog, spec: OperatorSpec, desc: dict[str, Any]) -> None:
        self._common, self._spec, self._desc = catalog.common, spec, desc
        self._key: str | None = None
        self._env: Environment | None = None
        self._tensors: dict[str, tuple[str, TensorValue]] = {}

    def env(self) -> Environment:
        key = repr(self._desc)  # the solvers change the desc in place: its text says whether
        if self._env is None or key != self._key:
            self._env = bind_desc(self._common, self._spec, self._desc, tensors=self._tensors)
            self._key = key
        return self._env


def _guards(tree: nodes.Node) -> tuple[list[nodes.Node], nodes.Node]:
    """A rule's guards and what it requires under them: `Field != "MEMBER" or rule` as
    guard_of reads it; `not present(T) or ... or rule`, every operand but the last a
    `not present(...)` or `Field != "MEMBER"`, as the guards `present(T)`, `Field ==
    "MEMBER"`, ... and the last operand."""
    guard, rule = guard_of(tree)
    if guard is not None or not (isinstance(tree, nodes.BoolOp) and tree.op == "or"):
        return ([] if guard is None else [guard]), rule
    guards: list[nodes.Node] = []
    for value in tree.values[:-1]:
        match value:
            case nodes.Unary(op="not", operand=nodes.Call(func="present") as given):
                guards.append(given)
            case nodes.Compare(first=nodes.Name() as field, ops=("!=",), rest=(nodes.Literal(),)):
                guards.append(nodes.Compare(value.col, field, ("==",), value.rest))
            case _:
                return [], tree
    return guards, tree.values[-1]


def _slot(node: nodes.Node, desc: dict[str, Any]) -> tuple[Any, Any] | None:
    """Where a drawn value a node names is held: (desc, field) for an int field, (sizes, i)
    for an item of a drawn tensor's Sizes."""
    match node:
        case nodes.Name(id=name) if isinstance(desc.get(name), int):
            return desc, name
        case nodes.Index(
            obj=nodes.Member(obj=nodes.Name(id=name), member="Sizes"),
            index=nodes.Literal(value=int() as index)
            | nodes.Unary(op="-", operand=nodes.Literal(value=int() as index)) as at,
        ):
            index = -index if isinstance(at, nodes.Unary) else index
            sizes = desc.get(name, {}).get("Sizes") if isinstance(desc.get(name), dict) else None
            if isinstance(sizes, list) and -len(sizes) <= index < len(sizes):
                return sizes, index
    return None


def _items(node: nodes.Node, desc: dict[str, Any]) -> tuple[list[int], int] | None:
    """A drawn list a node names, and where the named part starts: an array field, a tensor's
    Sizes, or a tail of them (`FilterTensor.Sizes[2:]`)."""
    match node:
        case nodes.Name(id=name) if isinstance(desc.get(name), list):
            return desc[name], 0
        case nodes.Member(obj=nodes.Name(id=name), member="Sizes"):
            sizes = desc.get(name, {}).get("Sizes") if isinstance(desc.get(name), dict) else None
            return (sizes, 0) if isinstance(sizes, list) else None
        case nodes.Slice(obj=obj, lower=nodes.Literal(value=int() as start), upper=None):
            found = _items(obj, desc)
            return None if found is None else (found[0], found[1] + start)
    return None


def _at_least(
    term: nodes.Node, desc: dict[str, Any], env: Any, rule: str, rng: random.Random
) -> None:
    match term:
        case nodes.Compare(first=first, ops=(">=",), rest=(nodes.Literal(value=int() as least),)):
            slot = _slot(first, desc)
            if slot is not None and slot[0][slot[1]] < least:
                slot[0][slot[1]] = rng.randint(least, least + 2)
        case nodes.Call(func="all_at_least", args=(items, nodes.Literal(value=int() as least))):
            found = _items(items, desc)
            if found is not None:
                values, start = found
                for i in range(start, len(values)):
                    if isinstance(values[i], int) and values[i] < least:
                        values[i] = rng.randint(least, least + 1)
        case nodes.Call(
            func="all_greater", args=(items, nodes.Literal(value=int() | float() as bound))
        ):
            found = _items(items, desc)
            if found is not None:  # RESAMPLE's Scales > 0: a factor up or down
                scales: list[Any] = found[0]
                for i in range(found[1], len(scales)):
                    if scales[i] <= bound:
                        scales[i] = bound + rng.choice((0.25, 0.5, 1.0, 2.0, 3.0))


def _multiple(
    term: nodes.Node, desc: dict[str, Any], env: Any, rule: str, rng: random.Random
) -> None:
    match term:
        case nodes.Compare(
            first=nodes.Binary(op="%", left=left, right=right),
            ops=("==",),
            rest=(nodes.Literal(value=0),),
        ):
            slot = _slot(left, desc)
            factor = evaluate(right, env, rule)
            if slot is not None and isinstance(factor, int) and factor > 0:
                value = slot[0][slot[1]]
                slot[0][slot[1]] = max(1, -(-value // factor)) * factor


def _item_equal(
    term: nodes.Node, desc: dict[str, Any], env: Any, rule: str, rng: random.Random
) -> None:
    match term:
        case nodes.Compare(first=first, ops=("==",), rest=(second,)) if isinstance(
            first, nodes.Index
        ):
            slot = _slot(first, desc)
            value = evaluate(second, env, rule)
            if slot is not None and isinstance(value, int) and value >= 1:
                slot[0][slot[1]] = value


def _ones(term: nodes.Node, desc: dict[str, Any], env: Any, rule: str, rng: random.Random) -> None:
    """`all_ones(T.Sizes[:-n])` inside a rule: those leading sizes set to 1."""
    match term:
        case nodes.Call(
            func="all_ones",
            args=(
                nodes.Slice(
                    obj=nodes.Member(obj=nodes.Name(id=name), member="Sizes"),
                    lower=None,
                    upper=nodes.Unary(op="-", operand=nodes.Literal(value=int() as stop)),
                ),
            ),
        ):
            sizes = desc.get(name, {}).get("Sizes") if isinstance(desc.get(name), dict) else None
            if isinstance(sizes, list):
                for i in range(max(0, len(sizes) - stop)):
                    sizes[i] = 1


def _broadcast(
    term: nodes.Node, desc: dict[str, Any], env: Any, rule: str, rng: random.Random
) -> None:
    """`broadcastable(T.Sizes, target)` or `broadcastable(pad_left(T.Sizes, n), target)`:
    each of T's sizes the target's or 1, at random (the dimensions pad_left adds stay 1s)."""
    match term:
        case nodes.Call(func="broadcastable", args=(sizes_node, target)):
            pass
        case _:
            return
    match sizes_node:
        case nodes.Member(obj=nodes.Name(id=name), member="Sizes"):
            pass
        case nodes.Call(
            func="pad_left", args=(nodes.Member(obj=nodes.Name(id=name), member="Sizes"), _)
        ):
            pass
        case _:
            return
    sizes = desc.get(name, {}).get("Sizes") if isinstance(desc.get(name), dict) else None
    wanted = evaluate(target, env, rule)
    if not isinstance(sizes, list) or not isinstance(wanted, list):
        return
    for i in range(1, min(len(sizes), len(wanted)) + 1):
        sizes[-i] = wanted[-i] if rng.random() < 0.7 else 1
    for i in range(len(wanted), len(sizes)):
        sizes[len(sizes) - 1 - i] = 1


def _window_fits(
    term: nodes.Node, desc: dict[str, Any], env: Any, rule: str, rng: random.Random
) -> None:
    match term:
        case nodes.Call(
            func="all_at_least",
            args=(nodes.Call(func="window_output_sizes" | "transposed_output_sizes") as sizes, _),
        ):
            pass
        case _:
            return
    found = [_items(arg, desc) for arg in sizes.args]
    for i, arg in enumerate(sizes.args):  # a list the rule computes (a pooling's dilations of 1)
        if found[i] is None and isinstance(arg, nodes.Call):
            value = evaluate(arg, env, rule)
            found[i] = (list(value), 0) if isinstance(value, list) else None
    if any(f is None for f in found):
        return
    lists = [f[0][f[1] :] for f in found if f is not None]
    if len({len(items) for items in lists}) != 1:
        return
    inputs, windows, strides, dilations, start, end = lists[:6]
    for i in range(len(inputs)):
        if sizes.func == "window_output_sizes":  # the dilated window fits in the padded input
            padded = inputs[i] + start[i] + end[i]
            fitting = max(1, (padded - 1) // max(1, dilations[i]) + 1)
            window = found[1]
            if window is not None and windows[i] > fitting:
                window[0][window[1] + i] = fitting
        else:  # the paddings leave at least one element of the transposed result
            full = (inputs[i] - 1) * strides[i] + (windows[i] - 1) * dilations[i] + 1 + lists[6][i]
            (before, first), (after, last) = found[4], found[5]  # type: ignore[misc]
            while (
                before[first + i] + after[last + i] >= full
                and before[first + i] + after[last + i] > 0
            ):
                if after[last + i] > 0:
                    after[last + i] -= 1
                else:
                    before[first + i] -= 1
