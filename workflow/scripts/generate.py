import logging

from babeleval import generate, joblog

joblog.setup(snakemake.log[0])
p = snakemake.params
counts = generate.run(
    model_spec=p.model_spec,
    model_path=p.model_path,
    mode=p.settings["mode"],
    settings=p.settings,
    request_files=dict(zip(p.languages, snakemake.input.prompts)),
    output_files=dict(zip(p.languages, snakemake.output)),
    cache_path=p.cache,
)
logging.info("done: %s", counts)
