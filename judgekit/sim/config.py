"""Configuration of the simulated LLM API server.

Every knob of the simulator lives in one validated record, :class:`SimConfig`, so the same
settings travel unchanged from a test, through ``python -m judgekit.sim --config-json``, to a
subprocess (:class:`judgekit.sim.process.SimProcess` serialises it with ``model_dump_json``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["SimConfig", "DEFAULT_QUALITY"]

#: quality of a model that ``SimConfig.model_quality`` does not name
DEFAULT_QUALITY = 0.5


class SimConfig(BaseModel):
    """Behaviour of a simulator instance.

    Rates (``error_rate``, ``hang_rate``, ``garbage_rate``) are probabilities in [0, 1],
    drawn per attempt of a request: the draw depends on the seed, the request's content hash
    and how many times that same request was seen before, so a run is reproducible yet a
    retry of a failed request can succeed.
    """

    model_config = ConfigDict(extra="forbid")

    seed: int = 0
    """Mixed into every content hash: another seed gives other answers, verdicts and faults."""

    latency_ms: float = Field(0.0, ge=0)
    """Mean delay before answering a request that passed the checks; 0 answers at once."""

    latency_jitter_ms: float = Field(0.0, ge=0)
    """Half-width of the uniform spread around ``latency_ms`` (deterministic per request)."""

    rpm: int | None = Field(None, gt=0)
    """Requests per minute allowed per model name; None: unlimited."""

    tpm: int | None = Field(None, gt=0)
    """Tokens per minute allowed per model name (prompt estimate + max tokens); None: unlimited."""

    burst_s: float = Field(1.0, gt=0)
    """Bucket capacity, in seconds' worth of the per-minute rate (at least one request)."""

    error_rate: float = Field(0.0, ge=0, le=1)
    """Share of attempts answered with an injected 500, 502 or 503."""

    hang_rate: float = Field(0.0, ge=0, le=1)
    """Share of attempts that sleep ``hang_s`` before answering (to exercise client timeouts)."""

    hang_s: float = Field(30.0, ge=0)
    """How long a hanging attempt sleeps."""

    garbage_rate: float = Field(0.0, ge=0, le=1)
    """Share of judge requests (pairwise or VFS) answered without a parseable verdict/score, and of
    image generations answered with a base64 payload that is not an image."""

    api_keys: list[str] | None = None
    """Accepted keys (bearer token or ``x-goog-api-key``); None accepts anything."""

    models: list[str] | None = None
    """Model names served; None serves any name. Others get a 404 ``model_not_found``."""

    model_quality: dict[str, float] = Field(default_factory=dict)
    """Per model, 0..1 (default 0.5): richer answers from better models win more verdicts."""

    search_results: int = Field(3, ge=0, le=200)
    """Image search (``GET /res/v1/images/search``): results per query, at most the request's
    ``count``."""

    search_no_result_rate: float = Field(0.0, ge=0, le=1)
    """Share of image search queries answered with zero results (the same queries every time:
    chosen by a hash of the seed and the lower-cased query)."""

    search_error_rate: float = Field(0.0, ge=0, le=1)
    """Share of image search attempts answered with an injected 500 or 503 (drawn per query and
    attempt number, like ``error_rate``, so a retry can succeed)."""

    search_broken_image_rate: float = Field(0.0, ge=0, le=1)
    """Share of image search queries whose first result's image (and thumbnail) URL answers 404;
    the other results' images work.  Chosen by a hash of the seed and the query."""

    def quality_of(self, model: str) -> float:
        """The configured quality of ``model``, clamped to [0, 1]."""
        q = self.model_quality.get(model, DEFAULT_QUALITY)
        return 0.0 if q < 0 else 1.0 if q > 1 else float(q)
