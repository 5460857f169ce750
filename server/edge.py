"""The server's outermost check: who may talk to it (Host and Origin) and how a request is framed.

It runs before everything else, Gradio's own CORS layer included (``install`` puts it outside the
app's middleware stack at start-up), so what it refuses never reaches a route:

- **Host** (DNS rebinding): a page on an attacker's domain that resolves to this machine reaches
  the server with that domain as its Host. Only allowed hosts are served: ``localhost``, any IP
  address (no name to rebind), the Space's own host (``SPACE_HOST``, set by Hugging Face), the name
  the server was started on (``GRADIO_SERVER_NAME``) and the names in ``SHOWCASE_ALLOWED_HOSTS``
  (comma-separated; ``*`` serves any host, for a proxy that checks it). Others get HTTP 403.
- **Origin**: a browser names the page that sent a request. A request from this server's own pages
  (the Origin's host and port are the request's Host) or from an origin in
  ``SHOWCASE_ALLOWED_ORIGINS`` (comma-separated, e.g. ``https://example.org``) goes on; any other
  Origin, ``null`` included, gets HTTP 403 on every route, MCP too (the MCP specification: servers
  MUST validate Origin). CORS headers are this layer's alone: an allowed cross-origin request gets
  ``Access-Control-Allow-Origin`` naming it, with credentials; a foreign origin is never named,
  whatever the Host.
- **Framing**: a request with both Content-Length and Transfer-Encoding is answered HTTP 400 and
  its connection closed (RFC 9112 section 6.1: such a request may be an attempt at request
  smuggling, and the server MUST close the connection after responding), so a request hidden in
  its body is never answered.
"""
from __future__ import annotations

import ipaddress
import json
import logging
import os
from collections.abc import Iterable

from server.http_limits import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("showcase.http")

#: Host names served without configuration (any IP address is served too).
LOCAL_HOSTS = frozenset({"localhost"})
_CORS = (b"access-control-allow-origin", b"access-control-allow-credentials")


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def host_name(host: str) -> str:
    """The name part of a Host header (``[::1]:7860`` -> ``::1``, ``Example.org.:80`` ->
    ``example.org``), lower case, one trailing dot dropped."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return name[:-1] if name.endswith(".") else name


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def origin_authority(origin: str) -> str | None:
    """``scheme://host[:port]`` -> ``host[:port]`` (lower case), or None for ``null`` or anything
    that is no origin."""
    scheme, sep, rest = origin.strip().partition("://")
    if not sep or scheme.lower() not in ("http", "https") or not rest or "/" in rest or "@" in rest:
        return None
    return rest.lower()


class Allowed:
    """The hosts and origins this server answers (from the environment, or given)."""

    def __init__(self, hosts: Iterable[str] | None = None, origins: Iterable[str] | None = None):
        env_hosts = _split(os.environ.get("SHOWCASE_ALLOWED_HOSTS"))
        server_name = os.environ.get("GRADIO_SERVER_NAME", "")
        space = os.environ.get("SPACE_HOST", "")
        names = list(hosts) if hosts is not None else env_hosts + [server_name, space]
        self.any_host = "*" in names
        self.hosts = LOCAL_HOSTS | {host_name(h) for h in names if h and h != "*"}
        listed = list(origins) if origins is not None else _split(os.environ.get("SHOWCASE_ALLOWED_ORIGINS"))
        if space and origins is None:
            listed.append(f"https://{space}")
        self.origins = frozenset(o.strip().rstrip("/").lower() for o in listed)

    def host(self, host: str | None) -> bool:
        """True for a Host header this server answers (a request without one, not from a browser, too)."""
        if host is None or self.any_host:
            return True
        name = host_name(host)
        return name in self.hosts or _is_ip(name)

    def origin(self, origin: str, host: str | None) -> bool:
        """True for a request's Origin that may use this server: its own pages, or a listed origin."""
        if origin.strip().rstrip("/").lower() in self.origins:
            return True
        authority = origin_authority(origin)
        return authority is not None and host is not None and self.host(host) and authority == host.strip().lower()

    def describe(self) -> str:
        extra = sorted(self.hosts - LOCAL_HOSTS)
        return "localhost, any IP address" + "".join(f", {h}" for h in extra)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


async def _refuse(send: Send, status: int, message: str, close: bool = False) -> None:
    body = json.dumps({"detail": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class EdgeGuard:
    """ASGI middleware: framing, Host and Origin checks, and the CORS headers (see the module doc)."""

    def __init__(self, app: ASGIApp, allowed: Allowed | None = None):
        self.app = app
        self.allowed = allowed or Allowed()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        names = [k.lower() for k, _ in scope.get("headers", [])]
        if scope["type"] == "http" and b"transfer-encoding" in names and b"content-length" in names:
            log.warning("refused a request with both Content-Length and Transfer-Encoding; connection closed")
            return await _refuse(send, 400, "a request may not carry both Content-Length and Transfer-Encoding "
                                            "(RFC 9112 section 6.1); the connection is closed", close=True)
        host, origin = _header(scope, b"host"), _header(scope, b"origin")
        if not self.allowed.host(host):
            log.warning("refused a request for host %r", (host or "")[:80])
            return await self._forbid(scope, send, f"this server does not answer for the host {host_name(host or '')[:80]!r} "
                                      f"(it answers {self.allowed.describe()}; set SHOWCASE_ALLOWED_HOSTS to add names)")
        if origin is not None and not self.allowed.origin(origin, host):
            log.warning("refused a request from origin %r", origin[:80])
            return await self._forbid(scope, send, f"requests from the origin {origin[:80]!r} are not allowed here "
                                      "(set SHOWCASE_ALLOWED_ORIGINS to allow a site)")
        if origin is None or scope["type"] != "http":
            return await self.app(scope, receive, send)
        return await self.app(scope, receive, self._with_cors(send, origin))

    async def _forbid(self, scope: Scope, send: Send, message: str) -> None:
        if scope["type"] == "websocket":
            return await send({"type": "websocket.close", "code": 1008})
        return await _refuse(send, 403, message)

    @staticmethod
    def _with_cors(send: Send, origin: str) -> Send:
        """``send`` with the CORS headers of an allowed ``origin`` in place of any the app wrote."""

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() not in _CORS]
                headers += [(b"access-control-allow-origin", origin.encode("latin-1")),
                            (b"access-control-allow-credentials", b"true")]
                if not any(k.lower() == b"vary" for k, _ in headers):
                    headers.append((b"vary", b"Origin"))
                message = {**message, "headers": headers}
            await send(message)

        return sending


def install(app) -> None:
    """Put :class:`EdgeGuard` in front of ``app``'s whole middleware stack (Gradio's CORS layer
    included); called at start-up, before the first request (``server.http_limits.server_lifespan``)."""
    stack = app.middleware_stack or app.build_middleware_stack()
    if not isinstance(stack, EdgeGuard):
        app.middleware_stack = EdgeGuard(stack)
