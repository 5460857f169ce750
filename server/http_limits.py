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
- MCP: JSON nested past ``MAX_JSON_DEPTH`` is answered with HTTP 400 and a JSON-RPC parse error
  (the library's parser would fail with a RecursionError and an HTTP 500). An integer longer than
  Python converts (``sys.get_int_max_str_digits()``, 4,300 digits) is a bad number like any other: in
  a tool's arguments a tool error naming the argument, elsewhere HTTP 400 (the MCP library would
  answer it with an HTTP 500).
- MCP: at most ``MAX_MCP_CALLS`` tool calls are held at once (running, or waiting in Gradio's
  queue); one more is answered at once with HTTP 503 and a Retry-After header, the seconds until the
  held calls are likely done (at the pace the last calls were answered), also said in the JSON-RPC
  error.
  Gradio answers each call through its own queue with a loopback client that waits in a worker
  thread, so the server's thread pool is sized for them (``server.launch``).

Who may send a request at all (Host, Origin) and how it is framed is checked before this, by
``server.edge``.
"""
from __future__ import annotations

import contextlib
import json
import logging
import math
import re
import sys
import time
from collections import deque
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
#: Deepest nesting of arrays and objects an MCP request may have: a tool call needs 5 levels. Deeper
#: JSON is answered with HTTP 400 before the MCP library parses it (at about 1,000 levels its parser
#: fails with a RecursionError and an HTTP 500), as ``/gradio_api/call`` answers it.
MAX_JSON_DEPTH = 32
#: MCP tool calls held at once (running or waiting in Gradio's queue); one more is refused at once
#: with HTTP 503 and Retry-After rather than left to time out in a crowd.
MAX_MCP_CALLS = 64
#: Retry-After when no call has finished yet to estimate from, and the most it ever says (seconds).
RETRY_AFTER_DEFAULT_S, RETRY_AFTER_MAX_S = 10, 600

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


def json_depth_over(value: object, limit: int) -> bool:
    """True when ``value`` (parsed JSON) nests arrays and objects more than ``limit`` deep; looks at
    each container once and stops at the first one past the limit."""
    if not isinstance(value, (dict, list)):
        return False
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


class LongNumber(float):
    """A JSON integer with more digits than Python converts to ``int`` (``sys.get_int_max_str_digits()``):
    kept as infinity with its digit count, so a message can name it."""

    digits: int

    def __new__(cls, text: str) -> LongNumber:
        value = super().__new__(cls, "-inf" if text.startswith("-") else "inf")
        value.digits = len(text.lstrip("-"))
        return value


def _int(text: str) -> int | LongNumber:
    limit = sys.get_int_max_str_digits()
    return LongNumber(text) if limit and len(text.lstrip("-")) > limit else int(text)


def long_number(value: object) -> LongNumber | None:
    """The first :class:`LongNumber` in parsed JSON ``value``, or None."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, LongNumber):
            return node
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return None


def long_number_message(n: LongNumber, where: str = "a number in the request") -> str:
    return (f"{where} has {n.digits:,} digits; numbers here take at most {sys.get_int_max_str_digits():,} "
            "digits (and each argument its own range)")


def parse_json(body: bytes, max_depth: int = MAX_JSON_DEPTH) -> tuple[object, str | None]:
    """(parsed body, None), or (None, a one-line refusal) for JSON nested past ``max_depth`` (also
    when it is too deep for the parser itself), or (None, None) for a body that is not JSON at all.
    Integers too long for ``int`` come back as :class:`LongNumber`."""
    deep = f"the request's JSON is nested more than {max_depth} levels deep; MCP requests take at most {max_depth}"
    try:
        parsed = json.loads(body, parse_int=_int)
    except RecursionError:
        return None, deep
    except ValueError:
        return None, None
    if json_depth_over(parsed, max_depth):
        return None, deep
    return parsed, None


def _long_number_outside_arguments(parsed: object, calls: list[dict]) -> LongNumber | None:
    """A :class:`LongNumber` anywhere in the request but a tool call's arguments (an id, a message
    that is no tool call), which no tool error can answer."""
    own = {id(c) for c in calls}
    rest: list[object] = [m for m in (parsed if isinstance(parsed, list) else [parsed]) if id(m) not in own]
    for c in calls:
        params = c.get("params")
        rest.append({k: v for k, v in c.items() if k != "params"})
        if isinstance(params, dict):
            rest.append({k: v for k, v in params.items() if k != "arguments"})
    return long_number(rest)


def _tool_calls(parsed: object) -> list[dict]:
    """The ``tools/call`` requests in a parsed JSON-RPC body (one message or a batch)."""
    return [m for m in (parsed if isinstance(parsed, list) else [parsed])
            if isinstance(m, dict) and m.get("method") == "tools/call"]


def queue_full_message(limit: int, wait_s: int) -> str:
    """One line for a tool call refused because the server already holds ``limit`` of them."""
    return (f"the server is busy: it holds at most {limit} tool calls at once and all are taken; "
            f"try again in {wait_s} s")


async def _busy(send: Send, request_id: object, message: str, wait_s: int) -> None:
    """HTTP 503 with Retry-After and a JSON-RPC error saying the same."""
    body = json.dumps(rpc_error(request_id, message, code=-32000)).encode()
    await send({"type": "http.response.start", "status": 503,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"retry-after", str(wait_s).encode())]})
    await send({"type": "http.response.body", "body": body})


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
    """ASGI middleware: body caps on every POST, the tool allow-list, a nesting cap and a cap on calls
    held at once on MCP (see the module doc)."""

    def __init__(self, app: ASGIApp, allowed_tools: Collection[str], api_max_body: int = API_MAX_BODY,
                 mcp_max_body: int = MCP_MAX_BODY, check_call: Callable[[str, object], str | None] | None = None,
                 max_calls: int = MAX_MCP_CALLS):
        self.app = app
        self.allowed = frozenset(allowed_tools)
        self.check_call = check_call
        self.api_max_body = api_max_body
        self.mcp_max_body = mcp_max_body
        self.max_calls = max_calls
        self.calls = 0  # MCP tool calls being answered now (one event loop: no lock needed)
        self.finished: deque[float] = deque(maxlen=32)  # when the last calls were answered (monotonic s)

    def retry_after(self) -> int:
        """Seconds until the calls held now are likely answered, at the pace the last ones were
        answered (over the last five minutes); ``RETRY_AFTER_DEFAULT_S`` without two to go by."""
        now = time.monotonic()
        recent = [t for t in self.finished if now - t < 300]
        if len(recent) < 2 or recent[-1] <= recent[0]:
            return RETRY_AFTER_DEFAULT_S
        per_second = (len(recent) - 1) / (recent[-1] - recent[0])
        return int(min(RETRY_AFTER_MAX_S, max(1, math.ceil(self.calls / per_second))))

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
            log.warning("refused MCP request: %s bytes or more", exc.size)
            msg = too_large_message(exc.size, exc.complete)
            rid = request_id(exc.head, exc.tail) if exc.complete and streamable else None
            if rid is None:
                return await _answer(send, 413, msg)
            is_call = b'"tools/call"' in exc.head or b'"tools/call"' in exc.tail
            return await _answer(send, 200, tool_error(rid, msg) if is_call else rpc_error(rid, msg))
        except ConnectionError:
            return None
        parsed, problem = parse_json(body)
        calls = _tool_calls(parsed)
        stray = None if problem else _long_number_outside_arguments(parsed, calls)
        problem = problem or (long_number_message(stray) if stray is not None else None)
        if problem:
            log.warning("refused MCP request: %s", problem)
            return await _answer(send, 400, rpc_error(None, problem, code=-32700))
        refused = self._refused_call(calls)
        if refused is not None:
            rid, msg = refused
            log.warning("refused MCP call: %s", msg)
            if streamable:
                return await _answer(send, 200, tool_error(rid, msg))
            return await _answer(send, 403, msg)
        if not calls or not streamable:  # the old SSE transport answers later, in its own stream
            return await self.app(scope, replay(body, receive), send)
        if self.calls + len(calls) > self.max_calls:
            wait = self.retry_after()
            msg = queue_full_message(self.max_calls, wait)
            log.warning("refused MCP call: %s", msg)
            return await _busy(send, calls[0].get("id"), msg, wait)
        self.calls += len(calls)
        try:
            await self.app(scope, replay(body, receive), send)
        finally:
            self.calls -= len(calls)
            self.finished.append(time.monotonic())

    def _refused_call(self, calls: list[dict]) -> tuple[object, str] | None:
        """(id, message) when a call names a tool that is not allowed, or gives one arguments that
        ``check_call`` refuses (in a batch: the first such call)."""
        for msg in calls:
            params = msg.get("params")
            name = params.get("name") if isinstance(params, dict) else None
            if name not in self.allowed:
                return msg.get("id"), unknown_tool_message(name, self.allowed)
            arguments = params.get("arguments")
            if isinstance(arguments, dict):
                for arg, value in arguments.items():
                    long = long_number(value)
                    if long is not None:
                        return msg.get("id"), long_number_message(long, f"{name}: {str(arg)[:40]}")
            problem = self.check_call(name, arguments) if self.check_call else None
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
