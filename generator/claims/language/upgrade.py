"""`readout upgrade-ledger`: a ledger written before frames, converted where it can be.

A claim of the old form said what it asserted beside its own words (`asserts:`) and gave a verdict
in its own words beside a `decision` source. Both are what the package now writes:

- each assertion becomes a frame: `higher` / `lower` (of the mean, or of one query) and
  `distinguishable` / `indistinguishable` a `comparison`, `equivalent` an `equivalence` against
  the same margin, `within_budget` / `over_budget` a `budget`;
- a claim that cites a decision becomes that decision's `decision` frame;
- a sentence that is word for word a design quote it cites becomes a `quote` frame of it.

The first frame keeps the claim's id; a second or third becomes a claim of its own (`ID-2`,
`ID-3`) in the same output, section and kind. The author's old sentence stays beside the frame
as a comment (`# was: ...`): the reader now sees the package's sentence. Everything else of the
ledger (other claims, comments, blank lines) is kept byte for byte, and the file is written whole
or not at all. What cannot be converted (a claim whose own words still compare or count beside a
result entity) is listed by `check` afterwards, for the author to write as a frame.
"""

from __future__ import annotations

import json
import re
from dataclasses import field
from pathlib import Path

from generator.core.dataclass import dataclass
from generator.storage.errors import InputError
from generator.storage.fileio import atomic_write_text
from generator.storage.paths import display_path, reading
from generator.storage.safe_yaml import Node, parse_yaml

# The old assertion kinds, and the frame each becomes.
_PARTNER = {"higher": "than", "lower": "than", "distinguishable": "from", "indistinguishable": "from",
            "equivalent": "to", "within_budget": None, "over_budget": None}
_KEPT = ("id", "output", "section", "kind", "status", "strike_reason", "strike_display", "language")
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@+/-]*\Z")


@dataclass
class Upgrade:
    converted: dict[str, list[str]] = field(default_factory=dict)   # claim id -> ids of its frames
    text: str = ""


def _scalar(value: str) -> str:
    """A YAML flow scalar: plain when it reads back as the same text, else a JSON string."""
    lowered = value.lower()
    if _PLAIN.match(value) and lowered not in ("yes", "no", "on", "off", "true", "false", "null", "y", "n") \
            and not re.fullmatch(r"[-+.\d_e]+|0x[0-9a-f_]+", lowered):
        return value
    return json.dumps(value, ensure_ascii=False)


def _flow(mapping: dict[str, str]) -> str:
    return "{" + ", ".join(f"{key}: {_scalar(value)}" for key, value in mapping.items()) + "}"


def _texts(node: Node) -> dict[str, str]:
    return {key: value.value for key, (_, value) in node.value.items() if isinstance(value.value, str)}


def frame_of_assertion(entry: dict[str, str]) -> dict[str, str] | None:
    """The frame that says what an old assertion asserted, or None for a form that is not one."""
    kinds = [kind for kind in _PARTNER if kind in entry]
    if len(kinds) != 1:
        return None
    kind = kinds[0]
    partner = _PARTNER[kind]
    file = {"file": entry["file"]} if entry.get("file") else {}
    if kind in ("within_budget", "over_budget"):
        return {"budget": entry[kind], "limit": f"budget.{entry.get('budget', '')}", **file}
    if kind == "equivalent":
        return {"equivalence": entry[kind], "to": entry.get(partner, ""), "metric": entry.get("metric", ""),
                "margin": f"budget.{entry.get('margin', '')}", **file}
    frame = {"comparison": entry[kind], "against": entry.get(partner, ""), "metric": entry.get("metric", ""), **file}
    if entry.get("query"):
        frame.update(statistic="query", query=entry["query"])
    if entry.get("correction") == "holm":
        frame["correction"] = "holm"
    return frame


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[*_`]", "", text).split()).rstrip(".").lower()


def _quoted_as_written(claim: Node) -> dict[str, str] | None:
    """A sentence that is, word for word, a design quote it cites: the package quotes it instead."""
    text = _texts(claim).get("text")
    if not text or "{" in text:
        return None
    for source in (claim.value.get("sources", (0, Node([], 0)))[1].value or []):
        design = source.value.get("design") if isinstance(source.value, dict) else None
        fields = _texts(design[1]) if design is not None and isinstance(design[1].value, dict) else {}
        if fields.get("quote") and fields.get("document") and _normal(fields["quote"]) == _normal(text):
            return {"quote": fields["document"], "text": fields["quote"]}
    return None


def _frames(claim: Node) -> list[dict[str, str]]:
    fields = claim.value
    quoted = _quoted_as_written(claim) if "asserts" not in fields else None
    if quoted is not None:
        return [quoted]
    frames: list[dict[str, str]] = []
    for source in (fields.get("sources", (0, Node([], 0)))[1].value or []):
        if isinstance(source.value, dict) and "decision" in source.value:
            decision = source.value["decision"][1]
            trigger = decision.value.get("trigger") if isinstance(decision.value, dict) else None
            if trigger is not None and isinstance(trigger[1].value, str):
                frames.append({"decision": trigger[1].value})
    for item in (fields.get("asserts", (0, Node([], 0)))[1].value or []):
        if isinstance(item.value, dict):
            frame = frame_of_assertion(_texts(item))
            if frame is not None and frame not in frames:
                frames.append(frame)
    return frames


def _block(claim: Node, frame: dict[str, str], claim_id: str, indent: str, was: str | None) -> list[str]:
    kept = {key: value for key, value in _texts(claim).items() if key in _KEPT}
    kept["id"] = claim_id
    lines = [f"{indent}- id: {_scalar(kept.pop('id'))}"]
    lines += [f"{indent}  {key}: {_scalar(value)}" for key, value in kept.items()]
    if was is not None:
        lines.append(f"{indent}  # was: {' '.join(was.split())}")
    lines.append(f"{indent}  frame: {_flow(frame)}")
    return lines


def _claim_end(lines: list[str], start: int, stop: int) -> int:
    """The last line (exclusive) of a claim that starts at `start` (0-based) before `stop`: trailing
    comments and blank lines belong to what follows."""
    end = stop
    while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    return end


def upgrade_text(text: str, shown: str) -> Upgrade:
    """The ledger text with every convertible claim written as frames."""
    root = parse_yaml(text, shown)
    if root is None or not isinstance(root.value, dict) or "claims" not in root.value:
        raise InputError("not a ledger: expected `version: 1` and `claims:`", path=shown, line=1)
    claims = root.value["claims"][1].value
    if not isinstance(claims, list):
        raise InputError("claims must be a list", path=shown, field="claims")
    lines = text.splitlines()
    ids = {_texts(claim).get("id") for claim in claims if isinstance(claim.value, dict)}
    upgrade = Upgrade()
    replacements: list[tuple[int, int, list[str]]] = []
    starts = [claim.line - 1 for claim in claims] + [len(lines)]
    for index, claim in enumerate(claims):
        if not isinstance(claim.value, dict) or ("asserts" not in claim.value and "frame" in claim.value):
            continue
        frames = _frames(claim)
        if not frames:
            continue
        claim_id = _texts(claim).get("id", f"claim-{index + 1}")
        start = starts[index]
        end = _claim_end(lines, start, starts[index + 1])
        indent = re.match(r"\s*", lines[start]).group(0)
        new_ids = [claim_id] + [_free_id(f"{claim_id}-{number}", ids) for number in range(2, len(frames) + 1)]
        ids.update(new_ids)
        block: list[str] = []
        for number, (frame, frame_id) in enumerate(zip(frames, new_ids)):
            block += _block(claim, frame, frame_id, indent, _texts(claim).get("text") if number == 0 else None)
        replacements.append((start, end, block))
        upgrade.converted[claim_id] = new_ids
    for start, end, block in reversed(replacements):
        lines[start:end] = block
    upgrade.text = "\n".join(lines) + ("\n" if text.endswith("\n") else "")
    return upgrade


def _free_id(wanted: str, taken: set) -> str:
    candidate, number = wanted, 1
    while candidate in taken:
        number += 1
        candidate = f"{wanted}-{number}"
    return candidate


def upgrade_ledger(path: Path) -> Upgrade:
    """Convert the ledger at `path` in place (written whole, or not at all)."""
    shown = display_path(path)
    with reading(path):
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as error:
            raise InputError(f"not UTF-8 text (byte {error.start})", path=shown) from None
    upgrade = upgrade_text(text, shown)
    if upgrade.converted:
        atomic_write_text(path, upgrade.text)
    return upgrade
