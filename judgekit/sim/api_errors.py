"""Error replies in the real APIs' shapes: quota, rate limits, keys, parameters a model rejects.

Where each shape comes from (quoted in :class:`~judgekit.sim.config.SimConfig`'s fields too):

- OpenAI quota and billing 429s: the "Error codes" guide (developers.openai.com/api/docs/guides/
  error-codes): ``type`` stays ``insufficient_quota`` while ``code`` names the cause.
- OpenAI rate-limit 429s: ``type`` is ``requests`` or ``tokens``, ``code`` ``rate_limit_exceeded``,
  message "Rate limit reached for MODEL in organization ORG on requests per min (RPM): Limit L,
  Used U, Requested 1. Please try again in 1.2s. Visit ... to learn more."
- OpenAI parameter errors of o-series and gpt-5 models, as the API answers them (quoted in many
  client issues, e.g. griptape-ai/ComfyUI-Griptape#312, OpenHands#4131, aandrew-me/tgpt#333):
  ``unsupported_parameter`` for ``max_tokens`` and ``top_p``, ``unsupported_value`` for a
  ``temperature`` other than 1.
- Gemini: Google's ``{"error": {code, message, status, details}}``; a bad key is 400
  ``INVALID_ARGUMENT`` with an ``ErrorInfo`` (reason ``API_KEY_INVALID``) and a
  ``LocalizedMessage``; a 429 is ``RESOURCE_EXHAUSTED`` with a ``QuotaFailure`` (which metric:
  per minute for a rate limit, per day for a spent quota), a ``Help`` link and a ``RetryInfo``,
  in that order, and no ``Retry-After`` header (captures in google-gemini/gemini-cli#8437).
- Azure OpenAI: its gateway errors (bad key, unknown deployment, 429) are
  ``{"error": {"code": "401", "message": ...}}`` without ``type``; errors from the model service
  itself keep OpenAI's shape.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from aiohttp import web

from judgekit.sim.limits import format_duration
from judgekit.sim.protocol import _AZURE, _GEMINI, _JSON, _BadRequest, _dumps, error_response

__all__ = [
    "is_reasoning_model",
    "check_openai_params",
    "quota_error",
    "rate_limit_error",
    "auth_error",
    "deployment_not_found",
    "GEMINI_RATE_LIMIT_HELP",
]

_ORG = "org-judgekitsim"
GEMINI_RATE_LIMIT_HELP = "https://ai.google.dev/gemini-api/docs/rate-limits"
_GEMINI_QUOTA_MESSAGE = (
    "You exceeded your current quota, please check your plan and billing details. For more "
    f"information on this error, head to: {GEMINI_RATE_LIMIT_HELP}. To monitor your current "
    "usage, head to: https://ai.dev/rate-limit. "
)

# ------------------------------------------------------------------------------------------
# model families and the parameters they take
# ------------------------------------------------------------------------------------------

_REASONING = re.compile(r"^(o1|o3|o4|gpt-5)([-.].*)?$|^(o1|o3|o4)-mini([-.].*)?$", re.IGNORECASE)
_CHAT_ONLY = re.compile(r"^(gpt-4o|gpt-4\.1|gpt-4-turbo|gpt-4|gpt-3\.5-turbo)([-.].*)?$", re.IGNORECASE)
_EFFORTS = ("minimal", "low", "medium", "high")


def is_reasoning_model(model: str) -> bool:
    """Whether ``model`` names an o-series (o1, o3, o4-mini...) or gpt-5 model."""
    return bool(_REASONING.match(model))


def _json_value(v: Any) -> str:
    return json.dumps(v) if not isinstance(v, str) else v


def check_openai_params(body: dict[str, Any], model: str) -> None:
    """Raise the 400 the real API sends when ``body`` sets a parameter ``model`` rejects.

    The first offending parameter wins, checked in the order ``max_tokens``, ``temperature``,
    ``top_p``, ``reasoning_effort``.
    """
    if is_reasoning_model(model):
        if body.get("max_tokens") is not None:
            raise _BadRequest(
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.",
                param="max_tokens", code="unsupported_parameter",
            )
        t = body.get("temperature")
        if t is not None and t != 1:
            raise _BadRequest(
                f"Unsupported value: 'temperature' does not support {_json_value(t)} with this model. "
                "Only the default (1) value is supported.",
                param="temperature", code="unsupported_value",
            )
        if body.get("top_p") is not None:
            raise _BadRequest(
                "Unsupported parameter: 'top_p' is not supported with this model.",
                param="top_p", code="unsupported_parameter",
            )
        effort = body.get("reasoning_effort")
        if effort is not None and effort not in _EFFORTS:
            raise _BadRequest(
                f"Invalid value: '{_json_value(effort)}'. Supported values are: "
                + ", ".join(f"'{e}'" for e in _EFFORTS[:-1]) + f", and '{_EFFORTS[-1]}'.",
                param="reasoning_effort", code="invalid_value",
            )
    elif _CHAT_ONLY.match(model) and body.get("reasoning_effort") is not None:
        raise _BadRequest(
            "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
            param="reasoning_effort", code="unsupported_parameter",
        )


# ------------------------------------------------------------------------------------------
# errors
# ------------------------------------------------------------------------------------------


def _google(status: int, gstatus: str, message: str, details: list[dict[str, Any]],
            headers: dict[str, str] | None, request_id: str) -> web.Response:
    h = dict(headers or {})
    if request_id:
        h["x-request-id"] = request_id
    body = {"error": {"code": status, "message": message, "status": gstatus, "details": details}}
    return web.Response(body=_dumps(body), status=status, content_type=_JSON, headers=h)


def _azure_gateway(status: int, code: str, message: str, headers: dict[str, str] | None,
                   request_id: str) -> web.Response:
    h = dict(headers or {})
    if request_id:
        h["apim-request-id"] = request_id
        h["x-request-id"] = request_id
    body = {"error": {"code": code, "message": message}}
    return web.Response(body=_dumps(body), status=status, content_type=_JSON, headers=h)


def auth_error(api: str, request_id: str) -> web.Response:
    """A wrong or missing key: OpenAI 401 ``invalid_api_key``, Azure 401, Gemini 400
    ``API_KEY_INVALID``."""
    if api == _GEMINI:
        msg = "API key not valid. Please pass a valid API key."
        return _google(400, "INVALID_ARGUMENT", msg, [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
             "domain": "googleapis.com", "metadata": {"service": "generativelanguage.googleapis.com"}},
            {"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US", "message": msg},
        ], None, request_id)
    if api == _AZURE:
        return _azure_gateway(401, "401", "Access denied due to invalid subscription key or wrong API "
                              "endpoint. Make sure to provide a valid key for an active subscription and "
                              "use a correct regional API endpoint for your resource.", None, request_id)
    return error_response(api, 401, "Incorrect API key provided. You can find your API key in the "
                          "simulator config.", code="invalid_api_key", request_id=request_id)


def deployment_not_found(request_id: str) -> web.Response:
    """Azure's 404 for a deployment name it does not know."""
    return _azure_gateway(404, "DeploymentNotFound", "The API deployment for this resource does not exist. "
                          "If you created the deployment within the last 5 minutes, please wait a moment "
                          "and try again.", None, request_id)


def _gemini_violation(metric: str, quota_id: str, model: str, limit: int) -> dict[str, Any]:
    return {
        "quotaMetric": f"generativelanguage.googleapis.com/{metric}",
        "quotaId": quota_id,
        "quotaDimensions": {"location": "global", "model": model},
        "quotaValue": str(limit),
    }


def _gemini_429(violation: dict[str, Any], model: str, limit: int, retry_s: float,
                headers: dict[str, str] | None, request_id: str) -> web.Response:
    delay = max(1, math.ceil(retry_s))
    message = (_GEMINI_QUOTA_MESSAGE + f"\n* Quota exceeded for metric: {violation['quotaMetric']}, "
               f"limit: {limit}, model: {model}\nPlease retry in {retry_s:.6g}s.")
    return _google(429, "RESOURCE_EXHAUSTED", message, [
        {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [violation]},
        {"@type": "type.googleapis.com/google.rpc.Help",
         "links": [{"description": "Learn more about Gemini API quotas", "url": GEMINI_RATE_LIMIT_HELP}]},
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{delay}s"},
    ], headers, request_id)


_OPENAI_QUOTA_MESSAGES = {
    "insufficient_quota": "You exceeded your current quota, please check your plan and billing details. "
                          "For more information on this error, read the docs: "
                          "https://platform.openai.com/docs/guides/error-codes/api-errors.",
    "credit_balance_exhausted": "Your organization has no prepaid credits remaining. Add credits to "
                                "continue using the API.",
    "organization_spend_limit_exceeded": "Your organization reached its enforced spend limit.",
    "project_spend_limit_exceeded": "Your project reached its enforced spend limit.",
    "organization_usage_limit_exceeded": "Your organization reached its OpenAI-assigned usage limit.",
}


def quota_error(api: str, kind: str, model: str, *, limit: int, retry_s: float,
                headers: dict[str, str] | None, request_id: str) -> web.Response:
    """The 429 of a spent quota (see ``SimConfig.quota_exhausted_models``)."""
    if api == _GEMINI:
        if kind == "free_tier_daily":
            v = _gemini_violation("generate_content_free_tier_requests",
                                  "GenerateRequestsPerDayPerProjectPerModel-FreeTier", model, limit)
        else:
            v = _gemini_violation("generate_requests_per_model_per_day",
                                  "GenerateRequestsPerDayPerProjectPerModel", model, limit)
        return _gemini_429(v, model, limit, retry_s, headers, request_id)
    code = kind if kind in _OPENAI_QUOTA_MESSAGES else "insufficient_quota"
    return error_response(api, 429, _OPENAI_QUOTA_MESSAGES[code], etype="insufficient_quota", code=code,
                          headers=headers, request_id=request_id)


def rate_limit_error(api: str, model: str, kind: str, *, limit: int, remaining: int, requested: int,
                     wait_s: float, free_tier: bool, headers: dict[str, str] | None,
                     request_id: str) -> web.Response:
    """A rate-limit 429 (``kind``: ``requests`` or ``tokens``) in the calling API's shape."""
    if api == _GEMINI:
        if kind == "requests":
            v = (_gemini_violation("generate_content_free_tier_requests",
                                   "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", model, limit)
                 if free_tier else
                 _gemini_violation("generate_requests_per_model", "GenerateRequestsPerMinutePerProjectPerModel",
                                   model, limit))
        else:
            v = (_gemini_violation("generate_content_free_tier_input_token_count",
                                   "GenerateContentInputTokensPerModelPerMinute-FreeTier", model, limit)
                 if free_tier else
                 _gemini_violation("generate_content_paid_tier_input_token_count",
                                   "GenerateContentPaidTierInputTokensPerModelPerMinute", model, limit))
        return _gemini_429(v, model, limit, wait_s, headers, request_id)
    if api == _AZURE:
        what = "call rate limit" if kind == "requests" else "token rate limit"
        return _azure_gateway(429, "429", "Requests to the ChatCompletions_Create Operation under Azure "
                              f"OpenAI API version 2024-10-21 have exceeded {what} of your current OpenAI S0 "
                              f"pricing tier. Please retry after {max(1, math.ceil(wait_s))} seconds. Please go "
                              "here: https://aka.ms/oai/quotaincrease if you would like to further increase "
                              "the default rate limit.", headers, request_id)
    unit = "requests per min (RPM)" if kind == "requests" else "tokens per min (TPM)"
    message = (f"Rate limit reached for {model} in organization {_ORG} on {unit}: Limit {limit}, "
               f"Used {max(0, limit - remaining)}, Requested {requested}. Please try again in {format_duration(wait_s)}. "
               "Visit https://platform.openai.com/account/rate-limits to learn more.")
    return error_response(api, 429, message, etype=kind, code="rate_limit_exceeded", headers=headers,
                          request_id=request_id)
