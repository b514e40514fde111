"""Progress lines: a bar, rate, elapsed time and ETA, in the form the job logs carry (``computed done/total``)."""

import logging
import re

from babeleval.core.progress import Progress, bar, clock_text


def test_clock_text():
    assert clock_text(8.4) == "0:08" and clock_text(725) == "12:05" and clock_text(10935) == "3:02:15"


def test_bar_is_ascii_and_full_only_when_done():
    assert bar(0, 900) == "[" + "-" * 20 + "]"
    assert bar(96, 900) == "[##" + "-" * 18 + "]"
    assert bar(899, 900) == "[" + "#" * 19 + "-]"  # 99.9%: not yet full
    assert bar(900, 900) == "[" + "#" * 20 + "]"
    assert Progress(900, clock=lambda: 0.0).line(899).endswith("[###################-] 99%")
    assert bar(3, 4, width=8) == "[######--]" and bar(0, 0) == "[" + "-" * 20 + "]"
    assert bar(96, 900).isascii()


def test_rate_and_eta_from_the_work_done(caplog):
    now = [100.0]
    progress = Progress(900, clock=lambda: now[0])
    assert progress.line(0) == "computed 0/900 [--------------------] 0%"
    now[0] = 108.0
    assert progress.line(96) == "computed 96/900 [##------------------] 10%, 12.0/s, elapsed 0:08, ETA 1:07"
    now[0] = 175.0
    with caplog.at_level(logging.INFO, logger="babeleval"):
        progress.report(900)
    assert caplog.messages == ["computed 900/900 [####################] 100%, 12.0/s, elapsed 1:15"]  # done: no ETA
    assert re.findall(r"computed (\d+)/(\d+)", caplog.text) == [("900", "900")]  # what log readers parse


def test_the_unit_follows_the_count():
    progress = Progress(366, what="bootstrapped", unit="combinations", clock=lambda: 0.0)
    assert progress.line(40) == "bootstrapped 40/366 combinations [##------------------] 10%"


def test_tick_reports_at_most_every_interval_and_at_the_end(caplog):
    now = [0.0]
    progress = Progress(5, what="compared", unit="groups", clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="babeleval"):
        for done, t in enumerate([1.0, 4.0, 11.0, 12.0, 13.0], 1):
            now[0] = t
            progress.tick(done)
    assert [m.split(",")[0] for m in caplog.messages] == ["compared 3/5 groups [############--------] 60%",
                                                           "compared 5/5 groups [####################] 100%"]
