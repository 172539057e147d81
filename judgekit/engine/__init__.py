"""The engine: limits, retries and the cache-first call path."""

from .engine import NOT_RUN, CallResult, Engine, RunStopped
from .limits import Bucket, BucketState
from .stats import RunStats, StageStats

__all__ = ["Engine", "CallResult", "RunStopped", "NOT_RUN", "Bucket", "BucketState", "RunStats", "StageStats"]
