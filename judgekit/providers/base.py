"""The provider interface: one ``async generate`` turning a request into a normalised response.

Providers are small.  Retries, limits and caching are the engine's job, never a provider's: a
provider makes exactly one attempt and raises a classified :class:`~judgekit.errors.ProviderError`.
"""

from __future__ import annotations

import email.utils
import os
import re
import time
from abc import ABC, abstractmethod
from typing import Mapping

from ..errors import AuthError, ProviderError
from ..types import ChatRequest, ChatResponse

__all__ = ["Provider", "retry_after_from_headers", "parse_duration", "DEFAULT_KEY_ENV"]

#: the env var a provider reads its key from when the spec names none
DEFAULT_KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "azure": "AZURE_OPENAI_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "sim": None,
    "local": None,
    "brave": "BRAVE_SEARCH_API_KEY",
    "sim_image_search": None,
    "image_folder": None,
}


class Provider(ABC):
    """Base class.  Subclasses set ``kind`` and implement :meth:`generate`."""

    kind: str = ""
    #: the run's content-addressed image store (judgekit.blobs.BlobStore), set by the engine
    blobs = None

    def __init__(self, alias: str, spec) -> None:  # spec: judgekit.config.ModelSpec
        self.alias = alias
        self.spec = spec
        self.kind = spec.provider  # "openai" and "azure" share a class but not a key env var

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
        return key

    async def start(self) -> None:
        """Create clients (and, for the simulator, start the server)."""

    @abstractmethod
    async def generate(self, request: ChatRequest) -> ChatResponse:
        """Make one attempt.  Raise a ProviderError subclass on failure."""

    async def close(self) -> None:
        """Release clients and servers."""

    def describe_error(self, err: ProviderError) -> str:
        """A message for the user that names the alias and, for auth errors, the env var."""
        base = f"model '{self.alias}' ({self.kind} {self.model})"
        if isinstance(err, AuthError):
            env = self.key_env
            hint = f"; check the key in env var {env}" if env else ""
            return f"{base}: authentication failed{hint}: {err}"
        return f"{base}: {err}"


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


def parse_duration(text: str) -> float | None:
    """OpenAI's reset durations: ``"6ms"``, ``"1.5s"``, ``"6m0s"``, ``"1h2m3s"`` -> seconds."""
    total, found = 0.0, False
    for num, unit in _DURATION.findall(text or ""):
        found = True
        total += float(num) * {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}[unit]
    return total if found else None


def retry_after_from_headers(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait, from ``retry-after-ms``, ``Retry-After`` (seconds or an HTTP date), or
    the ``x-ratelimit-reset-*`` headers, in that order of precedence."""
    if not headers:
        return None
    get = headers.get
    v = get("retry-after-ms")
    if v:
        try:
            return max(0.0, float(v) / 1000.0)
        except ValueError:
            pass
    v = get("retry-after")
    if v:
        try:
            return max(0.0, float(v))
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(v).timestamp()
                return max(0.0, when - time.time())
            except (TypeError, ValueError):
                pass
    resets = [parse_duration(get(h) or "") for h in ("x-ratelimit-reset-requests", "x-ratelimit-reset-tokens")]
    resets = [r for r in resets if r is not None]
    return max(resets) if resets else None
