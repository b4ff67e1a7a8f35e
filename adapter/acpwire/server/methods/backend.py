"""The ACP agent the editor talks to: every agent-side method, on the generated types.

Session methods validate their input (absolute cwd, known session, known mode or config
value) and answer a clear JSON-RPC error otherwise: ``-32002`` for an unknown session,
``-32602`` for bad values, ``-32000`` when no model provider is configured. Blocking
work (agent construction, the database) runs in worker threads. Prompt turns are the
job of :class:`~acpwire.server.turns.runner.TurnRunner`, loaded on first use.

:class:`BackendCore` holds what one client connection's backend needs (the client peer,
the session manager, the agent factory, the capability probe) and the helpers every
method uses (sessions by id, provider checks, blocking work, session set-up): the
:class:`~acpwire.server.editor.backend_view.Backend` the turns see. :class:`AcpBackend` adds
the methods themselves.
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
from acpwire.config.paths import require_absolute_cwd
from acpwire.link.endpoint import after_answer
from acpwire.probe import ConnectionProbe
from acpwire.rpc import (
    RpcError,
    auth_required,
    internal_error,
    invalid_params,
    method_not_found,
    resource_not_found,
)
from acpwire.server.editor.mcp_host import McpHost
from acpwire.server.editor.notifier import Notifier
from acpwire.server.methods import lifecycle
from acpwire.server.methods.advertised import setup_method_of
from acpwire.server.sessions import options
from acpwire.server.sessions.lazy_agent import LazyAgent
from acpwire.server.sessions.manager import SessionManager
from acpwire.server.sessions.provenance import provenance_meta, sends_provenance
from acpwire.server.sessions.state import DEFAULT_MODE, SessionState
from acpwire.store import StoreError
from acpwire.store.values import storable

if TYPE_CHECKING:
    from acpwire.server.turns.runner import TurnRunner


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
        from acpwire.server.turns.runner import TurnRunner

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
        """``_meta`` with the session's provenance (None before the agent has an id, and
        for an agent whose factory does not say it has one: ``session_provenance``)."""
        internal = state.record.internal_id
        if internal is None or not sends_provenance(self.factory):
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


LIST_PAGE = 50


class AcpBackend(BackendCore):
    """Implements ``acp_v1.interfaces.Agent`` for one client connection."""

    # -- initialize / auth -----------------------------------------------------------

    async def initialize(self, params: m.InitializeRequest) -> m.InitializeResponse:
        probe, response = await lifecycle.answer_initialize(
            params,
            self.factory,
            unstable=self.unstable,
            mcp_http=self.mcp.supports_http,
            mcp_sse=self.mcp.supports_sse,
        )
        self.adopt(probe)
        return response

    async def authenticate(self, params: m.AuthenticateRequest) -> m.AuthenticateResponse:
        self.factory.reset()
        configured = await self.blocking(self.factory.configured)
        lifecycle.check_auth_method(
            params.method_id,
            provider=self.factory.provider if configured else None,
            configured=configured,
            problem=self.factory.problem,
            hint=self.factory.setup_hint,
            setup=setup_method_of(self.factory),
        )
        self.logged_out = False
        return m.AuthenticateResponse()

    async def logout(self, params: m.LogoutRequest) -> m.LogoutResponse:
        self.logged_out = True
        self.factory.reset()
        return m.LogoutResponse()

    # -- sessions --------------------------------------------------------------------

    async def session_new(self, params: m.NewSessionRequest) -> m.NewSessionResponse:
        cwd = self._cwd(params.cwd)
        await self._check_provider()
        state = await self._build(self.manager.create, cwd)
        await self._setup_extras(state, params.mcp_servers or [])
        modes, config = await self._session_setup(state)
        if self.manager.store_problem:
            problem = self.manager.store_problem
            after_answer(lambda: self._notice(state, f"Sessions are not being saved: {problem}"))
        elif self.manager.store_warning:
            warning = self.manager.store_warning
            after_answer(lambda: self._notice(state, f"Warning: {warning}"))
        return m.NewSessionResponse(
            session_id=state.id, modes=modes, config_options=config, meta=self.provenance(state)
        )

    async def _reopen(
        self, session_id: str, raw_cwd: str, servers: list[m.McpServer]
    ) -> SessionState:
        cwd = self._cwd(raw_cwd)
        state = await self.session(session_id)
        await self._check_provider()  # a session reopened to work needs a model
        if cwd != state.cwd:
            await self._moved(state, cwd)
        await self.mcp.stop(state)
        await self._setup_extras(state, servers)
        return state

    async def _moved(self, state: SessionState, cwd: str) -> None:
        """A session opened in another cwd takes no grant and no permissive mode there:
        its session grants are dropped and it comes back in Default mode."""
        from acpwire.server.editor.services import (  # the prompt machinery's
            access_memory,
            approval_memory,
        )

        approval_memory(self, state).clear_session()
        access_memory(self, state).clear_session()
        if state.mode != DEFAULT_MODE:
            logger.info("session %s moved to %s: mode %s -> default", state.id, cwd, state.mode)
        await self.blocking(lambda: self.manager.update(state, cwd=cwd, mode=DEFAULT_MODE))

    async def session_load(self, params: m.LoadSessionRequest) -> m.LoadSessionResponse:
        state = await self._reopen(params.session_id, params.cwd, params.mcp_servers or [])
        transcript = await self.blocking(self.manager.transcript, state)
        catalog = self.manager.catalog
        meta = catalog.replay_meta if catalog is not None else None
        from acpwire.render.replay import replay_updates  # only sessions being loaded need it

        for update in replay_updates(transcript, cwd=state.cwd, meta=meta):
            await self.notifier.update(state.id, update)
        modes, config = await self._session_setup(state)
        return m.LoadSessionResponse(
            modes=modes, config_options=config, meta=self.provenance(state)
        )

    async def session_resume(self, params: m.ResumeSessionRequest) -> m.ResumeSessionResponse:
        state = await self._reopen(params.session_id, params.cwd, params.mcp_servers or [])
        modes, config = await self._session_setup(state)
        return m.ResumeSessionResponse(
            modes=modes, config_options=config, meta=self.provenance(state)
        )

    async def session_fork(self, params: m.ForkSessionRequest) -> m.ForkSessionResponse:
        cwd = self._cwd(params.cwd)
        await self._check_provider()
        source = await self.session(params.session_id)
        state = await self._build(self.manager.fork, params.session_id, cwd)
        if state is None:
            raise resource_not_found(f"Session {params.session_id!r} not found")
        if state.cwd != source.cwd:
            await self._moved(state, cwd)
        await self._setup_extras(state, params.mcp_servers or [])
        modes, config = await self._session_setup(state)
        return m.ForkSessionResponse(
            session_id=state.id, modes=modes, config_options=config, meta=self.provenance(state)
        )

    async def session_list(self, params: m.ListSessionsRequest) -> m.ListSessionsResponse:
        cwd = self._cwd(params.cwd) if params.cwd else None
        try:
            records, cursor = await self.blocking(
                self.manager.list_sessions, cwd, params.cursor, LIST_PAGE
            )
        except ValueError as exc:
            raise invalid_params(str(exc)) from exc
        return m.ListSessionsResponse(
            sessions=[
                m.SessionInfo(
                    session_id=r.id,
                    cwd=r.cwd,
                    title=r.title or None,
                    updated_at=r.updated_at.isoformat(),
                )
                for r in records
            ],
            next_cursor=cursor,
        )

    async def _stop_open(self, session_id: str, reason: str) -> bool:
        """Stop an open session's work; False when it is not open (no agent is built)."""
        state = self.manager.peek(session_id)
        if state is None:
            return False
        await self.turns.stop(state, reason=reason)
        await self.mcp.stop(state)
        return True

    async def session_close(self, params: m.CloseSessionRequest) -> m.CloseSessionResponse:
        sid = params.session_id
        if await self._stop_open(sid, "session closed"):
            await self.blocking(self.manager.close, sid)
        elif not storable(sid) or await self.blocking(self.manager.store.get_session, sid) is None:
            raise self._not_found(sid)
        return m.CloseSessionResponse()

    async def session_delete(self, params: m.DeleteSessionRequest) -> m.DeleteSessionResponse:
        sid = params.session_id
        await self._stop_open(sid, "session deleted")
        if not storable(sid) or not await self.blocking(self.manager.delete, sid):
            raise self._not_found(sid)
        return m.DeleteSessionResponse()

    async def session_set_mode(self, params: m.SetSessionModeRequest) -> m.SetSessionModeResponse:
        state = await self.session(params.session_id)
        mode = options.check_mode(params.mode_id)
        await self._apply(state, options.Change(options.MODE, mode))
        return m.SetSessionModeResponse()

    async def session_set_config_option(
        self, params: m.SetSessionConfigOptionRequest
    ) -> m.SetSessionConfigOptionResponse:
        state = await self.session(params.session_id)
        models = await self.blocking(self.factory.available_models)
        change = options.parse_change(params, models, state.agent.model, any_model=self._any_model)
        await self._apply(state, change)
        return m.SetSessionConfigOptionResponse(
            config_options=options.config_options(state, models)
        )

    async def retired_method(self, method: str, params: object) -> object:
        """``session/set_model`` {sessionId, modelId}, removed from the protocol (schema
        v0.13.5) but still sent by JetBrains 2025.3 (which breaks on -32601), marimo and
        avante: sets the model as the ``model`` config option does and answers ``{}``."""
        if method != "session/set_model":
            raise method_not_found(method)
        ids = params if isinstance(params, dict) else {}
        session_id, model_id = ids.get("sessionId"), ids.get("modelId")
        if not isinstance(session_id, str) or not isinstance(model_id, str):
            raise invalid_params("session/set_model needs sessionId and modelId (strings)")
        state = await self.session(session_id)
        models = await self.blocking(self.factory.available_models)
        await self._apply(
            state,
            options.check_change(
                options.MODEL, model_id, models, state.agent.model, any_model=self._any_model
            ),
        )
        return {}

    @property
    def _any_model(self) -> bool:
        """The factory takes any model id (Hermes: what ``/model`` takes)."""
        return getattr(self.factory, "any_model_id", False) is True

    async def _apply(self, state: SessionState, change: options.Change) -> None:
        """Apply and persist a setting; tell the client what changed."""
        if change.config_id == options.MODE:
            await self.blocking(lambda: self.manager.update(state, mode=change.value))
            await self.notifier.update(
                state.id, m.SessionUpdateCurrentModeUpdate(current_mode_id=change.value)
            )
        elif change.config_id == options.MODEL:
            try:  # Hermes' switch_model may take a while: off the event loop
                await self.blocking(state.agent.set_model, change.value)
            except ValueError as exc:
                raise invalid_params(str(exc)) from exc
            model = options.stored_model(state.agent)
            await self.blocking(lambda: self.manager.update(state, model=model))
        else:
            state.reasoning_effort = change.value
            state.agent.set_reasoning_effort(None if change.value == "default" else change.value)
            stored = dict(state.record.config_options, reasoning_effort=change.value)
            await self.blocking(lambda: self.manager.update(state, config_options=stored))
        await self.turns.send_config(state)

    # -- prompt turns ----------------------------------------------------------------

    async def session_prompt(self, params: m.PromptRequest) -> m.PromptResponse:
        state = await self.session(params.session_id)
        epoch = state.cancel_epoch
        logger.debug("prompt arrived for %s (epoch %d)", state.id, epoch)
        state.prompts_arrived += 1
        try:
            await self._check_provider()
            return await self.turns.prompt(state, params, epoch)
        finally:
            state.prompts_arrived -= 1

    async def session_cancel(self, params: m.CancelNotification) -> None:
        state = self.manager.peek(params.session_id)
        if state is None:
            logger.info("cancel for session %s, which is not open: ignored", params.session_id)
            return
        self.turns.cancel(state)
