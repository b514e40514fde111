"""Progress lines with a bar, rate and ETA for long steps:
``computed 96/900 [##------------------] 10%, 12.4/s, elapsed 0:08, ETA 1:05``.

A job's log lines go to its log file and to the console (babeleval.core.joblog), so one line serves both: a whole
line per report, ASCII only and no carriage return, so a log file holds every report as it was shown. The
caller reports where its work becomes durable (a committed chunk), so a line never claims more than is kept.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator


def clock_text(seconds: float) -> str:
    """``0:08``, ``12:05``, ``3:02:15``."""
    seconds = int(round(max(0.0, seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def bar(done: int, total: int, width: int = 20) -> str:
    """``[##------------------]``: the share done, rounded down so a bar is full only when the work is."""
    filled = min(width, done * width // total) if total > 0 else 0
    return "[" + "#" * filled + "-" * (width - filled) + "]"


class Progress:
    """Rate and time left of ``total`` units of work, from when it was created.

    ``what`` says what is done to the units (``computed``, ``scored``) and ``unit`` what they are
    (``items``, ``combinations``): ``scored 96/900 items [...]``.
    """

    def __init__(self, total: int, what: str = "computed", log: logging.Logger | None = None,
                 clock: Callable[[], float] = time.monotonic, unit: str = ""):
        self.total, self.what, self.unit = total, what, unit
        self.log = log or logging.getLogger("babeleval")
        self.clock = clock
        self.started = clock()
        self.last_report = self.started

    def line(self, done: int) -> str:
        elapsed = self.clock() - self.started
        unit = f" {self.unit}" if self.unit else ""
        # rounded down, as the bar: 100% only when every unit is done
        share = f" {bar(done, self.total)} {done * 100 // self.total}%" if self.total else ""
        text = f"{self.what} {done}/{self.total}{unit}{share}"
        if elapsed <= 0 or done <= 0:
            return text
        rate = done / elapsed
        text += f", {rate:.1f}/s, elapsed {clock_text(elapsed)}"
        if done < self.total:
            text += f", ETA {clock_text((self.total - done) / rate)}"
        return text

    def report(self, done: int) -> None:
        self.log.info("%s", self.line(done))

    def tick(self, done: int, every_seconds: float = 10.0) -> None:
        """Report at most once per ``every_seconds``, and when the work is done (for loops of many small steps)."""
        now = self.clock()
        if done >= self.total or now - self.last_report >= every_seconds:
            self.last_report = now
            self.report(done)


# A step with no count to report (a model load, one backend call over a chunk) says it is alive this often, so that
# the console is never silent for 30 s: with a real model a chunk of 64 generations ran for minutes.
HEARTBEAT_SECONDS = 20.0


@contextmanager
def heartbeat(what: str, log: logging.Logger | None = None, every: float | None = None) -> Iterator[None]:
    """Log ``<what>: still running, elapsed 0:40`` every ``every`` seconds (``HEARTBEAT_SECONDS``) while the block
    runs, from a daemon thread."""
    log = log or logging.getLogger("babeleval")
    every = every or HEARTBEAT_SECONDS
    done = threading.Event()
    started = time.monotonic()

    def beat() -> None:
        while not done.wait(every):
            log.info("%s: still running, elapsed %s", what, clock_text(time.monotonic() - started))

    thread = threading.Thread(target=beat, name="heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
