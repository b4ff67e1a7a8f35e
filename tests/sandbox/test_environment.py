"""The environment of commands and MCP servers: acpwire's credentials, ``.env`` names,
the configured key (under any name) and credential-looking names are gone; the user's
passthrough list and ordinary variables stay."""

from __future__ import annotations

import pytest

from acp_v1 import models as m
from acpwire.config.environment import SecretSpec, command_env, looks_secret, scrubbed_env
from acpwire.mcp.transports import UnsupportedServer, stdio_environment

ENVIRON = {
    "PATH": "/usr/bin",
    "HOME": "/home/u",
    "GIT_AUTHOR_NAME": "U",
    "OPENAI_API_KEY": "sk-live",
    "ANTHROPIC_API_KEY": "sk-ant",
    "GITHUB_TOKEN": "ghp",
    "AWS_SECRET_ACCESS_KEY": "aws",
    "DB_PASSWORD": "pw",
    "MYAPIKEY": "x",
    "FROM_DOTENV": "plain-looking",
    "RENAMED": "sk-config",
    "BASH_ENV": "/tmp/evil.sh",
    "BASH_FUNC_ls%%": "() { rm -rf ~; }",
    "CI_TOKEN": "keep-me",
}


def test_secrets_and_look_alikes_are_removed() -> None:
    spec = SecretSpec.of(names=["FROM_DOTENV"], values=["sk-config"], passthrough=["CI_TOKEN"])
    env = scrubbed_env(spec, ENVIRON)
    assert env == {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "GIT_AUTHOR_NAME": "U",
        "CI_TOKEN": "keep-me",
    }


def test_acpwire_key_is_removed_even_when_listed_to_pass() -> None:
    spec = SecretSpec.of(passthrough=["OPENAI_API_KEY"])
    assert "OPENAI_API_KEY" not in command_env(spec, ENVIRON)
    assert command_env(spec, ENVIRON)["PAGER"] == "cat"


def test_names_that_look_like_credentials() -> None:
    for name in ("API_KEY", "x_token", "SECRET", "GH_PAT", "SSH_AUTH_SOCK", "PGPASSWORD"):
        assert looks_secret(name), name
    for name in ("PATH", "KEYBOARD", "GIT_AUTHOR_EMAIL", "PWD", "LANG", "DISPLAY"):
        assert not looks_secret(name), name


def test_mcp_servers_get_the_same_rule_and_the_editor_s_variables() -> None:
    spec = SecretSpec.of(names=["FROM_DOTENV"], values=["sk-config"], passthrough=["CI_TOKEN"])
    given = [m.EnvVariable(name="SERVER_TOKEN", value="from-the-editor")]
    env = stdio_environment(given, spec)
    assert {k: v for k, v in env.items() if k != "SERVER_TOKEN"} == scrubbed_env(spec)
    assert env["SERVER_TOKEN"] == "from-the-editor"  # the editor is trusted
    assert "OPENAI_API_KEY" not in stdio_environment([])
    with pytest.raises(UnsupportedServer):
        stdio_environment([m.EnvVariable(name="A=B", value="1")], spec)
