"""A grid language is a FLORES-200 code (``hin_Deva``: ISO 639-3, an underscore, the ISO 15924 script), checked
while the run is planned.

A short code such as ``hi`` would otherwise run as a language of its own beside ``hin_Deva``: its own data file
lookup, its own rows in every table, a mean over languages that counts Hindi twice. Datasets that name languages
by short codes (MGSM ``ja``, Global-MMLU ``hi``) are reached from the FLORES-200 code (``core.languages``), so the
grid never needs theirs. A code not of that shape is refused with the code it probably means.
"""

from __future__ import annotations

import difflib
import re
from typing import Any, Mapping

from ..core.errors import ConfigError
from ..core.languages import LANGUAGES

FLORES_CODE = re.compile(r"^[a-z]{3}_[A-Z][a-z]{3}$")


def probable_codes(code: str) -> list[str]:
    """The FLORES-200 codes ``code`` most likely stands for: a dataset's short code (``hi``), the ISO 639-3 part
    alone (``hin``), the right letters in the wrong case (``HIN_deva``), or a near spelling; [] where none is."""
    known = sorted(LANGUAGES)
    by_short = [flores for flores in known if LANGUAGES[flores][1].lower() == code.lower()]
    if by_short:
        return by_short
    by_language = [flores for flores in known if flores.split("_")[0] == code.lower()]
    if by_language:
        return by_language
    lowered = {flores.lower(): flores for flores in known}
    if code.lower().replace("-", "_") in lowered:
        return [lowered[code.lower().replace("-", "_")]]
    return difflib.get_close_matches(code, known, n=2, cutoff=0.75)


def check_language_codes(tasks: Mapping[str, Mapping[str, Any]], source_file: str) -> None:
    """Every ``tasks.<task>.languages`` entry (and ``partner``) is a FLORES-200 code; raises ConfigError naming the
    key, the code and what it probably means."""
    for task, entry in tasks.items():
        named = [(f"tasks.{task}.languages", code) for code in entry.get("languages") or ()]
        if entry.get("partner"):
            named.append((f"tasks.{task}.partner", entry["partner"]))
        for key, code in named:
            if isinstance(code, str) and not FLORES_CODE.match(code):
                guess = probable_codes(code)
                hint = (f"did you mean {' or '.join(guess)}?" if guess
                        else "write it as the ISO 639-3 code, an underscore and the ISO 15924 script, e.g. hin_Deva")
                raise ConfigError(f"{source_file}: {key}: '{code}' is not a FLORES-200 language code ({hint}); "
                                  "datasets with short codes are read through the FLORES-200 code")
