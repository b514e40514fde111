"""One scale per metric, everywhere a number is shown to a reader (tables, figures, report sentences).

Accuracy-type metrics are stored on 0-1 (the long CSV) and shown as **percent (0-100)** (metrics.json, for DVC, too);
chrF, BLEU and SQuAD exact match / F1 are computed on 0-100 and shown as they are.
"""

from __future__ import annotations

# Preferred headline metric of a task, first present wins.
PRIMARY = ("acc", "chrf", "spbleu", "bleu", "f1", "exact_match", "acc_norm")
PARSED_ACCURACY = "acc_parsed"
PARSE_FAILURE_RATE = "parse_failure_rate"
# stored on 0-1, shown as percent
PERCENT_METRICS = frozenset({"acc", "acc_norm", PARSED_ACCURACY, "balanced_acc", "macro_f1", PARSE_FAILURE_RATE})
LABELS = {
    "acc": "accuracy over all items, % (a parse failure counts as wrong)",
    "acc_norm": "length-normalised accuracy, %",
    PARSED_ACCURACY: "accuracy over parsed items only, %",
    "balanced_acc": "balanced accuracy, %",
    "macro_f1": "macro-F1, %",
    PARSE_FAILURE_RATE: "parse-failure rate, %",
    "chrf": "chrF, 0-100",
    "bleu": "BLEU, 0-100",
    "spbleu": "spBLEU, 0-100",
    "exact_match": "exact match, 0-100",
    "f1": "SQuAD F1, 0-100",
}


def primary_metric(metrics) -> str | None:
    metrics = [m for m in metrics if m not in (PARSE_FAILURE_RATE, PARSED_ACCURACY)]
    for name in PRIMARY:
        if name in metrics:
            return name
    return sorted(metrics)[0] if metrics else None


def shown(metric: str, value: float) -> float:
    """``value`` on the scale readers see."""
    return 100.0 * value if metric in PERCENT_METRICS else value


def label(metric: str) -> str:
    return LABELS.get(metric, metric)


def axis_label(metric: str) -> str:
    """A short axis label: the metric and its scale."""
    return f"{metric}, %" if metric in PERCENT_METRICS else f"{metric}, 0-100"
