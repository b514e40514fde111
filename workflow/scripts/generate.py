import logging

from babeleval import generate, joblog, preflight
from babeleval.backends import load_backend

joblog.setup(snakemake.log[0])
p = snakemake.params
# the whole model entry; params.model_outputs holds only the settings that decide a rerun (babeleval.fingerprint)
model_spec = dict(snakemake.config["models"][snakemake.wildcards.model])
if p.api_resource:
    # Snakemake caps a job's resource at what --resources allows: run no more requests at once than granted.
    granted = int(getattr(snakemake.resources, p.api_resource))
    model_spec["concurrency"] = min(model_spec.get("concurrency", granted), granted)
    logging.info("%s: %d requests in flight at most", p.api_resource, model_spec["concurrency"])
counts = generate.run(
    model_spec=model_spec,
    model_path=p.model_path,
    mode=p.settings["mode"],
    settings=p.settings,
    request_files=dict(zip(p.languages, snakemake.input.prompts)),
    output_files=dict(zip(p.languages, snakemake.output.generations)),
    cache_path=p.cache,
    usage_file=snakemake.output.usage,
    backend_loader=preflight.checked_loader(load_backend),  # device and hub checks before weights load
)
logging.info("done: %s", counts)
