"""Summary statistics as input (issue 11.2): parsing, the exact pseudo-run representation,
and verdicts from summaries of the shipped runs against the runs themselves."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import replace

import numpy as np
import pytest
from scipy.stats import norm

from planner.errors import InputError
from planner.io.runs import read_runs
from planner.io.table import RunsTable
from planner.io.summaries import (Summary, parse_summary, pseudo_runs, quick_table,
                               standard_scores, summary_notes)

# ---------------------------------------------------------------------------- parsing


def test_mean_sd_delta_method():
    s = parse_summary("mean=80.3,sd=0.3,n=3")
    assert (s.n, s.kind, s.instances) == (3, "mean_sd", 1)
    assert s.log_mean == pytest.approx(math.log(80.3) - 0.3 ** 2 / (2 * 80.3 ** 2), abs=1e-15)
    assert s.log_sd == pytest.approx(0.3 / 80.3, rel=1e-15)
    # the delta method against the log-normal identities: O(cv^4), here ~1e-11
    v2 = math.log1p((0.3 / 80.3) ** 2)
    assert abs(s.log_sd ** 2 - v2) < 1e-9 and abs(s.log_mean - (math.log(80.3) - v2 / 2)) < 1e-9
    # sd as a percentage of the mean, ';' separators, spaces, key case
    s2 = parse_summary(" Mean = 200 ; sd=0.5% ; n=4 ")
    assert s2.given["sd"] == pytest.approx(1.0) and s2.log_sd == pytest.approx(0.005)


def test_median_range_wan_hozo():
    s = parse_summary("median=80.2,min=79.9,max=80.7,n=5")
    la, lm, lb = math.log(79.9), math.log(80.2), math.log(80.7)
    xi = 2 * norm.ppf((5 - 0.375) / (5 + 0.25))  # Wan et al. 2014, eq. 9: xi(5) = 2.3595
    assert xi == pytest.approx(2.3595, abs=1e-4)
    assert s.log_mean == pytest.approx((la + 2 * lm + lb) / 4, abs=1e-15)
    assert s.log_sd == pytest.approx((lb - la) / xi, rel=1e-12)
    assert s.kind == "median_range"


def test_single_run_forms():
    for spec in ("mean=308.49,n=1", "median=308.49,n=1", "mean=308.49,sd=0,n=1"):
        s = parse_summary(spec)
        assert (s.n, s.kind, s.log_sd) == (1, "single", 0.0)
        assert s.log_mean == pytest.approx(math.log(308.49))
        assert s.values() == pytest.approx([308.49])


def test_instances_option():
    assert parse_summary("mean=80,sd=1,n=4,instances=n").instances == 4
    assert parse_summary("mean=80,sd=1,n=4,instances=4").instances == 4
    assert parse_summary("mean=80,sd=1,n=4,instances=1").instances == 1


@pytest.mark.parametrize("spec, field, words", [
    ("", "a_summary", "empty"),
    ("mean=80,sd=1", "a_summary n", "needs n"),
    ("mean=80;sd=1;n=0", "a_summary n", "outside"),
    ("mean=80,sd=1,n=20000", "a_summary n", "outside"),
    ("mean=80,sd=1,n=2.5", "a_summary n", "whole"),
    ("mean=80,sd=1,n=3,mode=2", "a_summary", "unknown key"),
    ("mean=80,mean=81,n=1", "a_summary mean", "twice"),
    ("mean 80,n=1", "a_summary", "key=value"),
    ("mean=80,n=3", "a_summary sd", "n = 1"),
    ("mean=80,sd=1,n=1", "a_summary sd", "no sd"),
    ("mean=80,median=80,n=3", "a_summary median", "not both"),
    ("mean=80,sd=1,min=79,n=3", "a_summary min", "go with median"),
    ("sd=1,n=3", "a_summary sd", "goes with mean"),
    ("n=3", "a_summary mean", "needs mean"),
    ("mean=-80,sd=1,n=3", "a_summary mean", "> 0"),
    ("mean=abc,sd=1,n=3", "a_summary mean", "not a number"),
    ("mean=80,sd=-1,n=3", "a_summary sd", ">= 0"),
    ("mean=80,sd=nan,n=3", "a_summary sd", "finite"),
    ("mean=80,sd=40,n=3", "a_summary sd", "50 %"),
    ("median=80,min=79,n=5", "a_summary max", "needs min and max"),
    ("median=80,min=79,max=81,n=2", "a_summary n", "two runs"),
    ("median=80,min=81,max=82,n=5", "a_summary median", "min <= median <= max"),
    ("median=80,min=79,max=81,n=1", "a_summary min", "no range"),
    ("mean=80,sd=1,n=4,instances=2", "a_summary instances", "1 (one machine"),
])
def test_parse_errors(spec, field, words):
    with pytest.raises(InputError) as exc:
        parse_summary(spec, field="a_summary")
    assert exc.value.field == field
    assert words in str(exc.value)


# ---------------------------------------------------------------------- pseudo-runs


@pytest.mark.parametrize("n", [1, 2, 3, 5, 12, 100])
def test_standard_scores_are_standardised(n):
    z = standard_scores(n)
    assert z.shape == (n,)
    assert abs(z.sum()) < 1e-12
    assert np.sum(z * z) == pytest.approx(max(n - 1, 0), abs=1e-12)
    assert np.all(np.diff(z) > 0) or n == 1  # ordered, distinct: no duplicate rows


def test_pseudo_runs_reproduce_log_mean_and_sd():
    s = parse_summary("median=80.2,min=79.9,max=80.7,n=7")
    y = np.log(s.values())
    assert y.mean() == pytest.approx(s.log_mean, abs=1e-14)
    assert y.std(ddof=1) == pytest.approx(s.log_sd, rel=1e-12)


def _shipped(runs_csv, group, config):
    """The measured runs of one config of one run_group of the shipped table, warm."""
    t = read_runs(runs_csv).filter(run_group=group).measured().select([config])
    return [replace(r, cold=False) for r in t.runs]


def _as_summary(runs, *, instances=1):
    y = np.log([r.tps for r in runs])
    return Summary(len(y), "mean_sd", {"mean": float(np.exp(y.mean())), "sd": 0.0},
                   float(y.mean()), float(y.std(ddof=1)), instances)


GROUP = "validity/served_stack_identity_ablation/measured"
A_CFG, B_CFG = f"{GROUP}:S0", f"{GROUP}:S1"


def _prior():
    from planner.decide.priors import resolve_prior

    return resolve_prior(None, "local-a10g", "probe_slope", None).prior


@pytest.mark.parametrize("separate", [False, True])
def test_pseudo_runs_give_the_exact_posterior(runs_csv, separate):
    """Pseudo-runs with the real runs' log mean and sd give the exact engine the real runs'
    posterior (same n, sum and sum of squares per config and instance), to 1e-9: on the one
    instance both configs ran on, and with each run on its own instance (instances=n)."""
    from planner.decide.verdict import verdict

    real, fake = [], []
    for cfg in (A_CFG, B_CFG):
        runs = _shipped(runs_csv, GROUP, cfg)
        if separate:
            runs = [replace(r, instance=f"{cfg}-{k}") for k, r in enumerate(runs)]
        real += runs
        s = _as_summary(runs, instances=len(runs) if separate else 1)
        # on the runs' own instance (S0 and S1 share one machine: a paired design)
        fake += pseudo_runs(s, replace(runs[0], extra={}),
                            instance=f"{cfg}-pseudo" if separate else runs[0].instance,
                            file=None, value_field="tps")
    assert len(real) == len(fake) == 12
    assert not np.allclose(sorted(r.tps for r in real), sorted(r.tps for r in fake))
    prior = _prior()
    vr = verdict(RunsTable(real), A_CFG, B_CFG, prior=prior, rope="0.1%")
    vf = verdict(RunsTable(fake), A_CFG, B_CFG, prior=prior, rope="0.1%")
    for k in ("p_b_gt_a", "p_equivalent", "p_b_gt_a_beyond_rope", "p_a_gt_b_beyond_rope"):
        assert getattr(vf, k) == pytest.approx(getattr(vr, k), abs=1e-9), k
    for k in ("mean", "sd", "hdi_low", "hdi_high"):
        assert vf.delta_log[k] == pytest.approx(vr.delta_log[k], abs=1e-9), k
    assert vf.sigma_run["pct"]["median"] == pytest.approx(vr.sigma_run["pct"]["median"],
                                                          abs=1e-9)
    assert vf.label == vr.label


# ------------------------------------------------------- shipped examples, CLI paths

#: (run_group, A, B): a clear B better, a clear A better, an undecided pair (P(B > A) 0.90)
PAIRS = [
    ("validity/bi0_surgattn_3d_qualregate", "validity/bi0_surgattn_3d_qualregate:control",
     "validity/bi0_surgattn_3d_qualregate:variant"),
    ("validity/triton_attn_joint_autotune/ab_out", "fa2sw_precache_agentI",
     "fa2sw_precache_agentI+AGENTB_BM4_AB=1,AGENTB_BM4_BLOCK_M=4,AGENTB_BM4_NUM_STAGES=2"),
    ("equivalence_escalation/triton_verify_surface/numstages_ab_out", "fa2sw_precache_agentI",
     "fa2sw_precache_agentI+AGENTB_BM4_AB=1,AGENTB_BM4_BLOCK_M=16,AGENTB_BM4_NUM_STAGES=2"),
]


def _summary_csv(path, runs_csv, group, configs, form):
    """A runs table with one summary row per config (TPS-scale statistics of its runs, as a
    report would give them), on the runs' own instance."""
    cols = {"mean": ["mean", "sd", "n"], "median": ["median", "min", "max", "n"]}[form]
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["config", "platform", "metric", "workload", "run_group", "instance", *cols])
        for c in configs:
            runs = read_runs(runs_csv).filter(run_group=group).measured().select([c]).runs
            t = np.array([r.tps for r in runs])
            stats = ([t.mean(), t.std(ddof=1)] if form == "mean" else
                     [np.median(t), t.min(), t.max()])
            r0 = runs[0]
            w.writerow([c, r0.platform, r0.metric, r0.workload, group, r0.instance,
                        *[repr(float(x)) for x in stats], len(t)])
    return path


@pytest.mark.parametrize("group, a, b", PAIRS)
def test_summary_table_matches_the_runs(cli, runs_csv, tmp_path, group, a, b):
    """mean/sd/n of each config's runs give the runs' label; P(B > A) within 0.002 when
    neither models cold starts (the delta method and TPS-scale vs log-scale moments are the
    only differences), within 0.05 against the default fit of the runs (which treats their
    rep-0 runs as cold first runs, each instance with its own slowdown; a summary cannot say
    which run was cold)."""
    path = _summary_csv(tmp_path / "s.csv", runs_csv, group, [a, b], "mean")
    out = {}
    for extra in ((), ("--no-cold",)):
        code, raw, err = cli("verdict", runs_csv, "--a", a, "--b", b, "--run-group", group,
                             "--json", *extra)
        assert code == 0, err
        code, sm, err = cli("verdict", path, "--a", a, "--b", b, "--json", *extra)
        assert code == 0, err
        out[extra] = json.loads(raw), json.loads(sm)
    (raw_cold, sm), (raw_warm, sm_warm) = out[()], out[("--no-cold",)]
    assert sm == sm_warm or sm["p_b_gt_a"] == pytest.approx(sm_warm["p_b_gt_a"], abs=1e-12)
    assert sm["label"] == raw_cold["label"] == raw_warm["label"]
    assert sm["n_a"] == raw_cold["n_a"] and sm["n_b"] == raw_cold["n_b"]
    assert abs(sm["p_b_gt_a"] - raw_warm["p_b_gt_a"]) < 0.002
    assert abs(sm["p_b_gt_a"] - raw_cold["p_b_gt_a"]) < 0.05
    assert abs(sm["delta_pct"]["mean"] - raw_warm["delta_pct"]["mean"]) < 0.002
    assert any(n.startswith("A is a summary (mean ± sd") and "delta method" in n
               for n in sm["notes"])
    assert any(n.startswith("B is a summary") for n in sm["notes"])


def test_median_range_table_matches_the_runs(cli, runs_csv, tmp_path):
    """median/min/max/n (Hozo 2005 / Wan 2014 on the log scale) of 6 runs per config: the
    runs' label, Δ within 0.04 percentage points (the range-based sd is rough)."""
    group, a, b = PAIRS[1]
    path = _summary_csv(tmp_path / "m.csv", runs_csv, group, [a, b], "median")
    code, raw, err = cli("verdict", runs_csv, "--a", a, "--b", b, "--run-group", group,
                         "--json", "--no-cold")
    assert code == 0, err
    code, sm, err = cli("verdict", path, "--a", a, "--b", b, "--json")
    assert code == 0, err
    raw, sm = json.loads(raw), json.loads(sm)
    assert sm["label"] == raw["label"] == "A better"
    assert abs(sm["delta_pct"]["mean"] - raw["delta_pct"]["mean"]) < 0.04
    assert any("Hozo" in n and "Wan" in n for n in sm["notes"])


def test_table_mixes_summary_and_runs(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("config,tps,mean,sd,n,instance\n"
                 "A,,80.3,0.3,3,\n"
                 "B,81.0,,,,m1\nB,81.2,,,,m1\n")
    t = read_runs(p)
    a = [r for r in t.runs if r.config == "A"]
    assert len(a) == 3 and len(t) == 5
    assert {r.instance for r in a} == {"summary-line2"}
    assert not t.cold_flags()[:3].any()  # pseudo-runs are warm, though rep 0 on an instance
    y = np.log([r.tps for r in a])
    assert y.mean() == pytest.approx(math.log(80.3) - 0.3 ** 2 / (2 * 80.3 ** 2), abs=1e-12)
    assert y.std(ddof=1) == pytest.approx(0.3 / 80.3, rel=1e-10)
    notes = summary_notes(t, "A", "B")
    assert len(notes) == 1 and notes[0].startswith("A is a summary (mean ± sd 80.3 ± 0.3, n = 3)")


@pytest.mark.parametrize("text, line, field, words", [
    ("config,mean,sd,n\nA,80,1,\n", 2, "n", "needs n"),
    ("config,mean,sd,n,rep\nA,80,1,3,0\n", 2, "rep", "leave rep blank"),
    ("config,mean,sd,n,cold\nA,80,1,3,1\n", 2, "cold", "cold first run"),
    ("config,mean,sd,n\nA,80,1,3\nB,80,x,3\n", 3, "sd", "not a number"),
    ("config,median,min,max,n\nA,80,81,82,5\n", 2, "median", "min <= median"),
    ("config,mean,sd\nA,80,1\n", 1, "tps", "missing required column"),
])
def test_table_summary_errors(tmp_path, text, line, field, words):
    p = tmp_path / "bad.csv"
    p.write_text(text)
    with pytest.raises(InputError) as exc:
        read_runs(p)
    assert (exc.value.line, exc.value.field) == (line, field)
    assert words in str(exc.value)


def test_quick_form_cli(cli):
    code, out, err = cli("verdict", "--a-summary", "mean=80.3,sd=0.3,n=3", "--b-summary",
                         "mean=80.9,sd=0.25,n=3", "--platform", "hf-a10g-small", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert (d["n_a"], d["n_b"]) == (3, 3)
    assert d["mean_tps_a"] == pytest.approx(80.3, abs=1e-3)  # delta method: O(sd^2/n)
    assert any(n.startswith("A is a summary (mean ± sd 80.3 ± 0.3, n = 3): approximated on the "
                            "log scale by the delta method") and "one instance" in n
               for n in d["notes"])
    # mixed with --b-runs; the summary of one run equals the one run
    code, out, err = cli("verdict", "--a-summary", "mean=308.49,n=1", "--b-runs", "308.05",
                         "--platform", "hf-a10g-small", "--json")
    assert code == 0, err
    code, out2, err = cli("verdict", "--a", "308.49", "--b", "308.05", "--platform",
                          "hf-a10g-small", "--json")
    assert code == 0, err
    assert json.loads(out)["p_b_gt_a"] == pytest.approx(json.loads(out2)["p_b_gt_a"], abs=1e-9)


@pytest.mark.parametrize("args, field, words", [
    (("--likelihood", "student-t", "--engine", "mcmc"), "--likelihood", "Student-t"),
    (("--paired",), "--paired", "pairs"),
    (("--a-runs", "80.1,81.2"), "--a-summary", "not both"),
])
def test_quick_form_refusals(cli, args, field, words):
    code, out, err = cli("verdict", "--a-summary", "mean=80.3,sd=0.3,n=3", "--b-summary",
                         "mean=80.9,sd=0.25,n=3", *args)
    assert code == 2
    assert f"'{field}'" in err and words in err and len(err.strip().splitlines()) == 1


def test_quick_table_one_arm_missing():
    # the decision layer names the plain field; the verdict command spells it --b-summary
    with pytest.raises(InputError, match="give B as a summary or as runs") as exc:
        quick_table("mean=80,sd=1,n=3", None, None, None)
    assert exc.value.field == "b_summary"


def test_summary_key_errors_name_the_option_on_the_command_line(cli):
    # a summary's key keeps its name after the option: 'a_summary n' is typed as --a-summary
    code, out, err = cli("verdict", "--a-summary", "mean=80,sd=1", "--b-summary",
                         "mean=80.9,sd=0.25,n=3")
    assert code == 2 and out == ""
    assert err.strip() == ("planner: error: field '--a-summary n': a summary needs n, the "
                           "number of runs (e.g. mean=80.3,sd=0.3,n=3)")


def test_summary_with_a_file_refused(cli, runs_csv):
    code, out, err = cli("verdict", runs_csv, "--a", "x", "--b", "y", "--a-summary",
                         "mean=80,sd=1,n=3")
    assert code == 2 and "mean, sd, n columns" in err


def test_student_t_refused_for_table_summaries(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("config,mean,sd,n\nA,80.3,0.3,3\nB,80.9,0.3,3\n")
    with pytest.raises(InputError, match="Student-t likelihood depends on every run"):
        summary_notes(read_runs(p), "A", "B", "student-t")
