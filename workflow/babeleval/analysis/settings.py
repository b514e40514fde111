"""The analysis settings (params.yaml ``analysis``, every key optional): their one set of defaults.

The planner reads params.yaml into one ``AnalysisSettings`` (``babeleval.grid``), the rules hand it to the
analysis jobs, and ``compare`` uses the same defaults; no analysis function has defaults of its own for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

# params.yaml's name of a setting, where it differs from the field's
PARAMS_KEYS = {"samples": "bootstrap_samples"}


@dataclass(frozen=True)
class AnalysisSettings:
    seed: int  # the grid's seed: every resampling draws from it
    confidence: float = 0.95  # level of the bootstrap intervals
    samples: int = 1000  # resamples for intervals and paired bootstrap tests
    alpha: float = 0.05  # significance level after Holm-Bonferroni correction
    pivot_language: str = "eng_Latn"  # parallel items solved here but failed in another language
    permutations: int = 10_000  # of the cross-lingual prompt-sensitivity test
    # languages by resource group, the best resourced first (the sensitivity test against the group)
    language_groups: Mapping[str, list[str]] = field(default_factory=dict)
    # translated task -> the locally written task for the same languages (the report's local-vs-translated section)
    local_vs_translated: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_params(cls, section: Mapping[str, Any] | None, seed: int) -> "AnalysisSettings":
        """The settings of params.yaml's ``analysis`` section (validated by the schema), defaults for the rest."""
        section = section or {}
        given = {name: section[PARAMS_KEYS.get(name, name)] for name in cls.__dataclass_fields__
                 if name != "seed" and PARAMS_KEYS.get(name, name) in section}
        return cls(seed=seed, **given)

    def pick(self, *names: str) -> dict[str, Any]:
        """Some settings as a plain mapping: what one rule's job is handed (its params, which rerun it on a change)."""
        return {name: getattr(self, name) for name in names}


# the defaults on their own (with seed 0): what an analysis function uses when a caller gives no setting
DEFAULT_SETTINGS = AnalysisSettings(seed=0)
