"""Progress on long work: a bar for a person at a terminal, lines for a log.

On a terminal (stderr is a TTY) a tqdm bar. Anywhere else (a CI log, a pipe) a bar redrawn with
carriage returns is noise, and silence for minutes looks like a hang: one line at least every
`interval` seconds (done/total, the rate so far, the time left at that rate), and one at the end
when any was printed. Work shorter than the interval prints nothing, so quick commands keep their
output exact. tqdm is imported only where a bar is drawn.
"""

from __future__ import annotations

import re
import sys
import time
from typing import Any, Callable

PROGRESS_INTERVAL_SECONDS = 10.0
# Every line `progress_line` writes, and nothing else: a log reader (or a test comparing output)
# can tell timing lines from the tool's messages.
PROGRESS_LINE = re.compile(r"^[^:\n]+: [\d,]+/[\d,]+ \w+ \(\d+%\), [\d.]+ \w+/s, "
                           r"(?:about \S+ left|time left not known yet)\n?", re.M)


def format_duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"


def progress_line(label: str, done: int, total: int, unit: str, elapsed: float) -> str:
    rate = done / elapsed if elapsed > 0 else 0.0
    left = f"about {format_duration((total - done) / rate)} left" if rate > 0 else "time left not known yet"
    percent = 100 * done // total if total else 100
    return f"{label}: {done:,}/{total:,} {unit} ({percent}%), {rate:.2f} {unit}/s, {left}"


class Progress:
    """`with Progress("rerank", 20, unit="queries", log=log) as bar: ... bar.update()`.

    `enabled=False` shows nothing (tests, `progress: false`); `tty` defaults to whether stderr is
    a terminal; `announce` prints a first line at zero (for work whose first step is slow)."""

    def __init__(self, label: str, total: int, *, unit: str, log: Callable[[str], None], enabled: bool = True,
                 tty: bool | None = None, announce: bool = False, interval: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label, self.total, self.unit, self.log = label, total, unit, log
        interval = PROGRESS_INTERVAL_SECONDS if interval is None else interval
        self.enabled = enabled and total > 0
        self.tty = sys.stderr.isatty() if tty is None else tty
        self.announce, self.interval, self.clock = announce, interval, clock
        self.done = 0
        self.lines = 0
        self.bar: Any = None
        self.started = self.last_line = clock()

    def __enter__(self) -> "Progress":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        self.started = self.last_line = self.clock()
        if not self.enabled:
            return
        if self.tty:
            from tqdm import tqdm

            self.bar = tqdm(total=self.total, desc=self.label, unit=self.unit.rstrip("s") or self.unit,
                            file=sys.stderr)
        elif self.announce:
            self._line()

    def update(self, count: int = 1) -> None:
        self.advance(self.done + count)

    def advance(self, done: int) -> None:
        if self.bar is not None:
            self.bar.update(done - self.done)
        self.done = done
        if not self.enabled or self.bar is not None:
            return
        now = self.clock()
        if now - self.last_line >= self.interval or (done >= self.total and self.lines):
            self.last_line = now
            self._line()

    def _line(self) -> None:
        self.lines += 1
        self.log(progress_line(self.label, self.done, self.total, self.unit, self.clock() - self.started))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
