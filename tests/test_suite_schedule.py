"""The suite's own schedule (tests/conftest.py) names modules that exist: a module renamed or
merged would otherwise drop silently to its place by size, and a long module queued late decides
when the suite ends."""

from pathlib import Path


def test_every_module_handed_out_first_exists():
    from tests.conftest import LONGEST_FIRST

    root = Path(__file__).resolve().parent.parent
    assert [name for name in LONGEST_FIRST if not (root / name).is_file()] == []
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)
