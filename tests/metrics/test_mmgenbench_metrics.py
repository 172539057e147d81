"""MMGenBench's SIM-Score and FID-Score (judgekit.metrics.mmgenbench)."""

import math

import numpy as np
import pytest
import scipy.linalg

from judgekit.metrics import mmgenbench as mm
from judgekit.metrics.mmgenbench import cosine, fid, sim_scores, sim_summary


def _tr_sqrt_product(s1: np.ndarray, s2: np.ndarray) -> float:
    """Tr sqrtm(S1 S2) by the symmetric route, independent of the module: the sum of the square
    roots of the eigenvalues of S1^1/2 S2 S1^1/2 (symmetric PSD, so numpy.linalg.eigh).
    Eigenvalues under the numerical-rank tolerance are rounding noise around 0 and count as 0."""
    d = s1.shape[0]

    def clean(w: np.ndarray) -> np.ndarray:
        tol = max(w.max(), 0.0) * d * np.finfo(np.float64).eps
        return np.where(w > tol, w, 0.0)

    w, v = np.linalg.eigh(s1)
    root1 = (v * np.sqrt(clean(w))) @ v.T
    m = root1 @ s2 @ root1
    return float(np.sqrt(clean(np.linalg.eigvalsh((m + m.T) / 2))).sum())


def _fid_symmetric(a: np.ndarray, b: np.ndarray, eps: float = 0.0) -> float:
    """FID with the symmetric route; ``eps`` is added to the diagonals inside the square root
    only, as the reference's retry does."""
    s1 = np.atleast_2d(np.cov(a.astype(np.float64), rowvar=False))
    s2 = np.atleast_2d(np.cov(b.astype(np.float64), rowvar=False))
    off = np.eye(s1.shape[0]) * eps
    diff = a.mean(axis=0) - b.mean(axis=0)
    return float(diff @ diff + np.trace(s1) + np.trace(s2) - 2 * _tr_sqrt_product(s1 + off, s2 + off))


# (rows of a, rows of b, features): singular covariances (n <= d), and full-rank ones (n > d)
SHAPES = [(5, 5, 16), (12, 9, 64), (40, 30, 768), (10, 200, 32), (200, 150, 32), (600, 500, 64),
          (3, 4, 1), (50, 70, 2)]


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("n,m,d", SHAPES)
def test_fid_agrees_with_the_symmetric_route(n, m, d):
    rng = np.random.default_rng(n * 1000 + m + d)
    # correlated features with different scales, like an encoder's, and a shift between the sets
    mix = rng.normal(size=(d, d)) / math.sqrt(d)
    a = rng.normal(size=(n, d)) @ mix * 0.7 + 0.2
    b = (rng.normal(size=(m, d)) * rng.uniform(0.3, 1.5, size=d)) @ mix - 0.1
    got = fid(a, b)
    want = _fid_symmetric(a, b)
    assert got == pytest.approx(want, rel=1e-6, abs=1e-6)
    assert got > 0.01
    assert isinstance(got, float)


@pytest.mark.filterwarnings("error")
def test_fid_float32_input_is_computed_in_float64():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(60, 8)).astype(np.float32)
    b = (rng.normal(size=(50, 8)) + 0.5).astype(np.float32)
    assert fid(a, b) == pytest.approx(_fid_symmetric(a.astype(np.float64), b.astype(np.float64)),
                                      rel=1e-9)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("n,d", [(4, 32), (30, 768), (100, 16)])
def test_fid_of_a_set_with_itself_is_zero(n, d):
    x = np.random.default_rng(n + d).normal(size=(n, d)) * 3.0 + 1.0
    assert fid(x, x) == pytest.approx(0.0, abs=1e-8)


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("n,d", [(6, 20), (80, 10)])
def test_fid_of_shifted_features_is_the_squared_shift(n, d):
    rng = np.random.default_rng(7)
    x = rng.normal(size=(n, d))
    shift = rng.normal(size=d)
    assert fid(x, x + shift) == pytest.approx(float(shift @ shift), rel=1e-9, abs=1e-9)


@pytest.mark.filterwarnings("error")
def test_fid_with_degenerate_features_in_the_sqrtm_route():
    # more items than features, but constant columns make both covariances singular: the sqrtm
    # route runs on a singular product, and no warning may escape
    rng = np.random.default_rng(11)
    a = rng.normal(size=(50, 10))
    b = rng.normal(size=(60, 10)) + 0.3
    a[:, :3] = 1.0
    b[:, 2:5] = 0.0
    assert fid(a, b) == pytest.approx(_fid_symmetric(a, b), rel=1e-6, abs=1e-6)


def test_fid_retries_with_eps_when_sqrtm_is_not_finite(monkeypatch):
    calls = []
    real = scipy.linalg.sqrtm

    def flaky(mat):
        calls.append(mat.copy())
        if len(calls) == 1:
            return np.full_like(mat, np.nan)
        return real(mat)

    monkeypatch.setattr(mm.scipy.linalg, "sqrtm", flaky)
    rng = np.random.default_rng(5)
    a = rng.normal(size=(40, 4))
    b = rng.normal(size=(30, 4)) * 2
    got = fid(a, b)
    assert len(calls) == 2
    s1 = np.cov(a, rowvar=False)
    s2 = np.cov(b, rowvar=False)
    eye = np.eye(4) * 1e-6
    np.testing.assert_allclose(calls[1], (s1 + eye) @ (s2 + eye))
    assert got == pytest.approx(_fid_symmetric(a, b, eps=1e-6), rel=1e-9)
    assert got != pytest.approx(_fid_symmetric(a, b), rel=1e-9)  # the eps changed the value


def test_fid_drops_a_negligible_imaginary_part_and_rejects_a_large_one(monkeypatch):
    rng = np.random.default_rng(6)
    a = rng.normal(size=(40, 3))
    b = rng.normal(size=(30, 3))
    real = scipy.linalg.sqrtm
    monkeypatch.setattr(mm.scipy.linalg, "sqrtm", lambda mat: real(mat) + 1e-9j)
    assert fid(a, b) == pytest.approx(_fid_symmetric(a, b), rel=1e-9)
    monkeypatch.setattr(mm.scipy.linalg, "sqrtm", lambda mat: real(mat) + 0.5j)
    with pytest.raises(ValueError, match="imaginary"):
        fid(a, b)


def test_fid_input_errors():
    ok = np.zeros((3, 4))
    with pytest.raises(ValueError, match="at least 2 items"):
        fid(np.zeros((1, 4)), ok)
    with pytest.raises(ValueError, match="feats_b.*at least 2 items"):
        fid(ok, np.zeros((1, 4)))
    with pytest.raises(ValueError, match="4 features.*feats_b has 5"):
        fid(ok, np.zeros((3, 5)))
    with pytest.raises(ValueError, match="2-D"):
        fid(np.zeros(4), ok)
    bad = ok.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        fid(bad, ok)


@pytest.mark.filterwarnings("error")
def test_cosine_matches_numpy_on_unnormalised_features():
    rng = np.random.default_rng(1)
    for _ in range(5):
        a = rng.normal(size=768).astype(np.float32) * 4.0
        b = rng.normal(size=768).astype(np.float32) + a * 0.5
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        want = float(a64 @ b64 / (np.linalg.norm(a64) * np.linalg.norm(b64)))
        assert cosine(a, b) == pytest.approx(want, rel=1e-12)
    assert cosine([1.0, 0.0], [0.0, 2.0]) == 0.0
    assert cosine([1.0, 2.0], [-2.0, -4.0]) == pytest.approx(-1.0)
    assert cosine(np.ones((1, 3)), np.ones(3)) == pytest.approx(1.0)


def test_cosine_errors_name_the_vector():
    with pytest.raises(ValueError, match="b is a zero vector"):
        cosine([1.0, 2.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="a is a zero vector"):
        cosine(np.zeros(3), np.ones(3))
    with pytest.raises(ValueError, match="a has 3 features but b has 2"):
        cosine(np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="non-finite"):
        cosine([np.inf, 1.0], [1.0, 1.0])


def test_sim_scores_per_item_in_both():
    rng = np.random.default_rng(2)
    orig = {k: rng.normal(size=16) for k in ("0", "1", "2", "3")}
    gen = {"2": rng.normal(size=16), "0": rng.normal(size=16), "9": rng.normal(size=16)}
    sims = sim_scores(orig, gen)
    assert list(sims) == ["0", "2"]
    for k, v in sims.items():
        o, g = orig[k], gen[k]
        assert v == pytest.approx(float(o @ g / np.linalg.norm(o) / np.linalg.norm(g)), rel=1e-12)
    with pytest.raises(ValueError, match=r"item '1' \(generated\) is a zero vector"):
        sim_scores(orig, {"1": np.zeros(16)})


def test_sim_summary_overall_and_per_pattern():
    sims = {"0": 0.2, "1": 0.4, "2": 0.6, "3": 0.8, "4": 0.5}
    patterns = {
        "Color": ["0", "1", "2"],        # mean 0.4, population std sqrt(0.08/3)
        "Count": [1, 3, "1"],            # integer ids (the reference's JSON), "1" listed twice: 0.4, 0.8, 0.4
        "Text": ["3", "7"],              # "7" has no score (a failed item): only 0.8
        "Motion": ["8", "9"],            # nothing scored
    }
    out = sim_summary(sims, patterns)
    assert out["n"] == 5
    assert out["mean"] == pytest.approx(0.5)
    assert out["std"] == pytest.approx(math.sqrt((0.09 + 0.01 + 0.01 + 0.09 + 0.0) / 5))
    p = out["patterns"]
    assert list(p) == ["Color", "Count", "Text", "Motion"]
    assert p["Color"] == {"n": 3, "mean": pytest.approx(0.4), "std": pytest.approx(math.sqrt(0.08 / 3))}
    # an id listed twice counts twice, as in the reference's summary (issue 25)
    assert p["Count"] == {"n": 3, "mean": pytest.approx(1.6 / 3), "std": pytest.approx(float(np.std([0.4, 0.8, 0.4])))}
    assert p["Text"] == {"n": 1, "mean": pytest.approx(0.8), "std": 0.0}
    assert p["Motion"] == {"n": 0, "mean": None, "std": None}
    # an item counts in every pattern it is in: "1" is in Color and Count
    assert sim_summary(sims)["patterns"] == {}
    assert sim_summary({}) == {"n": 0, "mean": None, "std": None, "patterns": {}}
    with pytest.raises(ValueError, match="not finite"):
        sim_summary({"0": float("nan")})
