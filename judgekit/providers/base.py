"""The provider interface: one ``async generate`` turning a request into a normalised response.

Providers are small.  Retries, limits and caching are the engine's job, never a provider's: a
provider makes exactly one attempt and raises a classified :class:`~judgekit.errors.ProviderError`.

Secrets never leave a provider: every :class:`~judgekit.errors.ProviderError` raised by a
provider's ``start`` or ``generate`` has the values of its API keys replaced by
:data:`REDACTED` (servers echo the key in error bodies; the engine prints the message and stores
it in the cache's ``attempts`` table).  The base class does it for every subclass
(:meth:`Provider.__init_subclass__` wraps both methods); a subclass only has to hand the keys it
uses to :meth:`Provider.remember_secret` (:meth:`Provider.api_key` does for the keys it reads).
"""

from __future__ import annotations

import email.utils
import functools
import os
import re
import time
from abc import ABC, abstractmethod
from typing import Mapping

from ..errors import AuthError, NoAnswer, ProviderError, QuotaExhausted, UnsupportedParameter
from ..types import ChatRequest, ChatResponse

__all__ = ["Provider", "retry_after_from_headers", "parse_duration", "exhausted_limits", "DEFAULT_KEY_ENV", "REDACTED",
           "MIN_SECRET_CHARS"]

#: what a key's value is replaced with in error messages
REDACTED = "[redacted]"
#: values shorter than this are not treated as secrets: replacing "sim" or "EMPTY" (the keys of
#: local servers that check none) would mangle messages, and they protect nothing
MIN_SECRET_CHARS = 8

#: the env var a provider reads its key from when the spec names none
DEFAULT_KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "azure": "AZURE_OPENAI_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "sim": None,
    "local": None,
    "brave": "BRAVE_SEARCH_API_KEY",
    "sim_image_search": None,
    "image_folder": None,
}


def _redacting(method):
    """``method`` (a provider's ``start`` or ``generate``) with the keys taken out of every
    ProviderError it raises."""

    @functools.wraps(method)
    async def wrapper(self: "Provider", *args, **kwargs):
        try:
            return await method(self, *args, **kwargs)
        except ProviderError as err:
            self.redact_error(err)
            raise

    wrapper.__redacts_secrets__ = True  # type: ignore[attr-defined]
    return wrapper


class Provider(ABC):
    """Base class.  Subclasses set ``kind`` and implement :meth:`generate`."""

    kind: str = ""
    #: the run's content-addressed image store (judgekit.blobs.BlobStore), set by the engine
    blobs = None
    #: whether this provider's replies name files it put in :attr:`blobs` (:meth:`output_blobs`);
    #: the engine checks a cached reply's files only where this is true
    stores_outputs: bool = False

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        for name in ("start", "generate"):
            method = cls.__dict__.get(name)
            if method is not None and not getattr(method, "__redacts_secrets__", False):
                setattr(cls, name, _redacting(method))

    def __init__(self, alias: str, spec) -> None:  # spec: judgekit.config.ModelSpec
        self.alias = alias
        self.spec = spec
        self.kind = spec.provider  # "openai" and "azure" share a class but not a key env var
        self._secrets: set[str] = set()

    # -- secrets -----------------------------------------------------------------------------
    def remember_secret(self, value: str | None) -> None:
        """Treat ``value`` (a key this provider sends) as a secret to redact from its errors."""
        if value and len(value) >= MIN_SECRET_CHARS:
            self.__dict__.setdefault("_secrets", set()).add(value)

    def secrets(self) -> list[str]:
        """The values to redact: the keys remembered and the value of the spec's key env var,
        longest first (so a key that contains another is replaced whole)."""
        found = set(getattr(self, "_secrets", ()))
        env = self.key_env
        value = os.environ.get(env) if env else None
        if value and len(value) >= MIN_SECRET_CHARS:
            found.add(value)
        return sorted(found, key=len, reverse=True)

    def redact(self, text: str) -> str:
        """``text`` with every secret of this provider replaced by :data:`REDACTED`."""
        for secret in self.secrets():
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def redact_error(self, err: ProviderError) -> ProviderError:
        """Take the secrets out of ``err``'s message, in place.  When they were in it, or in the
        exception it was raised from, the chained exception (the SDK's, holding the raw body)
        is dropped too, so no traceback can show it."""
        secrets = self.secrets()
        if not secrets:
            return err
        if getattr(err, "raw", None):  # the excerpt of a reply is stored with the failure too
            err.raw = self.redact(err.raw)
        chained = [c for c in (err.__cause__, err.__context__) if c is not None]
        leaked = any(s in str(a) for s in secrets for a in (*err.args, *chained))
        if leaked:
            err.args = tuple(self.redact(a) if isinstance(a, str) else a for a in err.args)
            err.__cause__ = None
            err.__context__ = None
            err.__suppress_context__ = True
        return err

    @property
    def model(self) -> str:
        return self.spec.model

    @property
    def identity(self) -> str:
        """What goes into cache keys and bucket names for the endpoint (a base URL)."""
        return self.spec.base_url or ""

    @property
    def key_env(self) -> str | None:
        return self.spec.api_key_env or DEFAULT_KEY_ENV.get(self.kind)

    def api_key(self, *, required: bool = True) -> str | None:
        """The key from the spec's env var; a missing key is an AuthError naming the var."""
        env = self.key_env
        if env is None:
            return None
        key = os.environ.get(env)
        if not key and required:
            raise AuthError(
                f"model '{self.alias}' ({self.kind} {self.model}): the API key env var {env} is not set"
            )
        self.remember_secret(key)
        return key

    def output_blobs(self, response: ChatResponse) -> tuple[str, ...]:
        """The sha256 of each file in :attr:`blobs` that ``response`` names and this provider made
        (an image it drew or fetched, a vector it encoded): part of the reply, so a cached reply
        one of whose files is gone is no answer, and the engine makes the call again.  Read only
        where :attr:`stores_outputs` is true; a reply it cannot read names none."""
        return ()

    async def start(self) -> None:
        """Create clients (and, for the simulator, start the server)."""

    @abstractmethod
    async def generate(self, request: ChatRequest) -> ChatResponse:
        """Make one attempt.  Raise a ProviderError subclass on failure."""

    async def close(self) -> None:
        """Release clients and servers."""

    def describe_error(self, err: ProviderError) -> str:
        """A message for the user that names the alias and, for auth errors, the env var (never
        the key: the message is redacted again here, whoever raised ``err``); for a spent quota,
        the provider's reason and what to do; for a reply with no answer, its kind first (the
        failed-items list and the progress show it)."""
        base = f"model '{self.alias}' ({self.kind} {self.model})"
        if isinstance(err, AuthError):
            env = self.key_env
            hint = f"; check the key in env var {env}" if env else ""
            return self.redact(f"{base}: authentication failed{hint}: {err}")
        if isinstance(err, QuotaExhausted):
            if err.resets:
                todo = f"the quota resets {err.resets}; or move to a plan or project with a higher quota"
            else:
                todo = "check the account's billing, credit and plan (or spend limits) with the provider"
            reason = f" ({err.reason})" if err.reason else ""
            return self.redact(f"{base}: out of quota{reason}, no retry can succeed: {todo}; "
                               f"the provider said: {err}")
        if isinstance(err, NoAnswer):
            return self.redact(f"{base}: {err.kind}: {err}")
        if isinstance(err, UnsupportedParameter) and str(err).startswith(f"model '{self.alias}'"):
            return self.redact(str(err))  # raised before sending: it names the model already
        return self.redact(f"{base}: {err}")


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
#: which limit a 429's message says was hit: OpenAI ("... on requests per min (RPM): Limit 500 ..."
#: / "on tokens per min (TPM)"), Azure ("exceeded call rate limit" / "token rate limit"), Gemini (the
#: QuotaFailure's metric: "generate_content_free_tier_requests", "..._input_token_count")
_LIMIT_IN_MESSAGE = (
    (re.compile(r"\bon requests per (?:min|day)|\bcall rate limit|_requests\b|generate_requests_per_model"
                r"|GenerateRequestsPer", re.I), "requests"),
    (re.compile(r"\bon tokens per (?:min|day)|\btoken rate limit|input_token_count|InputTokensPer", re.I), "tokens"),
)
#: OpenAI's 429 message says when the next request fits: "Please try again in 1.5s" / "in 20ms"
_TRY_AGAIN = re.compile(r"try again in ((?:\d+(?:\.\d+)?(?:ms|h|m|s))+)", re.I)


def parse_duration(text: str) -> float | None:
    """OpenAI's reset durations: ``"6ms"``, ``"1.5s"``, ``"6m0s"``, ``"1h2m3s"`` -> seconds; None
    when ``text`` holds none.  Never negative, never infinite (a 400-digit number reads as
    ``float`` max)."""
    total, found = 0.0, False
    for num, unit in _DURATION.findall(text or ""):
        found = True
        total += float(num) * _UNITS[unit]
    if not found:
        return None
    return total if total < float("inf") else 1.7976931348623157e308


def exhausted_limits(headers: Mapping[str, str] | None, message: str = "") -> set[str]:
    """Which limits (``"requests"``, ``"tokens"``) a 429 says were hit: named in its message, else
    those whose ``x-ratelimit-remaining-*`` header is 0.  Empty when nothing says."""
    found = {kind for pattern, kind in _LIMIT_IN_MESSAGE if pattern.search(message or "")}
    if found or not headers:
        return found
    for kind in ("requests", "tokens"):
        left = headers.get(f"x-ratelimit-remaining-{kind}")
        if left is not None and left.strip() in ("0", "0.0"):
            found.add(kind)
    return found


def retry_after_from_headers(headers: Mapping[str, str] | None, message: str = "") -> float | None:
    """Seconds the server asks a client to wait before the next request, or None when it says
    nothing.  First match wins:

    1. ``retry-after-ms``, then ``Retry-After`` (seconds or an HTTP date);
    2. OpenAI's "Please try again in 1.5s" in the error ``message`` (the time until the next
       request fits);
    3. ``x-ratelimit-reset-*`` of the limit that was hit (:func:`exhausted_limits`: the message
       says "on requests per min" or "on tokens per min", else ``remaining`` = 0).  A reset header
       is the time until that limit is *fully* reset (OpenAI's guide shows ``6m0s``), so it is
       never taken from a limit that was not hit; when nothing says which was hit, the shorter
       reset.

    The value is what the server said, unbounded: the engine bounds every wait
    (:data:`judgekit.engine.retry.MAX_SERVER_WAIT_S`)."""
    get = headers.get if headers else (lambda _k: None)
    v = get("retry-after-ms")
    if v:
        try:
            ms = float(v)
            if ms == ms:  # not NaN
                return max(0.0, ms / 1000.0)
        except ValueError:
            pass
    v = get("retry-after")
    if v:
        try:
            s = float(v)
            if s == s:
                return max(0.0, s)
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(v).timestamp()
                return max(0.0, when - time.time())
            except (TypeError, ValueError, OverflowError):
                pass
    m = _TRY_AGAIN.search(message or "")
    if m:
        return parse_duration(m.group(1))
    resets = {kind: parse_duration(get(f"x-ratelimit-reset-{kind}") or "") for kind in ("requests", "tokens")}
    resets = {k: r for k, r in resets.items() if r is not None}
    if not resets:
        return None
    hit = [resets[k] for k in exhausted_limits(headers, message) if k in resets]
    return max(hit) if hit else min(resets.values())
