"""A simulated OpenAI- and Gemini-compatible API server for tests, demos and benchmarks.

Deterministic replies shaped like the benchmark's (free-text answers, pairwise verdicts,
visual factuality scores), server-side rate limits and injected faults.  See
:mod:`judgekit.sim.server` for the endpoints and :class:`SimConfig` for the knobs.
"""

from judgekit.sim.config import SimConfig
from judgekit.sim.core import SimStats
from judgekit.sim.limits import RateDecision, RateLimiter, TokenBucket, format_duration
from judgekit.sim.process import SimProcess, SimThread
from judgekit.sim.protocol import estimate_prompt_tokens
from judgekit.sim.replies import Reply, answer_quality, classify, make_reply, verdict_probabilities
from judgekit.sim.server import READY_PREFIX, SimServer, SimStartError, build_app, serve_forever

__all__ = [
    "SimConfig",
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
