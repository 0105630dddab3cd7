"""Issue 10, draft owner (D1-D5): every numeric option of ``planner draft`` / ``draft-sweep``
and every number of a ``--cost-file`` is range-checked through planner.io.limits (help shows the
limit's own range); one list/spec grammar; one name for the draft depth."""
import json
import re
from pathlib import Path

import pytest

from planner.io import limits as L
from planner.decide.draft import (DRAFT_DEPTH, EVIDENCE_FLOORS, LOOKUP_THRESHOLD, MTP_K, N_WINDOW,
                           SYNC_FACTOR,
                           check_cost_field, parse_policy, split_items)
from planner.errors import InputError

ROOT = Path(__file__).resolve().parents[3]
SMALL = ROOT / "tests" / "fixtures" / "draft_small_capture.jsonl.gz"


def _one_line_error(code, out, err, *needles):
    assert code == 2, (code, out[-300:], err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for s in needles:
        assert s in err, (s, err)


# ------------------------------------------------------------------ D1-D3: options in range
@pytest.mark.parametrize("args,option,shown", [
    (["--bootstrap", "50"], "--bootstrap", "outside [100, 100,000]"),          # D1
    (["--bootstrap", "500000"], "--bootstrap", "outside [100, 100,000]"),      # D1
    (["--run-cap", "1000000000"], "--run-cap", "outside [1, 1,000] runs"),     # D2
    (["--run-cap", "0"], "--run-cap", "outside [1, 1,000] runs"),
    (["--sync-factor", "1e308"], "--sync-factor", "outside [1, 100]"),         # D3
    (["--sync-factor", "-1"], "--sync-factor", "outside [1, 100]"),
    (["--sync-factor", "4.9e-324"], "--sync-factor", "outside [1, 100]"),  # TPS overflowed
    (["--drafter-ms", "1e308"], "--drafter-ms", "outside [0, 1000] ms"),
    (["--drafter-ms", "-0.5"], "--drafter-ms", "outside [0, 1000] ms"),
    (["--correlation", "1e308"], "--correlation", "[0, 100]"),
    (["--correlation", "-1"], "--correlation", "[0, 100]"),
    (["--correlation", "3_0"], "--correlation", "not a number"),
    (["--correlation", "inf"], "--correlation", "not a finite number"),
    (["--seed", "-1"], "--seed", "outside [0, 4,294,967,295]"),
    (["--mc-reps", "0"], "--mc-reps", "outside [1, 10,000]"),
    (["--curve", "0.7,nan"], "--curve", "not a finite number"),
    (["--curve", "0.7,0_5"], "--curve", "not a finite number"),
])
def test_draft_numeric_options_refused_outside_their_limit(cli, args, option, shown):
    """1e308, 10^9 runs, 50 or 500,000 replicates: one line naming the option (they ran)."""
    _one_line_error(*cli("draft", SMALL, "-p", "pld", *args), option, shown)


@pytest.mark.parametrize("args,field,lim", [
    (["--n", "17"], "n", N_WINDOW), (["--depth", "65"], "depth", DRAFT_DEPTH),
    (["--depth", "0"], "depth", DRAFT_DEPTH), (["-p", "mtp", "--k", "17"], "k", MTP_K),
    (["-p", "ngram", "--min-n", "0"], "min_n", N_WINDOW),
    (["-p", "suffix-first", "--threshold", "65"], "threshold", LOOKUP_THRESHOLD),
    (["-p", "tree", "--tree-depth", "65"], "tree_depth", DRAFT_DEPTH),
    (["-p", "hybrid-max", "--lookup", "ngram", "--lookup-k", "17"], "lookup_k", MTP_K),
])
def test_policy_parameters_refused_outside_their_limit(cli, args, field, lim):
    """Policy parameters (options or -p pairs) use the planner.decide.draft limits; lookup_k was not
    checked at all."""
    if args[0] != "-p":
        args = ["-p", "pld", *args]
    _one_line_error(*cli("draft", SMALL, *args), f"'{field}'", lim.describe())


@pytest.mark.parametrize("args,option,shown", [
    (["--n-values", "1,17"], "--n-values", N_WINDOW.describe()),
    (["--depth-values", "8,65"], "--depth-values", DRAFT_DEPTH.describe()),
    (["--k-values", "0"], "--k-values", MTP_K.describe()),
    (["--k-values", "2.5"], "--k-values", "whole number"),
    (["--top", "0"], "--top", "outside [1, 10,000] rows"),
    (["--mc-reps", "100000"], "--mc-reps", "outside [1, 10,000]"),
    (["--seed", "4294967296"], "--seed", "outside [0, 4,294,967,295]"),
])
def test_sweep_numeric_options_refused_outside_their_limit(cli, args, option, shown):
    _one_line_error(*cli("draft-sweep", SMALL, *args), option, shown)


def _help_of(command: str) -> dict:
    import typer

    from planner.cli import app

    cmd = typer.main.get_command(app).commands[command]
    return {p.opts[0]: " ".join((p.help or "").split()) for p in cmd.params if p.opts}


@pytest.mark.parametrize("command,option,limit", [
    ("draft", "--bootstrap", L.BOOTSTRAP), ("draft", "--run-cap", L.RUNS_PER_ARM),
    ("draft", "--mc-reps", L.MC_REPS), ("draft", "--seed", L.SEED),
    ("draft", "--sync-factor", SYNC_FACTOR), ("draft", "--drafter-ms", L.STEP_MS),
    ("draft", "--correlation", L.GAMMA), ("draft", "--baseline-tps", L.TPS),
    ("draft", "--sigma-tps", L.SIGMA_TPS), ("draft", "--minutes-per-run", L.MINUTES_PER_RUN),
    ("draft", "--price-per-hour", L.PRICE_PER_HOUR), ("draft", "--n", N_WINDOW),
    ("draft", "--depth", DRAFT_DEPTH), ("draft", "--min-n", N_WINDOW),
    ("draft", "--max-n", N_WINDOW), ("draft", "--k", MTP_K), ("draft", "--lookup-k", MTP_K),
    ("draft", "--threshold", LOOKUP_THRESHOLD), ("draft", "--tree-depth", DRAFT_DEPTH),
    ("draft", "--cost-file", L.STEP_MS), ("draft", "--cost-file", SYNC_FACTOR),
    ("draft", "--cost-file", L.VERIFY_BASE_MS),
    ("draft-sweep", "--n-values", N_WINDOW), ("draft-sweep", "--depth-values", DRAFT_DEPTH),
    ("draft-sweep", "--k-values", MTP_K), ("draft-sweep", "--mc-reps", L.MC_REPS),
    ("draft-sweep", "--seed", L.SEED), ("draft-sweep", "--baseline-tps", L.TPS),
])
def test_help_shows_the_range_the_check_applies(command, option, limit):
    """--bootstrap said (1..1000000) while 100..100,000 was the rule: help now prints the
    limit's own describe()."""
    assert limit.describe() in _help_of(command)[option]


def test_help_has_no_hand_written_range_left():
    for command in ("draft", "draft-sweep"):
        for option, text in _help_of(command).items():
            assert not re.search(r"\d\.\.\d|>= ?\d", text), (command, option, text)


def test_sweep_top_help_matches_its_check():
    from planner.cli.draft import TOP_ROWS

    assert TOP_ROWS.describe() in _help_of("draft-sweep")["--top"]


# ------------------------------------------------------------------ D3: the cost file
_COST_CASES = [
    ({"verify_base_ms": 1e308}, "verify_base_ms", "outside (0, 1000] ms"),
    ({"verify_base_ms": 0}, "verify_base_ms", "outside (0, 1000] ms"),
    ({"verify_per_row_ms": -1}, "verify_per_row_ms", "outside [0, 1000] ms"),
    ({"drafter_per_token_ms": 1e308}, "drafter_per_token_ms", "outside [0, 1000] ms"),
    ({"host_ms": 2000}, "host_ms", "outside [0, 1000] ms"),
    ({"sync_add_ms": 1e308}, "sync_add_ms", "outside [0, 1000] ms"),
    ({"sync_factor": 1e308}, "sync_factor", "outside [1, 100]"),
    ({"sync_factor": 0}, "sync_factor", "outside [1, 100]"),
    ({"harness_efficiency": 1e308}, "harness_efficiency", "outside (0, 2]"),
    ({"harness_efficiency": True}, "harness_efficiency", "not a number"),
    ({"verify_base_ms": "6.2"}, "verify_base_ms", "positive number"),
    ({"staircase_rel": 5}, "staircase_rel", "expected an object"),
    ({"staircase_rel": {"17": 1e308}}, "staircase_rel.17", "outside [0, 10]"),
    ({"staircase_rel": {"x": 0.1}}, "staircase_rel.x", "not a number"),
    ({"staircase_rel": {"0": 0.1}}, "staircase_rel.0", "outside [1, 10,000] rows"),
]


@pytest.mark.parametrize("obj,field,shown", _COST_CASES)
def test_cost_file_numbers_are_range_checked(cli, tmp_path, obj, field, shown):
    """1e308 in a cost file overflowed the step time (RuntimeWarning, exit 0); a dict or a
    bad staircase key was a traceback. Now one line naming the file and the field."""
    f = tmp_path / "cost.json"
    f.write_text(json.dumps(obj))
    _one_line_error(*cli("draft", SMALL, "-p", "pld", "--cost-file", f), "cost.json",
                    f"'{field}'", shown)


def test_cost_file_in_range_is_used(cli, tmp_path):
    f = tmp_path / "cost.json"
    f.write_text(json.dumps({"verify_base_ms": 7.0, "sync_factor": 1.1,
                             "staircase_rel": {"17": 0.1}, "harness_efficiency": 0.9}))
    code, out, err = cli("draft", SMALL, "-p", "pld", "--cost-file", f, "--bootstrap", "100",
                         "--json")
    assert code == 0, err
    cm = json.loads(out)["settings"]["cost_model"]
    assert (cm["verify_base_ms"], cm["sync_factor"], cm["staircase_rel"],
            cm["harness_efficiency"]) == (7.0, 1.1, {"17": 0.1}, 0.9)


def test_cost_field_check_is_the_limit():
    """The hook applies planner.io.limits.STEP_MS and the draft's SYNC_FACTOR."""
    for v in (L.STEP_MS.low, L.STEP_MS.high):
        check_cost_field("host_ms", v)
    with pytest.raises(InputError, match="step time"):
        check_cost_field("host_ms", L.STEP_MS.high * 1.001, "c.json")
    with pytest.raises(InputError, match="sync factor"):
        check_cost_field("sync_factor", 101)


# ------------------------------------------------------------------ D4: one grammar
@pytest.mark.parametrize("spec", ["pld: n=2", "pld:n=2 ", " pld", "pld:n=2,\tdepth=8",
                                  "pld:n=2, depth=8", "pld:,", "pld:n=2,", "pld:,n=2",
                                  "pld:n=2,,depth=8", "pld:"])
def test_policy_spec_refuses_spaces_and_empty_items(cli, spec):
    _one_line_error(*cli("draft", SMALL, "-p", spec), "'--policy'", repr(spec))


@pytest.mark.parametrize("option", ["--n-values", "--depth-values", "--d-values",
                                    "--k-values"])
@pytest.mark.parametrize("text", ["1,,2", "1,2,", ",1", "1, 2", " 1", "1\t", ""])
def test_sweep_lists_refuse_spaces_and_empty_items(cli, option, text):
    """--n-values 1,,2 and 1,2, ran (empty items skipped); now refused like pld:, is."""
    shown = "--depth-values" if option == "--d-values" else option
    _one_line_error(*cli("draft-sweep", SMALL, option, text), f"'{shown}'", "grammar")


@pytest.mark.parametrize("text", ["0.7,,0.5", "0.7,0.5,", "0.7, 0.5"])
def test_curve_list_same_grammar(cli, text):
    _one_line_error(*cli("draft", SMALL, "-p", "mtp", "--curve", text), "'--curve'", "grammar")


def test_split_items_is_the_one_grammar():
    assert split_items("1,2,30", field="--x") == ["1", "2", "30"]
    assert split_items("7", field="--x") == ["7"]
    for bad in ("", ",", "1,", ",1", "1,,2", "1 ,2", "1,\u00a02"):
        with pytest.raises(InputError, match="--x|grammar"):
            split_items(bad, field="--x")


def test_valid_specs_still_parse():
    assert parse_policy("pld:n=3,depth=16").params == {"n": 3, "depth": 16}
    assert parse_policy("PLD").name == "pld"
    assert parse_policy("pld:D=8").label == "pld(depth=8)"


# ------------------------------------------------------------------ D5: one name for depth
def test_sweep_records_depth_values(cli):
    """draft-sweep recorded d_values= in its inputs; the old option spelling still works."""
    for opt in ("--depth-values", "--d-values"):
        code, out, err = cli("draft-sweep", SMALL, "--n-values", "2", opt, "8,24",
                             "--k-values", "2", "--mc-reps", "5", "--json")
        assert code == 0, err
        r = json.loads(out)
        assert r["inputs"]["options"]["depth_values"] == "8,24"
        assert "d_values" not in r["inputs"]["options"] and "d_values" not in out
        assert sorted(x["params"]["depth"] for x in r["rows"] if x["policy"] == "pld") == [8, 24]
    code, out, err = cli("draft-sweep", SMALL, "--n-values", "2", "--depth-values", "8",
                         "--k-values", "2", "--mc-reps", "5")
    assert code == 0 and "depth_values=8" in out and "d_values" not in out


def test_docs_name_the_depth_as_the_outputs_do():
    """docs/drafting*.md wrote D=24 in their tables while every output says depth=24; shift's
    use of the same capture floors is stated."""
    drafting = (ROOT / "docs" / "drafting.md").read_text()
    lookup = (ROOT / "docs" / "drafting_lookup.md").read_text()
    for text in (drafting, lookup):
        assert "D=24" not in text.replace("PLD(n=2, D=24)", "")  # the class signature only
        assert "d_values" not in text
    assert "| ar_reference_bf16 | PLD n=2, depth=24 | **1.384**" in lookup
    assert "| ar_reference_bf16 | PLD n=3, depth=24 | **1.267**" in lookup
    sec = drafting.split("## How much capture a projection needs", 1)[1].split("\n## ", 1)[0]
    assert "planner shift" in sec and "EVIDENCE_FLOORS" in sec
    assert EVIDENCE_FLOORS["refuse"]["prompts"] == 3


def test_an_empty_report_name_is_one_line(cli):
    """``--md ""`` is the current folder: refused as a directory (it was a traceback from
    Path('').with_suffix)."""
    _one_line_error(*cli("draft", SMALL, "-p", "pld", "--md", ""), "--md", "is a directory")


def test_a_flag_given_a_value_names_the_command(cli):
    code, out, err = cli("draft", "--stop-at-eos=true")
    assert code == 2 and "planner draft: error:" in err and "'planner draft --help'" in err


def test_report_names_not_in_utf8_are_written(cli, tmp_path):
    """A file name that is not UTF-8 (bytes 0xff) reaches Python as a surrogate: the
    Markdown (which names its plot) and the HTML are still written (they were a traceback)."""
    import os

    md = os.fsdecode(os.fsencode(str(tmp_path)) + b"/r\xff.md")
    html = os.fsdecode(os.fsencode(str(tmp_path)) + b"/r\xff.html")
    code, out, err = cli("draft", SMALL, "-p", "pld", "--md", md, "--html", html)
    assert code == 0, err
    names = sorted(os.listdir(os.fsencode(str(tmp_path))))
    assert names == [b"r\xff.html", b"r\xff.md", b"r\xff.png"]
    assert b"r\xff.png" in (tmp_path / os.fsdecode(b"r\xff.md")).read_bytes()


def test_a_report_never_replaces_a_file_of_another_kind(cli, tmp_path):
    """'--md examples/plan.toml' replaced the shipped plan with Markdown: an existing file is
    overwritten only by a report of its kind; an .md written twice is fine."""
    plan = tmp_path / "plan.toml"
    plan.write_text("[plan]\n")
    code, out, err = cli("draft", SMALL, "-p", "pld", "--md", plan)
    assert code == 2 and "exists and is not a .md file" in err
    assert plan.read_text() == "[plan]\n"
    html = tmp_path / "keep.json"
    html.write_text("{}")
    code, out, err = cli("draft", SMALL, "-p", "pld", "--html", html)
    assert code == 2 and html.read_text() == "{}"
    md = tmp_path / "r.md"
    for _ in range(2):
        code, out, err = cli("draft", SMALL, "-p", "pld", "--md", md)
        assert code == 0, err


@pytest.mark.parametrize("option", ["--n-values", "--depth-values", "--k-values"])
def test_sweep_values_listed_twice_are_refused(cli, option):
    """'--n-values 2,2,2' ranked the same row three times."""
    _one_line_error(*cli("draft-sweep", SMALL, option, "3,3"), option, "3 is listed twice")


def test_sweep_errors_name_the_sweep_options(cli):
    """A K beyond the embedded curve named 'k' (draft's --k, not the sweep's --k-values), and
    an unknown cost profile 'cost-profile' without its dashes."""
    _one_line_error(*cli("draft-sweep", SMALL, "--k-values", "8"), "field '--k-values'")
    _one_line_error(*cli("draft-sweep", SMALL, "--cost-profile", "X"), "field '--cost-profile'")


def test_a_one_letter_option_with_an_equals_sign_gets_a_hint(cli):
    """click reads '-p=pld' as the value '=pld' ('unknown policy' before): say why."""
    code, out, err = cli("draft", "-p=pld")
    assert code == 2 and "a one-letter option takes its value after a space (-p pld" in err


@pytest.mark.parametrize("digits", [19, 5000])
def test_a_seed_of_many_digits_is_a_one_line_error(cli, digits):
    """19 digits pass int() and fail the seed's range; 5000 exceed Python's int() limit
    (4300 digits) and fail typer's conversion: one line naming --seed either way."""
    code, out, err = cli("draft", "--seed", "1" * digits)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--seed" in err
