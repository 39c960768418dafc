"""Write title-match.trec: a team's own run over examples/tiny-beir, made without readout.

The ranking a team might already have from its own system: a query term found in a document's
title counts 2, one found in its text counts 1 (each distinct term once), every document ranked,
equal scores by document id. Run from the repository root:
`python examples/team-run/make_title_match.py` (it rewrites the file; the output is deterministic).
"""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "tiny-beir"


def terms(text: str) -> set[str]:
    return set(text.lower().split())


def main() -> None:
    documents = [json.loads(line) for line in (DATA / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    queries = [json.loads(line) for line in (DATA / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    lines = []
    for query in sorted(queries, key=lambda item: item["_id"]):
        wanted = terms(query["text"])
        scored = sorted(((2 * len(wanted & terms(document["title"])) + len(wanted & terms(document["text"])),
                          document["_id"]) for document in documents), key=lambda item: (-item[0], item[1]))
        lines += [f"{query['_id']} Q0 {doc_id} {rank} {score} title-match"
                  for rank, (score, doc_id) in enumerate(scored, start=1)]
    (HERE / "title-match.trec").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
