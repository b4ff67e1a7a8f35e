"""The environment of the MCP servers acpwire starts follows the rule of shell commands,
with the same pass-through list, end to end: a real stdio MCP server, started by the
MCP host the backend builds for the connection, reports its environment through a tool
call the scripted model makes; the same variables are then printed by a command.

Left out of both: ``OPENAI_API_KEY``, a name the config home's ``.env`` defined, the
configured ``api_key`` under another name, credential-looking names, ``BASH_ENV``. Kept in
both: the names in ``env_passthrough`` and ordinary variables; the server also gets what
the editor set for it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

from acp_v1 import models as m
from tests.backend.harness import model_tool_result, rig, tool_call

pytestmark = pytest.mark.anyio

ENV_SERVER = Path(__file__).parents[1] / "mcp" / "env_server.py"
PROCESS_ENV = {
    "OPENAI_API_KEY": "sk-env-secret",
    "FROM_DOTENV": "dotenv-secret",
    "RENAMED_VALUE": "sk-config-secret",
    "AWS_SECRET_ACCESS_KEY": "aws-secret",
    "MY_SERVICE_TOKEN": "tok-secret",
    "BASH_ENV": "/tmp/evil.sh",
    "GITHUB_TOKEN": "ghp-passed",
    "HARMLESS_SETTING": "visible",
}
GONE = ("OPENAI_API_KEY", "FROM_DOTENV", "RENAMED_VALUE", "AWS_SECRET_ACCESS_KEY",
        "MY_SERVICE_TOKEN", "BASH_ENV")  # fmt: skip
KEPT = {"GITHUB_TOKEN": "ghp-passed", "HARMLESS_SETTING": "visible"}


@pytest.mark.subprocess
async def test_mcp_servers_and_commands_get_the_same_scrubbed_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in PROCESS_ENV.items():
        monkeypatch.setenv(name, value)
    fields = {"env_passthrough": ("GITHUB_TOKEN",), "secret_names": ("FROM_DOTENV",)}
    async with rig(
        tmp_path, extra={"api_key": "sk-config-secret"}, fields=fields, real_mcp=True
    ) as r:
        server = m.McpServerStdio(
            name="envsrv",
            command=sys.executable,
            args=[str(ENV_SERVER)],
            env=[m.EnvVariable(name="GIVEN_BY_EDITOR", value="editor-value")],
        )
        with anyio.fail_after(60):
            new = await r.peer.session_new(
                m.NewSessionRequest(cwd=str(r.workspace), mcp_servers=[server])
            )
        sid = new.session_id
        r.editor.policy.answer = "allow_once"  # MCP tool calls are asked in Default mode
        r.llm.push(tool_call("t1", "envsrv__environment"))
        r.llm.push(tool_call("t2", "terminal", command="printenv"))
        r.llm.push({"text": "done"})
        with anyio.fail_after(60):
            assert (await r.prompt(sid, "go")).stop_reason == "end_turn"
        server_env = json.loads(model_tool_result(r, "t1"))
        printed = json.loads(model_tool_result(r, "t2"))["output"]
        assert server_env["GIVEN_BY_EDITOR"] == "editor-value"
        for name in GONE:
            assert name not in server_env, name
            assert f"{name}=" not in printed, name
        for name, value in KEPT.items():
            assert server_env.get(name) == value, name
            assert f"{name}={value}" in printed, name
        for secret in PROCESS_ENV.values():
            if secret not in KEPT.values():
                assert secret not in json.dumps(server_env) and secret not in printed
