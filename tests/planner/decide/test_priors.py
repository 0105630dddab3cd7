"""The noise-prior hierarchy, stated noise and the verdict cases that hinge on the prior."""

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
import math

import pytest

from models.stats.noise import platform_prior
from models.stats.noise_hierarchy import WIDE, load_hierarchy, metric_family
from planner.errors import InputError
from planner.decide.priors import build_hierarchy, parse_cv, resolve_prior, stated_prior
from planner.io.rows import Run
from planner.io.runs import read_runs
from planner.io.table import RunsTable
from planner.decide.verdict import verdict


def test_metric_families():
    assert metric_family("probe_wall") == metric_family("probe_slope") == "probe"
    assert metric_family("decode_wall") == "decode_wall"


def test_known_cell_uses_its_own_prior_unseen_workload_borrows_with_fewer_df():
    own = resolve_prior(None, "local-a10g", "probe_wall", "probe-single-stream")
    assert own.level == "cell" and own.n_cells >= 10 and own.n_runs > own.n_cells
    borrowed = resolve_prior(None, "local-a10g", "probe_wall", "probe-36tps-short")
    assert borrowed.level == "family" and borrowed.notes
    assert borrowed.prior.sigma.df < own.prior.sigma.df
    new_family = resolve_prior(None, "local-a10g", "ttft", "128x512")
    assert new_family.level == "platform"
    # its spread is the platform's, widened: more prior mass above 1 %
    assert new_family.prior.sigma.ppf(0.95) > own.prior.sigma.ppf(0.95)


def test_no_metric_gives_the_embedded_platform_prior_unchanged():
    pr, label = resolve_prior("auto", "hf-a10g-small")
    assert pr == platform_prior("hf-a10g-small") and label == "platform:hf-a10g-small"
    assert resolve_prior("local-a10g", None).prior == platform_prior("local-a10g")


@pytest.mark.parametrize("platform", [None, "", "h100-sxm", "rtx-4090"])
def test_unknown_platform_never_borrows_another_platforms_prior(platform):
    # the population prior over platforms (issue 20), named as such; never a known platform's
    ch = resolve_prior(None, platform, "decode_wall", "128x512")
    assert ch.level == "unknown-platform" and ch.prior.name == "population"
    assert ch.prior.joint is not None and ch.label == "population"
    assert "population prior over platforms was used" in ch.notes[0]
    assert ch.prior != platform_prior("local-a10g") and ch.prior != platform_prior("hf-a10g-small")
    q05, q95 = WIDE.sigma.ppf(0.05), WIDE.sigma.ppf(0.95)
    assert q05 == pytest.approx(3e-4, rel=0.05) and q95 == pytest.approx(0.20, rel=0.05)


def test_hf_prior_widened_off_the_cell_it_was_measured_on():
    same = resolve_prior(None, "hf-job-a10g-small", "bench_serving", "128x512 public")
    other = resolve_prior(None, "hf-a10g-small", "decode_wall", "8x512")
    assert same.level == "cell" and other.level == "platform"
    assert other.prior.tau.df < same.prior.tau.df


def test_shipped_hierarchy_is_reproducible(runs_csv):
    stored = load_hierarchy().to_dict()
    fresh = build_hierarchy(read_runs(runs_csv), source="examples/runs/tps_runs.csv").to_dict()
    assert stored["nodes"].keys() == fresh["nodes"].keys()
    for k, node in stored["nodes"].items():
        assert node["n_cells"] == fresh["nodes"][k]["n_cells"]
        assert node["prior"]["scale"] == pytest.approx(fresh["nodes"][k]["prior"]["scale"],
                                                       rel=1e-3)


def test_parse_cv_and_stated_priors():
    assert parse_cv("2%") == (pytest.approx(math.sqrt(math.log1p(0.02**2))), 50.0)
    assert parse_cv("0.02:20") == (pytest.approx(math.sqrt(math.log1p(0.02**2))), 20.0)
    for bad in ("abc", "0", "-1%", "150%", "2%:x", "2%:0"):
        with pytest.raises(InputError) as e:
            parse_cv(bad)
        assert e.value.field == "cv"
    pr = stated_prior(aa_runs="100,101,99.5")
    assert pr.sigma.df == 2 and pr.sigma.scale == pytest.approx(0.00764, rel=0.01)
    with pytest.raises(InputError):
        stated_prior(cv="1%", aa_runs="1,2")
    with pytest.raises(InputError):
        stated_prior(aa_runs="100")
    # a known platform keeps its tau when only the run-to-run noise is stated
    ch = resolve_prior(None, "hf-a10g-small", "bench_serving", "128x512 public", cv="1%")
    assert ch.level == "stated" and ch.prior.tau == platform_prior("hf-a10g-small").tau
    with pytest.raises(InputError):
        resolve_prior("weak", None, cv="1%")


def test_prior_file_errors_name_the_file(tmp_path):
    p = tmp_path / "p.json"
    p.write_text('{"tau": {"kind": "inv_chi2"}}')
    with pytest.raises(InputError) as e:
        resolve_prior(str(p), None)
    assert e.value.file == str(p) and e.value.field == "tau.scale"  # its scale is missing
    p.write_text('{"tau": {"kind": "inv_chi2", "scale": 0.003, "df": 10}}')
    with pytest.raises(InputError) as e:
        resolve_prior(str(p), None)
    assert e.value.file == str(p) and e.value.field == "sigma"


def _probe_table(reps):
    rows = [("A", 36.54), ("B", 36.43), ("B", 36.87)]
    return RunsTable([Run(config=c, tps=x, instance="local-gpu-a", rep=r, platform="local-a10g",
                          metric="probe_wall", workload="probe-single-stream", run_group="g",
                          line=k + 1) for k, ((c, x), r) in enumerate(zip(rows, reps))], "<t>")


def test_probe_wall_case_is_undecided_with_the_probe_prior():
    """A = 36.54 vs B = 36.43, 36.87 on local-a10g probe_wall: the probe
    cell's prior lets B's 1.2 % spread count as noise. (With reps given, B's rep 0 is
    taken as cold and its spread is absorbed by the cold term.)"""
    ch = resolve_prior(None, "local-a10g", "probe_wall", "probe-single-stream")
    r = verdict(_probe_table([None, None, None]), "A", "B", prior=ch.prior,
                prior_label=ch.label, prior_info=ch.to_dict()).to_dict()
    assert r["label"] == "undecided"
    assert r["prior"]["level"] == "cell" and r["prior"]["cell"].startswith("local-a10g/probe")


def test_quick_form_without_platform_is_undecided_and_says_why(cli):
    code, out, err = cli("verdict", "--a-runs", "80.1,80.2,80.7", "--b-runs", "78.4", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["label"] == "undecided"
    assert r["prior"]["level"] == "unknown-platform"
    assert any("no platform given" in n for n in r["notes"])
    assert r["classical"]["z_test"]["z"] is None  # its sigma is an HF a10g-small number


def test_stated_20_percent_cv_fits_with_passing_diagnostics(cli):
    code, out, err = cli("verdict", "--a-runs", "80.1,80.2,80.7", "--b-runs", "78.4",
                         "--cv", "20%", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["diagnostics"]["ok"] and r["label"] == "undecided"
    assert r["prior"]["level"] == "stated"
    code, out, err = cli("verdict", "--a-runs", "80.1,80.2,80.7", "--b-runs", "78.4",
                         "--cv", "50%", "--json")
    assert code == 0 and json.loads(out)["diagnostics"]["ok"]


def test_a_prior_file_is_checked_for_what_it_is(cli, tmp_path):
    """New-user report: a saved verdict was taken as a prior (its 'prior' section), and a
    typo'd key ('tua') was ignored."""
    code, out, _ = cli("verdict", "--a", "308.49", "--b", "308.05", "--json")
    v = tmp_path / "v.json"
    v.write_text(out, encoding="utf-8")
    code, _, err = cli("verdict", "--a-runs", "308.1,307.9", "--b-runs", "309,309.4",
                       "--prior", v)
    assert code == 2 and "field 'schema'" in err and "saved 'verdict' result" in err
    good = json.loads((ROOT / "models" / "data" / "noise_priors.json").read_text())["local-a10g"]
    for bad, field in (({**{k: v for k, v in good.items() if k != "tau"}, "tua": good["tau"]},
                        "tua"),
                       ({**good, "sigma": {**good["sigma"], "dof": 3}}, "sigma.dof")):
        p = tmp_path / f"{field}.json"
        p.write_text(json.dumps(bad), encoding="utf-8")
        code, _, err = cli("verdict", "--a-runs", "308.1,307.9", "--b-runs", "309,309.4",
                           "--prior", p)
        assert code == 2 and f"field '{field}'" in err and "unknown key" in err
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps({"schema": "spec-planner/noise-prior/1", "prior": good}))
    code, _, err = cli("verdict", "--a-runs", "308.1,307.9", "--b-runs", "309,309.4",
                       "--prior", ok)
    assert code == 0, err
