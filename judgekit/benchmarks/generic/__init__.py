"""What the generic benchmarks (``pairwise``, ``rubric``) share: a user's items read from a data
file or the hub (:mod:`.items`, images decoded by :mod:`.images`) and the user's prompt files
(:mod:`.template`)."""
