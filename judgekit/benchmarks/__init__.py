"""The benchmark contract (:mod:`.base`, :mod:`.calls`, :mod:`.plugins`) and one package per benchmark.

A benchmark imports the judging core (:mod:`judgekit.judging`) and never another benchmark.
:mod:`.uncertainty` keeps the interval options under the name plugins used before the judging core."""
