"""The simulator's wire formats: OpenAI and Gemini request bodies in, their responses out.

Both APIs' request bodies are parsed into one internal shape, :class:`_SimRequest` (model,
prompt text, image count, max tokens and the request hash, plus the PNG text labels of each
image and the text of the last user message, which GuessBench replies read);
:func:`error_response` shapes an error the way the calling API does (replies:
:mod:`judgekit.sim.api_replies`; the real APIs' special errors: :mod:`judgekit.sim.api_errors`).

Image labels: a base64 image that starts with the PNG signature has its ``tEXt`` chunks read
(:func:`~judgekit.pngtext.read_png_text`) from a decoded prefix of
``_LABEL_PREFIX_CHARS`` characters when that prefix reaches the first ``IDAT`` chunk (text
chunks written before the pixels, as Pillow writes them, are all in it), else from the whole
image.  Other images, and any that cannot be read, get an empty dict.

The request hash is ``sha256`` over the seed and a canonical form of the request (model,
generation parameters, and every message's role, text and image payload), independent of JSON
key order and whitespace and of the API used.  Prompt tokens are *estimated* as
``len(text) / 4 + 85`` per image; this is a simulation, not a tokenizer.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from judgekit.pngtext import read_png_text

__all__ = ["estimate_prompt_tokens", "error_response"]

_TOKENS_PER_IMAGE = 85
_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
}
_JSON = "application/json"
_OPENAI = "openai"
_GEMINI = "gemini"
_AZURE = "azure"  # OpenAI's wire format on Azure's paths, with Azure's gateway errors


def estimate_prompt_tokens(chars: int, images: int) -> int:
    """The simulated prompt size: about four characters per token plus 85 per image."""
    return max(1, (chars + 3) // 4) + _TOKENS_PER_IMAGE * images


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


# ----------------------------------------------------------------------------------------
# request normalisation (both APIs to one shape)
# ----------------------------------------------------------------------------------------


class _BadRequest(Exception):
    """The body is not a valid request; the message goes back in a 400 (with OpenAI's ``param``
    and ``code`` when given)."""

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.param = param
        self.code = code


_PNG_B64 = "iVBORw0KGgo"  # base64 of the 8-byte PNG signature
#: base64 characters decoded first when looking for an image's text chunks (6 KiB of bytes)
_LABEL_PREFIX_CHARS = 8192


def _png_labels(b64: str) -> dict[str, str]:
    """The text chunks of a base64 PNG (``{}`` for anything else or anything unreadable)."""
    if not b64.startswith(_PNG_B64):
        return {}
    data = None
    if len(b64) > _LABEL_PREFIX_CHARS:
        try:
            head = base64.b64decode(b64[:_LABEL_PREFIX_CHARS])
        except (binascii.Error, ValueError):
            head = b""
        if b"IDAT" in head:
            data = head
    try:
        if data is None:
            data = base64.b64decode(b64)
        return dict(read_png_text(data))
    except Exception:  # a damaged image is not the simulator's business: no labels
        return {}


@dataclass(slots=True)
class _SimRequest:
    model: str
    text: str
    images: int
    max_tokens: int | None
    digest: bytes
    images_meta: tuple[dict[str, str], ...] = ()
    """One dict of PNG text labels per image, in order (empty for unlabelled images)."""
    last_user_text: str = ""
    """The text of the last user message (its text parts joined by newlines)."""
    body: Any = None
    """The parsed JSON body (OpenAI requests), for the parameter rules of the model's family."""
    content: tuple[bytes, ...] = field(default=(), kw_only=True)
    """The request hash's content chunks in order (roles, texts, images; not the model or the
    generation parameters): what the prompt cache (:mod:`judgekit.sim.prefix_cache`) reads."""

    @property
    def prompt_tokens(self) -> int:
        return estimate_prompt_tokens(len(self.text), self.images)

    @property
    def rate_tokens(self) -> int:
        """What the tokens-per-minute limit is charged: the prompt estimate plus max tokens."""
        return self.prompt_tokens + (self.max_tokens or 0)


def _gen_key(max_tokens: Any, temperature: Any, top_p: Any, seed: Any) -> bytes:
    return f"{max_tokens!r}|{temperature!r}|{top_p!r}|{seed!r}".encode()


def _int_or_none(v: Any, name: str) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise _BadRequest(f"'{name}' must be a positive integer, got {v!r}")
    return v


def _parse_openai(body: Any, seed_bytes: bytes) -> _SimRequest:
    if not isinstance(body, dict):
        raise _BadRequest("request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _BadRequest("you must provide a model parameter")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _BadRequest("'messages' must be a non-empty array")
    if body.get("stream"):
        raise _BadRequest("streaming is not supported by the judgekit simulator")
    max_tokens = _int_or_none(body.get("max_tokens"), "max_tokens")
    if max_tokens is None:
        max_tokens = _int_or_none(body.get("max_completion_tokens"), "max_completion_tokens")
    chunks: list[bytes] = [
        seed_bytes,
        model.encode(),
        _gen_key(max_tokens, body.get("temperature"), body.get("top_p"), body.get("seed")),
    ]
    if body.get("reasoning_effort") is not None:  # only when set: older requests keep their hash
        chunks.append(b"effort:" + str(body["reasoning_effort"]).encode())
    head = len(chunks)
    texts: list[str] = []
    images = 0
    metas: list[dict[str, str]] = []
    last_user = ""
    for msg in messages:
        if not isinstance(msg, dict):
            raise _BadRequest("each message must be an object")
        role = msg.get("role", "")
        chunks.append(b"\x1erole:" + str(role).encode())
        content = msg.get("content")
        if isinstance(content, str):
            texts.append(content)
            chunks.append(b"\x1ft:" + content.encode())
            if role == "user":
                last_user = content
        elif isinstance(content, list):
            first_text = len(texts)
            for part in content:
                if not isinstance(part, dict):
                    raise _BadRequest("content parts must be objects")
                ptype = part.get("type")
                if ptype == "text":
                    t = part.get("text")
                    if not isinstance(t, str):
                        raise _BadRequest("a text part needs a 'text' string")
                    texts.append(t)
                    chunks.append(b"\x1ft:" + t.encode())
                elif ptype == "image_url":
                    iu = part.get("image_url")
                    url = iu.get("url") if isinstance(iu, dict) else iu
                    if not isinstance(url, str) or not url:
                        raise _BadRequest("an image_url part needs 'image_url.url'")
                    if url.startswith("data:"):
                        url = url[url.find(",") + 1 :]
                        metas.append(_png_labels(url))
                    else:
                        metas.append({})
                    images += 1
                    chunks.append(b"\x1fi:" + url.encode())
                else:
                    raise _BadRequest(f"unsupported content part type {ptype!r}")
            if role == "user":
                last_user = "\n".join(texts[first_text:])
        elif content is not None:
            raise _BadRequest("message 'content' must be a string or an array of parts")
    text = "\n".join(texts)
    digest = hashlib.sha256(b"\x1d".join(chunks)).digest()
    return _SimRequest(model, text, images, max_tokens, digest, tuple(metas), last_user, body,
                       content=tuple(chunks[head:]))


def _gemini_parts(parts: Any, chunks: list[bytes], texts: list[str], metas: list[dict[str, str]]) -> int:
    if not isinstance(parts, list):
        raise _BadRequest("'parts' must be an array")
    images = 0
    for part in parts:
        if not isinstance(part, dict):
            raise _BadRequest("each part must be an object")
        t = part.get("text")
        if isinstance(t, str):
            texts.append(t)
            chunks.append(b"\x1ft:" + t.encode())
            continue
        inline = part.get("inlineData") or part.get("inline_data")
        if isinstance(inline, dict):
            data = inline.get("data")
            if not isinstance(data, str):
                raise _BadRequest("inlineData needs a base64 'data' string")
            images += 1
            metas.append(_png_labels(data))
            chunks.append(b"\x1fi:" + data.encode())
            continue
        fdata = part.get("fileData") or part.get("file_data")
        if isinstance(fdata, dict):
            images += 1
            metas.append({})
            chunks.append(b"\x1fi:" + str(fdata.get("fileUri") or fdata.get("file_uri")).encode())
            continue
        raise _BadRequest("unsupported part: expected 'text' or 'inlineData'")
    return images


def _parse_gemini(body: Any, model: str, seed_bytes: bytes) -> _SimRequest:
    if not isinstance(body, dict):
        raise _BadRequest("request body must be a JSON object")
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise _BadRequest("'contents' must be a non-empty array")
    gc = body.get("generationConfig") or body.get("generation_config") or {}
    if not isinstance(gc, dict):
        raise _BadRequest("'generationConfig' must be an object")
    max_tokens = _int_or_none(
        gc.get("maxOutputTokens", gc.get("max_output_tokens")), "maxOutputTokens"
    )
    chunks: list[bytes] = [
        seed_bytes,
        model.encode(),
        _gen_key(max_tokens, gc.get("temperature"), gc.get("topP", gc.get("top_p")), gc.get("seed")),
    ]
    texts: list[str] = []
    images = 0
    metas: list[dict[str, str]] = []
    last_user = ""
    system = body.get("systemInstruction") or body.get("system_instruction")
    if isinstance(system, dict):
        chunks.append(b"\x1erole:system")
        images += _gemini_parts(system.get("parts", []), chunks, texts, metas)
    elif isinstance(system, str):
        chunks.append(b"\x1erole:system\x1ft:" + system.encode())
        texts.append(system)
    for content in contents:
        if not isinstance(content, dict):
            raise _BadRequest("each content must be an object")
        role = content.get("role") or "user"
        chunks.append(b"\x1erole:" + (b"assistant" if role == "model" else str(role).encode()))
        first_text = len(texts)
        images += _gemini_parts(content.get("parts", []), chunks, texts, metas)
        if role == "user":
            last_user = "\n".join(texts[first_text:])
    text = "\n".join(texts)
    digest = hashlib.sha256(b"\x1d".join(chunks)).digest()
    return _SimRequest(model, text, images, max_tokens, digest, tuple(metas), last_user, content=tuple(chunks[3:]))


# ----------------------------------------------------------------------------------------
# response shaping
# ----------------------------------------------------------------------------------------


def error_response(
    api: str,
    status: int,
    message: str,
    *,
    etype: str = "invalid_request_error",
    code: str | None = None,
    param: str | None = None,
    headers: dict[str, str] | None = None,
    retry_after_s: float | None = None,
    request_id: str = "",
) -> web.Response:
    """An error in the calling API's shape: OpenAI's (and Azure's) ``{"error": {message, type,
    param, code}}`` or Google's ``{"error": {code, message, status}}`` (with a ``RetryInfo``
    detail when ``retry_after_s`` is given); ``request_id`` goes in ``x-request-id``."""
    if api == _GEMINI:
        err: dict[str, Any] = {
            "code": status,
            "message": message,
            "status": _GOOGLE_STATUS.get(status, "UNKNOWN"),
        }
        if retry_after_s is not None:
            err["details"] = [{
                "@type": "type.googleapis.com/google.rpc.RetryInfo",
                "retryDelay": f"{max(1, math.ceil(retry_after_s))}s",
            }]
        body = _dumps({"error": err})
    else:
        body = _dumps({"error": {"message": message, "type": etype, "param": param, "code": code}})
    h = dict(headers) if headers else {}
    if request_id:
        h["x-request-id"] = request_id
    return web.Response(body=body, status=status, content_type=_JSON, headers=h)
