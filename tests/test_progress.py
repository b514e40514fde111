"""Progress lines: rate, elapsed time and ETA, in the form the job logs carry (``computed done/total``)."""

import logging
import re

from babeleval.progress import Progress, clock_text


def test_clock_text():
    assert clock_text(8.4) == "0:08" and clock_text(725) == "12:05" and clock_text(10935) == "3:02:15"


def test_rate_and_eta_from_the_work_done(caplog):
    now = [100.0]
    progress = Progress(900, clock=lambda: now[0])
    assert progress.line(0) == "computed 0/900 (0%)"
    now[0] = 108.0
    assert progress.line(96) == "computed 96/900 (11%), 12.0/s, elapsed 0:08, ETA 1:07"
    now[0] = 175.0
    with caplog.at_level(logging.INFO, logger="babeleval"):
        progress.report(900)
    assert caplog.messages == ["computed 900/900 (100%), 12.0/s, elapsed 1:15"]  # done: no ETA
    assert re.findall(r"computed (\d+)/(\d+)", caplog.text) == [("900", "900")]  # what log readers parse
