import logging
import time

from babeleval.generate import job as generate
from babeleval.core import joblog
from babeleval.generate import preflight
from babeleval.generate.backends import load_backend

joblog.setup(snakemake.log[0])
p = snakemake.params
# the whole model entry; params.model_outputs holds only the settings that decide a rerun (babeleval.generate.fingerprint)
model_spec = dict(snakemake.config["models"][snakemake.wildcards.model])
if p.api_resource:
    # Snakemake caps a job's resource at what --resources allows: run no more requests at once than granted.
    granted = int(getattr(snakemake.resources, p.api_resource))
    model_spec["concurrency"] = min(model_spec.get("concurrency", granted), granted)
    logging.info("%s: %d requests in flight at most", p.api_resource, model_spec["concurrency"])

# One model load for the whole job, however many templates it covers, and none when the cache answers everything.
# An API client is built afresh for each template (nothing to load), so that each usage file counts its own calls.
checked_load = preflight.checked_loader(load_backend)  # device and hub checks before weights load
loaded = []


def load_once(spec, path):
    if p.api_resource is not None or spec.get("backend") == "openai":
        return checked_load(spec, path)
    if not loaded:
        started = time.perf_counter()
        loaded.append(checked_load(spec, path))
        logging.info("model load 1 for %d template(s): %.1f s", len(p.templates), time.perf_counter() - started)
    return loaded[0]


# the rule lists each template's languages in turn (job_files in common.smk), and one usage file a template
n = len(p.languages)
for k, template in enumerate(p.templates):
    if len(p.templates) > 1:
        logging.info("template %s", template)
    counts = generate.run(
        model_spec=model_spec,
        model_path=p.model_path,
        mode=p.settings[template]["mode"],
        settings=p.settings[template],
        request_files=dict(zip(p.languages, snakemake.input.prompts[k * n:(k + 1) * n])),
        output_files=dict(zip(p.languages, snakemake.output.generations[k * n:(k + 1) * n])),
        cache_path=p.cache,
        usage_file=snakemake.output.usage[k],
        backend_loader=load_once,
    )
    logging.info("done: %s", counts)
