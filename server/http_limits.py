"""Request-body caps and the MCP tool allow-list: one small ASGI middleware in front of the app.

Why a middleware: Gradio parses an API call's whole JSON body before any callback (or
``guard_inputs``) sees it, so a 300 MB string costs memory before anything can refuse it, and a
``data:`` URI inside that JSON skips the upload cap (``max_file_size`` guards ``/upload`` only).
Gradio's MCP server lists only the tools, but runs any endpoint called by name, converting a string
argument of an image input into a file first (a URL there is fetched). And the MCP library refuses
bodies over 4 MiB with a bare HTTP 413 that ends the client's session, while an image may be 16 MiB.

So every request passes here first:

- API calls (any POST outside ``/gradio_api/upload`` and MCP) are refused with HTTP 413 and a
  one-line message past ``API_MAX_BODY``, from the Content-Length header or by counting the
  streamed bytes, before a byte is parsed.
- MCP: a ``tools/call`` for a name that is not one of ``server.mcp_tools``' tools, or with arguments
  of the wrong JSON type (``check_call``), is answered with a tool error naming the tool or the
  argument and never reaches Gradio; a body past ``MCP_MAX_BODY`` is answered with a tool error
  naming the limit (HTTP 200, so the session lives on). Every MCP request carries Gradio's own
  ``tools=`` selection, narrowed to the tools, so the list and the schema show them alone.
  ``mcp_body_limit`` (a lifespan) raises the library's 4 MiB cap to ``MCP_MAX_BODY``.
"""
from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Awaitable, Callable, Collection, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

log = logging.getLogger("showcase.http")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MiB = 2**20
#: Largest image an MCP tool takes (bytes, before base64); ``server.mcp_tools`` checks it again.
MAX_IMAGE_MIB = 16
#: Largest MCP request body: a 16 MiB image is 21.4 MiB of base64, plus the JSON-RPC envelope.
MCP_MAX_BODY = 22 * MiB
#: Largest API call body (``/gradio_api/call``, ``/queue/join``, ...): the MCP tools' own calls
#: come back through the queue, so it is above ``MCP_MAX_BODY``; a ``data:`` URI this long decodes
#: to 18 MiB, under the 20 MiB upload cap (``server.launch.MAX_UPLOAD``).
API_MAX_BODY = 24 * MiB
#: An oversized MCP body is read (and dropped) up to this size to find its JSON-RPC id; past it, 413.
MCP_DRAIN_LIMIT = 4 * MCP_MAX_BODY

MCP_PATH = "/gradio_api/mcp"
UPLOAD_PATH = "/gradio_api/upload"
_HEAD, _TAIL = 64 * 1024, 4 * 1024
_ID = r'"id"\s*:\s*(-?\d+|"[^"\\]{0,200}")'
_SCALAR_FIELD = r'"[A-Za-z_]+"\s*:\s*(?:"[^"\\]{0,200}"|-?\d+)'
#: The request id at the start (``{"jsonrpc":"2.0","id":3,...``) or at the end (``...},"id":3}``).
_ID_AT_HEAD = re.compile(r'^\s*\{\s*(?:' + _SCALAR_FIELD + r'\s*,\s*)*' + _ID)
_ID_AT_TAIL = re.compile(_ID + r'\s*(?:,\s*' + _SCALAR_FIELD + r'\s*)*\}\s*$')


def mib(n: int) -> str:
    """Bytes as MiB for a message (``23.5 MiB``)."""
    return f"{n / MiB:.1f} MiB" if n % MiB else f"{n // MiB} MiB"


class BodyTooLarge(Exception):
    """A request body past its cap; ``size`` is what was counted before reading stopped."""

    def __init__(self, size: int, head: bytes = b"", tail: bytes = b"", complete: bool = False):
        super().__init__(f"request body of at least {size} bytes")
        self.size, self.head, self.tail, self.complete = size, head, tail, complete


async def read_body(receive: Receive, limit: int, drain_to: int = 0) -> bytes:
    """The whole request body, or :class:`BodyTooLarge` once it passes ``limit`` bytes.

    Never holds more than ``limit`` bytes: past it, reading goes on (keeping only the first
    64 KiB and the last 4 KiB) until ``drain_to`` bytes, so the caller can still find the request's
    id; with ``drain_to=0`` it stops at once.
    """
    body = bytearray()
    size = 0
    head, tail = b"", b""
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise BodyTooLarge(size, head, tail) if size > limit else ConnectionError("client went away")
        chunk = message.get("body", b"")
        size += len(chunk)
        more = message.get("more_body", False)
        if size <= limit:
            body.extend(chunk)
        else:
            if not head:  # just passed the limit: keep the first and last bytes, drop the rest
                head = bytes((body + chunk)[:_HEAD]) if len(body) < _HEAD else bytes(body[:_HEAD])
                tail = bytes(body[-_TAIL:])
                body = bytearray()
            tail = (tail + chunk)[-_TAIL:]
            if not drain_to or size > drain_to or not more:
                raise BodyTooLarge(size, head, tail, complete=not more)
        if not more:
            return bytes(body)


def replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` once, then whatever the client sends next (a disconnect)."""
    sent = False

    async def again() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again


async def _answer(send: Send, status: int, payload: dict | list | str) -> None:
    """Send a whole JSON (or plain text) response."""
    is_text = isinstance(payload, str)
    body = (payload if is_text else json.dumps(payload)).encode()
    media = b"text/plain; charset=utf-8" if is_text else b"application/json"
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", media), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def tool_error(request_id: object, message: str) -> dict:
    """A JSON-RPC answer to ``tools/call`` that an MCP client shows as the tool's error."""
    return {"jsonrpc": "2.0", "id": request_id,
            "result": {"content": [{"type": "text", "text": message}], "isError": True}}


def rpc_error(request_id: object, message: str, code: int = -32600) -> dict:
    """A JSON-RPC error (for a request that is not a tool call)."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def request_id(head: bytes, tail: bytes) -> object:
    """The JSON-RPC id of a request whose body was too large to keep, from its first or last bytes
    (clients write it before ``params`` or after them); None when neither shows it."""
    for pattern, text in ((_ID_AT_HEAD, head), (_ID_AT_TAIL, tail)):
        match = pattern.search(text.decode("utf-8", "replace"))
        if match:
            return json.loads(match.group(1))
    return None


def too_large_message(size: int, complete: bool) -> str:
    """One line naming the MCP limit and what fits in it."""
    seen = f"{mib(size)}" if complete else f"more than {mib(size)}"
    return (f"the MCP request is {seen}; this server takes at most {mib(MCP_MAX_BODY)} per request "
            f"(an image up to {MAX_IMAGE_MIB} MiB, base64-encoded). Send a smaller image (downscale or JPEG)")


def unknown_tool_message(name: object, allowed: Collection[str]) -> str:
    """One line saying the name is no tool here and listing the tools."""
    shown = str(name)[:60] if isinstance(name, str) else type(name).__name__
    return f"unknown tool {shown!r}: this server's MCP tools are {', '.join(sorted(allowed))}"


class RequestGuard:
    """ASGI middleware: body caps on every POST, the tool allow-list on MCP (see the module doc)."""

    def __init__(self, app: ASGIApp, allowed_tools: Collection[str], api_max_body: int = API_MAX_BODY,
                 mcp_max_body: int = MCP_MAX_BODY, check_call: Callable[[str, object], str | None] | None = None):
        self.app = app
        self.allowed = frozenset(allowed_tools)
        self.check_call = check_call
        self.api_max_body = api_max_body
        self.mcp_max_body = mcp_max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope.get("path", "")
        if MCP_PATH in path:
            return await self._mcp(self._only_tools(scope), receive, send)
        if scope["method"] not in ("POST", "PUT", "PATCH") or path.rstrip("/").endswith(UPLOAD_PATH):
            return await self.app(scope, receive, send)
        declared = _content_length(scope)
        if declared is not None and declared > self.api_max_body:
            return await self._api_too_large(send, declared, complete=True)
        try:
            body = await read_body(receive, self.api_max_body)
        except BodyTooLarge as exc:
            return await self._api_too_large(send, exc.size, exc.complete)
        except ConnectionError:
            return None
        await self.app(scope, replay(body, receive), send)

    async def _api_too_large(self, send: Send, size: int, complete: bool) -> None:
        seen = mib(size) if complete else f"more than {mib(size)}"
        await _answer(send, 413, {"detail": f"the request body is {seen}; API calls take at most "
                                            f"{mib(self.api_max_body)} (send files through /gradio_api/upload)"})

    def _only_tools(self, scope: Scope) -> Scope:
        """The scope with Gradio's ``tools=`` query narrowed to the allowed tools (and to the
        client's own choice, when it made one)."""
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        wanted = [v for k, v in query if k == "tools"]
        names = sorted(self.allowed)
        if wanted:
            asked = {n.strip() for v in wanted for n in v.split(",")}
            names = [n for n in names if n in asked]
        rest = [(k, v) for k, v in query if k != "tools"]
        return {**scope, "query_string": urlencode(rest + [("tools", ",".join(names))]).encode("latin-1")}

    async def _mcp(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            return await self.app(scope, receive, send)
        streamable = "/messages" not in scope.get("path", "")  # the old SSE transport answers in its stream
        declared = _content_length(scope)
        if declared is not None and declared > MCP_DRAIN_LIMIT:
            return await _answer(send, 413, too_large_message(declared, True))
        try:
            body = await read_body(receive, self.mcp_max_body, drain_to=MCP_DRAIN_LIMIT if streamable else 0)
        except BodyTooLarge as exc:
            log.warning("MCP request refused: %s bytes or more", exc.size)
            msg = too_large_message(exc.size, exc.complete)
            rid = request_id(exc.head, exc.tail) if exc.complete and streamable else None
            if rid is None:
                return await _answer(send, 413, msg)
            is_call = b'"tools/call"' in exc.head or b'"tools/call"' in exc.tail
            return await _answer(send, 200, tool_error(rid, msg) if is_call else rpc_error(rid, msg))
        except ConnectionError:
            return None
        refused = self._refused_call(body)
        if refused is not None:
            rid, msg = refused
            log.warning("MCP call refused: %s", msg)
            if streamable:
                return await _answer(send, 200, tool_error(rid, msg))
            return await _answer(send, 403, msg)
        await self.app(scope, replay(body, receive), send)

    def _refused_call(self, body: bytes) -> tuple[object, str] | None:
        """(id, message) when the body calls a tool that is not allowed, or calls one with arguments
        that ``check_call`` refuses (in a batch: the first such call)."""
        try:
            parsed = json.loads(body)
        except ValueError:
            return None  # not JSON: the MCP library answers with a parse error
        for msg in parsed if isinstance(parsed, list) else [parsed]:
            if not isinstance(msg, dict) or msg.get("method") != "tools/call":
                continue
            params = msg.get("params")
            name = params.get("name") if isinstance(params, dict) else None
            if name not in self.allowed:
                return msg.get("id"), unknown_tool_message(name, self.allowed)
            problem = self.check_call(name, params.get("arguments")) if self.check_call else None
            if problem:
                return msg.get("id"), problem
        return None


def _content_length(scope: Scope) -> int | None:
    for key, value in scope.get("headers", []):
        if key.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def mcp_body_limit(limit: int = MCP_MAX_BODY):
    """A FastAPI lifespan that raises the MCP library's request-body cap (4 MiB) to ``limit``.

    Gradio builds the MCP session manager inside ``launch`` with the library's default and offers no
    setting for it; this runs at start-up, before any request, and sets the manager's cap (the
    ``max_request_body_size`` the library documents, and its body-limit middleware's copy).
    """

    @contextlib.asynccontextmanager
    async def lifespan(app):
        server = getattr(app.get_blocks(), "mcp_server_obj", None)
        manager = getattr(server, "manager", None)
        if manager is not None:
            guard = getattr(manager, "asgi_app", None)
            if not hasattr(manager, "max_request_body_size") or not hasattr(guard, "max_body_size"):
                log.error("cannot raise the MCP library's request-body cap (its API changed); "
                          "MCP requests over 4 MiB will be refused")
            else:
                manager.max_request_body_size = guard.max_body_size = limit
        yield

    return lifespan
