"""Configuration precedence, validation, local-server discovery and default-model choice."""

from __future__ import annotations

import socket

import pytest

from acpwire.agent.config import ConfigError
from acpwire.agent.embedded.provider import (
    AgentConfig,
    complete_config,
    discover_local_server,
    pick_default_model,
    resolve_config,
)
from tests.support.fake_llm import FakeLLM


def _dead_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_defaults() -> None:
    config = resolve_config({}, {})
    assert config == AgentConfig()
    assert (config.max_iterations, config.context_window, config.temperature) == (40, 32768, None)
    assert config.base_url is None and config.model is None


def test_file_overrides_defaults_and_env_overrides_file() -> None:
    file_values = {
        "base_url": "http://file.example/v1/",
        "api_key": "file-key",
        "model": "file-model",
        "context_window": 65536,
        "max_iterations": 12,
        "temperature": 1,
    }
    from_file = resolve_config({}, file_values)
    assert from_file.base_url == "http://file.example/v1"  # trailing slash dropped
    assert (from_file.api_key, from_file.model) == ("file-key", "file-model")
    assert (from_file.context_window, from_file.max_iterations, from_file.temperature) == (
        65536,
        12,
        1.0,
    )

    env = {
        "OPENAI_BASE_URL": "http://env.example/v1",
        "OPENAI_API_KEY": "env-key",
        "ACPWIRE_MODEL": "env-model",
    }
    merged = resolve_config(env, file_values)
    assert (merged.base_url, merged.api_key, merged.model) == (
        "http://env.example/v1",
        "env-key",
        "env-model",
    )
    assert merged.context_window == 65536  # not set in env: the file value stays


def test_blank_env_values_do_not_override() -> None:
    config = resolve_config({"ACPWIRE_MODEL": "  ", "OPENAI_API_KEY": ""}, {"model": "file-model"})
    assert config.model == "file-model"
    assert config.api_key is None


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"modle": "x"}, "unknown agent setting 'modle'"),
        ({"max_iterations": "10"}, "must be int"),
        ({"max_iterations": True}, "must be int"),
        ({"temperature": "hot"}, "must be int or float"),
        ({"max_iterations": 0}, "at least 1"),
        ({"context_window": 100}, "at least 1024"),
    ],
)
def test_bad_file_values_raise(values: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        resolve_config({}, values)


def test_pick_default_model_takes_the_first_listed() -> None:
    with FakeLLM(models=["first-model", "second-model"]) as llm:
        assert pick_default_model(llm.base_url, None) == "first-model"


def test_pick_default_model_with_no_models_or_no_server() -> None:
    with FakeLLM(models=[]) as llm, pytest.raises(ConfigError, match="lists no models"):
        pick_default_model(llm.base_url, None)
    with pytest.raises(ConfigError, match="cannot list the models"):
        pick_default_model(_dead_url(), None)


def test_discover_local_server_returns_the_first_that_answers() -> None:
    with FakeLLM() as llm:
        assert discover_local_server([_dead_url(), llm.base_url + "/"], timeout=2) == llm.base_url
    assert discover_local_server([_dead_url()], timeout=2) is None


def test_complete_config_fills_endpoint_and_model() -> None:
    with FakeLLM(models=["local-model"], context_length=65536) as llm:
        listed: list[list[tuple[str, int | None]]] = []
        config = complete_config(
            AgentConfig(), candidates=[_dead_url(), llm.base_url], on_listed=listed.append
        )
        assert (config.base_url, config.model) == (llm.base_url, "local-model")
        # The server found is asked for its models once: discovery's answer picks the model.
        assert llm.model_lists == 1 and listed == [[("local-model", 65536)]]
        kept = complete_config(AgentConfig(base_url=llm.base_url, model="chosen"))
        assert kept.model == "chosen"
    with pytest.raises(ConfigError, match="no model endpoint configured"):
        complete_config(AgentConfig(), candidates=[_dead_url()])


def test_model_list_asks_once_reads_without_waiting_and_forgets() -> None:
    import threading

    from acpwire.agent.config import ModelList

    models = ModelList()
    calls: list[int] = []
    listing, release = threading.Event(), threading.Event()

    def slow_fetch() -> list[str]:
        calls.append(1)
        listing.set()
        assert release.wait(5)
        return ["a", "b"]

    worker = threading.Thread(target=models.get, args=(slow_fetch,))
    worker.start()
    assert listing.wait(5)
    assert models.cached() is None  # a listing in flight does not block a reader
    release.set()
    worker.join(5)
    assert models.cached() == ["a", "b"]
    assert models.get(slow_fetch) == ["a", "b"] and calls == [1]  # asked once
    got = models.get(slow_fetch)
    got.append("c")
    assert models.cached() == ["a", "b"]  # callers get copies
    models.forget()
    assert models.cached() is None
