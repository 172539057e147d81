"""The judging core: what every judge-heavy benchmark shares, in one place beneath the benchmarks.

A benchmark's flow keeps one record per judgment (``judge``, ``model``, ``index``, ``kind``,
``order``, the candidate's ``score`` or rating, ``ok``, ``error_kind``, ``length_diff``); every
statistic below reads those records, whichever benchmark made them.

* Pairwise judgments over both orders (:mod:`.pairwise`): the verdict table (-2..+2 from the
  candidate's side, the swapped order negated back), Reward, Win Rate, VFS, the per-item sums the
  intervals resample, the ensemble's records.
* Intervals and paired comparisons: :mod:`.intervals` (the seeded bootstrap of a ratio of
  per-item sums), :mod:`.uncertainty` (the options every benchmark's ``Options`` inherits, one
  figure's interval, a share of yes/no judgments with its interval (``rate``), the paired
  differences between candidates, ``summary["intervals"]``),
  :mod:`.bootstrap` (every pairwise figure of every judge from one draw per row).
* A panel: :mod:`.agreement` (the ensemble rules, Krippendorff's alpha, and the one way from
  records to ratings, per-candidate agreement rows, a score ensemble's records and
  ``summary["ensemble"]``, which the pairwise and rubric benchmarks, MMIE's scorers and
  GuessBench's extractors all take), :mod:`.behaviour` (swap consistency, first-slot preference,
  ties, length bias), :mod:`.panel` (both over pairwise and score judgment records);
  :mod:`.alignment` (a judge against human ratings: MAE, consistency);
  :mod:`.human_agreement` (a human-labels file, ``options.human_labels``, and each judge's Cohen's
  kappa, Spearman, Kendall, MAE and consistency against it, with intervals).
* Honest small numbers (:mod:`.honest`): n and the small-n flag on every row, degenerate-judge and
  self-preference flags, with :mod:`.rates` (Wilson intervals on behaviour shares),
  :mod:`.multiplicity` (bootstrap p-values, Holm's adjustment) and :mod:`.alpha` (Krippendorff's
  alpha with an item-bootstrap interval, pooled within candidates).
* Results and report: :mod:`.results` (summary.json's keys, the CSV and printed tables of a
  pairwise benchmark), :mod:`.report` (headline and charts), :mod:`.report_items` (the pieces of a
  judgment's report blocks).
* Spec checks and the generic benchmarks' inputs: :mod:`.roles` (which models may judge, and
  ``require_judge``), :mod:`.items`, :mod:`.item_images`, :mod:`.template`, :mod:`.candidates` (a
  user's items, prompt files and candidates, for ``pairwise`` and ``rubric``; a plugin benchmark
  reads its items with ``load_items`` and its own prompt with ``read_template`` too).

Parsing a judge's reply and defusing the answers it is shown are parsers' work
(:mod:`judgekit.parsers.generic`, :mod:`judgekit.parsers.generic_defuse`, and each benchmark's
parser); re-ask planning is :func:`judgekit.benchmarks.calls.planned_reask`.  Nothing here imports
a benchmark (``tests/test_import_graph.py``).
"""
