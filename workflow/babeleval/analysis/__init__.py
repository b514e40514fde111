"""Analysis over raw per-item outputs: no model needed, CPU only, never imports torch.

One module per job:

- ``records``: read raw files into per-item outcomes, labelled by (model, task, language, template);
- ``bootstrap``: seeded bootstrap confidence intervals for every metric (the leaderboard's ci_low/ci_high);
- ``sensitivity``: how much a score moves with the template, and how stable model rankings are;
- ``significance``: paired tests on the same items (exact McNemar, paired bootstrap) with Holm correction;
- ``parse_failures``: failure rates, the most common reasons and an example of each;
- ``difficulty``: which models answer each item; items solved in English but not in another language;
- ``plots``: PNG figures (matplotlib, Agg backend);
- ``report``: one self-contained HTML page with every table and figure.
"""
