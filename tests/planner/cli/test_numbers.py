"""Numbers: one grammar and one plausible range per quantity at every door. A decimal comma
(``--a 308,5``) is refused with a hint, not read as two runs; a 5,000-digit integer in any
JSON or TOML input, a ``delta_sd`` of 5e-324, a ``df`` of 1e-320 (``--cv``, a prior file,
``calibrate --max-df``) are one line; a Δ and a baseline swapped is implausible; every number
option holds to the grammar (``0_4`` is not 4); no pydantic wording anywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.io._parse import decimal_comma

ROOT = Path(__file__).resolve().parents[3]
RUNS = ROOT / "examples" / "runs" / "tps_runs.csv"
BIG = "1" + "0" * 5000
QUICK = ["verdict", "--a", "308.49", "--b", "308.05", "--platform", "hf-a10g-small"]
_PLAN = ('[plan]\nbaseline_tps = {base}\n[budget]\ntotal_usd = 50\n[[comparison]]\n'
         'name = "x"\nbaseline = "a"\ncandidate = "b"\ndelta_tps = {delta}\n{extra}')


def _one(code, err, *words):
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "Input should be" not in err and "pydantic" not in err, err
    for w in words:
        assert w in err, err


@pytest.mark.parametrize("args,field", [
    (["verdict", "--a", "308,5", "--b", "309,1"], "--a"),
    (["verdict", "--a-runs", "308,5", "--b-runs", "309,1"], "--a-runs"),
    (["verdict", "--a-runs", "308.1,307.9", "--b-runs", "309,4;310,1"], "--b-runs"),
    (["verdict", *QUICK[1:], "--aa-runs", "308,5"], "--aa-runs"),
    (["repeats", "--delta", "0,44"], "--delta"),
    (["draft", "-p", "mtp", "--curve", "0,9,0,8"], "--curve"),
])
def test_a_decimal_comma_is_refused_with_a_hint(cli, args, field):
    code, _, err = cli(*args)
    _one(code, err, field, "decimal comma", "write ")


def test_the_decimal_comma_rule():
    for ambiguous in ("308,5", "308,50", "12,1;15,2", "-308,5", "0,5", "12,1", "308,5;309"):
        assert decimal_comma(ambiguous), ambiguous
    for clear in ("308.1,307.9", "300,301", "308.0,5", "308", "1e3,5", "308,500",
                  "300,301,30", "308;309", "1,2", "1,2,3", "12,15", "-3,5"):
        assert decimal_comma(clear) is None, clear


def test_lists_of_full_numbers_still_read(cli):
    code, out, err = cli("verdict", "--a-runs", "308.1,307.9", "--b-runs", "309,310", "--json")
    assert code == 0, err
    assert json.loads(out)["label"]


def test_a_5000_digit_integer_in_any_json_or_toml_input(cli, tmp_path, golden_saved):
    prior = tmp_path / "prior.json"
    prior.write_text('{"tau": {"kind": "inv_chi2", "scale": 0.01, "df": %s}, '
                     '"sigma": {"kind": "inv_chi2", "scale": 0.01, "df": 3}}' % BIG)
    cost = tmp_path / "cost.json"
    cost.write_text('{"verify_base_ms": %s}' % BIG)
    curve = tmp_path / "curve.json"
    curve.write_text('{"curve": [0.9, 0.8], "k": %s}' % BIG)
    saved = tmp_path / "saved.json"
    saved.write_text(golden_saved.replace('"seed": 0', f'"seed": {BIG}', 1))
    plan = tmp_path / "plan.toml"
    plan.write_text(_PLAN.format(base=BIG, delta=0.5, extra=""))
    for args in ([*QUICK, "--prior", prior], ["draft", "-p", "pld", "--cost-file", cost],
                 ["draft", "-p", "mtp", "--curve", curve], ["report", saved],
                 ["budget", plan]):
        code, _, err = cli(*args)
        _one(code, err, "an integer of thousands of digits")
        assert "Exceeds the limit" not in err and "set_int_max_str_digits" not in err


@pytest.fixture
def golden_saved(cli):
    code, out, err = cli("repeats", "--delta", "0.44", "--sims", "200", "--json")
    assert code == 0, err
    assert '"seed": 0' in out
    return out


@pytest.mark.parametrize("df", ["1e-320", "5e-324", "0.01", "0", "-1", "1e6"])
def test_a_prior_df_outside_its_range_at_every_door(cli, tmp_path, df):
    code, _, err = cli(*QUICK, "--cv", f"2%:{df}")
    _one(code, err, "--cv", "degrees of freedom")
    prior = tmp_path / "prior.json"
    prior.write_text(json.dumps({"tau": {"kind": "inv_chi2", "scale": 0.01, "df": float(df)},
                                 "sigma": {"kind": "inv_chi2", "scale": 0.01, "df": 3}}))
    code, _, err = cli(*QUICK, "--prior", prior)
    _one(code, err, "tau.df", "degrees of freedom")
    code, _, err = cli("calibrate", RUNS, "--platform", "local-a10g", "--metric",
                       "decode_wall", "--workload", "128x512", "--max-df", df)
    _one(code, err, "--max-df")


def test_the_lowest_df_still_computes(cli):
    code, out, err = cli(*QUICK, "--cv", "2%:0.1", "--json")
    assert code == 0, err


@pytest.mark.parametrize("sd", ["5e-324", "1e-7", "0", "1e7"])
def test_a_delta_sd_outside_its_range(cli, tmp_path, sd):
    plan = tmp_path / "plan.toml"
    plan.write_text(_PLAN.format(base=307, delta=0.5, extra=f"delta_sd = {sd}\n"))
    code, _, err = cli("budget", plan)
    _one(code, err, "delta_sd")


def test_a_swapped_delta_and_baseline_is_implausible(cli, tmp_path):
    code, _, err = cli("repeats", "--delta", "307", "--baseline-tps", "0.5")
    _one(code, err, "--delta", "+61,400 %", "swapped")
    code, _, err = cli("repeats", "--delta", "-400", "--baseline-tps", "300")
    _one(code, err, "--delta", "swapped")
    plan = tmp_path / "plan.toml"
    plan.write_text(_PLAN.format(base=0.5, delta=307, extra=""))
    code, _, err = cli("budget", plan)
    _one(code, err, "delta_tps", "swapped", ":9")  # the file's line of delta_tps
    code, _, err = cli("repeats", "--delta", "3", "--baseline-tps", "300", "--sims", "200",
                       "--json")
    assert code == 0, err


@pytest.mark.parametrize("args,value", [
    (["repeats", "--delta", "0_4"], "'0_4'"),
    (["repeats", "--delta", "nan"], "'nan'"),
    (["repeats", "--delta", "infinity"], "'infinity'"),
    (["repeats", "--delta", "0.4", "--sims", "1_000"], "'1_000'"),
    (["repeats", "--delta", "0.4", "--sims", "1e3"], "'1e3'"),
    (["verdict", *QUICK[1:], "--seed", "١٢"], "'١٢'"),
    (["repeats", "--delta", "٣"], "'٣'"),
    (["draft", "-p", "pld", "--bootstrap", "2_000"], "'2_000'"),
])
def test_every_number_option_holds_to_the_grammar(cli, args, value):
    code, _, err = cli(*args)
    assert code == 2 and err.count("\n") == 1 and value in err, err
    assert "not a number" in err or "not a whole number" in err or "not a finite" in err, err
    assert "Input should be" not in err


def test_plain_spellings_still_read(cli):
    for delta in ("0.4", "+0.4", ".4", "4e-1", " 0.4"):
        code, out, err = cli("repeats", "--delta", delta, "--sims", "200", "--json")
        assert code == 0, (delta, err)
        assert json.loads(out)["inputs"]["options"]["delta"] == pytest.approx(0.4)


def test_a_5000_digit_value_typed_is_one_short_line(cli):
    for args in (["repeats", "--delta", "0.4", "--sims", BIG], ["verdict", "--a", BIG, "--b", "300"],
                 ["draft", "-p", f"pld:n={BIG}"], ["repeats", "--delta", BIG]):
        code, _, err = cli(*args)
        _one(code, err)
        assert len(err) < 400, err  # the value shown cut, with its length


def test_a_decimal_comma_in_a_file_value_gets_the_hint(cli, tmp_path):
    plan = tmp_path / "plan.toml"
    plan.write_text(_PLAN.format(base=307, delta='"0,5"', extra=""))
    code, _, err = cli("budget", plan)
    _one(code, err, "delta_tps", "not a number: '0,5' (a decimal comma? write 0.5)")
