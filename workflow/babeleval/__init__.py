"""babeleval: evaluate language models over models x tasks x languages x prompt templates.

The package is what the Snakemake rules call. Importing it (or any module but
``babeleval.backends.hf``) never imports torch, so CPU jobs stay light.
"""

__version__ = "0.1.0"
