"""The field names of the records that pass between stages: a request of the prompts file and a record of the
generations file (their paths: ``babeleval.core.paths.PROMPTS`` and ``GENERATIONS``).

The prompts stage writes a request's prompt, the generation job copies the request into its record with what the
model was given, and scoring leaves that text out of the scored records: each stage names the fields here.
"""

from __future__ import annotations

# A request's fields that hold the prompt's text, whole and in parts: the bulk of a record (a five-shot Belebele
# prompt is about 15 KB, twice over), kept in the prompts and generations files (PROMPT_TEXT)
REQUEST_PROMPT_TEXT = ("prompt", "preamble", "exemplar_turns", "query")

MESSAGES = "messages"
RENDERED_PROMPT = "rendered_prompt"
# A generations record's fields that hold the text the model was given: the request's prompt (whole and in parts),
# a chat model's messages, and the text its chat template made of them. The generations file is where they live;
# the scored records of results/raw leave them out (babeleval.score.job.scored_record).
PROMPT_TEXT = frozenset((*REQUEST_PROMPT_TEXT, MESSAGES, RENDERED_PROMPT))
