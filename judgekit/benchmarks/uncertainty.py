"""The interval options and figures a plugin benchmark's ``Options`` and pipeline take, under the
name plugins written before the judging core used; they live in :mod:`judgekit.judging.uncertainty`."""

from ..judging.uncertainty import IntervalOptions, ItemSums, comparisons, interval

__all__ = ["IntervalOptions", "ItemSums", "interval", "comparisons"]
