"""generator.core.dataclass is the standard library's dataclass to every caller: each class here is
made twice, once by each decorator, and every comparison, hash, repr and refusal is held to the
standard library's twin."""

from __future__ import annotations

import dataclasses
import itertools
import os
import pickle
import sys
import threading

import pytest

from generator.core import dataclass as package_dataclass
from generator.core.dataclass import dataclass
from generator.storage.memo import default_memo
from tests.conftest import run_python


def _frozen(decorate):
    @decorate(frozen=True)
    class Budget:
        metric: str
        limit: float = 0.0
        note: str = dataclasses.field(default="", compare=False)
        secret: str = dataclasses.field(default="", repr=False)
        unhashed: tuple = dataclasses.field(default=(), hash=False)
        rows: tuple[str, ...] = dataclasses.field(default_factory=tuple)
    return Budget


def _mutable(decorate):
    @decorate
    class Tally:
        name: str
        counts: list[int] = dataclasses.field(default_factory=list)
        seen: set[str] = dataclasses.field(default_factory=set, compare=False, repr=False)
    return Tally


FROZEN_VALUES = [dict(metric="nDCG@5"), dict(metric="nDCG@5", limit=0.01), dict(metric="nDCG@5", note="other"),
                 dict(metric="nDCG@5", secret="s"), dict(metric="nDCG@5", unhashed=(1,)),
                 dict(metric="MRR@10", rows=("dense",)), dict(metric="nDCG@5", limit=float("nan"))]


def test_a_frozen_class_compares_hashes_and_shows_as_the_standard_librarys_twin():
    ours, theirs = _frozen(dataclass), _frozen(dataclasses.dataclass)
    for left, right in itertools.product(FROZEN_VALUES, repeat=2):
        assert (ours(**left) == ours(**right)) == (theirs(**left) == theirs(**right)), (left, right)
        assert (ours(**left) != ours(**right)) == (theirs(**left) != theirs(**right)), (left, right)
        if ours(**left) == ours(**right):
            assert hash(ours(**left)) == hash(ours(**right))
    for values in FROZEN_VALUES:
        assert repr(ours(**values)) == repr(theirs(**values))
        assert hash(ours(**values)) == hash(ours(**values))
    # NaN: a field holding the same NaN object compares equal by identity, as in a tuple.
    nan = float("nan")
    assert (ours("m", nan) == ours("m", nan)) == (theirs("m", nan) == theirs("m", nan))


def test_a_frozen_instance_refuses_assignment_and_deletion_and_still_replaces():
    Budget = _frozen(dataclass)
    budget = Budget("nDCG@5", 0.01)
    with pytest.raises(dataclasses.FrozenInstanceError):
        budget.limit = 0.02
    with pytest.raises(dataclasses.FrozenInstanceError):
        del budget.metric
    assert dataclasses.replace(budget, limit=0.02) == Budget("nDCG@5", 0.02)
    assert dataclasses.is_dataclass(Budget) and [f.name for f in dataclasses.fields(Budget)][:2] == ["metric", "limit"]
    assert dataclasses.asdict(budget)["limit"] == 0.01 and dataclasses.astuple(budget)[0] == "nDCG@5"
    assert Budget.__match_args__ == _frozen(dataclasses.dataclass).__match_args__


def test_a_mutable_class_is_unhashable_and_compares_as_the_standard_librarys_twin():
    ours, theirs = _mutable(dataclass), _mutable(dataclasses.dataclass)
    cases = [("a", [1]), ("a", [1]), ("a", [2]), ("b", [1])]
    for (n1, c1), (n2, c2) in itertools.product(cases, repeat=2):
        assert (ours(n1, list(c1), {"x"}) == ours(n2, list(c2))) == (theirs(n1, list(c1), {"x"}) == theirs(n2, list(c2)))
    assert ours.__hash__ is None and theirs.__hash__ is None
    with pytest.raises(TypeError, match="unhashable"):
        hash(ours("a"))
    tally = ours("a", [1])
    tally.counts.append(2)
    tally.name = "b"
    assert repr(tally) == repr(theirs("b", [1, 2])) == "_mutable.<locals>.Tally(name='b', counts=[1, 2])"


def test_a_recursive_value_shows_as_the_standard_librarys_does():
    ours, theirs = _mutable(dataclass), _mutable(dataclasses.dataclass)
    mine, standard = ours("loop"), theirs("loop")
    mine.counts.append(mine)
    standard.counts.append(standard)
    assert repr(mine) == repr(standard) == "_mutable.<locals>.Tally(name='loop', counts=[...])"


def test_different_classes_with_the_same_fields_are_never_equal():
    @dataclass(frozen=True)
    class Left:
        value: int

    @dataclass(frozen=True)
    class Right:
        value: int

    assert Left(1) != Right(1) and not (Left(1) == Right(1)) and Left(1) == Left(1)
    assert Left.__eq__(Left(1), 1) is NotImplemented


def test_a_subclass_compares_its_own_fields_and_never_equals_its_parent():
    for decorate in (dataclass, dataclasses.dataclass):
        @decorate(frozen=True)
        class Parent:
            a: int

        @decorate(frozen=True)
        class Child(Parent):
            b: int = 0

        assert Child(1, 2) != Child(1, 3) and Child(1, 2) == Child(1, 2)
        assert Parent(1) != Child(1, 0)
        assert repr(Child(1, 2)).endswith("Child(a=1, b=2)")


def test_methods_written_in_the_class_body_are_kept():
    @dataclass(frozen=True)
    class CaseBlind:
        word: str

        def __eq__(self, other):
            return isinstance(other, CaseBlind) and self.word.lower() == other.word.lower()

        def __hash__(self):
            return hash(self.word.lower())

        def __repr__(self):
            return f"<{self.word}>"

    assert CaseBlind("BM25") == CaseBlind("bm25") and hash(CaseBlind("BM25")) == hash(CaseBlind("bm25"))
    assert repr(CaseBlind("x")) == "<x>"

    @dataclass(frozen=True)
    class OwnEqualityOnly:
        word: str

        def __eq__(self, other):
            return True

    # A frozen class that writes __eq__ alone gets the fields' hash, as the standard library gives it.
    assert hash(OwnEqualityOnly("a")) == hash(OwnEqualityOnly("a")) and OwnEqualityOnly("a") == OwnEqualityOnly("b")


def test_slots_and_keyword_only_pass_through():
    @dataclass(frozen=True, slots=True)
    class Slotted:
        a: int
        b: str = ""

    assert Slotted.__slots__ == ("a", "b") and not hasattr(Slotted(1), "__dict__")
    assert Slotted(1, "x") == Slotted(1, "x") and hash(Slotted(1, "x")) == hash(Slotted(1, "x"))
    assert repr(Slotted(1)) .endswith("Slotted(a=1, b='')")

    @dataclass(kw_only=True)
    class Named:
        a: int

    with pytest.raises(TypeError):
        Named(1)
    assert Named(a=1) == Named(a=1)


def test_instances_pickle_and_come_back_equal():
    budget = Budget(metric="nDCG@5", limit=0.01, rows=("dense",))
    assert pickle.loads(pickle.dumps(budget)) == budget and hash(pickle.loads(pickle.dumps(budget))) == hash(budget)


def test_comparison_hash_and_repr_are_shared_not_compiled_per_class():
    """What makes the package's dataclass cheaper to define: one code object for every class."""
    first, second = _frozen(dataclass), _mutable(dataclass)
    for name in ("__eq__", "__repr__"):
        assert getattr(first, name).__code__ is getattr(second, name).__code__, name
    standard_first, standard_second = _frozen(dataclasses.dataclass), _mutable(dataclasses.dataclass)
    assert standard_first.__eq__.__code__ is not standard_second.__eq__.__code__


def test_init_and_guards_are_the_code_dataclasses_compiles():
    """Compiled here (or taken from the memo) from the text dataclasses wrote, with dataclasses'
    own compiler flags: the same code object as the standard library's twin, annotations included."""
    ours, theirs = _frozen(dataclass), _frozen(dataclasses.dataclass)
    for name in ("__init__", "__setattr__", "__delattr__"):
        # Line numbers aside: Python 3.13 compiles all of a class's methods in one text, and the
        # twin's holds the comparison and repr methods too.
        assert _lines_aside(getattr(ours, name).__code__) == _lines_aside(getattr(theirs, name).__code__), name
    assert ours.__init__.__annotations__ == theirs.__init__.__annotations__
    assert ours.__init__.__defaults__ == theirs.__init__.__defaults__
    assert "exec" not in vars(dataclasses)   # dataclasses is left as it was found


def _lines_aside(code):
    return code.replace(co_firstlineno=1)


def test_the_comparison_rule_can_tell_the_interpreters_apart():
    """A NaN held in a field: one object, so a tuple comparison (3.11, 3.12) calls two instances
    equal and a field-by-field one (3.13) does not; the twin test above follows the interpreter."""
    nan = float("nan")
    ours, theirs = _frozen(dataclass), _frozen(dataclasses.dataclass)
    assert (ours("m", nan) == ours("m", nan)) == (theirs("m", nan) == theirs("m", nan)) == (sys.version_info < (3, 13))
    same, standard = ours("m", nan), theirs("m", nan)
    assert (same == same) is True and (standard == standard) is True   # the same instance, on every interpreter


_DEFINE_AND_COUNT = """
import dataclasses
from generator.core import dataclass as package_dataclass

@package_dataclass.dataclass(frozen=True)
class Shown:
    name: str
    digits: int = 3

assert Shown("p95") == Shown("p95", 3) and repr(Shown("x")).endswith("Shown(name='x', digits=3)")
try:
    Shown("x").name = "y"
except dataclasses.FrozenInstanceError:
    print(package_dataclass.COMPILED_METHODS.compiled)
"""


def _memo_environment(tmp_path, **extra: str) -> dict:
    return {**os.environ, "READOUT_CACHE": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "READOUT_NO_MEMO": "0", **extra}


def test_a_second_start_compiles_no_method_and_makes_the_same_class(tmp_path):
    first = run_python("-c", _DEFINE_AND_COUNT, env=_memo_environment(tmp_path))
    second = run_python("-c", _DEFINE_AND_COUNT, env=_memo_environment(tmp_path))
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    # a frozen class's methods (`__init__` and the two guards: three texts up to 3.12, one from
    # 3.13) compiled once, then remembered
    assert int(first.stdout) == (1 if sys.version_info >= (3, 13) else 3) and int(second.stdout) == 0
    # with memos off, everything compiles every time and nothing is written
    off = _memo_environment(tmp_path / "off", READOUT_NO_MEMO="1")
    assert int(run_python("-c", _DEFINE_AND_COUNT, env=off).stdout) == int(first.stdout)
    assert not (tmp_path / "off" / "cache").exists()


def test_the_readout_command_remembers_what_it_compiled_though_it_skips_exit_handlers(tmp_path):
    """`readout` leaves with os._exit (generator.commands.cli.run): it saves its compiled methods itself."""
    command = "import sys\nfrom generator.commands.cli import run\nsys.argv = ['readout', 'selftest']\nrun()"
    first = run_python("-c", command, env=_memo_environment(tmp_path))
    assert first.returncode == 0 and first.stdout, first.stderr
    # the same command again, through `main`, then what it had to compile
    counted = run_python("-c", "from generator.commands.cli import main\nfrom generator.core import dataclass\n"
                         "main(['selftest'])\nprint(dataclass.COMPILED_METHODS.codes is not None, "
                         "dataclass.COMPILED_METHODS.compiled)", env=_memo_environment(tmp_path))
    assert counted.returncode == 0 and counted.stdout.splitlines()[-1] == "True 0", counted.stdout + counted.stderr


def test_a_remembered_entry_that_holds_no_code_is_compiled_again(memos):
    source = "def __create_fn__():\n def f(self): return 1\n return f"
    default_memo().store_values(package_dataclass._MEMO_KIND, package_dataclass._memo_inputs(),
                                {source: "not code", "other text": 7})
    methods = package_dataclass._CompiledMethods()
    code = methods.code(source)
    assert methods.compiled == 1 and code == compile(source, "<string>", "exec", dont_inherit=True)
    methods.save()
    again = package_dataclass._CompiledMethods()
    assert again.code(source) == code and again.compiled == 0


def test_classes_made_in_several_threads_at_once_are_all_whole():
    made, failed = [], []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)

    def make(count: int) -> None:
        try:
            for number in range(count):
                Budget = _frozen(dataclass)
                made.append(Budget(f"m{number}", 0.5) == Budget(f"m{number}", 0.5))
        except Exception as error:   # noqa: BLE001 - any failure in a thread is the finding
            failed.append(error)
    try:
        threads = [threading.Thread(target=make, args=(40,)) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert not failed and len(made) == 160 and all(made)
    assert "exec" not in vars(dataclasses)


@dataclass(frozen=True)
class Budget:
    metric: str
    limit: float = 0.0
    rows: tuple[str, ...] = ()
