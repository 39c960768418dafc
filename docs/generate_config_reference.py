"""Write docs/config.md, the readout.yaml reference, from generator/project/config.schema.json.

    python docs/generate_config_reference.py          # rewrite docs/config.md
    python docs/generate_config_reference.py --check  # exit 1 when docs/config.md is stale

tests/test_config_reference.py runs the same check, so a schema change without a regenerated page
fails the tests.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from generator.storage.fileio import atomic_write_text  # noqa: E402
from generator.project.reference import load_config_schema, render_reference  # noqa: E402

PAGE = Path(__file__).resolve().parent / "config.md"


def main(argv: list[str]) -> int:
    fresh = render_reference(load_config_schema())
    current = PAGE.read_text(encoding="utf-8") if PAGE.is_file() else None
    if "--check" in argv:
        if current != fresh:
            print(f"{PAGE.name} is stale: run `python docs/generate_config_reference.py`")
            return 1
        print(f"{PAGE.name} is up to date")
        return 0
    if current != fresh:
        atomic_write_text(PAGE, fresh)
        print(f"wrote docs/{PAGE.name}")
    else:
        print(f"docs/{PAGE.name} unchanged")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
