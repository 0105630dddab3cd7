"""Issue 10, by kind: one number grammar (loose parsing), one noise-prior rule shared by the
writer (calibrate) and every reader, ingest refusing what verdict refuses, saved results
checked before re-rendering."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.io import limits
from planner.io._parse import parse_number, to_float
from planner.errors import InputError
from planner.io.runs import read_runs

ROOT = Path(__file__).resolve().parents[3]
RUNS = ROOT / "examples" / "runs" / "tps_runs.csv"
GROUP = "validity/free_ceiling_wallclock_realize/ab_out"


def _ab_table(tmp_path: Path, edit=None) -> Path:
    """The 12 runs of one shipped A/B group, with ``edit(lines)`` applied to the CSV lines."""
    lines = RUNS.read_text(encoding="utf-8").splitlines()
    keep = [lines[0]] + [ln for ln in lines[1:] if f",{GROUP}," in ln]
    assert len(keep) == 13
    if edit is not None:
        edit(keep)
    p = tmp_path / "ab.csv"
    p.write_text("\n".join(keep) + "\n", encoding="utf-8")
    return p


# -- kind 5: one number grammar --------------------------------------------------------------

@pytest.mark.parametrize("text", ["3_00", "45_3.5", "0x1c5", "1e", "+", "", "1,5", "\u00a05",
                                  "٣"])
def test_number_grammar_refuses_what_float_would_read(text):
    with pytest.raises(ValueError):
        to_float(text)
    with pytest.raises(InputError, match="not a number|missing"):
        parse_number(text, path="f.csv", line=3, field="tps")
    with pytest.raises(InputError, match="not a number"):
        limits.check("tps", text) if text else limits.check("tps", "x")


@pytest.mark.parametrize("text,value", [("308", 308.0), ("-0.5", -0.5), ("1e-3", 1e-3),
                                        (".5", 0.5), ("2.", 2.0), (" 453.5 ", 453.5),
                                        ("1E+5", 1e5)])
def test_number_grammar_keeps_decimal_numbers(text, value):
    assert to_float(text) == value


def test_non_finite_words_are_named_as_such():
    with pytest.raises(InputError, match="not a finite number"):
        parse_number("Infinity", path="f.csv", line=2, field="tps")


def test_runs_table_cell_with_underscore_is_an_error_naming_the_line(tmp_path):
    def edit(lines):
        head, *rows = lines
        cols = head.split(",")
        k = cols.index("tps")
        cells = rows[3].split(",")
        cells[k] = "45_3.5"
        lines[4] = ",".join(cells)
    p = _ab_table(tmp_path, edit)
    with pytest.raises(InputError) as e:
        read_runs(p)
    assert e.value.line == 5 and e.value.field == "tps" and "45_3.5" in e.value.message


def test_quick_form_value_with_underscore_exits_2(cli):
    code, _, err = cli("verdict", "--a-runs", "3_00,301", "--b-runs", "301,302")
    assert code == 2 and "not a number" in err and "Traceback" not in err


@pytest.mark.parametrize("args,field", [
    (["--a", "3_00", "--b", "301"], "--a"),
    (["--a", "300", "--b", "0x12d"], "--b"),
    (["--a-runs", "300,301", "--b-runs", "301,3_02"], "--b-runs"),
    (["--a", "300", "--b", "301", "--rope", "0_1%"], "--rope"),
    (["--a", "300", "--b", "301", "--rope", "1e308"], "--rope"),
    (["--a", "300", "--b", "301", "--cv", "2_0%"], "--cv"),
    (["--a", "300", "--b", "301", "--cv", "1e-300"], "--cv"),
    (["--a", "300", "--b", "301", "--cv-instance", "1e-300"], "--cv-instance"),
    (["--a", "300", "--b", "301", "--cv", "2%:1e308"], "--cv"),
    (["--a", "300", "--b", "301", "--cv", "2%:3_0"], "--cv"),
    (["--a", "300", "--b", "301", "--aa-runs", "300,1e-300,301"], "--aa-runs (position 2)"),
    (["--a", "300", "--b", "301", "--aa-runs", "300,1e308,301"], "--aa-runs (position 2)"),
    (["--a", "300", "--b", "301", "--aa-runs", "300,3_01"], "--aa-runs"),
    (["--a", "300", "--b", "301", "--seed", "1099511627776"], "--seed"),
    (["--a", "300", "--b", "301", "--seed=4294967296"], "--seed"),
])
def test_every_numeric_verdict_option_uses_the_grammar_and_its_range(cli, args, field):
    """Quick-form values, ROPE, stated CV and its df, A/A runs and the seed: one number
    grammar (to_float) and one range each (planner.io.limits), one line naming the option."""
    code, out, err = cli("verdict", *args)
    assert code == 2 and out == "" and "Traceback" not in err
    assert f"field '{field}'" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("args", [
    ["--cv", "1e-300"], ["--cv", "2%:1e308"], ["--aa-runs", "300,1e308,301"],
])
def test_repeats_reads_stated_noise_by_the_same_rule(cli, args):
    code, _, err = cli("repeats", "--delta", "1", *args)
    assert code == 2 and "Traceback" not in err and "implausible" in err


def test_stated_noise_keeps_plain_values():
    import math

    from planner.decide.priors import STATED_DF, parse_cv, parse_runs_list

    assert parse_cv("2%") == (math.sqrt(math.log1p(0.02 ** 2)), STATED_DF)
    assert parse_cv("0.02:30") == (math.sqrt(math.log1p(0.02 ** 2)), 30.0)
    assert parse_runs_list(" 300, 301.5;302 ") == [300.0, 301.5, 302.0]
    # an exact scale is a word, not an overflow-sized df (what repeats --known-noise states)
    from models.stats.assurance_known import KNOWN_DF
    from planner.decide.priors import KNOWN_NOISE_DF

    assert parse_cv("2%:known") == (math.sqrt(math.log1p(0.02 ** 2)), KNOWN_NOISE_DF)
    assert KNOWN_NOISE_DF >= KNOWN_DF
    for bad in ("2%:1e9", "2%:1e308", "2%:0", "2%:-3", "0%:known", "2%:knwn"):
        with pytest.raises(InputError):
            parse_cv(bad)
    with pytest.raises(InputError, match="implausible noise scale"):  # CV of ~300 000 %
        from planner.decide.priors import stated_prior

        stated_prior(aa_runs="300,100000,301")


def test_rope_values_keep_their_type_and_range():
    from planner.decide.rope import Rope

    assert Rope.parse("0.1%") == Rope(0.1, True) and Rope.parse("1.5") == Rope(1.5, False)
    assert Rope.parse(2) == Rope(2.0, False)
    for bad in ("0_1%", "1e308", "nan", "50%", "-1"):
        with pytest.raises(InputError) as e:
            Rope.parse(bad)
        assert e.value.field == "rope"  # the plain field; commands spell it


# -- kinds 1-3 and 5: a runs table's rep and names ------------------------------------------

def _edit_cell(column: str, value: str, row: int = 3):
    def edit(lines):
        cols = lines[0].split(",")
        cells = lines[row + 1].split(",")
        cells[cols.index(column)] = value
        lines[row + 1] = ",".join(cells)
    return edit


@pytest.mark.parametrize("value,match", [
    ("-1", "rep -1 marks a warm-up pass"), ("1e12", "implausible rep"), ("-2", "implausible rep"),
    ("2.5", "whole number"), ("3_0", "not a number"),
])
def test_runs_table_rep_has_one_rule(tmp_path, value, match):
    p = _ab_table(tmp_path, _edit_cell("rep", value))
    with pytest.raises(InputError, match=match) as e:
        read_runs(p)
    assert e.value.line == 5 and e.value.field == "rep"


def test_rep_minus_one_stays_a_warm_up_pass(tmp_path):
    def edit(lines):
        _edit_cell("rep", "-1")(lines)
        _edit_cell("phase", "warmup")(lines)
    t = read_runs(_ab_table(tmp_path, edit))
    assert [r.rep for r in t.runs].count(-1) == 1 and len(t.measured()) == 11
    assert read_runs(RUNS).runs  # the shipped table's warm-up rows (rep -1) still read


@pytest.mark.parametrize("column,tail", [
    ("config", "\t"), ("metric", "\x0b"), ("workload", "\x85"), ("instance", "\x1f"),
    ("run_group", "\n"),
])
def test_runs_table_names_keep_trailing_control_characters_to_refuse_them(tmp_path, column,
                                                                          tail):
    def edit(lines):
        cols = lines[0].split(",")
        cells = lines[4].split(",")
        k = cols.index(column)
        cells[k] = '"' + cells[k] + tail + '"' if tail == "\n" else cells[k] + tail
        lines[4] = ",".join(cells)
    with pytest.raises(InputError, match="control character") as e:
        read_runs(_ab_table(tmp_path, edit))
    # a quoted cell ending in a newline spans two lines: csv names the record's last one
    assert e.value.field == column and e.value.line == (6 if tail == "\n" else 5)


def test_runs_table_names_still_lose_padding_spaces(tmp_path):
    t = read_runs(_ab_table(tmp_path, _edit_cell("metric", " decode_wall ")))
    assert {r.metric for r in t.runs} == {"decode_wall"}


# -- kinds 1-3: the noise prior: one rule for calibrate's output and every --prior reader ---

def _prior():
    return json.loads((ROOT / "models" / "data" / "noise_priors.json").read_text())["local-a10g"]


@pytest.mark.parametrize("part,key,bad,match", [
    ("tau", "scale", 1e308, "implausible noise scale"),
    ("tau", "scale", 1e-300, "implausible noise scale"),
    ("sigma", "scale", 0.9, "implausible noise scale"),
    ("sigma", "df", 1e308, "implausible prior degrees of freedom"),
    ("sigma", "df", -1, "implausible prior degrees of freedom"),
    ("tau", "scale", True, "not a number"),
    ("tau", "kind", "gamma", "unknown kind"),
])
def test_noise_prior_values_have_ranges(part, key, bad, match):
    d = _prior()
    d[part][key] = bad
    with pytest.raises(InputError, match=match) as e:
        limits.check_noise_prior(d, file="p.json")
    assert e.value.field == f"{part}.{key}" and e.value.file == "p.json"


def test_noise_prior_name_with_control_character_is_refused():
    d = _prior()
    d["name"] = "cal\x00"
    with pytest.raises(InputError, match="control character"):
        limits.check_noise_prior({"prior": d})


def test_embedded_priors_pass_the_reader_rule():
    data = json.loads((ROOT / "models" / "data" / "noise_priors.json").read_text())
    for name, d in data.items():
        if isinstance(d, dict) and "tau" in d:
            limits.check_noise_prior(d, file=name)


@pytest.mark.parametrize("name,bad,good", [
    ("max_df", 1e308, 10.0), ("max_df", 0, 1e5), ("cv", 1e-300, 0.02), ("cv", 1.0, 0.5),
    ("rep", -1, 0), ("rep", 10**12, 1_000_000), ("noise_scale", 1e308, 0.003),
    ("sync_factor", 1e308, 1.0), ("drafter_ms", 1e308, 0.206), ("drafter_ms", -1, 0.0),
    ("correlation", 1e308, 2.0),
])
def test_noise_and_rep_quantities_have_ranges(name, bad, good):
    assert limits.check(name, good) == good
    with pytest.raises(InputError, match="implausible"):
        limits.check(name, bad)


def test_calibrate_max_df_is_bounded(cli, tmp_path):
    p = _ab_table(tmp_path)
    code, _, err = cli("calibrate", p, "--max-df", "1e308")
    assert code == 2 and "field '--max-df': implausible prior degrees of freedom" in err


def test_calibrate_writes_a_prior_the_reader_rule_accepts_and_explains_the_population(
        cli, tmp_path):
    out = tmp_path / "prior.json"
    code, _, err = cli("calibrate", RUNS, "--platform", "local-a10g", "--metric",
                       "decode_wall", "--workload", "128x512", "-o", out, "--json")
    assert code == 0, err
    res = json.loads(out.read_text())
    limits.check_noise_prior(res, file=str(out))
    note = res["sigma_note"]
    # why the population's scale differs from the pooled one: its median is a typical
    # experiment's, the pooled median weighs every run (the few noisy cells pull it up)
    pop_med = res["prior_pct"]["sigma_pct"]["median"]
    pooled_med = res["posterior"]["sigma_pct"]["median"]
    assert pop_med < pooled_med / 3
    assert f"its median {pop_med:.3f} %" in note and f"pooled median {pooled_med:.3f} %" in note
    assert "pull it up" in note


# -- kind 3: ingest writes only what verdict reads ------------------------------------------

def _harness(tmp_path: Path, **fields) -> Path:
    d = tmp_path / "res" / "cfgA" / "run1"
    d.mkdir(parents=True)
    summ = {"tps": 308.1, "job_id": "j1", "ppl": 2.0, "completed": True, **fields}
    (d / "summary.json").write_text(json.dumps(summ), encoding="utf-8")
    return tmp_path / "res"


@pytest.mark.parametrize("fields,field,match", [
    ({"ppl": "abc"}, "ppl", "not a number"),
    ({"ppl": 0.5}, "ppl", "implausible perplexity"),
    ({"completed": "false"}, "completed", "expected true or false"),
    ({"tps": 1e308}, "tps", "implausible TPS"),
])
def test_ingest_refuses_summaries_verdict_would_refuse(cli, tmp_path, fields, field, match):
    root = _harness(tmp_path, **fields)
    code, _, err = cli("ingest", root, "-o", tmp_path / "runs.csv")
    assert code == 2 and f"field '{field}'" in err and match in err
    assert "Traceback" not in err and not (tmp_path / "runs.csv").exists()


def test_ingest_writes_the_canonical_platform_name(cli, tmp_path):
    root = _harness(tmp_path)
    code, _, err = cli("ingest", root, "-o", tmp_path / "runs.csv")
    assert code == 0, err
    assert read_runs(tmp_path / "runs.csv").runs[0].platform == "hf-a10g-small"


# -- saved results: checked before re-rendering --------------------------------------------

@pytest.fixture(scope="module")
def verdict_json(tmp_path_factory):
    from planner.cli import main

    tmp = tmp_path_factory.mktemp("v")
    out = tmp / "v.json"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            main(["verdict", "--a-runs", "300,301,299.5", "--b-runs", "300.6,301.4,300.2",
                  "--platform", "hf-a10g-small", "--json"])
        except SystemExit as exc:
            assert exc.code in (0, None)
    out.write_text(buf.getvalue(), encoding="utf-8")
    return json.loads(buf.getvalue())


@pytest.mark.parametrize("edit,field,match", [
    (lambda d: d.pop("label"), "label", "without this field"),
    (lambda d: d.update(p_b_gt_a=5), "p_b_gt_a", "probability outside"),
    (lambda d: d.update(mean_tps_a=1e308), "mean_tps_a", "implausible TPS"),
    (lambda d: d.update(a="A\x1b[2J"), "a", "control character"),
])
def test_report_refuses_an_altered_result_in_one_line(cli, tmp_path, verdict_json, edit,
                                                      field, match):
    d = json.loads(json.dumps(verdict_json))
    edit(d)
    p = tmp_path / "r.json"
    p.write_text(json.dumps(d), encoding="utf-8")
    for extra in ([], ["--md", tmp_path / "r.md"]):
        code, _, err = cli("report", p, *extra)
        assert code == 2 and f"field '{field}'" in err and match in err, err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_report_refuses_nan_literals(cli, tmp_path, verdict_json):
    text = json.dumps(verdict_json).replace('"p_equivalent": ', '"p_equivalent": NaN, "x": ')
    p = tmp_path / "r.json"
    p.write_text(text, encoding="utf-8")
    code, _, err = cli("report", p)
    assert code == 2 and "NaN" in err and "Traceback" not in err


def test_report_renders_an_untouched_result(cli, tmp_path, verdict_json):
    p = tmp_path / "r.json"
    p.write_text(json.dumps(verdict_json), encoding="utf-8")
    code, out, err = cli("report", p)
    assert code == 0, err
    assert out.startswith(("B is ", "Not settled: ")) and "inputs:" in out


@pytest.mark.parametrize("metric,lower,unit", [
    ("mean_tpot_ms", True, "ms"), ("median_itl_ms", True, "ms"), ("wall_time_s", True, "s"),
    ("time_s", True, "s"), ("latency_s", True, "s"), ("bytes", True, "bytes"),
    ("output_throughput", False, "TPS"), ("decode_wall", False, "TPS"), ("probe_x", True, "units"),
])
def test_metric_unit_names_the_unit_of_each_reader_metric(metric, lower, unit):
    # the readers' metric names carry their unit (the known "units" gap of the verdict view)
    assert limits.metric_unit(metric, lower) == unit


# -- kind 5: a trailing control character in a reader's name is an error, not trimmed ------

FIX = ROOT / "tests" / "fixtures" / "readers"


@pytest.mark.parametrize("name,edit", [
    ("vllm_serve_named.json", lambda d: d.update(config="fa2\t")),
    ("hyperfine.json", lambda d: d["results"][0].update(command="python decode.py\n")),
    ("pyperf.json", lambda d: d["benchmarks"][0]["metadata"].update(name="decode\t")),
])
def test_reader_names_keep_trailing_control_characters_to_refuse_them(tmp_path, name, edit):
    from planner.io.formats import detect_format, read_results

    d = json.loads((FIX / name).read_text(encoding="utf-8"))
    edit(d)
    text = json.dumps(d)
    with pytest.raises(InputError, match="control character") as e:
        read_results(text, path=name, format=detect_format(text))
    assert e.value.field == "config"


def test_ingest_manifest_name_with_trailing_tab_is_refused(cli, tmp_path):
    root = _harness(tmp_path)
    (root / "cfgA" / "run1" / "manifest.json").write_text(json.dumps({"name": "cfgA\t"}))
    code, _, err = cli("ingest", root, "-o", tmp_path / "runs.csv")
    assert code == 2 and "control character '\\t'" in err and "field 'config'" in err


# -- kinds 1-3: a --prior file passes the rule calibrate applies to what it writes ----------

@pytest.mark.parametrize("edit,field", [
    (lambda d: d["tau"].update(scale=1e308), "tau.scale"),
    (lambda d: d["tau"].update(scale=1e-300), "tau.scale"),
    (lambda d: d["sigma"].update(df=1e308), "sigma.df"),
    (lambda d: d["tau"].update(scale=True), "tau.scale"),
    (lambda d: d["sigma"].update(scale=0.9), "sigma.scale"),
    (lambda d: d.update(name="cal\x00"), "name"),
])
@pytest.mark.parametrize("command", [
    ["verdict", "--a-runs", "300,301", "--b-runs", "302,303"], ["repeats", "--delta", "1"],
])
def test_prior_file_readers_apply_the_calibrate_rule(cli, tmp_path, edit, field, command):
    d = _prior()
    edit(d)
    p = tmp_path / "prior.json"
    p.write_text(json.dumps({"prior": d}), encoding="utf-8")
    code, out, err = cli(*command, "--prior", p)
    assert code == 2 and "Traceback" not in err and f"field '{field}'" in err
    assert str(p) in err and len(err.strip().splitlines()) == 1


def test_prior_file_is_a_recorded_input_with_its_sha256(cli, tmp_path):
    import hashlib

    p = tmp_path / "prior.json"
    p.write_text(json.dumps({"prior": _prior()}), encoding="utf-8")
    code, out, _ = cli("verdict", RUNS, "--a", "fa2sw_precache_agentI", "--b",
                       "fa2sw_precache_agentI+SDPA_NUM_STAGES_AB=2", "--run-group", GROUP,
                       "--prior", p, "--json")
    assert code == 0
    ins = json.loads(out)["inputs"]
    assert [f["role"] for f in ins["files"]] == ["runs", "prior"]
    assert ins["files"][1] == {"role": "prior", "name": str(p),
                               "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
    assert ins["options"]["prior"] == str(p)  # the option as given stays recorded
    code, out, _ = cli("verdict", "--a", "300", "--b", "301", "--prior", "local-a10g", "--json")
    assert code == 0 and json.loads(out)["inputs"]["files"] == []  # a name is no file


# -- plain language: the verdict views in the metric's unit, diagnostics in one line ---------

@pytest.fixture(scope="module")
def tpot_result():
    """A lower-is-better verdict on a millisecond metric (a TPOT of ~3.2 ms)."""
    from models.stats.noise import platform_prior
    from planner.io.rows import Run
    from planner.io.table import RunsTable
    from planner.decide.verdict import verdict

    runs = [Run(config=c, tps=v, instance=f"i{k}", rep=0, metric="mean_tpot_ms",
                lower_is_better=True)
            for c, vals in (("fa2", (3.241, 3.233, 3.25)), ("sdpa", (3.31, 3.305, 3.32)))
            for k, v in enumerate(vals)]
    return verdict(RunsTable(runs, "tpot.csv"), "fa2", "sdpa",
                   prior=platform_prior("local-a10g")).to_dict()


def test_verdict_names_its_metric(tpot_result):
    assert tpot_result["metric"] == "mean_tpot_ms"
    assert tpot_result["direction"] == "lower_is_better"


def test_verdict_views_print_the_metric_unit_and_small_values(tpot_result, capsys):
    from planner.report.render import render_html
    from planner.report.views.verdict import diagnostics_line, render_markdown, render_terminal

    r = json.loads(json.dumps(tpot_result))
    render_terminal(r)
    term = capsys.readouterr().out
    md, page = render_markdown(r), render_html(r)
    line = diagnostics_line(r)
    for text in (term, md):
        assert "units" not in text and "0.00 ms" not in text
        assert "mean 3.24 ms" in text and "Δ = B − A, ms" in text
        # the lead sentence first, then the table, then the diagnostics line
        assert text.index("B is ") < text.index("P(B > A)") < text.index("diagnostics:")
        assert "σ_instance (median" not in text and "σ_run (median" not in text
    assert " ".join(term.split()).count(" ".join(line.split())) == 1
    assert line in md
    import html as _h

    assert _h.escape(line) in page and "units" not in page
    rope_ms = r["rope"]["tps"]
    assert 0.001 < rope_ms < 0.01 and f"±{rope_ms:.4g} ms" in md
    assert f"≈ {r['sigma_run']['tps']['median']:.4g} ms (run-to-run spread on one machine)" \
        in line
    assert "(machine-to-machine spread)" in line
    g = r["diagnostics"]["grid_points"]
    assert f"exact grid of {g} points (no sampling error)" in line
    assert "the grid is wide enough" in line


def test_verdict_view_of_plain_numbers_prints_no_made_up_unit():
    from planner.report.views.verdict import _rows, diagnostics_line
    from planner.io.runs import runs_from_values
    from planner.decide.verdict import verdict

    r = verdict(runs_from_values([3.21, 3.25, 3.22], [3.18, 3.2, 3.19]), "A", "B",
                lower_is_better=True).to_dict()
    assert r["metric"] is None
    text = "\n".join(f"{k} {v}" for k, v in _rows(r) if not k.startswith("z-test")) + \
        diagnostics_line(r)
    assert "units" not in text and "TPS" not in text and "mean 3.227 " not in text
    assert "mean 3.23  " not in text and "(n=3, mean 3.23)" in text
    hi = verdict(runs_from_values([300.0, 301.0, 302.0], [303.0, 304.0, 305.0]), "A",
                 "B").to_dict()
    assert "mean 301.00 TPS" in dict(_rows(hi))["A"]


def test_non_finite_values_are_named_by_the_option_typed(cli):
    """nan / inf in a quick form name the option the user typed (--a-runs, not --a), and an
    infinite ROPE is called infinite, not negative."""
    code, _, err = cli("verdict", "--a-runs", "308,nan", "--b-runs", "300,301")
    assert code == 2 and "field '--a-runs': not a finite number" in err
    code, _, err = cli("verdict", "--a", "300", "--b", "301", "--rope", "1e400")
    assert code == 2 and "field '--rope': not a finite number" in err
