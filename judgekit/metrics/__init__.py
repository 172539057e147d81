"""The figures of one benchmark of its own: GuessBench (:mod:`.guessbench`), MMIE (:mod:`.mmie`),
MMGenBench (:mod:`.mmgenbench`).  What judge-heavy benchmarks share is in :mod:`judgekit.judging`."""
