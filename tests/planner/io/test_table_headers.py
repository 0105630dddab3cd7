"""A runs table as spreadsheets write it: column names in any case and padded with spaces,
aliases of the config column, ``--config-column``, ``;``- and tab-separated files, decimal
commas in a ``;`` file, and JSON saved under a .csv name (new-user report)."""

import json

import pytest

from planner.errors import InputError
from planner.io.columns import CONFIG_ALIASES
from planner.io.runs import read_runs

ROWS = [("A", "100.1"), ("A", "100.3"), ("B", "100.6"), ("B", "100.2")]


def _csv(tmp_path, header, rows=ROWS, sep=",", name="r.csv"):
    p = tmp_path / name
    p.write_text(sep.join(header) + "\n" + "".join(sep.join(r) + "\n" for r in rows),
                 encoding="utf-8")
    return p


def _pairs(table):
    return [(r.config, r.tps) for r in table.runs]


WANT = [("A", 100.1), ("A", 100.3), ("B", 100.6), ("B", 100.2)]


@pytest.mark.parametrize("cfg", ["Config", " CONFIG ", *CONFIG_ALIASES, "Variant", " Name"])
def test_config_column_any_case_or_alias(tmp_path, cfg):
    p = _csv(tmp_path, [cfg, "tps"])
    assert _pairs(read_runs(p)) == WANT
    assert _pairs(read_runs(p, configs=["A", "B"]).select(["A", "B"])) == WANT


@pytest.mark.parametrize("rate", ["TPS", " Tps ", "Throughput", "Tokens/s", "TOK/S"])
def test_rate_column_any_case(tmp_path, rate):
    assert _pairs(read_runs(_csv(tmp_path, ["config", rate]))) == WANT


def test_tps_and_config_column_options_ignore_case(tmp_path):
    p = _csv(tmp_path, ["Setup", "Gen Rate"])
    t = read_runs(p, tps_column="gen rate", config_column="SETUP")
    assert _pairs(t) == WANT
    with pytest.raises(InputError) as e:
        read_runs(p)
    assert "missing required column 'config'" in e.value.message
    assert "name the config column" in e.value.message and "variant" in e.value.message
    # the library error names the setting, not an option; each command adds its spelling
    assert e.value.remedy == "config_column" and "--" not in e.value.message


def test_config_column_option_wins_over_config(tmp_path):
    p = _csv(tmp_path, ["config", "variant", "tps"],
             [("x", c, v) for c, v in ROWS])
    assert _pairs(read_runs(p, config_column="Variant")) == WANT
    assert {r.config for r in read_runs(p).runs} == {"x"}  # config first, as before
    with pytest.raises(InputError, match="no column 'setup'"):
        read_runs(p, config_column="setup")


def test_other_columns_folded(tmp_path):
    rows = [(c, v, f"i{k}", str(k % 2), "hf-a10g-small", "decode_wall", "w1", "g1")
            for k, (c, v) in enumerate(ROWS)]
    p = _csv(tmp_path, ["Config", "TPS", " Instance", "REP", "Platform", "Metric", "Workload",
                        "Run_Group"], rows)
    t = read_runs(p)
    r = t.runs[1]
    assert (r.instance, r.rep, r.platform, r.metric, r.workload, r.run_group) == (
        "i1", 1, "hf-a10g-small", "decode_wall", "w1", "g1")
    assert r.extra == {}
    assert len(t.filter(run_group="g1", metric="decode_wall", platform="hf-a10g-small")) == 4


def test_unknown_columns_keep_their_spelling(tmp_path):
    p = _csv(tmp_path, ["config", "tps", "Notes"], [(c, v, "n") for c, v in ROWS])
    assert read_runs(p).runs[0].extra == {"Notes": "n"}


@pytest.mark.parametrize("header", [["Config", "config", "tps"], ["config", "TPS", " tps"],
                                    ["config", "Throughput", "throughput"]])
def test_colliding_headers_refused(tmp_path, header):
    p = _csv(tmp_path, header, [("A", "1", "2")])
    with pytest.raises(InputError) as e:
        read_runs(p)
    assert "are one column once case and surrounding spaces are ignored" in e.value.message
    assert e.value.line == 1 and "\n" not in e.value.one_line()


def test_two_config_aliases_ambiguous(tmp_path):
    p = _csv(tmp_path, ["name", "label", "tps"], [("x", c, v) for c, v in ROWS])
    with pytest.raises(InputError, match="ambiguous config column"):
        read_runs(p)
    assert _pairs(read_runs(p, config_column="label")) == WANT


@pytest.mark.parametrize("sep", [";", "\t"])
def test_delimiter_sniffed(tmp_path, sep):
    p = _csv(tmp_path, ["config", "tps"], sep=sep)
    assert _pairs(read_runs(p)) == WANT
    assert _pairs(read_runs(p, configs=["A"]).select(["A"])) == WANT[:2]


def test_decimal_comma_in_semicolon_file(tmp_path):
    p = _csv(tmp_path, ["Variant", "Tokens/s"], [(c, v.replace(".", ",")) for c, v in ROWS],
             sep=";")
    assert _pairs(read_runs(p)) == WANT
    # a comma file keeps its one meaning: "100,1" there is two fields
    q = _csv(tmp_path, ["config", "tps"], [("A", '"100,1"')], name="c.csv")
    with pytest.raises(InputError, match="not a number"):
        read_runs(q)


def test_quoted_commas_do_not_decide_the_separator(tmp_path):
    p = tmp_path / "q.csv"
    p.write_text('"a,b,c";config;tps\nx;A;100.1\nx;B;100.2\n')
    assert [(r.config, r.tps) for r in read_runs(p).runs] == [("A", 100.1), ("B", 100.2)]


def test_json_saved_as_csv(tmp_path, cli):
    p = tmp_path / "t.csv"
    p.write_text(json.dumps([{"config": c, "tps": float(v)} for c, v in ROWS]))
    code, out, err = cli("verdict", p, "--a", "A", "--b", "B")
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "holds JSON" in lines[0] and ".json" in lines[0]
    assert "columns" not in lines[0]


@pytest.mark.parametrize("ext", ["json", "jsonl"])
def test_json_keys_folded(tmp_path, ext):
    recs = [{" Variant": c, "TPS": float(v), "Instance": f"i{k}"} for k, (c, v) in
            enumerate(ROWS)]
    p = tmp_path / f"r.{ext}"
    p.write_text(json.dumps(recs) if ext == "json" else
                 "".join(json.dumps(r) + "\n" for r in recs))
    t = read_runs(p)
    assert _pairs(t) == WANT and t.runs[2].instance == "i2"
    assert _pairs(read_runs(p, configs=["A", "B"]).select(["A", "B"])) == WANT


def test_jsonl_key_collision(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text('{"config": "A", "Config": "B", "tps": 1}\n')
    with pytest.raises(InputError, match="one column once case"):
        read_runs(p)


def test_cli_config_column(cli, tmp_path):
    p = _csv(tmp_path, ["Setup", "TPS"])
    code, out, err = cli("verdict", p, "--a", "A", "--b", "B", "--config-column", "setup",
                         "--json", "--seed", "1")
    assert code == 0, err
    d = json.loads(out)
    assert (d["n_a"], d["n_b"]) == (2, 2)
    code, out2, err = cli("verdict", _csv(tmp_path, ["config", "tps"], name="c.csv"), "--a",
                          "A", "--b", "B", "--json", "--seed", "1")
    strip = lambda d: {k: v for k, v in d.items() if k != "inputs"}  # noqa: E731
    assert strip(json.loads(out2)) == strip(d)
    code, out, err = cli("calibrate", p, "--config-column", "SETUP", "--tps-column", "tps",
                         "--json")
    assert code == 0, err


def test_repeats_reads_renamed_columns_like_verdict(cli, tmp_path):
    """``repeats --runs`` takes --config-column/--tps-column as verdict does: the same runs
    under other column names give the same plan."""
    rows = [(c, v, "hf-a10g-small") for c, v in ROWS]
    plain = _csv(tmp_path, ["config", "tps", "platform"], rows, name="plain.csv")
    renamed = _csv(tmp_path, ["Setup", "Gen Rate", "platform"], rows, name="renamed.csv")
    base = ("repeats", "--a", "A", "--b", "B", "--sims", "200", "--design", "separate",
            "--json")
    code, out, err = cli(*base, "--runs", plain)
    assert code == 0, err
    code2, out2, err2 = cli(*base, "--runs", renamed, "--config-column", "setup",
                            "--tps-column", "gen rate")
    assert code2 == 0, err2
    r1, r2 = json.loads(out), json.loads(out2)
    assert r1["designs"] == r2["designs"] and r1["recommended"] == r2["recommended"]
    code3, _, err3 = cli(*base, "--runs", renamed)
    assert code3 == 2 and "name the config column (--config-column)" in err3
    assert str(renamed) in err3 and "field 'config'" in err3  # the file's error, located
    code4, _, err4 = cli("repeats", "--delta", "0.5", "--tps-column", "tps")
    assert code4 == 2 and "give --runs" in err4


@pytest.mark.parametrize("command", [("verdict",), ("calibrate",)])
def test_table_errors_name_the_option_that_fixes_them(cli, tmp_path, command):
    p = _csv(tmp_path, ["Setup", "tps", "platform"],
             [(c, v, "hf-a10g-small" if k < 2 else "local-a10g")
              for k, (c, v) in enumerate(ROWS)])
    extra = ("--a", "A", "--b", "B") if command == ("verdict",) else ()
    code, _, err = cli(*command, p, *extra)
    assert code == 2 and "(--config-column)" in err and err.startswith("planner: error: ")
    code, _, err = cli(*command, p, *extra, "--config-column", "setup")
    assert code == 2 and "rows mix platforms" in err and err.rstrip().endswith("(--platform)")


@pytest.mark.parametrize("header, field", [("config,tps,tps", "tps"),
                                           ("config,config,tps", "config"),
                                           ("Config,tps,Config", "config")])
def test_a_read_column_written_twice_is_refused(tmp_path, header, field):
    """csv readers keep the last of two equal names silently: 'config,tps,tps' read a
    column of 1s as TPS, and a second config column swapped the arms (a faster B called
    slower). A column the table does not read may repeat."""
    p = tmp_path / "r.csv"
    p.write_text(header + "\nbase,300,1\nbase,301,1\ncand,310,1\ncand,311,1\n")
    with pytest.raises(InputError) as e:
        read_runs(p)
    assert e.value.line == 1 and e.value.field == field and "2 times" in str(e.value)
    q = tmp_path / "ok.csv"
    q.write_text("config,tps,note,note\nbase,300,a,b\ncand,310,a,b\n")
    assert [r.tps for r in read_runs(q).runs] == [300.0, 310.0]


def test_a_json_list_names_the_record_not_a_line(tmp_path):
    """A JSON list is often one line: its 4th object's error said ':4' (a line it does not
    have); it names the record."""
    p = tmp_path / "runs.json"
    p.write_text(json.dumps([{"config": "a", "tps": 300.1}, {"config": "a", "tps": 301},
                             {"config": "b", "tps": 310}, {"config": "b", "tps": None}]))
    with pytest.raises(InputError) as e:
        read_runs(p)
    assert e.value.line is None and "record 4 of the list" in e.value.one_line()
