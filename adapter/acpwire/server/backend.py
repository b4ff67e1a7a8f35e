"""The ACP agent the editor talks to: every agent-side method, on the generated types.

Session methods validate their input (absolute cwd, known session, known mode or config
value) and answer a clear JSON-RPC error otherwise: ``-32002`` for an unknown session,
``-32602`` for bad values, ``-32000`` when no model provider is configured. Blocking
work (agent construction, the database) runs in worker threads. Prompt turns are the
job of :class:`~acpwire.server.turns.TurnRunner`.
"""

from __future__ import annotations

import logging
from typing import TypeVar

from acp_v1 import models as m
from acpwire.endpoint import after_answer
from acpwire.rpc import invalid_params, method_not_found, resource_not_found
from acpwire.store.values import storable

from . import lifecycle, options
from .advertised import setup_method_of
from .core import BackendCore
from .state import DEFAULT_MODE, SessionState

logger = logging.getLogger(__name__)
T = TypeVar("T")
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
        from .services import access_memory, approval_memory  # the prompt machinery's

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
