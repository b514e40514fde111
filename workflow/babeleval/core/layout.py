"""The order of a generation or scoring job's files: each template's languages in turn.

A job covers one (model, task) and one template or several (``generation_job`` in workflow/resources.yaml); the
rules list its files in this order (workflow/rules/common.smk ``job_files``) and the jobs read them back in it.
"""

from __future__ import annotations

from typing import Sequence


def job_pairs(templates: Sequence[str], languages: Sequence[str]) -> list[tuple[str, str]]:
    """(template, language) of each of a job's files, in the order the rules list them."""
    return [(template, language) for template in templates for language in languages]
