"""Reading a runs table for some configs only (``read_runs(..., configs=...)``, what
``planner verdict TABLE --a A --b B`` does): every row is still validated with the same
one-line error, and the kept runs, the filters' and the configs' messages and the verdict are
those of the whole table."""

import json

import pytest

from planner.errors import InputError
from planner.io.runs import read_runs

HEADER = "config,run_group,instance,rep,platform,tps,ppl,timestamp,metric,workload,phase,cold,notes"


def _good_rows(n: int) -> list[str]:
    """``n`` plain rows of 20 configs over 7 instances (mixed metrics, a warm-up pass, padded
    names, cold flags), each a distinct run."""
    out = []
    for k in range(n):
        cfg = f"cfg-{k % 20:02d}" + (" " if k % 97 == 0 else "")  # a trailing space is trimmed
        metric = "probe_wall" if k % 50 == 7 else "decode_wall"
        phase = "warmup" if k % 211 == 3 else "measure"
        rep = "-1" if phase == "warmup" else str(k // 140)
        cold = ["", "0", "yes", "F"][k % 4]
        ppl = "" if k % 3 else f"{2 + (k % 5) / 10:.3f}"
        tps = f"{250 + (k * 7919 % 1000) / 100:.4f}" if k % 13 else f"{250 + k % 10}"
        out.append(f"{cfg},grp,gpu-{k % 7},{rep},local-a10g,{tps},{ppl},,{metric},128x512,"
                   f"{phase},{cold},note {k}")
    return out


def _table(tmp_path, rows: list[str], name: str = "big.csv"):
    p = tmp_path / name
    p.write_text(HEADER + "\n" + "\n".join(rows) + "\n")
    return p


def _error(fn):
    with pytest.raises(InputError) as e:
        fn()
    return str(e.value), e.value.line, e.value.field


#: The configs a verdict keeps in the tests below.
KEEP = ["cfg-00", "cfg-01"]


def _reads_as_whole(p, valid: bool, last_line: int):
    """Reading only :data:`KEEP` gives what the whole table gives: the same configs and kept
    runs when ``valid`` (the partial table is returned), else the same one-line error,
    naming the last line."""
    if valid:
        full, part = read_runs(p), read_runs(p, configs=KEEP)
        assert part.census is not None and part.configs == full.configs
        assert part.select(KEEP).runs == full.select(KEEP).runs
        return part
    whole = _error(lambda: read_runs(p))
    assert _error(lambda: read_runs(p, configs=KEEP)) == whole
    assert whole[1] == last_line


#: A bad (or unusual but valid) last row: every one must read as the whole table reads it.
LAST_ROWS = {
    "bad tps": "cfg-03,grp,gpu-1,0,local-a10g,fast,,,decode_wall,128x512,measure,,",
    "negative tps": "cfg-03,grp,gpu-1,0,local-a10g,-3,,,decode_wall,128x512,measure,,",
    "huge tps": "cfg-03,grp,gpu-1,0,local-a10g,2000000,,,decode_wall,128x512,measure,,",
    "nan tps": "cfg-03,grp,gpu-1,0,local-a10g,nan,,,decode_wall,128x512,measure,,",
    "underscore tps": "cfg-03,grp,gpu-1,0,local-a10g,3_00,,,decode_wall,128x512,measure,,",
    "bad ppl": "cfg-03,grp,gpu-1,0,local-a10g,300,0.5,,decode_wall,128x512,measure,,",
    "timestamp rep": "cfg-03,grp,gpu-1,1e12,local-a10g,300,,,decode_wall,128x512,measure,,",
    "rep -1 measured": "cfg-03,grp,gpu-1,-1,local-a10g,300,,,decode_wall,128x512,measure,,",
    "bad cold": "cfg-03,grp,gpu-1,0,local-a10g,300,,,decode_wall,128x512,measure,maybe,",
    "tab in config": "cfg-03\t,grp,gpu-1,0,local-a10g,300,,,decode_wall,128x512,measure,,",
    "blank config": " ,grp,gpu-1,0,local-a10g,300,,,decode_wall,128x512,measure,,",
    "too many fields": "cfg-03,grp,gpu-1,0,local-a10g,300,,,decode_wall,128x512,measure,,,x",
    "duplicate": None,  # a copy of a good row (see the test)
    "valid: short row": "cfg-04,grp,gpu-1,0,local-a10g,300",
    "rep claimed twice": "cfg-04,grp,gpu-1,0,local-a10g,300.5,,,decode_wall,128x512,measure,,",
    "valid: spaced value": "cfg-04,grp,gpu-1,108,local-a10g, 300.5 ,,,decode_wall,128x512,measure,,",
    "valid: exponent": "cfg-04,grp,gpu-1,107,local-a10g,3.1e2,,,decode_wall,128x512,measure,,",
    "valid: latency": "cfg-04,grp,gpu-1,7,local-a10g,0.004,,,latency_s,128x512,measure,,",
    "valid: blank row": ",,,,,,,,,,,,",
}


@pytest.mark.parametrize("case", LAST_ROWS)
def test_a_last_row_after_many_good_ones_reads_as_the_whole_table(tmp_path, case):
    rows = _good_rows(3000)
    if case == "duplicate":  # the same run as line 25 (row k = 23), of a config not kept
        rows.append(rows[23])
    else:
        rows.append(LAST_ROWS[case])
    # a bad row is the last one: named by its line (header + 3000 rows + 1)
    part = _reads_as_whole(_table(tmp_path, rows), case.startswith("valid"), last_line=3002)
    if part is not None:
        assert len(part.configs) == 20


def test_the_cli_names_a_bad_row_after_many_good_ones(tmp_path, cli):
    rows = _good_rows(3000)
    rows[1500] = rows[1500].replace("decode_wall", "decode\x00wall")
    p = _table(tmp_path, rows)
    code, _, err = cli("verdict", p, "--a", "cfg-00", "--b", "cfg-01", "--json")
    assert code == 2
    assert err.strip() == (f"planner: error: {p}:1502 field 'metric': control character "
                           "'\\x00' at position 7 of 'decode\\x00wall'")


def test_kept_runs_give_the_verdict_of_the_whole_table(runs_csv):
    from planner.decide.verdict import verdict

    a, b = "fa2sw_precache_agentI", "fa2sw_precache_agentI+SDPA_NUM_STAGES_AB=2"
    grp = "validity/free_ceiling_wallclock_realize/ab_out"
    full = read_runs(runs_csv).filter(run_group=grp)
    part = read_runs(runs_csv, configs=[a, b]).filter(run_group=grp)
    assert part.census is not None and full.census is None
    assert len(part) < len(read_runs(runs_csv)) / 10  # only A's and B's rows are kept
    assert part.configs == full.configs
    assert part.select([a, b]).runs == full.select([a, b]).runs
    assert part.measured().configs == full.measured().configs
    one = verdict(full, a, b, seed=1).to_dict()
    two = verdict(part, a, b, seed=1).to_dict()
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)


def test_census_words_filter_and_config_errors_as_the_whole_table(runs_csv, tmp_path):
    keep = ["fa2sw_precache_agentI", "fa2sw_precache_agentI+SDPA_NUM_STAGES_AB=2"]
    full, part = read_runs(runs_csv), read_runs(runs_csv, configs=keep)
    for kv in ({"platform": "nosuch"}, {"metric": "nosuch"}, {"workload": "nosuch"},
               {"platform": "hf-a10g-small", "run_group": "nosuch"},
               {"metric": "decode_wall", "workload": "nosuch"}):
        assert _error(lambda kv=kv: part.filter(**kv)) == _error(lambda kv=kv: full.filter(**kv))
    for cfgs in (["nosuch", keep[0]], [keep[0], "fa2sw_precache_agentl"]):
        assert _error(lambda c=cfgs: part.select(c)) == _error(lambda c=cfgs: full.select(c))
    # a config held only as warm-up passes is absent from the measured rows
    rows = _good_rows(400) + ["cfg-99,grp,gpu-1,-1,local-a10g,300,,,decode_wall,128x512,warmup,,"]
    p = _table(tmp_path, rows, "w.csv")
    full, part = read_runs(p), read_runs(p, configs=["cfg-00", "cfg-99"])
    assert part.configs == full.configs and "cfg-99" in part.configs
    assert _error(lambda: part.measured().select(["cfg-00", "cfg-99"])) == \
        _error(lambda: full.measured().select(["cfg-00", "cfg-99"]))
    with pytest.raises(ValueError, match="not kept"):
        part.select(["cfg-00", "cfg-05"])


def test_summary_rows_and_jsonl_read_for_some_configs(tmp_path):
    p = tmp_path / "s.csv"
    p.write_text("config,tps,mean,sd,n\nA,,80.3,0.3,3\nB,81,,,\nB,81.2,,,\nC,70,,,\n")
    full, part = read_runs(p), read_runs(p, configs=["A", "B"])
    assert [r.tps for r in part.select(["A", "B"]).runs] == \
        [r.tps for r in full.select(["A", "B"]).runs]
    j = tmp_path / "r.jsonl"
    j.write_text("".join(json.dumps({"config": c, "tps": 300 + k, "instance": f"i{k}",
                                     "rep": 0}) + "\n"
                         for k, c in enumerate("ABCABC")))
    full, part = read_runs(j), read_runs(j, configs=["A", "C"])
    assert len(part) == 4 and part.configs == ["A", "B", "C"]
    assert part.select(["A", "C"]).runs == full.select(["A", "C"]).runs


#: A last JSONL record (bad, or unusual but valid) after many good ones.
LAST_RECORDS = {
    "bad tps": {"tps": "fast"}, "bool tps": {"tps": True}, "nan tps": {"tps": float("nan")},
    "huge int tps": {"tps": 10**400}, "negative tps": {"tps": -3}, "bad ppl": {"ppl": 0.5},
    "float rep": {"rep": 2.5}, "huge rep": {"rep": 10**7}, "bad cold": {"cold": 2.0},
    "list name": {"workload": ["128x512"]}, "nul name": {"instance": "gpu\x001"},
    "no tps": {"tps": None}, "blank config": {"config": "  "},
    "duplicate": {},
    "valid: int tps": {"tps": 301, "rep": 109}, "valid: string rep": {"rep": "109"},
    "valid: spaced names": {"instance": " gpu-9 ", "platform": "local-a10g "},
    "valid: bool cold": {"cold": True, "rep": 111}, "valid: latency": {"metric": "latency_s",
                                                                      "tps": 0.004},
}


@pytest.mark.parametrize("case", LAST_RECORDS)
def test_a_last_jsonl_record_after_many_good_ones_reads_as_the_whole_table(tmp_path, case):
    recs = [{"config": f"cfg-{k % 20:02d}", "tps": 250 + (k * 7919 % 1000) / 100,
             "instance": f"gpu-{k % 7}", "rep": k // 140, "platform": "local-a10g",
             "metric": "decode_wall", "ppl": 2.5 if k % 3 else None, "cold": k % 4 == 0,
             "notes": f"n{k}"} for k in range(3000)]
    recs.append({**recs[23], **LAST_RECORDS[case]})
    p = tmp_path / "big.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    _reads_as_whole(p, case.startswith("valid"), last_line=3001)


def test_a_duplicate_hash_without_a_duplicate_reads_the_whole_table(tmp_path, monkeypatch):
    from planner.io import table_readers

    p = _table(tmp_path, _good_rows(500))
    keep = ["cfg-00", "cfg-01"]
    monkeypatch.setattr(table_readers.Census, "maybe_duplicate", lambda self: True)
    t = read_runs(p, configs=keep)
    assert t.census is None and len(t) == 500  # every run: the whole table, read again
    assert t.select(keep).runs == read_runs(p).select(keep).runs


# --- lookup messages (new-user report): a combination of filters, typos, Unicode forms ---

_LOOKUP = ("config,tps,run_group,metric,instance\n"
           "A,100.1,g1,decode_wall,i1\nB,100.4,g1,decode_wall,i2\n"
           "A,108.2,g2,bench_serving,i3\nB,108.9,g2,bench_serving,i4\n")


@pytest.mark.parametrize("configs", [None, ["A", "B"]], ids=["whole", "census"])
def test_filter_combination_names_both(tmp_path, configs):
    p = tmp_path / "r.csv"
    p.write_text(_LOOKUP)
    t = read_runs(p, configs=configs)
    with pytest.raises(InputError) as e:
        t.filter(metric="bench_serving", run_group="g1")
    m = e.value.message
    assert m.startswith("no row with run_group 'g1' and metric 'bench_serving' together")
    assert "rows with metric 'bench_serving' have run_groups: 'g2'" in m
    assert "rows with run_group 'g1' have metrics: 'decode_wall'" in m
    assert e.value.field == "run_group"


@pytest.mark.parametrize("configs", [None, ["A", "B"]], ids=["whole", "census"])
def test_filter_typo_did_you_mean(tmp_path, configs):
    p = tmp_path / "r.csv"
    p.write_text(_LOOKUP.replace("g1", "exp-alpha").replace("g2", "exp-beta"))
    t = read_runs(p, configs=configs)
    for kv in ({"run_group": "exp-alpah"}, {"metric": "decode_wall", "run_group": "exp-alpah"}):
        with pytest.raises(InputError) as e:
            t.filter(**kv)
        assert ("no row with run_group 'exp-alpah'; did you mean 'exp-alpha'?; the file's "
                "run_groups: 'exp-alpha', 'exp-beta'") == e.value.message


def test_unicode_normalisation_named(tmp_path, cli):
    import unicodedata

    nfd = unicodedata.normalize("NFD", "modèle")
    nfc = unicodedata.normalize("NFC", "modèle")
    assert nfd != nfc
    p = tmp_path / "r.csv"
    p.write_text(f"config,tps,run_group\n{nfd},100.1,{nfd}\n{nfd},100.3,{nfd}\nB,100.6,{nfd}\n"
                 f"B,100.9,{nfd}\n", encoding="utf-8")
    code, out, err = cli("verdict", p, "--a", nfc, "--b", "B")
    assert code == 2
    assert "another Unicode normalisation (NFD in the file, NFC as given)" in err
    assert "did you mean" not in err
    with pytest.raises(InputError, match="another Unicode normalisation"):
        read_runs(p).filter(run_group=nfc)
    code, out, err = cli("verdict", p, "--a", nfd, "--b", "B")  # the file's spelling works
    assert code == 0, err


def test_a_table_of_a_results_folder_says_folder(tmp_path, cli):
    """``planner next --watch DIR`` waits on a config with no runs yet: the line named the
    watched folder "the file" ("config 'sdpa' is not in the file; the file's configs")."""
    import shutil
    from pathlib import Path

    from planner.io.rows import Run
    from planner.io.table import RunsTable

    t = RunsTable([Run(config="fa2", tps=300.0)], str(tmp_path))
    with pytest.raises(InputError) as e:
        t.select(["fa2", "sdpa"])
    assert "config 'sdpa' is not in the folder; the folder's configs: 'fa2'" in str(e.value)
    f = tmp_path / "runs.csv"
    with pytest.raises(InputError) as e:
        RunsTable([Run(config="fa2", tps=300.0)], str(f)).select(["fa3"])
    assert "is not in the file; did you mean 'fa2'?" in str(e.value)

    src = Path(__file__).resolve().parents[2] / "fixtures" / "readers" / "serve" / "fa2"
    shutil.copytree(src, tmp_path / "w" / "fa2")
    code, out, err = cli("next", "--a", "fa2", "--b", "sdpa", "--watch", tmp_path / "w",
                         "--timeout", "0.05", "--interval", "0.02")
    assert "waiting (config 'sdpa' is not in the folder; the folder's configs: 'fa2')" in out
    assert "in the file" not in out + err


@pytest.mark.parametrize("configs", [None, ("A", "B")])
def test_a_config_of_warm_up_rows_only_is_named_as_such(tmp_path, configs, cli):
    """Every row of A is a warm-up pass: measured() drops them, and select said "config 'A'
    is not in the file; the file's configs: 'B'" of a config the file plainly holds."""
    p = tmp_path / "runs.csv"
    p.write_text("config,tps,phase\nA,300,warmup\nA,301,warmup\nB,302,measure\nB,303,measure\n")
    t = read_runs(p) if configs is None else read_runs(p, configs=configs)
    with pytest.raises(InputError) as e:
        t.measured().select(["A", "B"])
    assert e.value.field == "phase"
    assert "config 'A' has only warm-up rows (phase 'warmup'), no measured run" in str(e.value)
    assert t.measured().select(["B"]).configs == ["B"]
    code, _, err = cli("verdict", p, "--a", "A", "--b", "B")
    assert code == 2 and "has only warm-up rows" in err and "not in the file" not in err


@pytest.mark.parametrize("text, line, field", [
    # the '"' opens a config cell: the row looked short ("line 4 field 'tps': missing value")
    ('config,tps\nA,300\n"A,301\nB,302\nB,303\n', 3, "config"),
    # in the last column it swallowed B's rows ("config 'B' is not in the file")
    ('config,tps,notes\nA,300,\nA,301,"open\nB,302,\nB,303,\n', 3, "notes"),
    # the same in a row of a config not kept (the fast census path)
    ('config,tps,notes\nA,300,\nA,301,x\nC,300,"open\nB,302,\nB,303,\n', 4, "notes"),
])
def test_an_unclosed_quote_is_named_where_it_opens(tmp_path, cli, text, line, field):
    p = tmp_path / "runs.csv"
    p.write_text(text)
    code, _, err = cli("verdict", p, "--a", "A", "--b", "B")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"runs.csv:{line} field '{field}': a '\"' on line {line} is not closed" in err


def test_a_closed_quoted_line_break_in_notes_is_still_read(tmp_path):
    p = tmp_path / "runs.csv"
    p.write_text('config,tps,notes\nA,300,"two\nlines"\nA,301,x\nB,302,\nB,303,\n')
    assert [r.tps for r in read_runs(p).runs] == [300.0, 301.0, 302.0, 303.0]
    assert [r.tps for r in read_runs(p, configs=("B",)).select(["B"]).runs] == [302.0, 303.0]
