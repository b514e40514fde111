"""params.yaml entries of API models: required keys, endpoint kinds, and never a key in the file or a message."""

import pytest

from babeleval.grid.params import validate
from babeleval.core.errors import ConfigError

KEY = "sk-cfg-NEVER-SHOWN-0123456789abcdef"


@pytest.fixture
def check(repo_root):
    def run(model):
        params = {"seed": 1, "decoding": {"greedy": {"do_sample": False}}, "models": {"m": model},
                  "tasks": {"belebele": {"languages": ["eng_Latn"], "templates": ["instruct"],
                                         "source": {"kind": "local", "path": "data/samples/belebele"}}}}
        return validate(params, root=repo_root)
    return run


MODEL = {"backend": "openai", "model": "m", "base_url": "https://api.example.com/v1"}


def test_an_api_entry_validates(check):
    grid = check({**MODEL, "api_key_env": "EXAMPLE_API_KEY", "chat": True, "system_prompt": "Be brief.",
                  "fewshot_as_turns": True, "concurrency": 8, "timeout": 30, "max_retries": 3,
                  "rate_limit_resource": "api_example"})
    assert grid.models["m"].api_key_env == "EXAMPLE_API_KEY"


def test_params_never_hold_a_key(check):
    with pytest.raises(ConfigError, match="api_key: unknown key") as info:
        check({**MODEL, "api_key": KEY})
    assert KEY not in str(info.value)
    with pytest.raises(ConfigError, match="name of an environment variable") as info:
        check({**MODEL, "api_key_env": KEY})  # the key pasted in by mistake
    assert KEY not in str(info.value)


def test_params_check_api_entries(check):
    with pytest.raises(ConfigError, match="base_url"):
        check({"backend": "openai", "model": "m"})
    with pytest.raises(ConfigError, match="needs endpoint: chat"):
        check({**MODEL, "chat": True, "endpoint": "completions"})
    with pytest.raises(ConfigError, match="backend"):
        check({"backend": "openai", "builtin": "tiny-llama", "base_url": "http://x/v1"})
    with pytest.raises(ConfigError, match="backend"):
        check({"backend": "llamacpp", "model": "m"})
