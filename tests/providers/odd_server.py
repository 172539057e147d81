"""A misbehaving OpenAI/Gemini-compatible server for tests (imported by name: pytest puts this
folder on sys.path): replies the way broken gateways, proxies and new models do.

- :class:`OddServer` answers every call with the next reply of a script (``server.replies``), a
  :class:`Reply` of status, body and content type, over real HTTP on loopback.
- :class:`OddProxy` forwards chat calls to a real upstream (the simulator) and, while ``odd`` is
  on, turns about one reply in five into an odd one, chosen by a hash of the request body (so a
  retry of the same request gets the same odd reply, and a run is reproducible).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Callable

import aiohttp
from aiohttp import web


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # JSON-able, or bytes/str sent as they are
    content_type: str = "application/json"
    headers: dict[str, str] | None = None

    def response(self) -> web.Response:
        if isinstance(self.body, (bytes, str)):
            data = self.body.encode() if isinstance(self.body, str) else self.body
        else:
            data = json.dumps(self.body).encode()
        return web.Response(status=self.status, body=data, content_type=self.content_type, headers=self.headers)


def completion(content: Any = "hello", *, usage: Any = None, finish: Any = "stop", message: dict | None = None,
               **top: Any) -> dict:
    """A chat completion body with ``content`` (any JSON value) and ``usage``."""
    msg = {"role": "assistant", "content": content} if message is None else message
    body = {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5} if usage is None else usage}
    body.update(top)
    return body


def gemini_reply(parts: Any = ({"text": "hello"},), *, usage: Any = None, finish: str = "STOP") -> dict:
    """A generateContent body."""
    return {"candidates": [{"content": {"role": "model", "parts": list(parts)}, "finishReason": finish, "index": 0}],
            "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2, "totalTokenCount": 5}
            if usage is None else usage,
            "responseId": "g-1"}


class _Site:
    """An aiohttp app on an ephemeral loopback port."""

    def __init__(self) -> None:
        self.app = web.Application(client_max_size=64 * 2**20)
        self.app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner: web.AppRunner | None = None
        self.port = 0
        self.seen: list[tuple[str, dict[str, str], bytes]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self):
        self._runner = web.AppRunner(self.app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.seen.append((request.path, dict(request.headers), body))
        return await self.respond(request, body)

    async def respond(self, request: web.Request, body: bytes) -> web.StreamResponse:
        raise NotImplementedError


class OddServer(_Site):
    """Answers each call with the next of ``replies`` (the last one repeats)."""

    def __init__(self, *replies: Reply) -> None:
        super().__init__()
        self.replies = list(replies)

    async def respond(self, request: web.Request, body: bytes) -> web.StreamResponse:
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return reply.response()


#: the odd replies of the proxy: name -> how the upstream's completion body becomes odd.  Every
#: one but "list_content" must make the call fail; "list_content" keeps the same text in parts.
def _split_parts(body: dict) -> dict:
    text = body["choices"][0]["message"]["content"]
    half = len(text) // 2
    body["choices"][0]["message"]["content"] = [
        {"type": "reasoning", "text": "thinking it over"},
        {"type": "text", "text": text[:half]},
        {"type": "output_text", "text": text[half:]},
    ]
    return body


def _set_content(value: Any) -> Callable[[dict], dict]:
    def f(body: dict) -> dict:
        body["choices"][0]["message"]["content"] = value
        return body
    return f


def _set_usage(name: str, value: Any) -> Callable[[dict], dict]:
    def f(body: dict) -> dict:
        body["usage"][name] = value
        return body
    return f


def _refusal(body: dict) -> dict:
    body["choices"][0]["message"].update(content=None, refusal="I can't help with that.")
    return body


ODD: dict[str, Callable[[dict], Any]] = {
    "list_content": _split_parts,
    "null_content": _set_content(None),
    "blank_content": _set_content("   \n "),
    "refusal_only": _refusal,
    "numeric_content": _set_content(42),
    "string_usage": _set_usage("prompt_tokens", "lots"),
    "negative_usage": _set_usage("completion_tokens", -5),
    "huge_usage": _set_usage("prompt_tokens", 2**40),
    "no_choices": lambda body: {k: v for k, v in body.items() if k != "choices"},
    "html_page": lambda body: Reply(200, "<html><body>Bad gateway</body></html>", "text/html"),
    "key_echo": lambda body: Reply(400, {"error": {"message": "Incorrect API key provided: {KEY}",
                                                   "type": "invalid_request_error"}}),
}


class OddProxy(_Site):
    """Forwards chat completions to ``upstream`` (an OpenAI-compatible ``.../v1`` URL); while
    ``odd`` is true, a request whose body hash falls in the first ``rate`` of the range gets the
    odd reply ``ODD[name]`` (the name also from the hash, among ``kinds``; ``salt`` changes the
    draw).

    ``served`` maps each request body's hash to what the proxy sent last: ``"ok"`` or the odd
    reply's name.  ``key`` is the key echoed by the ``key_echo`` reply."""

    def __init__(self, upstream: str, *, key: str, rate: float = 0.2, salt: str = "",
                 kinds: tuple[str, ...] | None = None) -> None:
        super().__init__()
        self.salt = salt.encode()
        self.kinds = sorted(kinds or ODD)
        self.upstream = upstream.rstrip("/")
        self.key = key
        self.rate = rate
        self.odd = True
        self.served: dict[str, list[str]] = {}
        self._session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        await super().close()

    def pick(self, digest: str) -> str | None:
        h = int(digest[:12], 16)
        if not self.odd or (h % 1000) >= self.rate * 1000:
            return None
        return self.kinds[(h // 1000) % len(self.kinds)]

    async def respond(self, request: web.Request, body: bytes) -> web.StreamResponse:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        digest = hashlib.sha256(body).hexdigest()
        name = self.pick(hashlib.sha256(self.salt + body).hexdigest())
        tail = request.path.split("/v1", 1)[-1]
        async with self._session.post(self.upstream + tail, data=body,
                                      headers={"Content-Type": "application/json",
                                               "Authorization": request.headers.get("Authorization", "")}) as r:
            status, data = r.status, await r.read()
        self.served.setdefault(digest, []).append(name or "ok")
        if name is None or status != 200:
            return web.Response(status=status, body=data, content_type="application/json")
        out = ODD[name](json.loads(data))
        if isinstance(out, Reply):
            if isinstance(out.body, dict):
                out = Reply(out.status, json.loads(json.dumps(out.body).replace("{KEY}", self.key)), out.content_type)
            return out.response()
        return web.json_response(out)
