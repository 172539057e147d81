"""How a simulated judge judges: :class:`JudgeStyle`, one per judge model (``SimConfig.judge_styles``).

Without a style every simulated judge draws its verdicts the same way, so a panel of simulated
judges differs only by the request digest's noise and shows no position or length bias.  Real
judges differ, and in ways the literature measures: they favour the answer shown first (Wang et
al. 2023, "Large Language Models are not Fair Evaluators"; Zheng et al. 2023, "Judging
LLM-as-a-Judge with MT-Bench and Chatbot Arena"; Shi et al. 2024, "Judging the Judges", arXiv
2406.07791: in one study 12.9 % of GPT-4's pairwise verdicts flip when the answers swap and the
first slot wins 52.6 %), they favour longer answers beyond their quality (Zheng et al. 2023's
verbosity bias; Saito et al. 2023, "Verbosity Bias in Preference Labeling by Large Language
Models"), they disagree with themselves and each other on close pairs, they call ties more or
less readily, and as scorers they are more or less lenient (MMIE's Table 5 compares scorers).

The pairwise verdict is an ordered logit on a latent preference for Assistant A::

    z = 2.5 * (quality_A - quality_B)                         # the answers' surface quality
        + first_slot_bias                                     # position bias
        + length_weight * (ln(1 + words_A) - ln(1 + words_B)) # verbosity bias

    P(A>>B) = s((z - 2.0) / noise)      P(A>>B or A>B) = s((z - tie_width) / noise)
    P(not B>>A) = s((z + 2.0) / noise)  P(A wins or tie) = s((z + tie_width) / noise)

(``s`` the logistic function); ``noise = 0`` takes the verdict whose band holds ``z``: a tie
when ``|z| <= tie_width``, a strong verdict when ``|z| > 2``.  The default style (no bias,
noise 1, tie width 0.5, no length weight) is the simulator's judge as it always was, computed
by the same arithmetic, so replies without a style are byte for byte what they were.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["JudgeStyle", "DEFAULT_STYLE", "SLOPE", "STRONG", "pairwise_logit", "verdict_probabilities",
           "verdict_band", "styled_score"]

#: ordered-logit slope on the quality difference, and the threshold of a strong verdict
SLOPE = 2.5
STRONG = 2.0


class JudgeStyle(BaseModel):
    """The judging habits of one simulated judge model (all optional; the defaults are the
    simulator's unbiased judge).  Pairwise verdicts and visual factuality scores
    (Creation-MMBench) and MMIE's 0-6 scores follow them; answers, captions and GuessBench
    replies do not."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    first_slot_bias: float = Field(0.0, ge=-5, le=5)
    """Position bias: a shift of the pairwise latent preference toward Assistant A, in logits
    (negative: toward Assistant B), and the same number of points (out of 10) added to Response A's
    visual factuality score.  Imitates judges that favour the answer shown first (Wang et al.
    2023; the first slot winning 52.6 % of GPT-4's pairwise verdicts in one study).  On the
    shipped Creation-MMBench sample's answers, 0.3 at noise 1 gives roughly a 55-60 % first-slot
    preference; a dual (both orders) evaluation cancels most of it."""

    noise: float = Field(1.0, ge=0, le=5)
    """Scale of the judge's randomness: the logistic noise of the pairwise verdict, the uniform
    +-1 point noise of a visual factuality score and the Gaussian noise of an MMIE score (times
    the scorer's own ``sigma``).  1 is the simulator's usual judge; 0 a judge that is a
    deterministic function of the answers (the same verdict every time, mirrored when they swap).
    Imitates how much judges disagree with themselves and with each other on close calls
    (repetition stability, inter-judge agreement)."""

    length_weight: float = Field(0.0, ge=-5, le=5)
    """Verbosity bias: logits added to the pairwise preference per unit of
    ``ln(1 + words_A) - ln(1 + words_B)`` (0.5: an answer twice as long gains about 0.35), on top of
    the quality score, which already grows with length.  Imitates judges that favour longer
    answers beyond their merit (Zheng et al. 2023; Saito et al. 2023).  Pairwise verdicts only."""

    tie_width: float = Field(0.5, ge=0, lt=STRONG)
    """Half-width of the tie band of the pairwise latent preference (the simulator's usual judge:
    0.5; below 2, the strong-verdict threshold).  Wider: near-equal answers are called ``A=B``
    more often.  Imitates judges' different readiness to call a tie."""

    score_offset: float = Field(0.0, ge=-6, le=6)
    """Leniency: points added to every unitary score before it is clamped to its range, on that
    benchmark's scale (a visual factuality score out of 10, an MMIE score out of 6; negative:
    harsher).  Imitates scorers whose absolute scores run high or low against humans' (MMIE's
    Table 5 compares scorers by MSE and MAE with human scores)."""

    def is_default(self) -> bool:
        return self == DEFAULT_STYLE


#: the simulator's usual judge (a model with no entry in ``SimConfig.judge_styles``)
DEFAULT_STYLE = JudgeStyle()


def sigmoid(x: float) -> float:
    """The logistic function, without overflow for large ``|x|``."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def pairwise_logit(quality_a: float, quality_b: float, style: JudgeStyle = DEFAULT_STYLE,
                   words_a: int = 0, words_b: int = 0) -> float:
    """The latent preference ``z`` for Assistant A (module docstring); ``words_*`` only matter with a
    ``length_weight``."""
    z = SLOPE * (quality_a - quality_b)
    if style.first_slot_bias:
        z += style.first_slot_bias
    if style.length_weight:
        z += style.length_weight * (math.log1p(words_a) - math.log1p(words_b))
    return z


def verdict_band(z: float, tie_width: float = DEFAULT_STYLE.tie_width) -> int:
    """The verdict (0 = ``A>>B`` .. 4 = ``B>>A``) of a noiseless judge whose latent preference is
    ``z``: strong beyond +-2, a tie within +-``tie_width`` (both ends), mild between.  Symmetric:
    ``verdict_band(-z) == 4 - verdict_band(z)``."""
    if z > STRONG:
        return 0
    if z > tie_width:
        return 1
    if z >= -tie_width:
        return 2
    if z >= -STRONG:
        return 3
    return 4


def verdict_probabilities(quality_a: float, quality_b: float, style: JudgeStyle | None = None,
                          words_a: int = 0, words_b: int = 0) -> tuple[float, ...]:
    """Probabilities of ``A>>B, A>B, A=B, B>A, B>>A`` (ordered logit on the latent preference; one
    of them 1 for a noiseless judge)."""
    s = style or DEFAULT_STYLE
    z = pairwise_logit(quality_a, quality_b, s, words_a, words_b)
    if s.noise == 0:
        hot = verdict_band(z, s.tie_width)
        return tuple(1.0 if i == hot else 0.0 for i in range(5))
    t = s.tie_width
    if s.noise == 1:  # the usual judge's arithmetic, unchanged
        cum = (sigmoid(z - STRONG), sigmoid(z - t), sigmoid(z + t), sigmoid(z + STRONG))
    else:
        n = s.noise
        cum = (sigmoid((z - STRONG) / n), sigmoid((z - t) / n), sigmoid((z + t) / n), sigmoid((z + STRONG) / n))
    return (cum[0], cum[1] - cum[0], cum[2] - cum[1], cum[3] - cum[2], 1.0 - cum[3])


def styled_score(centre: float, draw: float, style: JudgeStyle | None, *, first_slot: bool = False) -> float:
    """A unitary score before clamping: ``centre`` (what the answer deserves) plus the judge's
    ``draw`` of noise at noise 1, scaled by the style's noise, plus its leniency, plus its
    position bias for the answer in the first slot (``first_slot``: Response A of a visual
    factuality judgment)."""
    if style is None or style is DEFAULT_STYLE:
        return centre + draw
    x = centre + (draw if style.noise == 1 else draw * style.noise)
    if style.score_offset:
        x += style.score_offset
    if first_slot and style.first_slot_bias:
        x += style.first_slot_bias
    return x
