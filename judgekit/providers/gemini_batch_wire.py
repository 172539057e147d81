"""The wire side of Gemini batch mode (:mod:`judgekit.providers.gemini_batch`): a batch's
operation as a :class:`~judgekit.providers.batch.BatchStatus`, the lines of its input file, and
its responses file read into outcomes as live replies are read."""

from __future__ import annotations

import base64
import datetime as _dt
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import MalformedReply, ProviderError, TransientError
from ..types import ChatResponse
from .batch_errors import BatchCancelled, BatchExpired, with_type
from .batch import BatchOutcome, BatchRequestNotRun, BatchState, BatchStatus
from .gemini_errors import classify_gemini_error
from .gemini_replies import gemini_chat_response
from .replies import short_string
from .sizes import b64_len

__all__ = ["GRPC_TO_HTTP", "JoinedLines", "batch_state", "join_lines", "line", "line_error", "line_size",
           "read_response", "request_body", "responses_file", "status_of_operation"]

#: the API's states (``BatchState``) and the SDK's names for them (``JobState``) as judgekit's
_STATES: dict[str, BatchState] = {}
for _prefix in ("BATCH_STATE_", "JOB_STATE_"):
    _STATES.update({_prefix + "UNSPECIFIED": "submitted", _prefix + "PENDING": "submitted",
                    _prefix + "QUEUED": "submitted", _prefix + "RUNNING": "in_progress",
                    _prefix + "SUCCEEDED": "ended", _prefix + "PARTIALLY_SUCCEEDED": "ended",
                    _prefix + "FAILED": "failed", _prefix + "CANCELLING": "cancelling",
                    _prefix + "CANCELLED": "cancelled", _prefix + "EXPIRED": "expired"})
#: ``google.rpc.Code`` values as the HTTP statuses the live error mapping reads
GRPC_TO_HTTP = {1: 499, 2: 500, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429, 9: 400, 10: 409, 11: 400, 12: 501,
                13: 500, 14: 503, 15: 500, 16: 401}
_GRPC_NAMES = {"CANCELLED": 1, "UNKNOWN": 2, "INVALID_ARGUMENT": 3, "DEADLINE_EXCEEDED": 4, "NOT_FOUND": 5,
               "ALREADY_EXISTS": 6, "PERMISSION_DENIED": 7, "RESOURCE_EXHAUSTED": 8, "FAILED_PRECONDITION": 9,
               "ABORTED": 10, "OUT_OF_RANGE": 11, "UNIMPLEMENTED": 12, "INTERNAL": 13, "UNAVAILABLE": 14,
               "DATA_LOSS": 15, "UNAUTHENTICATED": 16}
#: per-request codes of a request the batch never ran (asked again)
_NOT_RUN = frozenset({1, 4})


def batch_state(state: Any) -> BatchState:
    """judgekit's state of a batch's ``state`` (a string, or the SDK's enum).  A state this
    version does not know is ``in_progress``: not terminal, so it is polled again.  Another type:
    MalformedReply."""
    name = getattr(state, "name", state) if not isinstance(state, str) else state
    if not isinstance(name, str):
        raise MalformedReply(f"batch state is not a string: {state!r:.80}")
    return _STATES.get(name.strip().upper(), "in_progress")


def _count(value: Any) -> int:
    """A count of ``batchStats`` (int64 values travel as JSON strings)."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    return value if isinstance(value, int) and value >= 0 else 0


def _age(created: Any) -> float | None:
    if not isinstance(created, str):
        return None
    try:
        t = _dt.datetime.fromisoformat(created.strip())
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=_dt.UTC)
    return max(0.0, (_dt.datetime.now(_dt.UTC) - t).total_seconds())


def status_of_operation(op: Any, what: str = "batch") -> BatchStatus:
    """A batch's long-running operation (decoded JSON) as a :class:`BatchStatus`."""
    if not isinstance(op, dict):
        raise MalformedReply(f"{what} reply is not a JSON object: {op!r:.200}")
    meta = op.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    name = op.get("name") or meta.get("name")
    if not isinstance(name, str) or not name.startswith("batches/"):
        raise MalformedReply(f"{what} reply names no batch: {op!r:.200}")
    raw_state = meta.get("state")
    error = op.get("error")
    if raw_state is None and op.get("done") is True:
        raw_state = "BATCH_STATE_FAILED" if isinstance(error, dict) else "BATCH_STATE_SUCCEEDED"
    state = batch_state(raw_state if raw_state is not None else "BATCH_STATE_PENDING")
    stats = meta.get("batchStats")
    stats = stats if isinstance(stats, dict) else {}
    message = ""
    if isinstance(error, dict):
        message = f"[{error.get('status') or error.get('code') or 'error'}] {str(error.get('message') or '')[:500]}"
    return BatchStatus(batch_id=name, state=state, provider_status=short_string(raw_state, "state", strict=False),
                       total=_count(stats.get("requestCount")), succeeded=_count(stats.get("successfulRequestCount")),
                       failed=_count(stats.get("failedRequestCount")), age_s=_age(meta.get("createTime")),
                       message=message)


def responses_file(op: dict) -> str | None:
    """The name of a finished batch's responses file, if it has one."""
    for holder in ((op.get("metadata") or {}).get("output"), op.get("response")):
        if isinstance(holder, dict) and isinstance(holder.get("responsesFile"), str) and holder["responsesFile"]:
            return holder["responsesFile"]
    return None


# ---------------------------------------------------------------------------------------------
# the lines


def request_body(api_client: Any, contents: Any, config: Any) -> dict:
    """The body of a ``generateContent`` call as the SDK's converter for the Developer API builds
    it for a live call, image bytes left as bytes (:func:`line` encodes them as the live call
    does: urlsafe base64)."""
    from google.genai import _common, models, types

    params = types._GenerateContentParameters(model="judgekit", contents=contents, config=config)
    body = models._GenerateContentParameters_to_mldev(api_client, params)
    for internal in ("_url", "_query", "config"):
        body.pop(internal, None)
    return _common.convert_to_dict(body)


def _urlsafe_b64(value: Any) -> str:
    if isinstance(value, (bytes, bytearray)):
        return base64.urlsafe_b64encode(value).decode("ascii")
    raise TypeError(f"{type(value).__name__} in a request body")


def line(key: str, body: dict) -> bytes:
    """One line of a batch's input file, newline included (ASCII JSON: its size is its length)."""
    return json.dumps({"key": key, "request": body}, separators=(",", ":"), default=_urlsafe_b64).encode(
        "ascii") + b"\n"


def line_size(key: str, body: dict) -> int:
    """``len(line(key, body))`` without encoding the images (urlsafe base64 needs no escaping)."""
    images: list[int] = []

    def empty(value: Any) -> str:
        if not isinstance(value, (bytes, bytearray)):
            raise TypeError(f"{type(value).__name__} in a request body")
        images.append(b64_len(len(value)))
        return ""

    return len(json.dumps({"key": key, "request": body}, separators=(",", ":"), default=empty)) + 1 + sum(images)


def read_response(raw: Any) -> ChatResponse:
    """A ``GenerateContentResponse`` (decoded JSON) read as a live reply is; an unreadable one is
    MalformedReply."""
    from google.genai import models, types

    if not isinstance(raw, dict):
        raise MalformedReply(f"batch response is not a GenerateContentResponse: {raw!r:.200}")
    try:
        resp = types.GenerateContentResponse._from_response(response=models._GenerateContentResponse_from_mldev(raw),
                                                             kwargs={})
    except Exception as err:  # noqa: BLE001 - whatever the SDK makes of it, this reply cannot be read
        raise MalformedReply(f"malformed batch response: {' '.join(str(err).split())[:300]}") from None
    return gemini_chat_response(resp, 0.0)


def line_error(error: Any) -> ProviderError:
    """A line's ``error`` (a ``google.rpc.Status``: ``code``, ``message``, ``status``) as the error
    a live call would have raised for it; a request the batch never ran is BatchRequestNotRun."""
    from google.genai import errors

    if not isinstance(error, dict):
        return MalformedReply(f"batch result line has an error that is not an object: {error!r:.200}")
    code = error.get("code")
    status = error.get("status")
    if (not isinstance(code, int) or isinstance(code, bool)) and isinstance(status, str):
        code = _GRPC_NAMES.get(status.upper())
    if not isinstance(code, int) or isinstance(code, bool):
        return TransientError(f"the batch failed this request: {str(error)[:300]}")
    text = f"[{status or code}] {str(error.get('message') or '')[:300]}"
    if code in _NOT_RUN:
        gone = BatchExpired if status == "DEADLINE_EXCEEDED" or code == 4 else BatchCancelled
        return gone(f"the batch did not run this request: {text}")
    http = GRPC_TO_HTTP.get(code, code if 400 <= code <= 599 else 500)
    body = {"error": {"code": http, "message": str(error.get("message") or ""), "status": status or "",
                      "details": error.get("details") if isinstance(error.get("details"), list) else []}}
    name = status if isinstance(status, str) and status else next(
        (n for n, c in _GRPC_NAMES.items() if c == code), str(code))
    return with_type(classify_gemini_error(errors.APIError(http, body)), name)


@dataclass
class JoinedLines:
    """The outcomes a responses file reports, one per key, and what was odd in it."""

    outcomes: list[BatchOutcome]
    garbage: int = 0
    """Lines that could not be read (not JSON, not an object, or without a key)."""
    duplicates: int = 0
    """Lines for a key already answered."""


def _outcome(obj: dict, key: str, price: Callable[[ChatResponse], float] | None) -> BatchOutcome:
    out = BatchOutcome(custom_id=key)
    if "response" in obj and obj["response"] is not None:
        try:
            out.response = read_response(obj["response"])
        except ProviderError as err:
            out.error = err
            usage = getattr(err, "usage", None)
            if usage is not None and price is not None:
                out.extra["cost_usd"] = price(ChatResponse(text="", usage=usage))
        else:
            if price is not None:
                out.response.cost_usd = price(out.response)
        return out
    error = obj.get("error", obj.get("status"))
    if error is not None:
        out.error = line_error(error)
        return out
    out.error = MalformedReply(f"batch result line has neither a response nor an error: {obj!r:.200}")
    return out


def join_lines(lines: Iterable[bytes], *, price: Callable[[ChatResponse], float] | None = None) -> JoinedLines:
    """The outcomes of a responses file's ``lines`` (any order), one per ``key``: a response wins
    over an error, otherwise the first line of a key wins."""
    found: dict[str, BatchOutcome] = {}
    joined = JoinedLines(outcomes=[])
    for raw in lines:
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            joined.garbage += 1
            continue
        key = obj.get("key") if isinstance(obj, dict) else None
        if not isinstance(key, str) or not key:
            joined.garbage += 1
            continue
        before = found.get(key)
        if before is not None:
            joined.duplicates += 1
            if before.response is not None:
                continue
        outcome = _outcome(obj, key, price)
        if before is not None and outcome.response is None:
            continue
        found[key] = outcome
    joined.outcomes = list(found.values())
    return joined
