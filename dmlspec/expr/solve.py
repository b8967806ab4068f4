"""Derive dependent values from constraints, for building valid descs from free choices.

A constraint of the form `Target == expression` (or `all_equal(a, b, ...)`), where Target is
a field (`Axis`) or a tensor member (`UpdatesTensor.Sizes`) that the right-hand side does not
mention, defines Target: a test-data strategy draws the free values, then evaluates each
derivation in dependency order. Validators and strategies use the same parsed expressions,
so a size rule is written once, in the spec.

A rule that holds only for one member of an enum field, `Direction != "FORWARD" or Target ==
expression` with Target a tensor member, defines Target under that guard (`Direction ==
"FORWARD"`): a target may have one such derivation per guard, and the one whose guard holds
for the drawn values is used (binding.derive_members).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from . import nodes

__all__ = ["Derivation", "derivations", "guard_of", "order_derivations", "target_of"]


@dataclass(frozen=True)
class Derivation:
    target: str  # "UpdatesTensor.Sizes" or "Axis"
    expr: nodes.Node
    constraint_id: str
    # `Field == "MEMBER"`: the derivation holds only where it does (None: always).
    guard: nodes.Node | None = None


def target_of(node: nodes.Node) -> str | None:
    """The assignable name a node denotes, or None."""
    match node:
        case nodes.Name(id=name):
            return name
        case nodes.Member(obj=nodes.Name(id=owner), member=member):
            return f"{owner}.{member}"
    return None


# Memo for references(), keyed by object identity: test-case generation asks the same
# questions of the same spec trees thousands of times. Entries keep their node and
# definitions alive, so an id is never reused while its entry exists.
_REFERENCES: dict[tuple[int, int], tuple[nodes.Node, object, frozenset[str]]] = {}
_REFERENCES_LIMIT = 1 << 16


def references(node: nodes.Node, definitions: Mapping[str, nodes.Node]) -> set[str]:
    """Every field and member a node reads, seeing through named definitions."""
    key = (id(node), id(definitions))
    hit = _REFERENCES.get(key)
    if hit is not None and hit[0] is node and hit[1] is definitions:
        return set(hit[2])
    found = _references(node, definitions)
    if len(_REFERENCES) >= _REFERENCES_LIMIT:
        _REFERENCES.clear()
    _REFERENCES[key] = (node, definitions, frozenset(found))
    return found


def _references(node: nodes.Node, definitions: Mapping[str, nodes.Node]) -> set[str]:
    found: set[str] = set()
    for child in nodes.walk(node):
        if isinstance(child, nodes.Member):
            found.add(f"{child.obj.id}.{child.member}")
        elif isinstance(child, nodes.Name):
            if child.id in definitions:
                found |= references(definitions[child.id], definitions)
            else:
                found.add(child.id)
    # `T.Sizes` also reads `T` (the name node under the member); keep only what is read.
    return {name for name in found if not any(other.startswith(name + ".") for other in found)}


def derivations(
    constraints: Iterable[tuple[str, nodes.Node]], definitions: Mapping[str, nodes.Node]
) -> tuple[Derivation, ...]:
    """Each equality constraint read as a definition of its left side (first one wins; a
    guarded one per guard, before an unguarded one)."""
    found: dict[str, list[Derivation]] = {}
    for constraint_id, expr in constraints:
        guard, rule = guard_of(expr)
        for target, source in _equalities(rule):
            if target in references(source, definitions):
                continue
            if guard is not None and "." not in target:
                continue  # guarded size rules only: a count (RNN's) stays drawn
            known = found.setdefault(target, [])
            if any(d.guard is None or d.guard == guard for d in known):
                continue
            known.append(Derivation(target, source, constraint_id, guard))
    return tuple(d for ds in found.values() for d in ds)


def guard_of(expr: nodes.Node) -> tuple[nodes.Node | None, nodes.Node]:
    """`Field != "MEMBER" or rule` as (the guard `Field == "MEMBER"`, rule); any other
    expression as (None, itself)."""
    match expr:
        case nodes.BoolOp(
            op="or",
            values=(
                nodes.Compare(
                    first=nodes.Name() as field, ops=("!=",), rest=(nodes.Literal(),)
                ) as negated,
                rule,
            ),
        ):
            return nodes.Compare(negated.col, field, ("==",), negated.rest), rule
    return None, expr


def _equalities(expr: nodes.Node) -> list[tuple[str, nodes.Node]]:
    match expr:
        case nodes.Compare(first=first, ops=("==",), rest=(second,)):
            # `Target == expression` by convention; `expression == Target` also reads.
            if (target := target_of(first)) is not None:
                return [(target, second)]
            if (target := target_of(second)) is not None:
                return [(target, first)]
            return []
        case nodes.BoolOp(op="and", values=values):
            return [pair for value in values for pair in _equalities(value)]
        case nodes.BoolOp(
            op="or",
            values=(nodes.Unary(op="not", operand=nodes.Call(func="present", args=(guard,))), rule),
        ):
            # `not present(T) or T.X == e`: when T is given, the equality defines its members.
            owner = target_of(guard)
            return [(t, e) for t, e in _equalities(rule) if t.partition(".")[0] == owner]
        case nodes.Call(func="all_equal", args=(first, *others)):
            return [(t, first) for o in others if (t := target_of(o)) is not None]
    return []


def order_derivations(
    chosen: Iterable[Derivation], free: Iterable[str], definitions: Mapping[str, nodes.Node]
) -> list[Derivation]:
    """Derivations in an order where each reads only free or already derived values."""
    known = set(free)
    pending = list(chosen)
    ordered: list[Derivation] = []
    while pending:
        ready = [d for d in pending if references(d.expr, definitions) <= known]
        if not ready:
            missing = sorted(
                set().union(*(references(d.expr, definitions) for d in pending)) - known
            )
            raise ValueError(f"cannot derive {[d.target for d in pending]}: needs {missing}")
        for derivation in ready:
            ordered.append(derivation)
            known.add(derivation.target)
            pending.remove(derivation)
    return ordered
