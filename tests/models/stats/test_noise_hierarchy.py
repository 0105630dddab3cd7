"""The shipped noise hierarchy: its stored (moment-matched) priors are what the fit gives, and
a verdict reads them instead of recomputing them (no SciPy root search at verdict time)."""

import json
from importlib import resources

import pytest

import models.stats.noise_hierarchy as nh


def test_shipped_file_equals_its_recomputation():
    """to_dict recomputes every stored prior (digamma, trigamma, brentq): the file is current."""
    text = resources.files("models").joinpath("data/noise_hierarchy.json").read_text("utf-8")
    h = nh.load_hierarchy()
    assert json.dumps(h.to_dict(), indent=1) + "\n" == text
    assert set(h.widened) == set(h.tau)


def test_stored_priors_are_used_and_equal_the_computed_ones(monkeypatch):
    h = nh.load_hierarchy()
    fresh = {k: (n._prior(), nh._widen(n._prior(), 4.0 * n.omega**2)) for k, n in h.nodes.items()}
    widened = {p: h._widened(p) for p in h.tau}

    def boom(*a, **k):
        raise AssertionError("recomputed at verdict time")

    monkeypatch.setattr(nh, "_widen", boom)
    for k, n in h.nodes.items():
        assert (n.prior, n.borrowed()) == fresh[k]
    cells = [("hf-a10g-small", "decode_wall", "128x512"), ("local-a10g", "decode_wall", "128x512"),
             ("local-a10g", "ttft_ms", "x"), ("local-a10g", "new_metric", "w"),
             ("hf-a10g-small", "tps", "other")]
    for plat, metric, workload in cells:
        c = h.choose(plat, metric, workload)
        assert c.prior.sigma.df > 0
        if c.level == "platform" and plat not in {k.split("/")[0] for k in h.nodes}:
            assert (c.prior.sigma, c.prior.tau) == widened[plat]


def test_a_hierarchy_without_stored_priors_computes_them():
    d = json.loads(resources.files("models").joinpath("data/noise_hierarchy.json")
                   .read_text("utf-8"))
    for node in d["nodes"].values():
        node.pop("prior"), node.pop("borrowed")
    d.pop("widened")
    bare, shipped = nh.NoiseHierarchy.from_dict(d), nh.load_hierarchy()
    for plat, metric, workload in [("hf-a10g-small", "decode_wall", "128x512"),
                                   ("local-a10g", "decode_wall", "128x512"),
                                   ("hf-a10g-small", "ttft_ms", "x")]:
        a, b = bare.choose(plat, metric, workload), shipped.choose(plat, metric, workload)
        assert (a.prior.sigma, a.prior.tau, a.level) == (b.prior.sigma, b.prior.tau, b.level)
    with pytest.raises(KeyError):
        nh.NoiseHierarchy.from_dict({"tau": {}})
