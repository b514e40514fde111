import logging
import shutil
import tempfile
from pathlib import Path

from babeleval.generate import job as generate
from babeleval.core import joblog

joblog.setup(snakemake.log[0])
p = snakemake.params
scratch = Path(tempfile.mkdtemp(prefix="shared-prefix-"))
try:
    # Answers go to the response cache; the variants' own generation jobs write their generation files.
    counts = generate.run(
        model_spec=dict(p.model_spec),
        model_path=p.model_path,
        mode="loglikelihood",
        settings=p.settings,
        request_files=dict(zip(p.labels, snakemake.input.prompts)),
        output_files={label: str(scratch / f"{n}.jsonl") for n, label in enumerate(p.labels)},
        cache_path=p.cache,
        chunk_size=1024,  # the variants of one item must meet in one backend call to share their prefix
        usage_file=snakemake.output.usage,
    )
finally:
    shutil.rmtree(scratch, ignore_errors=True)
logging.info("done: %s", counts)
