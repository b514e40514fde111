"""A hard cap on what an API model may spend: ``max_tokens`` (prompt and completion tokens) and ``max_cost``
(in the currency of its ``prices``, per million tokens), over every run of this checkout.

What was spent is kept in a ledger per model (``results/spend/<model>.json``, ``paths.SPEND``): the tokens and cost
the server reported for every answer. Before a request is sent, its **worst case** is reserved: its prompt's UTF-8
bytes (no tokenizer makes more tokens than bytes: byte-level BPE and byte-fallback vocabularies alike) plus
``PER_MESSAGE`` tokens for each chat message's framing, and the completion's ``max_new_tokens`` (the server stops
there). A request whose worst case would take what is spent, plus what requests in flight (of every job of the
model, in any process) reserved, past a cap is not sent: the job stops submitting, keeps every answer that came
back (they are in the response cache), notes the stop in the ledger (the run summary names the cap) and fails with
``CapReached``. A request that would fit once the requests in flight settle waits for them instead. An answer settles its reservation at what the server reported (its worst case where the server
reports no usage). A resume with a higher cap answers the cached requests from the cache and pays only for the rest.

Cross-process safety: the ledger is read and written under an exclusive ``flock``; a reservation belongs to its
process (id and start time, ``core.orphan_guard.identity``), and the reservations of a process that is gone (a
killed job) are dropped on the next read.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from ..core import orphan_guard
from ..core.errors import BackendError
from ..core.jsonl import write_json

# tokens a chat message's framing may add (role markers, separators): generous beside OpenAI's 3-4 per message
PER_MESSAGE = 16


class CapReached(BackendError):
    """The next request could cross the model's cap: nothing more is sent."""


@dataclass(frozen=True)
class Cap:
    """An API model's caps and prices (``babeleval.generate.backends.config.APIConfig``)."""

    max_tokens: int | None = None
    max_cost: float | None = None
    prices: Mapping[str, float] | None = None  # per million tokens: {"prompt": ..., "completion": ...}

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        if not self.prices:
            return 0.0
        return (prompt_tokens * self.prices["prompt"] + completion_tokens * self.prices["completion"]) / 1e6

    def describe(self) -> str:
        caps = []
        if self.max_tokens is not None:
            caps.append(f"max_tokens {self.max_tokens:,}")
        if self.max_cost is not None:
            caps.append(f"max_cost {self.max_cost:g}")
        return " and ".join(caps)


def worst_prompt_tokens(texts: Sequence[str], messages: int = 0) -> int:
    """The most tokens a prompt can be: its UTF-8 bytes, and each chat message's framing."""
    return sum(len(text.encode("utf-8")) for text in texts) + PER_MESSAGE * (messages + 1 if messages else 0)


@dataclass
class Reservation:
    tokens: int
    cost: float


class Spending:
    """One process's view of a model's ledger: reserve before a request, settle after its answer."""

    def __init__(self, path: str | Path, cap: Cap, model: str):
        self.path, self.cap, self.model = Path(path), cap, model
        self._lock = threading.Lock()
        self._mine = {"tokens": 0, "cost": 0.0}  # this process's reservations in flight
        self.refused = 0
        # this process as the ledger names its reservations: pid and start time (a reused pid is another process)
        self._me = "%d:%d" % (orphan_guard.identity() or (os.getpid(), 0))

    @contextmanager
    def _ledger(self) -> Iterator[dict[str, Any]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, open(self.path.with_name(self.path.name + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                ledger = read_ledger(self.path)
                ledger["reserved"] = {who: r for who, r in ledger.get("reserved", {}).items() if _alive(who)}
                yield ledger
                ledger["reserved"][self._me] = dict(self._mine)
                ledger["cap"] = self.cap.describe()
                write_json(self.path, ledger)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def reserve(self, prompt_tokens: int, completion_tokens: int, poll: float = 0.05) -> Reservation:
        """Reserve a request's worst case. Where it fits only once the requests in flight settle (they cost what the
        server bills, mostly far less than their worst case), wait for them; where it could cross a cap even with
        nothing in flight, raise CapReached."""
        want = Reservation(prompt_tokens + completion_tokens, self.cap.cost(prompt_tokens, completion_tokens))
        while True:
            with self._ledger() as ledger:
                spent = Reservation(ledger.get("tokens", 0), ledger.get("cost", 0.0))
                crossed = self._crossed(spent, want)
                if crossed:
                    self.refused += 1
                    raise CapReached(f"model {self.model}: stopped before its cap: the next request could cross "
                                     f"{' and '.join(crossed)}; the answers paid for are in the response cache: raise "
                                     f"models.{self.model}.{crossed[0].split()[0]} in params.yaml and rerun to "
                                     "continue from there")
                flying = [self._mine, *(r for who, r in ledger["reserved"].items() if who != self._me)]
                if not self._crossed(Reservation(spent.tokens + sum(r["tokens"] for r in flying),
                                                 spent.cost + sum(r["cost"] for r in flying)), want):
                    self._mine["tokens"] += want.tokens
                    self._mine["cost"] += want.cost
                    return want
            time.sleep(poll)  # outside the lock: the requests in flight settle meanwhile

    def _crossed(self, committed: Reservation, want: Reservation) -> list[str]:
        """The caps ``want`` would cross on top of ``committed``, each with the numbers."""
        crossed = []
        if self.cap.max_tokens is not None and committed.tokens + want.tokens > self.cap.max_tokens:
            crossed.append(f"max_tokens {self.cap.max_tokens:,} (spent {committed.tokens:,}, this "
                           f"request up to {want.tokens:,})")
        if self.cap.max_cost is not None and committed.cost + want.cost > self.cap.max_cost:
            crossed.append(f"max_cost {self.cap.max_cost:g} (spent {committed.cost:.4g}, this request "
                           f"up to {want.cost:.4g})")
        return crossed

    def settle(self, reservation: Reservation, prompt_tokens: int | None, completion_tokens: int | None) -> None:
        """Replace a reservation with what the server billed (the reservation itself where it reported nothing)."""
        if prompt_tokens is None and completion_tokens is None:
            tokens, cost = reservation.tokens, reservation.cost
        else:
            prompt_tokens, completion_tokens = prompt_tokens or 0, completion_tokens or 0
            tokens, cost = prompt_tokens + completion_tokens, self.cap.cost(prompt_tokens, completion_tokens)
        with self._ledger() as ledger:
            self._mine["tokens"] -= reservation.tokens
            self._mine["cost"] -= reservation.cost
            ledger["tokens"] = ledger.get("tokens", 0) + tokens
            ledger["cost"] = ledger.get("cost", 0.0) + cost
            ledger["requests"] = ledger.get("requests", 0) + 1

    def release(self, reservation: Reservation) -> None:
        """A request that got no answer (an error): nothing billed."""
        with self._ledger():
            self._mine["tokens"] -= reservation.tokens
            self._mine["cost"] -= reservation.cost

    def note_stop(self, reason: str, answered: int, unanswered: int) -> None:
        """The job stopped at the cap: what the run summary names."""
        with self._ledger() as ledger:
            ledger["stopped"] = {"time": time.time(), "reason": reason, "answered": answered,
                                 "not_sent": unanswered}


def _alive(who: str) -> bool:
    pid, _, start = who.partition(":")
    return orphan_guard.alive((int(pid), int(start or 0)))


def read_ledger(path: str | Path) -> dict[str, Any]:
    """A model's ledger: {tokens, cost, requests, cap, reserved, stopped}; empty where nothing was spent."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
