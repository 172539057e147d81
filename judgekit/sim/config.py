"""Configuration of the simulated LLM API server.

Every knob of the simulator lives in one validated record, :class:`SimConfig`, so the same
settings travel unchanged from a test, through ``python -m judgekit.sim --config-json``, to a
subprocess (:class:`judgekit.sim.process.SimProcess` serialises it with ``model_dump_json``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from judgekit.sim.judge_style import JudgeStyle

__all__ = ["SimConfig", "DEFAULT_QUALITY", "JudgeStyle", "ReplyFault", "QuotaKind", "REPLY_FAULTS", "QUOTA_KINDS"]

ReplyFault = Literal[
    "content_filter", "refusal", "reasoning_exhausted", "empty",
    "prompt_blocked_safety", "prompt_blocked_other", "prompt_blocked_prohibited",
    "finish_safety", "finish_recitation", "finish_prohibited", "thinking_exhausted",
]
"""A reply in one of the real APIs' "no answer" shapes (see ``SimConfig.reply_faults``)."""
REPLY_FAULTS: tuple[str, ...] = ReplyFault.__args__  # type: ignore[attr-defined]

QuotaKind = Literal[
    "insufficient_quota", "credit_balance_exhausted", "organization_spend_limit_exceeded",
    "project_spend_limit_exceeded", "organization_usage_limit_exceeded", "free_tier_daily", "daily",
]
"""Why a model's quota is gone (see ``SimConfig.quota_exhausted_models``)."""
QUOTA_KINDS: tuple[str, ...] = QuotaKind.__args__  # type: ignore[attr-defined]

_Share = Annotated[float, Field(ge=0, le=1)]

#: quality of a model that ``SimConfig.model_quality`` does not name
DEFAULT_QUALITY = 0.5


#: the error types ``batch_request_errors`` takes (Anthropic's), and the HTTP status of each
BATCH_ERROR_STATUS = {"invalid_request_error": 400, "authentication_error": 401, "billing_error": 402,
                      "permission_error": 403, "not_found_error": 404, "request_too_large": 413,
                      "rate_limit_error": 429, "api_error": 500, "timeout_error": 504, "overloaded_error": 529}


class SimConfig(BaseModel):
    """Behaviour of a simulator instance.

    Rates (``error_rate``, ``hang_rate``, ``garbage_rate``) are probabilities in [0, 1],
    drawn per attempt of a request: the draw depends on the seed, the request's content hash
    and how many times that same request was seen before, so a run is reproducible yet a
    retry of a failed request can succeed.

    Real-API shapes
    ---------------
    The simulator answers in the shapes the real OpenAI, Azure OpenAI and Gemini APIs use,
    including the ones a client most easily gets wrong.  On by default (they are what the real
    APIs do, and no judgekit runner depends on the old behaviour): a bad Gemini key is a 400
    ``INVALID_ARGUMENT`` with ``ErrorInfo.reason = API_KEY_INVALID``; a Gemini 429 carries no
    ``Retry-After`` header, only a ``QuotaFailure`` naming the per-minute metric and a
    ``RetryInfo`` (``gemini_retry_after``); o-series and gpt-5 model names reject
    ``max_tokens``, ``temperature`` other than 1 and ``top_p`` (``model_param_rules``);
    OpenAI usage carries ``prompt_tokens_details`` and ``completion_tokens_details``; the
    Azure path ``/openai/deployments/{name}/chat/completions?api-version=...`` is served
    (``azure_deployments``); bodies up to ``max_body_mb`` are read.  Off until a test turns
    them on:

    - quota: ``quota_exhausted_models``, ``quota_free_requests``, ``quota_retry_delay_s``
    - rate-limit headers: ``openai_retry_after``, ``reset_header_scale``,
      ``reset_requests_s``, ``reset_tokens_s``, ``should_retry_false``
    - replies with no answer: ``reply_faults`` (rates), ``reply_fault_models`` (per model)
    - usage details: ``reasoning_tokens``, ``cached_prompt_share`` (per model)

    On by default too: the automatic prompt cache of the OpenAI and Gemini endpoints
    (``prefix_cache``, ``prefix_cache_ttl_s``, ``prefix_cache_step``, ``prefix_cache_min_tokens``).
    - batch APIs: ``batch_turnaround_s``, ``batch_request_fail_rate``, ``batch_expire_rate``,
      ``batch_expire_after_s``, ``batch_create_fail_rate``, ``batch_fail_rate``, ``batch_queue_tokens``

    What each one imitates is cited in its field's docstring; every outcome is counted in
    :class:`~judgekit.sim.core.SimStats` (``quota_exhausted``, ``served_by_fault``,
    ``unsupported_params``, ``served_by_api``).
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # a rate, delay or size of nan/inf is an error

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

    judge_styles: dict[str, JudgeStyle] = Field(default_factory=dict)
    """Per judge model, how it judges (:class:`~judgekit.sim.judge_style.JudgeStyle`): position
    bias (``first_slot_bias``), randomness (``noise``), verbosity bias (``length_weight``), tie
    readiness (``tie_width``) and leniency (``score_offset``), each imitating a measured habit of
    real judges, so a panel of simulated judges disagrees the way real ones do.  A model with no
    entry judges as the simulator always has (no bias, noise 1): its replies are unchanged.
    Read by pairwise verdicts, visual factuality scores and MMIE scores."""

    benchmarks: list[str] = Field(default_factory=list)
    """Plugin benchmarks whose simulated behaviour is added to the built-in ones (named as a spec's
    ``benchmark`` names them: an entry point, a dotted module, an absolute ``.py`` path), each
    read from the module's ``simulated`` attribute (:mod:`judgekit.sim.behaviours`).  A run of a
    plugin benchmark adds its own name here; every built-in benchmark's behaviour is always on."""

    def behaviours(self) -> tuple:
        """The simulated behaviours this simulator asks, in precedence order."""
        from judgekit.sim.behaviours import load

        return load(self.benchmarks)

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

    # ---------------------------------------------------------------- real-API shapes

    quota_exhausted_models: dict[str, QuotaKind] = Field(default_factory=dict)
    """Per model, why its quota is gone: every request for it (after ``quota_free_requests``
    served ones) is a 429 that no retry cures.  OpenAI shape (the "Error codes" guide,
    developers.openai.com/api/docs/guides/error-codes): ``{"error": {"message", "type":
    "insufficient_quota", "param": null, "code"}}`` with ``code`` = the kind
    (``insufficient_quota``: "You exceeded your current quota, please check your plan and
    billing details. ..."; ``credit_balance_exhausted``: "Your organization has no prepaid
    credits remaining."; ``organization_spend_limit_exceeded`` / ``project_spend_limit_exceeded``:
    "Your organization/project reached its enforced spend limit."; ``organization_usage_limit_exceeded``),
    no ``Retry-After``.  The Gemini kinds map to ``insufficient_quota`` there.  Gemini shape (as
    captured in google-gemini/gemini-cli#8437 and langgenius/dify#19838): 429
    ``RESOURCE_EXHAUSTED`` whose ``details`` hold a ``google.rpc.QuotaFailure`` naming a per-day
    metric (``free_tier_daily``: quotaId ``GenerateRequestsPerDayPerProjectPerModel-FreeTier``;
    ``daily`` and every OpenAI kind: ``GenerateRequestsPerDayPerProjectPerModel``), a
    ``google.rpc.Help`` link and a ``google.rpc.RetryInfo`` of ``quota_retry_delay_s`` (the real
    API still says "retry in 37s" for a quota that resets at midnight)."""

    quota_free_requests: int = Field(0, ge=0)
    """Requests of a model in ``quota_exhausted_models`` served normally before its quota runs
    out (counted per model since start or reset); also the ``quotaValue`` of Gemini's error."""

    quota_retry_delay_s: float = Field(37.0, gt=0)
    """The ``RetryInfo.retryDelay`` of a Gemini quota error (tens of seconds, as the real API)."""

    gemini_free_tier: bool = True
    """Gemini rate-limit errors name the free-tier metrics (``generate_content_free_tier_requests``,
    quotaId ``...-FreeTier``); False: the paid-tier names."""

    gemini_retry_after: bool = False
    """Send ``Retry-After`` / ``retry-after-ms`` on Gemini 429s too.  The real Gemini API sends
    neither, only ``RetryInfo.retryDelay`` in the body; True restores the simulator's old,
    unreal behaviour."""

    openai_retry_after: bool = True
    """OpenAI (and Azure) rate-limit 429s carry ``Retry-After`` and ``retry-after-ms``.  False:
    only the ``x-ratelimit-*`` headers, as the OpenAI rate-limit guide allows ("If a
    ``Retry-After`` header is present ..."; openai-python then falls back to its own backoff)."""

    reset_header_scale: float = Field(1.0, gt=0)
    """Multiplies the ``x-ratelimit-reset-requests`` / ``-tokens`` values.  They mean "time until
    the limit is fully reset" (OpenAI's rate-limit guide shows ``6m0s``; per-day limits give
    hours), not "when the next request fits", so a real reset header can be far longer than the
    ``Retry-After`` of the same reply; e.g. 360 turns a 1 s refill into ``6m0s``."""

    reset_requests_s: float | None = Field(None, ge=0)
    """If set, every ``x-ratelimit-reset-requests`` says this many seconds (e.g. 3723 ->
    ``1h2m3s``), overriding the bucket and ``reset_header_scale``."""

    reset_tokens_s: float | None = Field(None, ge=0)
    """Same as ``reset_requests_s`` for ``x-ratelimit-reset-tokens``."""

    should_retry_false: list[Literal["rate_limit", "server_error", "quota"]] = Field(default_factory=list)
    """Error outcomes answered with ``x-should-retry: false`` (an OpenAI header that
    openai-python's ``_should_retry`` obeys before looking at the status)."""

    reply_faults: dict[ReplyFault, _Share] = Field(default_factory=dict)
    """Share of chat replies (200s) that carry no answer, per outcome; the shares sum to at most
    1.  Drawn per request hash (the same request always gets the same outcome, as a real filter
    or refusal would), except ``empty``, drawn per attempt (a retry can get an answer).
    OpenAI shapes (openai-python ``ChatCompletion`` types): ``content_filter`` (content null,
    ``finish_reason: "content_filter"``; on Azure with ``content_filter_results`` marking the
    filtered category), ``refusal`` (content null, ``message.refusal`` set, ``stop``),
    ``reasoning_exhausted`` (content ``""``, ``length``, every completion token a
    ``completion_tokens_details.reasoning_tokens``), ``empty`` (content null, ``stop``).
    Gemini shapes (python-genai ``GenerateContentResponse``): ``prompt_blocked_safety`` /
    ``_other`` / ``_prohibited`` (no ``candidates``, ``promptFeedback.blockReason`` SAFETY /
    OTHER / PROHIBITED_CONTENT), ``finish_safety`` / ``finish_recitation`` /
    ``finish_prohibited`` (a candidate with that ``finishReason`` and no text part),
    ``thinking_exhausted`` (``MAX_TOKENS``, no parts, ``thoughtsTokenCount`` = the budget:
    python-genai#811), ``empty`` (``STOP``, no parts).  Across APIs: ``content_filter`` <->
    ``finish_safety`` and ``reasoning_exhausted`` <-> ``thinking_exhausted`` are the same
    outcome; the others are answered normally by the API that has no such shape."""

    reply_fault_models: dict[str, ReplyFault] = Field(default_factory=dict)
    """Per model, an outcome every chat reply of that model gets (overrides ``reply_faults``)."""

    reasoning_tokens: dict[str, Annotated[int, Field(ge=0)]] = Field(default_factory=dict)
    """Per model, hidden reasoning/thinking tokens each reply spends before its text.  They come
    out of the output budget first (``max_completion_tokens`` / ``maxOutputTokens``): a budget
    not above them gives ``reasoning_exhausted`` / ``thinking_exhausted``.  OpenAI reports them in
    ``completion_tokens_details.reasoning_tokens`` *inside* ``completion_tokens``; Gemini in
    ``usageMetadata.thoughtsTokenCount``, *outside* ``candidatesTokenCount`` but inside
    ``totalTokenCount`` (billed as output)."""

    cached_prompt_share: dict[str, _Share] = Field(default_factory=dict)
    """Per model, the share of prompt tokens reported as served from the prompt cache:
    OpenAI ``prompt_tokens_details.cached_tokens``, Gemini ``cachedContentTokenCount`` (both
    part of the prompt count)."""

    prefix_cache: bool = True
    """Report cached prompt tokens for repeated prefixes on the OpenAI-compatible (and Azure) chat
    endpoint and Gemini's ``generateContent`` (and their batches), as the real APIs' automatic
    caches do (:mod:`judgekit.sim.prefix_cache`): from 1,024 prompt tokens (Gemini Pro names:
    4,096; ``prefix_cache_min_tokens``), in ``prefix_cache_step`` steps of the longest prefix
    answered before, kept ``prefix_cache_ttl_s`` after its last use.  On by default, because the
    real APIs do it (it changes no answer, only ``cached_tokens`` / ``cachedContentTokenCount``);
    ``cached_prompt_share`` set for a model overrides it for that model.  The Messages API has
    its own cache (``cache_control`` marks)."""

    prefix_cache_ttl_s: float = Field(300.0, gt=0)
    """How long a cached prefix lives after its last use (OpenAI: 5-10 idle minutes)."""

    prefix_cache_step: int = Field(128, ge=1)
    """Cached tokens come in steps of this many (OpenAI: 128)."""

    prefix_cache_min_tokens: dict[str, Annotated[int, Field(ge=1)]] = Field(default_factory=dict)
    """Per model, the smallest prefix cached, instead of the provider's (1,024; Gemini names with
    ``pro``: 4,096)."""

    model_param_rules: bool = True
    """Answer parameters the way the real API does for the model's family: o1 / o3 / o4-mini /
    gpt-5 names (after Azure's deployment mapping) reject ``max_tokens`` (400
    ``unsupported_parameter``: "Use 'max_completion_tokens' instead."), ``temperature`` other
    than 1 (400 ``unsupported_value``) and ``top_p`` (400 ``unsupported_parameter``), and accept
    ``max_completion_tokens`` and ``reasoning_effort``; gpt-4o / gpt-4.1 / gpt-3.5 names reject
    ``reasoning_effort``.  Other names (judgekit's ``sim-*`` runners) accept everything."""

    azure_deployments: dict[str, str] = Field(default_factory=dict)
    """Azure OpenAI deployments: name -> the model it serves.  Empty: any deployment serves a
    model of its own name; else an unknown name is Azure's 404 ``DeploymentNotFound``."""

    max_body_mb: float = Field(64.0, gt=0)
    """Largest request body read (aiohttp's default of 1 MiB refused bodies the real APIs take:
    OpenAI allows 50 MB of images per request, Gemini 20 MB inline)."""

    # ---------------------------------------------------------------- batch APIs

    batch_turnaround_s: float = Field(5.0, ge=0)
    """How long a batch job takes from creation to ``completed`` (:mod:`judgekit.sim.batches`):
    validating for the first 10 %, its requests answered evenly until 90 %, finalizing for the
    rest.  The real APIs take minutes to 24 hours; tests set a fraction of a second."""

    batch_request_fail_rate: float = Field(0.0, ge=0, le=1)
    """Share of the requests inside a batch answered with a 500 ``server_error`` (in OpenAI's error
    file), drawn per request hash and attempt like ``error_rate``, so a retry can succeed."""

    batch_expire_rate: float = Field(0.0, ge=0, le=1)
    """Share of batch jobs (drawn per job) that stall after answering half their requests and
    expire at the end of the turnaround: OpenAI's ``expired`` with the rest in the error file as
    ``batch_expired``."""

    batch_expire_after_s: float = Field(86400.0, gt=0)
    """A batch's completion window (its ``expires_at``): a job not completed this long after its
    creation expires with the requests answered so far (the real window is 24 h)."""

    batch_create_fail_rate: float = Field(0.0, ge=0, le=1)
    """Share of batch creations (``POST /v1/batches``) refused with a 500, drawn per creation."""

    batch_fail_rate: float = Field(0.0, ge=0, le=1)
    """Share of created batch jobs that fail validation as a whole, no request run (OpenAI's
    ``failed`` with a ``token_limit_exceeded`` error, as when the organization's enqueued-token
    limit is reached)."""

    batch_request_errors: dict[str, float] = Field(default_factory=dict)
    """Per-request errors inside a batch by the provider's error type (Anthropic's: ``api_error``,
    ``overloaded_error``, ``rate_limit_error``, ``invalid_request_error``...) -> the share of
    requests answered so (drawn per request hash and attempt, after ``batch_request_fail_rate``):
    Anthropic's ``errored`` results with that type, OpenAI's error-file lines with its status
    (529 for ``overloaded_error``), Gemini's line errors.  Empty: none."""

    batch_queue_tokens: int | None = Field(None, ge=1)
    """The organization's enqueued-token limit per model (OpenAI's batch queue limit): an OpenAI
    batch whose requests' prompt tokens, with those of the model's batches not ended yet, pass it
    fails as a whole (``failed``, ``token_limit_exceeded`` naming the limit), no request run.
    None: no limit."""

    @model_validator(mode="after")
    def _faults_sum_to_one_at_most(self) -> "SimConfig":
        errs = self.batch_request_errors
        for etype, share in errs.items():
            if etype not in BATCH_ERROR_STATUS:
                raise ValueError(f"batch_request_errors: unknown error type {etype!r}; known: "
                                 f"{', '.join(sorted(BATCH_ERROR_STATUS))}")
            if not 0 <= share <= 1:
                raise ValueError(f"batch_request_errors.{etype}: a share from 0 to 1, not {share!r}")
        if sum(errs.values()) > 1 + 1e-9:
            raise ValueError(f"batch_request_errors shares sum to {sum(errs.values()):g}, more than 1")
        total = sum(self.reply_faults.values())
        if total > 1 + 1e-9:
            raise ValueError(f"reply_faults shares sum to {total:g}, more than 1")
        return self

    def style_of(self, model: str) -> JudgeStyle | None:
        """The judge style of ``model``; None when it has none (the usual judge)."""
        return self.judge_styles.get(model)

    def quality_of(self, model: str) -> float:
        """The configured quality of ``model``, clamped to [0, 1]."""
        q = self.model_quality.get(model, DEFAULT_QUALITY)
        return 0.0 if q < 0 else 1.0 if q > 1 else float(q)
