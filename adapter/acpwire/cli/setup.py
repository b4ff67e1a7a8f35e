"""``acpwire setup`` / ``--setup``: choose the model endpoint, key and model, and save them.

Proposes a local OpenAI-compatible server when one answers on its usual loopback port
(Ollama, llama.cpp server, LM Studio), lists the endpoint's models to choose from, then
writes ``[model]`` in ``config.toml`` and the key (if any) to ``.env`` in the config home.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from acpwire.agent.embedded.listing import list_models
from acpwire.agent.embedded.provider import discover_local_server
from acpwire.agent.embedded.stream import ModelError
from acpwire.cli._start import backend_settings
from acpwire.config import ENV_NAME, Settings, write_model_config
from acpwire.config.private import write_private

__all__ = ["Ask", "run", "run_setup"]

Ask = Callable[[str], str]


def run(args: argparse.Namespace) -> int:
    settings = backend_settings(args.log_level)
    if isinstance(settings, int):
        return settings
    return run_setup(settings, assume_yes=args.yes)


def _ask(prompt: str, default: str, ask: Ask, assume_yes: bool) -> str:
    if assume_yes:
        return default
    answer = ask(f"{prompt} [{default}]: " if default else f"{prompt}: ").strip()
    return answer or default


def _save_key(settings: Settings, key: str) -> None:
    path = settings.home / ENV_NAME
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    lines = [line for line in lines if not line.startswith("OPENAI_API_KEY=")]
    lines.append(f"OPENAI_API_KEY={key}")
    write_private(path, "\n".join(lines) + "\n")


def run_setup(settings: Settings, *, assume_yes: bool = False, ask: Ask = input) -> int:
    out = sys.stderr  # stdout may be an editor's protocol pipe
    current = settings.file_values
    default_url = str(current.get("base_url") or os.environ.get("OPENAI_BASE_URL") or "")
    if not default_url:
        found = discover_local_server()
        if found:
            print(f"Found a local model server at {found}.", file=out)
            default_url = found
    base_url = _ask(
        "OpenAI-compatible base URL (e.g. http://127.0.0.1:11434/v1)", default_url, ask, assume_yes
    )
    if not base_url:
        print("No endpoint given; nothing saved.", file=out)
        return 1
    key = os.environ.get("OPENAI_API_KEY", "")
    if not assume_yes:
        key = ask("API key (empty for none; saved to .env): ").strip() or key
    try:
        models = list_models(base_url.rstrip("/"), key or None, timeout=10.0)
    except ModelError as exc:
        print(f"Cannot list models at {base_url}: {exc.message}", file=out)
        models = []
    if models:
        print("Models: " + ", ".join(models[:30]) + (" ..." if len(models) > 30 else ""), file=out)
    default_model = str(current.get("model") or (models[0] if models else ""))
    model = _ask("Model", default_model, ask, assume_yes)
    if not model:
        print("No model chosen; nothing saved.", file=out)
        return 1
    path = write_model_config(
        settings.home, {**current, "base_url": base_url.rstrip("/"), "model": model}
    )
    if key:
        _save_key(settings, key)
    print(f"Saved {path}. Start your editor's agent again to use {model}.", file=out)
    return 0
