"""Write the results file's reference from generator/core/results/schema.py: docs/results.md and the
packaged JSON Schema generator/core/results/results.schema.json.

    python docs/generate_results_reference.py          # rewrite both
    python docs/generate_results_reference.py --check  # exit 1 when either is stale

tests/core/results/test_results_format.py runs the same check, so a schema change without a regenerated
page or JSON Schema fails the tests.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from generator.storage.fileio import atomic_write_text  # noqa: E402
from generator.core.results.reference import JSON_SCHEMA_PATH, render_json_schema, render_reference  # noqa: E402

PAGE = Path(__file__).resolve().parent / "results.md"


def main(argv: list[str]) -> int:
    stale = []
    for path, fresh in ((PAGE, render_reference()), (JSON_SCHEMA_PATH, render_json_schema())):
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == fresh:
            continue
        if "--check" in argv:
            stale.append(path.name)
        else:
            atomic_write_text(path, fresh)
            print(f"wrote {path.name}")
    if stale:
        print(f"{', '.join(stale)} stale: run `python docs/generate_results_reference.py`")
        return 1
    print("the results reference is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
