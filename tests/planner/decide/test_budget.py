"""``planner budget``: plan reading, allocation, renderers and bad input."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest

from planner.decide.budget import BudgetPlan, plan_budget, read_plan
from planner.cli import main
from planner.errors import InputError
from planner.decide.knapsack import allocate, knapsack
from planner.results.repeat_plan import DesignRow, Reason, RepeatPlan

ROOT = Path(__file__).resolve().parents[3]
FIX = Path(__file__).resolve().parents[2] / "fixtures"
EXAMPLE = ROOT / "examples" / "plan.toml"
#: Plumbing tests (reading, allocation, renderers): few simulations; the statistical numbers
#: are tested in test_assurance.py / test_repeats_cli.py.
SIMS = 200


def _run(argv, capsys):
    """Run the CLI in-process; return (exit code, stdout, stderr)."""
    code = 0
    try:
        main(argv)
    except SystemExit as exc:
        code = exc.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def example_result():
    return plan_budget(read_plan(EXAMPLE), sims=SIMS, seed=0).to_dict()


# ---------------------------------------------------------------------------- reading

def test_example_plan_reads():
    plan = read_plan(EXAMPLE)
    assert len(plan.comparisons) == 10
    assert plan.budget.total_usd == 15.0 and plan.budget.assurance == 0.8
    names = [c.name for c in plan.comparisons]
    for claim in ("pingpong3", "centroid96", "warmproxy", "pingpong4", "spec8"):
        assert claim in names
    spec8 = plan.comparisons[names.index("spec8")]
    assert spec8.delta_tps == -5.82
    # line numbers point at the [[comparison]] header and the fields
    text = EXAMPLE.read_text().splitlines()
    assert text[spec8.line - 1].strip() == "[[comparison]]"
    assert text[spec8.lines["delta_tps"] - 1].startswith("delta_tps")


def test_csv_plan_with_cli_budget():
    plan = read_plan(FIX / "plan_small.csv", overrides={"total_usd": 10.0, "assurance": 0.7})
    assert [c.name for c in plan.comparisons] == ["spec8", "pingpong4", "sdpa"]
    assert plan.comparisons[2].delta_pct == 0.6 and plan.comparisons[2].delta_sd == 0.3
    assert plan.budget.total_usd == 10.0 and plan.budget.assurance == 0.7


def test_overrides_replace_file_budget():
    plan = read_plan(EXAMPLE, overrides={"total_usd": 3.0, "max_runs": None})
    assert plan.budget.total_usd == 3.0


# ---------------------------------------------------------------------------- allocation

def test_knapsack_matches_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(1, 8))
        v = rng.random(n).tolist()
        w = rng.integers(0, 25, n).tolist()
        cap = int(rng.integers(0, 60))
        ch = knapsack(v, w, cap)
        assert sum(w[i] for i in ch) <= cap
        best = max(sum(v[i] for i in s) for r in range(n + 1)
                   for s in itertools.combinations(range(n), r) if sum(w[i] for i in s) <= cap)
        assert sum(v[i] for i in ch) == pytest.approx(best, abs=1e-6)


def test_knapsack_tie_goes_to_cheaper_set():
    assert knapsack([0.5, 0.5], [10, 3], 10) in ([1], [0])
    assert knapsack([0.5, 0.5], [10, 3], 10) == [1]


def _buy(a, cost, runs=2):
    return {"design": "paired", "runs_per_arm": runs, "assurance": a, "cost_usd": cost,
            "gpu_hours": cost}


def test_allocate_maximises_decisive_verdicts_per_budget():
    items = [_buy(0.9, 5.0), _buy(0.8, 2.0), _buy(0.8, 2.5), None]
    assert allocate(items, total_usd=5.0)["bought"] == [1, 2]   # 1.6 > 0.9
    assert allocate(items, total_usd=10.0)["bought"] == [0, 1, 2]
    assert allocate(items, total_usd=1.0)["bought"] == []
    # a run budget: 2 runs per arm = 4 runs each
    r = allocate(items, max_runs=8)
    assert len(r["bought"]) == 2 and r["unit"] == "runs"
    # both limits: the dollar choice [0, 1, 2] (12 runs) loses the worst value per $ (0)
    assert allocate(items, total_usd=10.0, max_runs=8)["bought"] == [1, 2]


def test_example_result_is_consistent(example_result):
    r = example_result
    assert r["schema"] == "spec-planner/budget/1" and r["command"] == "budget"
    assert len(r["comparisons"]) == 10
    bought = [c for c in r["comparisons"] if c["status"] == "buy"]
    t = r["totals"]
    assert t["bought"] == len(bought) >= 1
    assert t["cost_usd"] == pytest.approx(sum(c["recommended"]["cost_usd"] for c in bought))
    assert t["cost_usd"] <= r["budget"]["total_usd"] + 1e-9
    assert t["expected_decisive"] == pytest.approx(
        sum(c["recommended"]["assurance"] for c in bought))
    assert set(r["not_worth_buying"]) == {c["name"] for c in r["comparisons"]
                                          if c["status"] != "buy"}
    for c in r["comparisons"]:
        assert c["status"] in ("buy", "over budget", "unreachable")
        if c["status"] == "unreachable":
            assert c["recommended"] is None
        else:
            assert c["recommended"]["assurance"] >= 0.8 - 1e-9
        assert c["designs"] and all("curve" in e for e in c["designs"])
    # the big, certain effect is bought; its expected delta is the claim
    spec8 = next(c for c in r["comparisons"] if c["name"] == "spec8")
    assert spec8["status"] == "buy"
    assert spec8["delta"]["mean_tps"] == pytest.approx(-5.82, abs=0.3)


def test_bigger_budget_buys_at_least_as_much(example_result):
    plan = read_plan(EXAMPLE, overrides={"total_usd": 1000.0})
    r = plan_budget(plan, sims=SIMS, seed=0).to_dict()
    assert r["totals"]["bought"] >= example_result["totals"]["bought"]
    assert all(c["status"] in ("buy", "unreachable") for c in r["comparisons"])


def test_seed_reproducible():
    plan = read_plan(FIX / "plan_small.csv", overrides={"total_usd": 10.0})
    a = plan_budget(plan, sims=SIMS, seed=5)
    b = plan_budget(plan, sims=SIMS, seed=5)
    assert a.elapsed_s is not None and "elapsed_s" not in a.to_dict()
    assert json.dumps(a.to_dict(), default=str) == json.dumps(b.to_dict(), default=str)


def test_projection_delta():
    r = plan_budget(read_plan(FIX / "plan_projection.toml"), sims=SIMS, seed=0).to_dict()
    c = r["comparisons"][0]
    assert c["delta"]["source"] == "projection"
    draft = json.loads((FIX / "plan_draft.json").read_text())
    pld = next(p for p in draft["policies"] if p["policy"] == "pld")
    expect = (pld["speedup_vs_baseline"]["point"] - 1) * 308.0
    assert c["delta"]["mean_tps"] == pytest.approx(expect, rel=0.05)
    assert c["delta"]["sd_tps"] > 0


def _row(design, n, a, *, layout=None, fc=0.01, cost=1.0, minimal=False, target=0.8):
    return DesignRow(design=design, runs_per_arm=n, runs_per_instance=None,
                     pairs_per_instance=None, instances=n, assurance=a, assurance_se=0.01,
                     false_claim_rate=fc, false_claim_rate_se=0.01, wrong_sign_rate=0.0,
                     gpu_hours=cost, cost_usd=cost, meets_target=a >= target,
                     false_claim_ok=fc <= 0.05, minimal=minimal, layout=layout)


def test_design_curves_one_entry_per_design_and_layout():
    rows = [_row("separate", 4, 0.5, cost=2.0), _row("separate", 2, 0.3, cost=1.0),
            _row("separate", 6, 0.85, cost=3.0, minimal=True),
            _row("sequential", 3.0, 0.9, layout="separate", fc=0.156, cost=0.27),
            _row("sequential", 2.5, 0.85, layout="paired", fc=0.045, cost=0.18)]
    rp = RepeatPlan(inputs={"target": 0.8}, effect={}, designs=rows, recommended=rows[4],
                    reason=Reason("recommended", "cheapest"))
    entries, rec = rp.design_curves()
    assert [e["label"] for e in entries] == ["separate", "sequential (separate)",
                                             "sequential (paired)"]
    # the separate entry is its minimal row; its curve is every row, by runs per arm
    assert entries[0]["runs_per_arm"] == 6 and entries[0]["reaches_target"] is True
    assert entries[0]["curve"]["runs_per_arm"] == [2, 4, 6]
    assert entries[0]["curve"]["assurance"] == [0.3, 0.5, 0.85]
    # the recommended entry is the recommended row, never another row of the design
    assert rec is entries[2] and rec["false_claim_rate"] == 0.045
    assert entries[1]["false_claim_ok"] is False


# ---------------------------------------------------------------------------- CLI + renderers

def test_cli_terminal_md_html_json(tmp_path, capsys):
    md, html = tmp_path / "b.md", tmp_path / "b.html"
    code, out, err = _run(["budget", str(EXAMPLE), "--sims", str(SIMS), "--md", str(md),
                           "--html", str(html)], capsys)
    assert code == 0, err
    assert "pingpong3" in out and "totals" in out and "not worth buying" in out
    mdt = md.read_text()
    assert mdt.startswith("# ") and "| spec8 |" in mdt and "Allocation rule" in mdt
    h = html.read_text()
    assert h.startswith("<!DOCTYPE html>")
    # self-contained: no external resources, every image inline
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", h)
    srcs = re.findall(r'<img src="([^"]+)"', h)
    assert len(srcs) == 1 + 3 * 10
    assert all(s.startswith("data:image/png;base64,") for s in srcs)
    code, out, err = _run(["budget", str(EXAMPLE), "--sims", "100", "--json"], capsys)
    assert code == 0
    r = json.loads(out)
    assert r["schema"] == "spec-planner/budget/1" and len(r["comparisons"]) == 10


def test_verdict_html_with_and_without_delta_curve(tmp_path, capsys):
    from planner.report.render import render_html

    f = tmp_path / "v.html"
    code, out, err = _run(["verdict", "--a", "308.49", "--b", "308.05", "--json", "--html",
                           str(f)], capsys)
    assert code == 0, err
    r = json.loads(out)
    h = f.read_text()
    # two plots: the posterior of the difference and the runs themselves
    assert "Verdict" in h and h.count("<img src=\"data:image/png;base64,") == 2
    xs = np.linspace(-1, 1, 200)
    r = {k: v for k, v in r.items() if k != "runs"}
    r2 = {**r, "delta_curve": {"delta_pct": xs.tolist(),
                               "density": np.exp(-xs ** 2 / 0.1).tolist()}}
    assert render_html(r2).count("data:image/png;base64,") == 1


def test_repeats_renderers_work_from_a_saved_json():
    """A saved ``repeats --json`` reads back to the same result and renders (HTML, Markdown)."""
    from planner.decide.priors import resolve_prior
    from planner.decide.repeats import plan_repeats
    from planner.report.render import render_html
    from planner.report.output import to_json
    from planner.report.views.repeats import render_markdown

    prior, _ = resolve_prior("hf-a10g-small", "hf-a10g-small")
    rp = plan_repeats(5.0, prior=prior, designs=("separate", "paired"), max_runs=6, sims=200)
    saved = json.loads(to_json(rp.to_dict()))
    back = RepeatPlan.from_dict(saved)
    assert back.to_dict() == saved and back.reason.code == rp.reason.code == "recommended"
    assert back.recommended == rp.recommended and back.recommended in back.designs
    h = render_html(saved)
    assert h.count("data:image/png;base64,") == 2 and "separate" in h
    assert "Recommended" in render_markdown(saved)


# ---------------------------------------------------------------------------- bad input

def _digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.mark.parametrize("name, line, field, words", [
    ("plan_unknown_config.toml", 16, "candidate", ["K=88", "not in the runs table",
                                                   "comparison #2 'typo'"]),
    ("plan_missing_field.toml", 10, "delta_tps", ["comparison #2 'no-delta'",
                                                  "expected delta"]),
    ("plan_tiny_budget.toml", 2, "budget.total_usd", ["smaller than one run"]),
    ("plan_bad_assurance.toml", 3, "budget.assurance", ["(0, 1)"]),
    ("plan_bad.csv", 3, "candidate", ["comparison #2 'broken'", "missing"]),
])
def test_bad_plans_exit_2_one_line(name, line, field, words, capsys):
    path = FIX / name
    before = _digest(path)
    argv = ["budget", str(path), "--sims", "200"]
    if name.endswith(".csv"):
        argv += ["--total-usd", "10"]
    code, out, err = _run(argv, capsys)
    assert code == 2
    assert "Traceback" not in err and err.count("\n") == 1
    assert f"{path}:{line}" in err, err
    assert f"field '{field}'" in err, err
    for w in words:
        assert w in err, err
    assert _digest(path) == before


def test_bad_options(capsys):
    code, _, err = _run(["budget", str(EXAMPLE), "--assurance", "0"], capsys)
    assert code == 2 and "--assurance" in err
    code, _, err = _run(["budget", str(FIX / "plan_small.csv")], capsys)
    assert code == 2 and "no budget" in err


@pytest.mark.parametrize("text, field", [
    ("[budget]\ntotal_usd = 5\n[[comparison]]\nname='x'\nbaseline='a'\ncandidate='b'\n"
     "delta_tps=1\ndelta_tsp=2\n", "delta_tsp"),
    ("[budget]\ntotal_usd = 5\n[[comparison]]\nname='x'\nbaseline='a'\ncandidate='a'\n"
     "delta_tps=1\n", "candidate"),
    ("[budget]\ntotal_usd = 5\n[[comparison]]\nname='x'\nbaseline='a'\ncandidate='b'\n"
     "delta_tps=1\ndelta_pct=2\n", "delta_pct"),
    ("[budget]\n[[comparison]]\nname='x'\nbaseline='a'\ncandidate='b'\ndelta_tps=1\n",
     "budget.total_usd"),
    ("[budget]\ntotal_usd = 5\n[[comparison]]\nname='x'\nbaseline='a'\ncandidate='b'\n"
     "delta_tps='big'\n", "delta_tps"),
    ("[budget]\ntotal_usd = 5\n[[comparison]]\nname='x'\nbaseline='a'\ncandidate='b'\n"
     "delta_tps=1\n[[comparison]]\nname='x'\nbaseline='a'\ncandidate='c'\ndelta_tps=1\n",
     "name"),
])
def test_read_plan_errors_name_field(tmp_path, text, field):
    p = tmp_path / "p.toml"
    p.write_text(text)
    with pytest.raises(InputError) as ei:
        read_plan(p)
    assert ei.value.field == field and ei.value.file == str(p) and ei.value.line is not None


def test_invalid_toml_names_line(tmp_path):
    p = tmp_path / "p.toml"
    p.write_text("[budget]\ntotal_usd = = 5\n")
    with pytest.raises(InputError) as ei:
        read_plan(p)
    assert ei.value.line == 2


# ---------------------------------------------------------------------------- user reports

_ONE = ("[plan]\nplatform = \"hf-a10g-small\"\nbaseline_tps = 308.0\n[budget]\ntotal_usd = 5.0\n"
        "assurance = 0.8\nmax_runs_per_arm = 12\n[[comparison]]\nname = \"spec8\"\n"
        "baseline = \"base\"\ncandidate = \"spec8\"\n")


def _plan(tmp_path, text, name="p.toml", encoding="utf-8"):
    p = tmp_path / name
    p.write_text(text, encoding=encoding)
    return p


@pytest.mark.parametrize("delta", ["delta_tps = 30", "delta_tps = 60", "delta_pct = 500"])
def test_budget_buys_what_repeats_recommends(tmp_path, delta):
    """A design breaking the 5 % false-claim limit is never bought; the purchase is the row
    plan_repeats recommends (here a paired design, not 'sequential' separate at fc 0.16)."""
    from planner.decide.priors import resolve_prior
    from planner.decide.repeats import plan_repeats

    r = plan_budget(read_plan(_plan(tmp_path, _ONE + delta + "\n")), sims=2000,
                    seed=0).to_dict()
    c = r["comparisons"][0]
    rec = c["recommended"]
    assert c["status"] == "buy" and rec is not None
    assert rec["false_claim_rate"] <= 0.05 and rec.get("false_claim_ok") is not False
    prior, label = resolve_prior("hf-a10g-small", "hf-a10g-small")
    d = c["delta"]["mean_tps"]
    ref = plan_repeats(d, baseline_tps=308.0, prior=prior, target=0.8, max_runs=12,
                       sims=2000, seed=0, search_beyond_cap=False).recommended
    assert (rec["design"], rec.get("layout"), rec["cost_usd"]) == \
        (ref.design, ref.layout, pytest.approx(ref.cost_usd))
    assert r["totals"]["expected_false_claims"] <= 0.05


def test_nothing_to_buy_is_never_bought():
    assert allocate([None, None], total_usd=5.0)["bought"] == []


@pytest.mark.parametrize("text, line, field", [
    (_ONE.replace("hf-a10g-small", "hf-a10g-smal") + "delta_tps = 5\n", 2, "platform"),
    (_ONE + "delta_tps = 5\nplatform = \"mars\"\n", 13, "platform"),
    (_ONE.replace("[plan]\n", "[plan]\nprior = \"weak\"\n") + "delta_tps = 5\n", 2, "prior"),
    (_ONE + "delta_tps = 5\nprior = \"none\"\n", 13, "prior"),
])
def test_unknown_platform_and_weak_prior_refused(tmp_path, capsys, text, line, field):
    p = _plan(tmp_path, text)
    with pytest.raises(InputError) as ei:
        read_plan(p)
    assert (ei.value.line, ei.value.field, ei.value.file) == (line, field, str(p))
    code, out, err = _run(["budget", str(p)], capsys)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"{p}:{line}" in err and f"field '{field}'" in err


def test_bom_plans_read(tmp_path):
    t = read_plan(_plan(tmp_path, _ONE + "delta_tps = 5\n", encoding="utf-8-sig"))
    assert t.comparisons[0].delta_tps == 5.0
    c = read_plan(_plan(tmp_path, "name,baseline,candidate,delta_tps\nx,a,b,3\n", "p.csv",
                        encoding="utf-8-sig"), overrides={"total_usd": 5.0})
    assert c.comparisons[0].name == "x" and c.comparisons[0].delta_tps == 3.0


def test_cli_budget_values_name_the_option(tmp_path, capsys):
    p = _plan(tmp_path, _ONE + "delta_tps = 5\n")
    for argv, opt in ((["--max-runs", "0"], "--max-runs"), (["--max-runs", "1"], "--max-runs"),
                      (["--total-usd", "-1"], "--total-usd"),
                      (["--price-per-hour", "0"], "--price-per-hour")):
        code, out, err = _run(["budget", str(p), *argv], capsys)
        assert code == 2 and err.count("\n") == 1, err
        assert f"field '{opt}'" in err and f"{p}:" not in err, err


def test_plan_errors_name_plan_fields_and_their_lines(tmp_path):
    p = _plan(tmp_path, _ONE.replace("baseline_tps = 308.0\n", "baseline_tps = 308.0\n"
                                     "rule = \"foo\"\n") + "delta_tps = 5\n")
    with pytest.raises(InputError) as ei:
        plan_budget(read_plan(p), sims=SIMS)
    assert (ei.value.field, ei.value.line) == ("rule", 4)
    p = _plan(tmp_path, _ONE + "rule = \"superiority\"\ndelta_tps = -5\n")
    with pytest.raises(InputError) as ei:
        plan_budget(read_plan(p), sims=SIMS)
    assert (ei.value.field, ei.value.line) == ("delta_tps", 13)
    p = _plan(tmp_path, _ONE + "\ndelta_tps = -400\n")
    with pytest.raises(InputError) as ei:
        plan_budget(read_plan(p), sims=SIMS)
    assert (ei.value.field, ei.value.line) == ("delta_tps", 13)


def test_one_run_uses_the_sizing_cost_model(tmp_path, capsys):
    p = _plan(tmp_path, _ONE + "delta_tps = 5\n")
    code, out, err = _run(["budget", str(p), "--total-usd", "0.10"], capsys)
    assert code == 2 and "smaller than one run ($0.13" in err and "field '--total-usd'" in err
    code, out, err = _run(["budget", str(p), "--total-usd", "0.14", "--sims", "200",
                           "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["budget"]["one_run_usd"] == pytest.approx(8 / 60)


def test_sequential_purchase_reports_worst_case(tmp_path):
    from planner.report.views.budget import render_markdown

    p = _plan(tmp_path, _ONE.replace("total_usd = 5.0", "total_usd = 1.0") + "delta_tps = 60\n")
    r = plan_budget(read_plan(p), sims=2000, seed=0).to_dict()
    rec = r["comparisons"][0]["recommended"]
    assert rec["design"] == "sequential"
    assert rec["worst_case_cost_usd"] == pytest.approx(rec["max_cost_usd"])
    assert rec["worst_case_cost_usd"] > rec["cost_usd"]
    t = r["totals"]
    assert t["worst_case_cost_usd"] == pytest.approx(rec["worst_case_cost_usd"])
    assert t["worst_case_exceeds_budget"] is True and t["worst_case_exceeds"] == ["total_usd"]
    md = render_markdown(r)
    assert f"sequential ({rec['layout']})" in md and f"${rec['worst_case_cost_usd']:.2f}" in md
    assert "EXCEEDS the budget" in md


def test_budget_cli_options_and_help(tmp_path, capsys):
    p = _plan(tmp_path, _ONE + "delta_tps = 5\n")
    before = _digest(p)
    for argv, words in ((["--seed", "-1"], ["--seed"]),
                        (["--sims", "5000000"], ["field '--sims'", "100,000"]),
                        (["--html", str(p)], ["field '--html'", "over an input"]),
                        (["--md", str(p)], ["field '--md'", "over an input"])):
        code, out, err = _run(["budget", str(p), *argv], capsys)
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
        assert all(w in err for w in words), err
    assert _digest(p) == before
    code, out, err = _run(["budget", "--help"], capsys)
    assert code == 0
    text = " ".join(out.split())
    assert "[budget] table" in text and "[[comparison]]" in text and "PLAN" in text
    assert "( + [])" not in text and "overrides  total_usd" not in text


def test_budget_renders_from_a_saved_json(tmp_path, capsys):
    """The terminal, Markdown and HTML views need only the saved JSON (no ``elapsed_s``)."""
    from planner.report.views.budget import render_markdown, render_terminal
    from planner.report.render import render_html
    from planner.report.output import to_json

    p = _plan(tmp_path, _ONE + "delta_tps = 5\n")
    res = plan_budget(read_plan(p), sims=SIMS, seed=0)
    saved = json.loads(to_json(res.to_dict()))
    assert "elapsed_s" not in saved and BudgetPlan.from_dict(saved).to_dict() == saved
    render_terminal(saved)
    out = capsys.readouterr().out
    assert "spec8" in out and " s\n" not in out.split("sizing:")[1].splitlines()[0]
    render_terminal(saved, elapsed_s=1.25)
    assert "1.2 s" in capsys.readouterr().out
    assert "| spec8 |" in render_markdown(saved)
    assert render_html(saved).startswith("<!DOCTYPE html>")


def test_comparisons_priced_by_their_platform(tmp_path):
    """A comparison on local-a10g is priced by the local cost model (2 min start-up, 2.5 min
    per run, not billed per minute), as 'planner repeats --platform local-a10g' prices it."""
    from planner.decide.costs import cost_model
    from planner.decide.priors import resolve_prior
    from planner.decide.repeats import plan_repeats

    text = _ONE.replace("total_usd = 5.0\n", "total_usd = 5.0\nprice_per_hour = 1.0\n")
    p = _plan(tmp_path, text + "delta_tps = 20\nplatform = \"local-a10g\"\n")
    r = plan_budget(read_plan(p), sims=SIMS, seed=0).to_dict()
    c = r["comparisons"][0]
    prior, label = resolve_prior("local-a10g", "local-a10g")
    ref = plan_repeats(20.0, baseline_tps=308.0, prior=prior, target=0.8, max_runs=12,
                       sims=SIMS, seed=0, search_beyond_cap=False,
                       cost=cost_model("local-a10g", price_per_hour=1.0))
    assert c["recommended"]["cost_usd"] == pytest.approx(ref.recommended.cost_usd)
    # without a price in the plan the platform's own price applies (local: $0)
    r0 = plan_budget(read_plan(_plan(tmp_path, _ONE + "delta_tps = 20\nplatform = "
                                     "\"local-a10g\"\n", "p0.toml")), sims=SIMS, seed=0)
    assert r0.comparisons[0]["recommended"]["cost_usd"] == 0.0
    n = ref.recommended
    if n.design == "separate":   # one allocation per run: 2 + 2.5 min each, at $1/h
        assert n.cost_usd == pytest.approx(2 * n.runs_per_arm * 4.5 / 60)


def test_repeats_errors_name_plain_fields():
    """The decision layer names its parameters; the plan names its own fields."""
    from planner.decide.priors import resolve_prior
    from planner.decide.repeats import plan_repeats

    prior, _ = resolve_prior("hf-a10g-small", "hf-a10g-small")
    for kw, fld in (({"rule": "bogus"}, "rule"), ({"target": 1.5}, "target"),
                    ({"max_runs": 0}, "max_runs"), ({"designs": ("x",)}, "designs"),
                    ({"max_cost": 0.01}, "max_cost"), ({"sims": 10}, "sims")):
        with pytest.raises(InputError) as ei:
            plan_repeats(1.0, prior=prior, **kw)
        assert ei.value.field == fld and ei.value.file is None


def test_plan_names_with_control_characters_are_refused(tmp_path):
    from planner.errors import InputError

    p = tmp_path / "plan.toml"
    p.write_text('[budget]\ntotal_usd = 100\n\n[[comparison]]\nname = "sp\\u001b[31mec8"\n'
                 'baseline = "a"\ncandidate = "b"\ndelta_tps = 1\n')
    with pytest.raises(InputError) as e:
        read_plan(p)
    msg = e.value.one_line()
    assert msg.startswith(f"{p}:5 field 'name': control character") and "\x1b" not in msg
    q = tmp_path / "plan.csv"
    q.write_text("name,baseline,candidate,delta_tps\nok,a\x1b[2Jx,b,1\n")
    with pytest.raises(InputError) as e:
        read_plan(q, overrides={"total_usd": 100})
    msg = e.value.one_line()
    assert msg.startswith(f"{q}:2 field 'baseline': control character") and "\x1b" not in msg
    t = tmp_path / "plan2.toml"
    t.write_text('title = "x\\u0007"\n[budget]\ntotal_usd = 100\n')
    with pytest.raises(InputError, match="plan.title"):
        read_plan(t)


@pytest.mark.parametrize("designs, ok", [
    ('"separate;paired"', ("separate", "paired")), ('["separate", "paired"]', ("separate", "paired")),
    ('"separate;"', None), ('"separate; paired"', None), ('["separate", " paired"]', None),
    ('["separate", ""]', None), ('"separate,,paired"', None)])
def test_plan_designs_follow_the_design_option_grammar(tmp_path, designs, ok):
    """A plan's designs list follows --design's grammar (planner.io._parse.split_items): no
    blank item, no padding; the error names the file, line and field."""
    p = tmp_path / "plan.toml"
    p.write_text('[budget]\ntotal_usd = 100\n\n[[comparison]]\nname = "c"\nbaseline = "a"\n'
                 f'candidate = "b"\ndelta_tps = 1\ndesigns = {designs}\n')
    if ok:
        assert read_plan(p).comparisons[0].designs == ok
    else:
        with pytest.raises(InputError) as e:
            read_plan(p)
        assert e.value.one_line().startswith(f"{p}:9 field 'designs'")


def test_paired_purchases_carry_their_caveat_and_lone_overruns_their_reason():
    """New-user report: budget bought paired designs without repeats' caveat (sigma within an
    allocation is not measured on HF), and called a comparison whose design alone costs more
    than the whole budget 'left out by the knapsack'."""
    from planner.decide.budget import _set_status
    from planner.io.plan_file import Budget
    from planner.report.views.budget import _paired_note

    def comp(design, status="buy", layout=None):
        return {"status": status, "recommended": {"design": design, "layout": layout}}

    assert _paired_note({"comparisons": [comp("separate"), comp("paired", "over budget")]}) \
        is None
    for c in (comp("paired"), comp("sequential", layout="paired")):
        note = _paired_note({"comparisons": [comp("separate"), c]})
        assert note and "where it is not measured" in note
    items = [{"recommended": {"assurance": 0.9, "cost_usd": 18.33, "runs_per_arm": 10}},
             {"recommended": {"assurance": 0.9, "cost_usd": 4.0, "runs_per_arm": 2}}]
    _set_status(items, [None, None], set(), Budget(total_usd=15.0))
    assert "more than the whole budget ($15)" in items[0]["reason"]
    assert "knapsack" in items[1]["reason"]


@pytest.mark.parametrize("second", [
    'name = "y"\nbaseline = "b"\ncandidate = "a"\ndelta_tps = 5.82\n',   # the arms swapped
    'name = "spec8 "\nbaseline = "a"\ncandidate = "b"\ndelta_tps = -5.82\n',
])
def test_one_ab_question_is_not_bought_twice(tmp_path, second):
    """Two names (or the arms swapped) for one A/B pair on one platform were both bought:
    paid twice and counted as two decisive verdicts."""
    p = tmp_path / "plan.toml"
    p.write_text('[plan]\nplatform = "hf-a10g-small"\nbaseline_tps = 308.0\n'
                 '[budget]\ntotal_usd = 5.0\n'
                 '[[comparison]]\nname = "x"\nbaseline = "a"\ncandidate = "b"\n'
                 'delta_tps = -5.82\n[[comparison]]\n' + second)
    with pytest.raises(InputError) as e:
        read_plan(p)
    assert "compares the same two configs as #1 'x'" in e.value.message
    assert e.value.field == "candidate" and e.value.line is not None


@pytest.mark.parametrize("text, needle", [
    ("name,baseline,candidate,delta_tps\nspec8,a,b,-5.82,extra\n", ":2: 5 cells for 4 columns"),
    ("name,name,baseline,candidate,delta_tps\nx,y,a,b,-5.82\n",
     ":1 field 'name': column 'name' appears twice in the header"),
])
def test_a_csv_plan_with_a_ragged_row_or_a_repeated_column_is_refused(tmp_path, text, needle):
    """An extra cell was dropped and a repeated column kept its last value, silently."""
    p = tmp_path / "plan.csv"
    p.write_text(text)
    with pytest.raises(InputError) as e:
        read_plan(p, overrides={"total_usd": 5.0})
    assert needle in e.value.one_line()


@pytest.mark.parametrize("edit, needle", [
    ({"sd": -1.0}, "speedup_vs_baseline.sd -1.0 is not in [0, 100]"),
    ({"point": float("nan")}, "speedup_vs_baseline.point nan is not a ratio in (0, 100]"),
    ({"point": "abc"}, "holds a value that is not a number"),
])
def test_a_corrupt_projection_is_refused(tmp_path, edit, needle):
    """A saved draft result edited to sd -1 or a NaN speed-up was read as is ('x1.100±-1.000')."""
    import shutil

    fixtures = Path(__file__).resolve().parents[2] / "fixtures"
    shutil.copy(fixtures / "plan_projection.toml", tmp_path / "plan.toml")
    d = json.loads((fixtures / "plan_draft.json").read_text())
    for p in d["policies"]:
        if p.get("label", "").startswith("pld"):
            p["speedup_vs_baseline"].update(edit)
    (tmp_path / "plan_draft.json").write_text(json.dumps(d))
    with pytest.raises(InputError) as e:
        plan_budget(read_plan(tmp_path / "plan.toml"), sims=200)
    assert needle in e.value.message and e.value.field == "projection"


def test_a_dollar_budget_on_owned_hardware_is_said_to_limit_nothing(tmp_path, cli):
    p = tmp_path / "own.toml"
    p.write_text('[plan]\nplatform = "local-a10g"\nbaseline_tps = 300\n[budget]\n'
                 'total_usd = 1.0\n[[comparison]]\nname = "x"\nbaseline = "a"\n'
                 'candidate = "b"\ndelta_tps = 3\n')
    code, out, err = cli("budget", p, "--sims", "200")
    assert code == 0, err
    assert "a dollar budget limits nothing at $0/h: set max_runs" in " ".join(out.split())


def test_a_plan_without_a_budget_names_the_option(tmp_path, cli):
    """A CSV plan has no [budget] table: the error names --total-usd too."""
    p = tmp_path / "plan.csv"
    p.write_text("name,baseline,candidate,delta_tps\nx,a,b,3\n")
    code, out, err = cli("budget", p, "--sims", "200")
    assert code == 2 and "(--total-usd)" in err


def test_names_outside_the_font_print_no_warnings(tmp_path, cli):
    """A CJK or emoji comparison name drew boxes and printed one matplotlib warning per
    glyph on stderr."""
    p = tmp_path / "uni.toml"
    p.write_text('[plan]\nplatform = "hf-a10g-small"\nbaseline_tps = 300\n[budget]\n'
                 'total_usd = 5.0\n[[comparison]]\nname = "スペック8 🚀"\nbaseline = "a"\n'
                 'candidate = "b"\ndelta_tps = 3\n', encoding="utf-8")
    import warnings

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        code, out, err = cli("budget", p, "--sims", "200", "--html", tmp_path / "u.html")
    assert code == 0
    assert not [w for w in seen if "Glyph" in str(w.message)]


# ---------------------------------------------------------------------------- wording

def test_a_run_budget_is_named_where_it_binds():
    """New-user report: with --max-runs 10 the reasons said the budget 'buys more decisive
    verdicts elsewhere' and the totals named only dollars, while the run cap decided."""
    plan = read_plan(EXAMPLE, overrides={"max_runs": 10})
    r = plan_budget(plan, sims=SIMS, seed=0).to_dict()
    t = r["totals"]
    assert t["runs"] <= 10 and t["max_runs"] == 10 and t["runs_all"] > 10
    left = [c for c in r["comparisons"] if c["status"] == "over budget"]
    assert left and all("run budget" in c["reason"] for c in left)
    from planner.report.views.budget import _totals_line

    assert "over the run budget of 10" in _totals_line(r)
    assert "false-claim rates summed" in _totals_line(r)
    assert "expected false claims" not in _totals_line(r)


def test_stated_noise_is_shown_and_the_paired_note_follows_it(capsys):
    code, out, err = _run(["budget", str(EXAMPLE), "--sims", str(SIMS), "--cv", "1%"], capsys)
    assert code == 0, err
    assert "noise stated for every comparison: run-to-run CV 1% (df 50)" in out
    assert "as on hf-a10g-small" not in out.replace("\n", " ")
    code, out, err = _run(["budget", str(EXAMPLE), "--sims", str(SIMS), "--json", "--cv", "1%"],
                          capsys)
    d = json.loads(out)
    assert all(c["prior"] == "stated" and "CV 1%" in c["prior_source"]
               for c in d["comparisons"])


@pytest.mark.parametrize("line, field, words", [
    ("delta_sd = 0", "delta_sd", "outside [1e-06"),
    ("delta_sd = -1", "delta_sd", "outside [1e-06"),
    ("delta_sd = 1e6", "delta_sd", "Δ would make TPS <= 0"),
    ("designs = []", "designs", "no design given"),
])
def test_plan_value_errors_name_the_field_at_fault(tmp_path, capsys, line, field, words):
    """New-user report: 0 and -1 got two different rules, a huge delta_sd blamed delta_tps,
    and an empty design list was 'unknown design (none)'."""
    text = EXAMPLE.read_text().splitlines()
    at = next(i for i, ln in enumerate(text) if ln.startswith("delta_sd = 1.64"))
    key = line.split(" =")[0]
    if key == "delta_sd":
        text[at] = line
    else:
        text.insert(at + 1, line)
    p = tmp_path / "plan.toml"
    p.write_text("\n".join(text) + "\n")
    code, _, err = _run(["budget", str(p), "--sims", "100"], capsys)
    assert code == 2 and f"field '{field}'" in err and words in err, err
