"""A simulated OpenAI- and Gemini-compatible API server for tests, demos and benchmarks.

Deterministic replies, server-side rate limits and injected faults.  See
:mod:`judgekit.sim.app` for the endpoints and :class:`SimConfig` for the knobs.

This package is the simulator's core and imports no benchmark.  What a benchmark's guesser, judge
or scorer answers is that benchmark's *simulated behaviour* (:mod:`judgekit.sim.behaviours`), kept
in its package (``judgekit/benchmarks/NAME/sim.py``) and loaded through the benchmark registry; the
core itself answers free text (:mod:`judgekit.sim.replies`) and the common judge formats
(:mod:`judgekit.sim.generic_judge`), and holds what every simulated judge shares (how answers are
weighed, :mod:`judgekit.sim.judge_replies`; judges' styles, :mod:`judgekit.sim.judge_style`) and
the scene pictures its images API draws (:mod:`judgekit.sim.scenes`).

Real-API shapes (details and sources in :class:`SimConfig`'s docstring and fields):

==============================  ==========================================================
default                          Gemini bad key: 400 ``API_KEY_INVALID``; Gemini 429: no
                                 ``Retry-After``, ``QuotaFailure`` + ``RetryInfo`` only;
                                 o1/o3/o4-mini/gpt-5 reject ``max_tokens``, ``temperature``
                                 != 1, ``top_p``; OpenAI usage details; Azure deployments
                                 path; bodies up to 64 MiB
``quota_exhausted_models``       429 ``insufficient_quota`` / ``credit_balance_exhausted`` /
                                 ``*_spend_limit_exceeded``; Gemini per-day ``QuotaFailure``
``openai_retry_after``           False: OpenAI 429s with ``x-ratelimit-*`` only
``reset_header_scale``,          long ``x-ratelimit-reset-*`` values (``6m0s``, ``1h2m3s``)
``reset_requests_s/_tokens_s``
``should_retry_false``           ``x-should-retry: false`` on rate limits, 5xx or quota
``reply_faults``,                ``content_filter``, ``refusal``, ``reasoning_exhausted``,
``reply_fault_models``           ``empty``; Gemini ``prompt_blocked_*``, ``finish_*``,
                                 ``thinking_exhausted``
``reasoning_tokens``,            ``reasoning_tokens`` / ``thoughtsTokenCount``,
``cached_prompt_share``          ``cached_tokens`` / ``cachedContentTokenCount``
``azure_deployments``            deployment -> model (prices, rules and replies follow it)
``judge_styles``                 per judge model: position bias, noise, verbosity bias, tie
                                 readiness, leniency (:class:`JudgeStyle`)
``benchmarks``                   plugin benchmarks whose simulated behaviour is added
==============================  ==========================================================
"""

from judgekit.sim.config import SimConfig
from judgekit.sim.judge_style import JudgeStyle
from judgekit.sim.core import SimStats
from judgekit.sim.limits import RateDecision, RateLimiter, TokenBucket, format_duration
from judgekit.sim.process import SimProcess, SimThread
from judgekit.sim.protocol import estimate_prompt_tokens
from judgekit.sim.replies import Reply, answer_quality, classify, make_reply, verdict_probabilities
from judgekit.sim.server import READY_PREFIX, SimServer, SimStartError, build_app, serve_forever

__all__ = [
    "SimConfig",
    "JudgeStyle",
    "SimServer",
    "SimThread",
    "SimProcess",
    "SimStats",
    "SimStartError",
    "READY_PREFIX",
    "build_app",
    "serve_forever",
    "estimate_prompt_tokens",
    "RateLimiter",
    "RateDecision",
    "TokenBucket",
    "format_duration",
    "Reply",
    "make_reply",
    "classify",
    "answer_quality",
    "verdict_probabilities",
]
