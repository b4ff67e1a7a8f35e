"""Shared state and helpers of the backend: sessions by id, provider checks, blocking work.

:class:`BackendCore` holds what one client connection's backend needs (the client peer,
the session manager, the agent factory, the capability probe) and the helpers every ACP
method uses; :class:`~acpwire.server.backend.AcpBackend` adds the methods themselves.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from acp_v1 import models as m
from acp_v1.peers import ClientPeer
from acpwire.agent.config import ConfigError as AgentConfigError
from acpwire.agent.factory import AgentFactory
from acpwire.config import Settings
from acpwire.endpoint import after_answer
from acpwire.paths import require_absolute_cwd
from acpwire.probe import ConnectionProbe
from acpwire.provenance import provenance_meta
from acpwire.rpc import RpcError, auth_required, internal_error, invalid_params, resource_not_found
from acpwire.store import StoreError
from acpwire.store.values import storable

from . import lifecycle, options
from .lazy import LazyAgent
from .manager import SessionManager
from .mcp import McpHost
from .notify import Notifier
from .state import SessionState

if TYPE_CHECKING:
    from .turns import TurnRunner

logger = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_SYNC_BUDGET_S = 20.0
"""How long a client is assumed to wait for a set-up answer before ``initialize``."""
SYNC_MARGIN_S = 5.0
"""What session set-up keeps of that budget for its other work (the agent, the answer)."""


class BackendCore:
    """What every ACP method of one client connection's backend relies on."""

    def __init__(
        self,
        client: ClientPeer,
        *,
        manager: SessionManager,
        factory: AgentFactory,
        settings: Settings,
        mcp: McpHost,
        unstable: bool = True,
    ) -> None:
        self.client = client
        self.manager = manager
        self.factory = factory
        self.settings = settings
        self.mcp = mcp
        self.unstable = unstable
        self.probe: ConnectionProbe | None = None
        self.logged_out = False
        self.session_decisions_logged = False
        self.notifier = Notifier(client)
        self.limiter = anyio.CapacityLimiter(settings.workers)
        """Threads for agent turns. Short blocking work uses anyio's default pool instead,
        so turns waiting for a model or an approval never hold up other requests."""

    @cached_property
    def turns(self) -> TurnRunner:
        """The prompt machinery (turns, commands, approvals, tools), loaded on first use:
        right after the first session answer, not while the client waits for it."""
        from .turns import TurnRunner

        return TurnRunner(self)

    def adopt(self, probe: ConnectionProbe | None) -> None:
        """Act on the client's ``initialize`` (answered by the front desk or by us)."""
        self.probe = probe
        self.notifier.probe = probe

    # -- helpers ---------------------------------------------------------------------

    async def blocking(self, fn: Callable[..., T], *args: Any) -> T:
        """Run blocking work (database, agent construction) in a worker thread."""
        try:
            return await anyio.to_thread.run_sync(fn, *args)
        except StoreError as exc:
            logger.error("session database error: %s", exc)
            raise internal_error(f"Session database error: {exc}") from exc

    async def _build(self, fn: Callable[..., T], *args: Any) -> T:
        """Work that builds an agent: a provider that rejects the configuration (a key,
        a model with too small a context window) answers -32000 with the reason."""
        try:
            return await self.blocking(fn, *args)
        except AgentConfigError as exc:
            raise auth_required(
                lifecycle.no_provider_message(str(exc), self.factory.setup_hint)
            ) from exc

    def _not_found(self, session_id: str) -> RpcError:
        problem = self.manager.store_problem
        hint = f" (sessions are not persisted: {problem})" if problem else ""
        return resource_not_found(f"Session {session_id!r} not found{hint}")

    async def session(self, session_id: str) -> SessionState:
        """The open or stored session, or ``-32002`` (``-32000`` when restoring it needs
        a model provider and none is configured)."""
        state = self.manager.peek(session_id)
        if state is None and not storable(session_id):  # no stored id has half an emoji
            raise self._not_found(session_id)
        if state is None:
            try:
                state = await self.blocking(self.manager.get, session_id)
            except AgentConfigError as exc:
                problem = self.factory.problem or str(exc)
                raise auth_required(
                    lifecycle.no_provider_message(problem, self.factory.setup_hint)
                ) from exc
        if state is None:
            raise self._not_found(session_id)
        return state

    def _cwd(self, raw: str) -> str:
        if not storable(raw):  # no directory is named with half an emoji
            raise invalid_params(f"cwd must be valid Unicode text, got {raw!r}")
        try:
            return require_absolute_cwd(raw)
        except ValueError as exc:
            raise invalid_params(str(exc)) from exc

    def _require_provider(self) -> None:
        if self.logged_out:
            raise auth_required("Logged out: authenticate again to start sessions.")

    async def _check_provider(self) -> None:
        self._require_provider()
        if not await self.blocking(self.factory.configured):
            raise auth_required(
                lifecycle.no_provider_message(self.factory.problem, self.factory.setup_hint)
            )

    async def _setup_extras(self, state: SessionState, servers: list[m.McpServer]) -> None:
        """MCP servers for the session; failures become a note to the user, not an error.

        Set-up waits for them only as long as the client waits for its answer (less a
        margin): a server still starting then (a first ``npx`` download...) goes on in the
        background, and the user hears when it is ready or failed."""
        if not servers:
            return
        if isinstance(state.agent, LazyAgent):
            # Their tools join the real agent's registry: build it off the event loop.
            await self.blocking(state.agent.real)
        answered = anyio.Event()

        async def mark_answered() -> None:
            answered.set()

        if not after_answer(mark_answered):
            answered.set()

        async def on_late(name: str, status: str, detail: str) -> None:
            await answered.wait()  # never ahead of the answer (Zed would drop it)
            text = {
                "pending": f"MCP server {name!r} is still starting; its tools follow when it is ready.",
                "ready": f"MCP server {name!r} is ready ({detail}).",
            }.get(status, f"MCP server {name!r} failed to start: {detail}")
            await self._notice(state, text)

        wait_s = self.settings.mcp_wait_s
        if wait_s is None:
            budget = self.probe.sync_response_budget_s if self.probe else DEFAULT_SYNC_BUDGET_S
            wait_s = max(1.0, budget - SYNC_MARGIN_S)
        failures = await self.mcp.start(state, servers, wait_s=wait_s, on_late=on_late)
        if failures:
            text = "\n".join(
                f"MCP server {name!r} failed to start: {why}" for name, why in failures
            )
            after_answer(lambda: self._notice(state, text))

    async def _notice(self, state: SessionState, text: str) -> None:
        await self.notifier.message(state.id, text)

    def provenance(self, state: SessionState) -> dict[str, Any] | None:
        """``_meta`` with the session's provenance (None before the agent has an id)."""
        internal = state.record.internal_id
        if internal is None:
            return None
        meta = provenance_meta(self.manager.lineage, state.id, internal)
        return dict(meta) if meta is not None else None

    async def _session_setup(
        self, state: SessionState
    ) -> tuple[m.SessionModeState, list[m.SessionConfigOption]]:
        """Modes and config options for the answer; commands, usage, title and (when the
        model list was not known yet) the full model picker follow once it is out.

        Session set-up never waits for the model server: until the list is known, the
        picker holds the session's own model, and the full one follows the answer.
        """
        self.manager.unload_idle()  # sessions beyond the cap: memory stays bounded
        models = self.factory.cached_models()
        probe = self.probe
        log_decisions = probe is not None and not self.session_decisions_logged
        self.session_decisions_logged |= log_decisions

        async def send() -> None:
            if probe is not None and log_decisions and logger.isEnabledFor(logging.INFO):
                # After the answer, not at initialize or before it: they load the
                # update and permission models, which the answer does not need.
                client = probe.client_name or "(unnamed)"
                logger.info("client %s, for sessions: %s", client, probe.describe_sessions())
            await self.turns.advertise(state)
            if models is None:
                listed = await self.blocking(self.factory.available_models)
                if any(model != state.agent.model for model in listed):
                    await self.turns.send_config(state)

        after_answer(send)
        return options.mode_state(state), options.config_options(state, models or [])
