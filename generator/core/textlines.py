"""The lines of a dataset's text file as every reader takes them: plain or gzip-compressed (a name
ending in .gz), LF, CRLF or CR-only line ends, a leading byte order mark dropped, UTF-8 decoded line
by line so that a bad byte is named with its line and offset, and no line longer than
MAX_LINE_BYTES ever held. The evaluation stage loads a corpus through it and the checker counts the
same corpus's records through it, so the two can never disagree about how many there are.
"""

from __future__ import annotations

import gzip
import re
import zlib
from pathlib import Path
from typing import Any, Iterator

from generator.storage.errors import InputError, clip

GZIP_SUFFIX = ".gz"
_BOM = b"\xef\xbb\xbf"
# The longest documents of real collections (a TREC news article, a whole web page) are a few
# hundred kilobytes; a line of more than 16 MiB is a file without newlines or not a corpus at all,
# and reading it whole (then decoding and parsing it: three copies) is what must not happen.
MAX_LINE_BYTES = 16 * 1024 * 1024
# Read size while splitting a CR-only file into lines.
_CHUNK_BYTES = 1024 * 1024
_LINE_END = re.compile(rb"\r\n|\r|\n")


def _too_long(path: Path, line_number: int) -> InputError:
    return InputError(f"line longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB ({MAX_LINE_BYTES:,} bytes), "
                      "the most one line may hold", path=str(path), line=line_number)


def _open_binary(path: Path):
    """The file's bytes as stored, or decompressed for a name ending in .gz (read as a stream)."""
    return gzip.open(path, "rb") if path.name.endswith(GZIP_SUFFIX) else open(path, "rb")


def _raw_lines(handle: Any, path: Path) -> Iterator[tuple[int, bytes]]:
    """(offset of the line in the bytes read, the line's bytes) for each line, at most
    MAX_LINE_BYTES of them held: lines end with LF (a CR before it is left to the reader), or,
    when the first line holds a CR and no LF (an old Mac file), with CR, CRLF or LF."""
    first = handle.readline(MAX_LINE_BYTES + 1)
    if first.endswith(b"\n") or b"\r" not in first:
        offset, line_number, raw = 0, 0, first
        while raw:
            line_number += 1
            if len(raw) - (1 if raw.endswith(b"\n") else 0) > MAX_LINE_BYTES:
                raise _too_long(path, line_number)
            yield offset, raw
            offset += len(raw)
            raw = handle.readline(MAX_LINE_BYTES + 1)
        return
    buffer, start, dropped, line_number, ended = bytearray(first), 0, 0, 0, False
    while True:
        match = _LINE_END.search(buffer, start)
        # A CR last in the buffer may be the first half of a CRLF: read on before deciding.
        if match is not None and (ended or match.end() < len(buffer) or match.group() != b"\r"):
            line_number += 1
            if match.start() - start > MAX_LINE_BYTES:
                raise _too_long(path, line_number)
            yield dropped + start, bytes(buffer[start:match.start()])
            start = match.end()
            continue
        if len(buffer) - start > MAX_LINE_BYTES:
            raise _too_long(path, line_number + 1)
        if ended:
            if start < len(buffer):
                yield dropped + start, bytes(buffer[start:])
            return
        del buffer[:start]
        dropped, start = dropped + start, 0
        chunk = handle.read(_CHUNK_BYTES)
        if chunk:
            buffer += chunk
        else:
            ended = True


def lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line of a UTF-8 file (gzip-compressed for a name ending in
    .gz), a leading byte order mark dropped.

    Decoded line by line, so a bad byte is reported with its line and its byte offset in the file
    and a large corpus is never held twice; a line longer than MAX_LINE_BYTES is refused once that
    many bytes of it are read.
    """
    compressed = path.name.endswith(GZIP_SUFFIX)
    line_number = 0
    try:
        with _open_binary(path) as handle:
            for offset, raw in _raw_lines(handle, path):
                line_number += 1
                start = len(_BOM) if line_number == 1 and raw.startswith(_BOM) else 0
                try:
                    text = raw[start:].decode("utf-8")
                except UnicodeDecodeError as error:
                    where = "decompressed file" if compressed else "file"
                    raise InputError(f"not UTF-8 text (byte {offset + start + error.start:,} of the {where}, "
                                     f"0x{raw[start + error.start]:02x})", path=str(path),
                                     line=line_number) from None
                yield line_number, text
    except gzip.BadGzipFile as error:
        if line_number == 0 and str(error).startswith("Not a gzipped file"):
            raise InputError("not a gzip file, though its name ends in .gz", path=str(path)) from None
        raise InputError(f"corrupt gzip data after {line_number:,} lines ({clip(str(error), 80)})",
                         path=str(path)) from None
    except EOFError:
        raise InputError(f"the gzip data ends early, after {line_number:,} lines (a cut-off download?)",
                         path=str(path)) from None
    except zlib.error as error:
        raise InputError(f"corrupt gzip data after {line_number:,} lines ({clip(str(error), 80)})",
                         path=str(path)) from None
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror or error}", path=str(path)) from None


def count_records(path: Path) -> int:
    """How many records a JSONL file holds as the loaders read it: its lines that are not blank,
    whatever the file's form (.gz, CR-only line ends, a byte order mark)."""
    return sum(1 for _, line in lines(path) if line.strip())
