"""The drafting-policy registry drives everything about a policy: a toy declared in one
place is parsed, validated, walked by ``run_draft`` / ``planner draft`` and listed in
``planner draft --help``; the docs table is the registry's."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from models.drafting import policies as P
from planner.errors import InputError

ROOT = Path(__file__).resolve().parents[3]
SMALL = ROOT / "tests" / "fixtures" / "draft_small_capture.jsonl.gz"

#: The toy, as a plug-in module would declare it: prompt lookup with a one-token window and
#: its own depth range 1..8 (alias ``d``).
TOY_SOURCE = '''
from models.drafting import policies as P
from models.drafting.policies._common import lookup_walk

TOY = P.Policy(
    "toy", "one-token-window prompt lookup (a test policy)",
    (P.Param("depth", 4, True, P.Range("toy depth", "tokens", 1, 8, "a test range"),
             ("d", "num_speculative_tokens"), "draft tokens per step"),),
    lambda ctx, p: lookup_walk(ctx, "pld", {"n": 1, **p}), aliases=("toy-lookup",))
'''


@pytest.fixture
def toy():
    ns: dict = {}
    exec(TOY_SOURCE, ns)
    P.register(ns["TOY"])
    yield ns["TOY"]
    P.unregister("toy")


def test_toy_policy_is_parsed_validated_and_run(toy):
    from planner.decide.draft.policy import default_specs, parse_policy, validate_policy
    from planner.decide.draft import run_draft

    sp = parse_policy("TOY-LOOKUP:d=3")  # alias of the name, alias of the parameter
    assert (sp.name, sp.params) == ("toy", {"depth": 3})
    assert default_specs(["toy"])[0].params == {"depth": 4}  # the declared, shown default
    with pytest.raises(InputError, match="does not take 'n'"):
        parse_policy("toy:n=2")
    with pytest.raises(InputError, match=r"\[1, 8\] tokens") as exc:
        validate_policy(parse_policy("toy:depth=9"))
    assert exc.value.field == "depth"
    res = run_draft(SMALL, [parse_policy("toy:depth=5"), parse_policy("pld:n=1,depth=5")],
                    n_boot=100, mc_reps=2, seed=0)
    toy_row, pld_row = res.policies[1], res.policies[2]
    assert toy_row["policy"] == "toy" and toy_row["stochastic"] is False
    # the toy walks exactly pld(n=1) at the same depth: same tokens/forward, same rate
    assert toy_row["tokens_per_forward"] == pld_row["tokens_per_forward"]
    assert toy_row["tokens_per_forward"]["point"] > 1.0


def _planner_with_toy(*args):
    code = TOY_SOURCE + "\nP.register(TOY)\nimport sys\nfrom planner.cli import main\n" \
        "main(sys.argv[1:])\n"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT)


def test_toy_policy_runs_in_planner_draft_and_is_in_its_help():
    p = _planner_with_toy("draft", SMALL, "-p", "toy:num_speculative_tokens=6",
                          "--bootstrap", "100", "--mc-reps", "2", "--json")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)["policies"]
    assert [r["label"] for r in rows] == ["ar", "toy(depth=6)"]
    bad = _planner_with_toy("draft", SMALL, "-p", "toy:d=9")
    assert bad.returncode == 2 and "[1, 8] tokens" in bad.stderr and "Traceback" not in bad.stderr
    h = _planner_with_toy("draft", "--help")
    assert h.returncode == 0
    flat = " ".join(h.stdout.replace("│", " ").split())
    assert "toy (one-token-window prompt lookup (a test policy); depth = num_speculative_tokens)" \
        in flat


def test_help_and_docs_list_every_registered_policy():
    from planner.decide.draft.policy import policy_help, policy_table

    help_text = policy_help()
    for name, pol in P.registry().items():
        assert f"{name} ({pol.help}" in help_text
    docs = (ROOT / "docs" / "drafting.md").read_text(encoding="utf-8")
    assert policy_table() in docs, "docs/drafting.md policy table: regenerate from the registry"


def test_registry_refuses_a_taken_name():
    with pytest.raises(ValueError, match="pld"):
        P.register(P.Policy("pld", "again", (), lambda ctx, p: None))
