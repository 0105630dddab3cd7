"""The rank and next report kinds: a saved result renders again in the terminal, Markdown
and HTML (each opening with the headline; the rank page with its forest plot), values are
escaped, and a saved result with a bad field is refused in one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from planner.cli import main

ROOT = Path(__file__).resolve().parents[3]
RUNS = ROOT / "examples" / "runs" / "tps_runs.csv"
G = "validity/served_stack_identity_ablation/measured"


def _saved(capsys, tmp_path, argv, name):
    main(argv + ["--json"])
    out = capsys.readouterr().out
    p = tmp_path / f"{name}.json"
    p.write_text(out, encoding="utf-8")
    return p, json.loads(out)


@pytest.mark.parametrize("kind", ["rank", "next"])
def test_saved_result_renders_in_every_medium(kind, capsys, tmp_path, monkeypatch):
    from planner.report.render import headline

    argv = (["rank", str(RUNS), "--run-group", "mtp_k_sweep_speed/runs"] if kind == "rank"
            else ["next", str(RUNS), "--a", f"{G}:S0", "--b", f"{G}:S1", "--sims", "100"])
    saved, r = _saved(capsys, tmp_path, argv, kind)
    assert r["command"] == kind
    lead = " ".join(" ".join(headline(r)).split())
    monkeypatch.setenv("COLUMNS", "200")
    main(["report", str(saved)])
    term = " ".join(capsys.readouterr().out.split())
    assert term.startswith(lead)
    md, html = tmp_path / "r.md", tmp_path / "r.html"
    main(["report", str(saved), "--md", str(md), "--html", str(html)])
    capsys.readouterr()
    body = md.read_text().split("\n", 2)[2]
    assert " ".join(body.split("\n\n")[0].split()) == lead
    page = html.read_text()
    assert re.search(r'<p class="lead">', page)
    if kind == "rank":
        assert "<svg" in page and page.count("<circle") == len(r["configs"]) and "ROPE" in page


def test_rank_values_are_escaped(tmp_path, capsys):
    csv = tmp_path / "t.csv"
    rows = ["config,instance,rep,platform,tps,metric"]
    for c in ("<b>bold</b>", "[blink]x", "plain"):
        for j, v in enumerate((300.0, 300.4, 299.8)):
            rows.append(f"\"{c}\",gpu0,{j + 1},local-a10g,{v + (5 if c == 'plain' else 0)},"
                        "decode_wall")
    csv.write_text("\n".join(rows) + "\n")
    html = tmp_path / "r.html"
    main(["rank", str(csv), "--html", str(html), "--json"])
    capsys.readouterr()
    page = html.read_text()
    assert "<b>bold</b>" not in page and "&lt;b&gt;bold&lt;/b&gt;" in page


def test_a_bad_saved_field_is_one_line(tmp_path, capsys):
    saved, r = _saved(capsys, tmp_path, ["rank", str(RUNS), "--run-group", "bi0_k_sweep"],
                      "rank")
    r["configs"][0]["mean"] = "fast"
    saved.write_text(json.dumps(r))
    with pytest.raises(SystemExit) as e:
        main(["report", str(saved)])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "configs[0].mean" in err[0]


def test_a_saved_ranking_without_configs_is_one_line(tmp_path, capsys):
    # an edited result with no configs was an IndexError inside the one-line error
    saved, r = _saved(capsys, tmp_path, ["rank", str(RUNS), "--run-group", "bi0_k_sweep"],
                      "rank")
    r["configs"] = r["configs"][:1]
    saved.write_text(json.dumps(r))
    with pytest.raises(SystemExit) as e:
        main(["report", str(saved)])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'configs'" in err[0] and "length >= 2" in err[0]
    assert "IndexError" not in err[0]
