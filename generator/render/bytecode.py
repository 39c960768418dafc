"""Jinja's compiled templates kept as signed memos (generator.storage.memo): compiling a template
is a fifth of `render --check`, and Jinja itself refuses bytecode whose template source changed.
Shared by the page's templates (renderer) and the package's own disclosure blocks (disclosure)."""

from __future__ import annotations

import base64

import jinja2
from jinja2 import BytecodeCache
from jinja2.bccache import Bucket

from generator.storage.memo import Memo, default_memo


class SignedBytecode(BytecodeCache):
    """A Jinja bytecode cache whose entries are signed memos of one cache directory."""

    def __init__(self, memo: Memo | None = None):
        self.memo = memo if memo is not None else default_memo()

    def load_bytecode(self, bucket: Bucket) -> None:
        found = self.memo.load("jinja bytecode", [bucket.key, jinja2.__version__])
        if found is not None and isinstance(found[0], str):
            bucket.bytecode_from_string(base64.b64decode(found[0]))

    def dump_bytecode(self, bucket: Bucket) -> None:
        self.memo.store("jinja bytecode", [bucket.key, jinja2.__version__],
                        base64.b64encode(bucket.bytecode_to_string()).decode("ascii"))
