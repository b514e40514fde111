"""The planner: params.yaml to the validated grid and one resolved record per combination.

The only package the rule files import: ``params`` validates, ``records`` and ``resolve`` hold and make the
records, ``rules`` answers the rule files' input functions, ``resources`` the jobs' resources,
``variant_sets`` which variants run together, ``run_summary`` what a run ends with; ``paths`` is the
table of path patterns (``babeleval.core.paths``).
"""

from ..core import paths

__all__ = ["paths"]
