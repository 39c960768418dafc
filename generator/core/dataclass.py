"""The package's `dataclass`: the standard library's, with comparison, hash and repr shared rather
than compiled for each class.

    from generator.core.dataclass import dataclass

    @dataclass(frozen=True)
    class Budget:
        metric: str
        limit: float = 0.0

is the standard library's `@dataclass(frozen=True)` to every reader and every tool:
`dataclasses.fields`, `replace`, `asdict` and `is_dataclass` work, and `==`, `hash` and `repr`
give what a dataclass gives (tests/core/test_dataclass.py holds each to the standard library's
own, field by field).

Why it exists: Python 3.11's `dataclass` writes each method as source text and compiles it,
six for a frozen class (`__init__`, `__repr__`, `__eq__`, `__hash__`, `__setattr__`,
`__delattr__`), 1 to 2 ms a class. `readout check` defines 69 before it reads a claim, and
compiling their methods was about a fifth of its time. Comparison, hashing and repr need nothing a class's field
names cannot give, so they are one function each here, bound to the class's fields through
`operator.attrgetter` (C, as fast as the generated tuple); only `__init__` and a frozen class's
two guards are still compiled by dataclasses. `==` follows the interpreter's own rule: a tuple of
the fields up to Python 3.12, field by field from 3.13 (where a NaN in a field tells them apart).

A class that defines `__eq__`, `__hash__` or `__repr__` in its own body keeps its own, as a
dataclass would.

What dataclasses still compiles (`__init__`, and a frozen class's guards) is compiled once per
machine, not once per start: dataclasses hands each method's source text to `exec`, and while the
package's decorator runs, that `exec` finds the code compiled from the same text in a signed memo
(generator.storage.memo, kept under the package's code, Python's version and its optimisation
level) before compiling it. The text is the whole key and the code is what `compile` makes of it,
so a class is made exactly as dataclasses makes it; compiling these methods was the largest
single cost of a `readout check` after the first (about a tenth of it, measured on the SciFact
review). The standard library's `dataclasses` is touched only while the decorator runs, under a
lock, so a dataclass of any other library is made as before.
"""

from __future__ import annotations

import atexit
import dataclasses
import reprlib
import sys
import threading
import types
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar

from generator.storage.memo import default_memo

T = TypeVar("T", bound=type)
# How the interpreter's dataclasses compare instances: as tuples of the fields up to 3.12, field by
# field from 3.13.
_FIELD_BY_FIELD = sys.version_info >= (3, 13)


def dataclass(cls: T | None = None, /, *, frozen: bool = False, slots: bool = False,
              kw_only: bool = False) -> Any:
    """`@dataclass`, `@dataclass(frozen=True)`, `@dataclass(frozen=True, slots=True)`: init, repr
    and eq (and a hash when frozen), as the standard library's with the same options."""
    def wrap(target: T) -> T:
        own = {name for name in ("__eq__", "__hash__", "__repr__") if name in target.__dict__}
        # An `__eq__` in the body leaves `__hash__ = None` in the class dict; that is not a hash
        # the author wrote (dataclasses draws the same line).
        if "__hash__" in own and target.__dict__["__hash__"] is None and "__eq__" in own:
            own.discard("__hash__")
        with _REMEMBERED_EXEC:
            dataclasses.exec = _exec_remembered   # type: ignore[attr-defined]
            try:
                made = dataclasses.dataclass(target, frozen=frozen, slots=slots, kw_only=kw_only,
                                             repr=False, eq=False)
            finally:
                del dataclasses.exec   # type: ignore[attr-defined]
        _share_methods(made, frozen=frozen, own=own)
        return made

    return wrap if cls is None else wrap(cls)


def _share_methods(cls: type, *, frozen: bool, own: set[str]) -> None:
    fields = dataclasses.fields(cls)
    compared = _key([field.name for field in fields if field.compare])
    hashed = _key([field.name for field in fields if (field.compare if field.hash is None else field.hash)])
    shown = tuple(field.name for field in fields if field.repr)

    if _FIELD_BY_FIELD:
        def __eq__(self: Any, other: Any) -> Any:
            # Python 3.13's rule: the same object is equal; otherwise each field with `==`, chained
            # as `and` chains them (a field holding NaN makes two instances unequal, where a tuple
            # sees one object and calls them equal).
            if self is other:
                return True
            if other.__class__ is self.__class__:
                outcome: Any = True
                for mine, theirs in zip(compared(self), compared(other)):
                    outcome = mine == theirs
                    if not outcome:
                        return outcome
                return outcome
            return NotImplemented
    else:
        def __eq__(self: Any, other: Any) -> Any:
            if other.__class__ is self.__class__:
                return compared(self) == compared(other)
            return NotImplemented

    def __hash__(self: Any) -> int:
        return hash(hashed(self))

    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        values = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{self.__class__.__qualname__}({values})"

    for name, method in (("__eq__", __eq__), ("__repr__", __repr__)):
        if name not in own:
            method.__qualname__ = f"{cls.__qualname__}.{name}"
            setattr(cls, name, method)
    if "__hash__" not in own:
        # The dataclass rule for eq=True: a frozen class hashes its fields; a mutable one is
        # unhashable, as any class that defines __eq__ alone.
        if frozen:
            __hash__.__qualname__ = f"{cls.__qualname__}.__hash__"
        cls.__hash__ = __hash__ if frozen else None   # type: ignore[method-assign, assignment]


def _key(names: list[str]) -> Callable[[Any], tuple]:
    """The tuple of these attributes (attrgetter gives a bare value for one name, nothing for none)."""
    if not names:
        return lambda instance: ()
    if len(names) == 1:
        get = attrgetter(names[0])
        return lambda instance: (get(instance),)
    return attrgetter(*names)


# One class at a time: dataclasses' module namespace is shared by every thread.
_REMEMBERED_EXEC = threading.RLock()
_MEMO_KIND = "dataclass methods"


class _CompiledMethods:
    """The code compiled from each method text dataclasses wrote, by the text: read from the memo
    at the first class, written back when a class compiled something new, at exit or, for a
    process that leaves without its exit handlers (`readout`: generator.commands.cli.run), when
    `save_compiled_methods` is called."""

    def __init__(self) -> None:
        self.codes: dict[str, types.CodeType] | None = None
        self.compiled = 0   # compiled in this process, not found in the memo

    def code(self, source: str) -> types.CodeType:
        if self.codes is None:
            self.codes = self._remembered()
            atexit.register(self.save)
        code = self.codes.get(source)
        if code is None:
            # dont_inherit: the flags of dataclasses' own `exec` (this module's `annotations`
            # future would make every annotation of an `__init__` a string).
            code = self.codes[source] = compile(source, "<string>", "exec", dont_inherit=True)
            self.compiled += 1
        return code

    def save(self) -> None:
        if self.compiled and self.codes is not None:
            try:
                default_memo().store_values(_MEMO_KIND, _memo_inputs(), self.codes)
            except (OSError, ValueError):
                pass   # a cache that cannot be written costs only time
            self.compiled = 0

    @staticmethod
    def _remembered() -> dict[str, types.CodeType]:
        try:
            found = default_memo().load_values(_MEMO_KIND, _memo_inputs())
        except (OSError, ValueError):   # the package's own files unreadable: compile, as dataclasses does
            return {}
        stored = found[0] if found is not None and isinstance(found[0], dict) else {}
        return {source: code for source, code in stored.items()
                if isinstance(source, str) and isinstance(code, types.CodeType)}


def _memo_inputs() -> str:
    # The memo's name already holds the package's code and Python's version; -O changes what compiles.
    return f"method texts compiled at optimisation level {sys.flags.optimize}"


COMPILED_METHODS = _CompiledMethods()


def save_compiled_methods() -> None:
    """Write what this process compiled to the memo now (an exit handler does it otherwise)."""
    COMPILED_METHODS.save()


def _exec_remembered(source: Any, globals: Any = None, locals: Any = None) -> None:
    """`exec` as dataclasses calls it, with a text compiled before taken from the memo."""
    exec(COMPILED_METHODS.code(source) if isinstance(source, str) else source, globals, locals)
