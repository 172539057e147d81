"""What the generic benchmarks (``pairwise``, ``rubric``) share: a user's items read from a data
file or the hub (:mod:`.items`, images decoded by :mod:`.images`), the user's prompt files and
file-or-text options (:mod:`.template`), and the options, candidate sources and estimate pieces
around the candidates (:mod:`.candidates`)."""
