"""One headline everywhere: the terminal, Markdown and HTML views of every golden saved
result open with the same plain sentences and key numbers (the verdict's HDI and margin,
repeats' recommendation and beyond-cap answer, budget's purchase, draft's worth-a-run
verdict, the sweep's best row, calibrate's noise scales, shift's P(drop))."""

from __future__ import annotations

import html as _html
import json
import re
from pathlib import Path

import pytest

#: The golden saved results (tests/planner/report/conftest.py, fixture ``golden``).
GOLDEN_NAMES = sorted(p.name[:-len(".json.gz")] for p in
                      (Path(__file__).parent / "fixtures" / "golden").glob("*.json.gz"))

_NUM = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?")


def _norm(s: str) -> str:
    return " ".join(s.split())


def _numbers(s: str) -> list[str]:
    return _NUM.findall(s)


def _md_plain(s: str) -> str:
    """Markdown source as read: escapes and emphasis markers dropped, entities decoded."""
    s = re.sub(r"\\(.)", r"\1", s)
    return _html.unescape(s.replace("**", ""))


@pytest.mark.parametrize("name", GOLDEN_NAMES)
def test_every_medium_opens_with_the_same_headline(name, golden, tmp_path, cli, monkeypatch):
    from planner.report.render import headline

    r = golden(name)
    lead = _norm(" ".join(headline(r)))
    assert len(lead) > 20 and _numbers(lead), lead
    saved, md, html = tmp_path / "r.json", tmp_path / "r.md", tmp_path / "r.html"
    saved.write_text(json.dumps(r), encoding="utf-8")

    monkeypatch.setenv("COLUMNS", "100")
    code, out, err = cli("report", saved)
    assert code == 0, err
    term = _norm(out)
    assert term.startswith(lead), (term[:300], lead)

    code, _, err = cli("report", saved, "--md", md, "--html", html)
    assert code == 0, err
    body = md.read_text().split("\n", 2)[2]  # after the title line
    first = _norm(_md_plain(body.split("\n\n")[0]))
    assert first == lead, (first, lead)

    page = html.read_text()
    m = re.search(r'<p class="lead">(.*?)</p>', page, re.S)
    assert m, page[:500]
    html_lead = _norm(_html.unescape(m.group(1).replace("<br>", " ")))
    assert html_lead == lead
    assert page.index('<p class="lead">') < page.index("<table") if "<table" in page else True
    # the key numbers are the same in every medium
    assert _numbers(term[:len(lead)]) == _numbers(first) == _numbers(html_lead) == \
        _numbers(lead)


def test_repeats_html_states_the_beyond_cap_answer(golden):
    """A claim too small to settle within the cap: the Normal-approximation answer
    (roughly N runs per arm, $X) is in the page's headline, as in the terminal's."""
    from planner.report.render import render_html
    from planner.report.views.repeats import headline

    r = golden("repeats_delta")
    r["beyond_cap"] = {"design": "separate", "runs_per_arm": 3395.0, "gpu_hours": 910.0,
                       "cost_usd": 910.4, "assurance": 0.8, "note": ""}
    lines = headline(r)
    assert "roughly 3,400 runs per arm (about 910 GPU-h, $910)" in lines[-1]
    page = render_html(r)
    lead = re.search(r'<p class="lead">(.*?)</p>', page, re.S).group(1)
    assert "roughly 3,400 runs per arm (about 910 GPU-h, $910)" in lead


def test_verdict_html_leads_with_the_sentence_before_the_classical_tests(golden):
    from planner.report.render import render_html
    from planner.report.views.verdict import lead_sentence

    r = golden("verdict_quick")
    page = render_html(r)
    i = page.index(_html.escape(lead_sentence(r), quote=True))
    assert i < page.index("Welch t") and i < page.index("<img")


def _sig2(x: float) -> str:
    from planner.report.views.repeats import _sig2 as f

    return f(x)


#: Key numbers of each kind's result, as its views print them: every medium shows them.
KEY_NUMBERS = {
    "verdict": lambda r: [f"{r['p_b_gt_a']:.3f}", f"{r['p_equivalent']:.3f}",
                          f"{r['p_b_gt_a_beyond_rope']:.3f}",
                          f"{r['delta_tps']['mean']:+.2f}", f"{r['n_a']:,}", f"{r['n_b']:,}"],
    "repeats": lambda r: ([f"{r['recommended']['assurance']:.3f}",
                           f"{r['recommended']['gpu_hours']:.2f}"] if r.get("recommended")
                          else []) + ([_sig2(r["beyond_cap"]["runs_per_arm"])]
                                      if (r.get("beyond_cap") or {}).get("runs_per_arm")
                                      else [])
    + [f"{max(d['assurance'] for d in r['designs']):.3f}"],
    "budget": lambda r: [f"{r['totals']['runs']}", f"{r['totals']['gpu_hours']:.2f}"]
    + [c["name"] for c in r["comparisons"]],
    "draft": lambda r: [p["label"] for p in r["policies"]],
    "draft-sweep": lambda r: [f"{r['rows'][0]['projected_tps']:.1f}",
                              f"{r['rows'][0]['tokens_per_forward']:.3f}"],
    "shift": lambda r: [f"{r['p_drop']:.2f}"],
}


def _flat(s: str) -> str:
    return " ".join(re.sub(r"[│┃|─━┌┐└┘├┤┬┴┼╇╈┡┩┏┓┗┛]", " ", s).split())


def _html_text(page: str) -> str:
    page = re.sub(r"<(style|title)>.*?</\1>", " ", page, flags=re.S)
    return _html.unescape(re.sub(r"<[^>]+>", " ", page))


@pytest.mark.parametrize("name", [n for n in GOLDEN_NAMES if not n.startswith("calibrate")]
                         + ["verdict_with_runs", "repeats_beyond_cap"])
def test_every_medium_shows_the_same_key_numbers(name, golden, tmp_path, cli, monkeypatch):
    """Terminal, Markdown and HTML of one saved result: the headline (above) and the key
    numbers of its kind (verdict: P(B > A), P(equivalent), Δ, n; repeats: the recommended
    design's assurance and GPU-h, the beyond-cap runs; budget: the totals and every
    comparison; draft: every policy; the sweep's best row; shift's P(drop)) in all three."""
    from planner.report.render import kind_of

    if name == "verdict_with_runs":
        r = json.loads((Path(__file__).parent / "fixtures" / "verdict_with_runs.json")
                       .read_text())
    elif name == "repeats_beyond_cap":
        r = golden("repeats_delta")
        r["beyond_cap"] = {"design": "separate", "runs_per_arm": 3395.0, "gpu_hours": 910.0,
                           "cost_usd": 910.4, "assurance": 0.8, "note": ""}
    else:
        r = golden(name)
    keys = KEY_NUMBERS[kind_of(r)](r)
    assert keys, name
    saved, md, html = tmp_path / "r.json", tmp_path / "r.md", tmp_path / "r.html"
    saved.write_text(json.dumps(r), encoding="utf-8")
    monkeypatch.setenv("COLUMNS", "400")
    code, out, err = cli("report", saved)
    assert code == 0, err
    code, _, err = cli("report", saved, "--md", md, "--html", html)
    assert code == 0, err
    media = {"terminal": _flat(out), "markdown": _flat(_md_plain(md.read_text())),
             "html": _flat(_html_text(html.read_text()))}
    for medium, text in media.items():
        missing = [k for k in keys if _flat(k) not in text]
        assert not missing, (medium, missing)
