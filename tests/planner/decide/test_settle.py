"""The spread the "to settle" advice states: :func:`planner.decide.settle.settle_range`."""

from __future__ import annotations

import json

from planner.decide.settle import settle_range


def _rows(design, pts, se=0.028):
    return [{"design": design, "runs_per_arm": n, "assurance": a, "assurance_se": se}
            for n, a in pts]


def test_a_steep_curve_gives_a_narrow_range():
    rows = _rows("separate", [(1, 0.1), (2, 0.4), (3, 0.7), (4, 0.79), (5, 0.9), (6, 0.97)])
    # 3: 0.7 + 0.056 < 0.8 (short beyond the error); 4 within; 5 above by more than 2 SE
    assert settle_range(rows, "separate", 0.8) == (4, 5)


def test_a_flat_curve_gives_a_wide_range_and_none_beyond_what_was_simulated():
    rows = _rows("paired", [(16, 0.44), (32, 0.62), (64, 0.745), (78, 0.8), (80, 0.805),
                            (100, 0.795)]) + _rows("separate", [(100, 0.99)])
    assert settle_range(rows, "paired", 0.8) == (64, None)
    assert settle_range(rows, "separate", 0.8) == (100, 100)
    assert settle_range(rows, "none", 0.8) == (None, None)


def test_the_verdict_states_the_spread_of_its_advice(cli):
    """The 35.73 pair: 4 more runs per arm reach assurance 0.80, but 1 run already reaches
    0.75 and 6 reach 0.875 on 200 simulations (SE 0.03), so "a few runs either way" would
    claim a precision the simulations do not have."""
    code, out, _ = cli("verdict", "--a-runs", "35.73,35.76,35.94", "--b-runs",
                       "34.43,34.47,35.23", "--json")
    d = json.loads(out)
    assert code == 0 and d["more_runs_per_arm"] == 4
    assert "within their error 1 to 6" in d["more_runs_note"]
    assert "a few runs either way" not in d["more_runs_note"]


def test_session_advice_is_left_out_when_the_arms_share_a_session():
    """A and B on one instance (no session column): the offset cancels between them, so
    'more runs in the same server sessions cannot settle it' would contradict the verdict's
    own note and its paired advice (found by a new user)."""
    from models.stats.noise import platform_prior
    from models.stats.tps_exact import fit_exact
    from models.stats.tps_model import TPSData
    from planner.decide.advice import session_advice

    y = [454.0, 454.3, 455.0, 454.9]
    cfg = ["A", "A", "B", "B"]
    prior = platform_prior("local-a10g")
    shared = TPSData.from_arrays(y, cfg, ["m1"] * 4, None, None, use_cold=False)
    apart = TPSData.from_arrays(y, cfg, ["m1", "m1", "m2", "m2"], None, None, use_cold=False)
    post = fit_exact(apart, prior)
    assert session_advice(post) is not None           # tau above sigma on this prior
    assert "A/B pairs interleaved in one session" in session_advice(post, apart)
    assert session_advice(fit_exact(shared, prior), shared) is None
