"""The layer rule: ``models`` stands alone (NumPy / SciPy / numba, PyMC lazily), never ``planner``.

Two checks: every ``models`` module imports, and its embedded data loads, in a fresh interpreter
where ``planner`` cannot be imported at all; and nothing under ``models/`` names ``planner``
in an import statement (also inside functions, where lazy imports live) or as a package to
load from (``importlib.import_module``, ``importlib.resources.files``).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from models.errors import ModelInputError
from planner.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"

# Run in a child interpreter: `planner` is made unimportable before anything else loads, then
# every models module is imported and the data files each layer-owned loader reads are read.
_CHILD = r"""
import importlib, pkgutil, sys

class _NoPlanner:
    def find_spec(self, name, path=None, target=None):
        if name == "planner" or name.startswith("planner."):
            raise ImportError(f"models imported {name}")
        return None

sys.meta_path.insert(0, _NoPlanner())
import models
names = sorted(m.name for m in pkgutil.walk_packages(models.__path__, "models."))
for name in names:
    importlib.import_module(name)

from models.drafting.acceptance import default_model, load_records, per_prompt_counters
from models.drafting.cost import load_cost_model
from models.stats.noise import known_platforms, platform_prior
assert len(load_records()) > 0
assert default_model().k == 7
assert len(per_prompt_counters("B")) == 128
assert load_cost_model("F").step_ms(1, 1) > 0
for p in known_platforms():
    platform_prior(p)
assert not any(m == "planner" or m.startswith("planner.") for m in sys.modules)
print(len(names))
"""


def test_models_import_and_load_their_data_without_planner():
    proc = subprocess.run([sys.executable, "-c", _CHILD], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # every module was reached (errors, noise, assurance, tps_*, drafting/*: at least 15)
    assert int(proc.stdout.split()[-1]) >= 15


def _loaded_modules(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
        elif isinstance(node, ast.Call):  # importlib.import_module("x"), resources.files("x")
            out += [(node.lineno, a.value) for a in node.args
                    if isinstance(a, ast.Constant) and isinstance(a.value, str)
                    and (a.value == "planner" or a.value.startswith("planner."))]
    return out


def test_no_models_source_imports_planner():
    files = sorted(MODELS.rglob("*.py"))
    assert len(files) >= 15
    bad = [f"{f.relative_to(ROOT)}:{line} imports {mod}" for f in files
           for line, mod in _loaded_modules(f)
           if mod == "planner" or mod.startswith("planner.")]
    assert bad == []


def test_models_tests_do_not_import_planner():
    # tests mirror the packages: tests/models/ checks the model layer on its own, so a test
    # that needs the planner (runs reader, verdict, budget) lives in tests/planner/
    offenders = [(p.relative_to(ROOT), line, mod)
                 for p in sorted((ROOT / "tests" / "models").rglob("*.py"))
                 for line, mod in _loaded_modules(p)
                 if mod == "planner" or mod.startswith("planner.")]
    assert offenders == []


def test_import_scan_would_see_a_lazy_planner_import(tmp_path):
    # the scan above is only worth something if it finds an import hidden in a function body
    src = tmp_path / "m.py"
    src.write_text("def f():\n    from planner.errors import InputError\n    import planner\n"
                   "    return resources.files('planner').joinpath('data')\n")
    assert _loaded_modules(src) == [(2, "planner.errors"), (3, "planner"), (4, "planner")]


def test_planner_input_error_is_a_model_input_error():
    # the CLI catches ModelInputError, so both layers' errors become exit 2 with one line
    err = InputError("bad value\n  here", file="plan.toml", line=3, field="rule")
    assert isinstance(err, ModelInputError)
    assert str(err) == err.one_line() == "plan.toml:3 field 'rule': bad value here"
    assert ModelInputError("x", line=4).one_line() == "line 4: x"
    with pytest.raises(ModelInputError):
        raise InputError("caught through the base class")


def test_a_model_error_reaches_the_cli_as_exit_2(tmp_path, capsys):
    from planner.cli import main

    bad = tmp_path / "c.jsonl"
    bad.write_text("[1, 2]\n")
    with pytest.raises(SystemExit) as ei:
        main(["draft", str(bad), "--json"])
    assert ei.value.code == 2
    err = capsys.readouterr().err.strip()
    # raised by models.drafting.capture, reported by the CLI as one line
    assert err == f"planner: error: {bad}:1: expected a JSON object per line"


# ---- option spellings live in planner/commands/ only --------------------------------------
# The decision layer names a bad value's field plainly (``rope``, ``x``) and words its messages
# and notes without the command line's spellings; each command maps its fields to its options
# (planner.cli._options.as_option). A spelling in the decision layer is wrong for every
# command that spells the option otherwise (or has none), and ends up in saved JSON results.
PLANNER = ROOT / "planner"
_OPTION = re.compile(r"(^|[\s'\"(/\[])--[a-z][a-z0-9-]*")

#: Known spellings in files outside the change that moved the others to the commands, as
#: (path, option): to be worded plainly by whoever owns the file; the list only shrinks. Do not
#: add to it: word the string plainly and map the field in the command instead.
_KNOWN = {
    ("planner/decide/budget.py", "--json"),               # "is it 'planner draft --json' output?"
    ("planner/io/formats/hyperfine.py", "--command-name"),  # hyperfine's own option, not ours
    ("planner/report/output.py", "--md"),          # guard_outputs' default option names
    ("planner/report/output.py", "--html"),
    ("planner/report/views/repeats.py", "--delta"),
    ("planner/report/views/verdict.py", "--cv"),    # "state your noise (--cv)"
}


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring nodes (documentation, not a string the program shows)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                out.add(id(body[0].value))
    return out


def _option_spellings(path: Path) -> list[tuple[int, str]]:
    """(line, option) of every option spelling in a string constant of ``path``, f-string
    parts included; docstrings are left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    docs = _docstrings(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docs:
            out += [(node.lineno, m.group(0).lstrip(" \t\n'\"(/[")) for m in
                    _OPTION.finditer(node.value)]
    return sorted(set(out))


def test_only_commands_spell_options():
    files = [p for p in sorted(PLANNER.rglob("*.py"))
             if p.relative_to(PLANNER).parts[0] != "cli"]
    assert len(files) >= 20 and PLANNER / "decide" / "verdict.py" in files
    found = [(str(p.relative_to(ROOT)), line, opt) for p in files
             for line, opt in _option_spellings(p)]
    bad = [f"{f}:{line} {opt}" for f, line, opt in found if (f, opt) not in _KNOWN]
    assert bad == [], "option spellings outside planner/commands/:\n" + "\n".join(bad)


def test_option_scan_sees_fstring_parts_and_skips_docstrings(tmp_path):
    src = tmp_path / "m.py"
    src.write_text('"""Module doc: planner draft --json."""\n'
                   'def f(x):\n    """Doc: --x."""\n'
                   '    a = f"{x} must be < 1; use more --draws"\n'
                   '    b = "(give --platform)"\n    c = "x--y, 5 -- 6, -1, --"\n'
                   '    return InputError("bad", field="--rope")\n')
    assert _option_spellings(src) == [(4, "--draws"), (5, "--platform"), (7, "--rope")]


# ---- the whole order: layers import only layers below them, and no import circle -------------
#: Layers of each package, lowest first. A module may import its own layer and the layers
#: before it: ``models``: errors < kernels < stats < drafting; ``planner``: errors < the
#: package root (version, shared defaults) < io (inputs) < results (typed results) < decide (decisions) < report
#: (renderers: result dicts in, text out; they never import a decision) < cli (the only
#: layer that knows option spellings).
LAYERS = {
    "models": ["models.errors", "models", "models.kernels", "models.stats", "models.drafting"],
    "planner": ["planner.errors", "planner", "planner.io", "planner.results", "planner.decide",
                "planner.report", "planner.cli", "planner.__main__"],
}
MAX_MODULE_LINES = 800


def _module_graph():
    """Every module of ``models`` and ``planner`` -> the project modules it imports (module
    level and inside functions)."""
    mods = {}
    for pkg in ("planner", "models"):
        for p in (ROOT / pkg).rglob("*.py"):
            parts = list(p.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join(parts)] = p
    graph = {m: set() for m in mods}
    for m, p in mods.items():
        is_pkg = p.name == "__init__.py"
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    here = m.split(".") if is_pkg else m.split(".")[:-1]
                    here = here[: len(here) - (node.level - 1)]
                    base = ".".join(here + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for t in targets:
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != m and not m.startswith(t + "."):
                    graph[m].add(t)
    return mods, graph


def _layer(mod: str) -> tuple[str, int]:
    top = mod.split(".")[0]
    match = [(len(name), k) for k, name in enumerate(LAYERS[top])
             if mod == name or mod.startswith(name + ".")]
    return top, max(match)[1]  # the most specific layer the module sits in


def test_layers_import_only_layers_below_them():
    _, graph = _module_graph()
    bad = []
    for m, deps in graph.items():
        top, k = _layer(m)
        for d in deps:
            dtop, dk = _layer(d)
            if dtop == top and dk > k:
                bad.append(f"{m} imports {d} ({LAYERS[top][dk]} is above {LAYERS[top][k]})")
    assert bad == [], "\n".join(sorted(bad))


def test_renderers_never_import_a_decision():
    """The report layer reads result dicts (and their types in planner.results) only."""
    _, graph = _module_graph()
    bad = [f"{m} imports {d}" for m, deps in graph.items() if m.startswith("planner.report")
           for d in deps if d.startswith("planner.decide") or d.startswith("planner.cli")]
    assert bad == []


def test_no_import_circle():
    _, graph = _module_graph()
    index, low, stack, on, cycles = {}, {}, [], set(), []
    counter = [0]

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(" <-> ".join(sorted(comp)))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in graph:
        if v not in index:
            visit(v)
    assert cycles == []


def test_no_module_over_the_size_limit():
    mods, _ = _module_graph()
    big = [f"{p.relative_to(ROOT)}: {n} lines" for p in mods.values()
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES]
    assert big == []


def test_cycle_scan_sees_a_function_level_import(tmp_path, monkeypatch):
    """The graph holds imports inside functions (where lazy imports live)."""
    _, graph = _module_graph()
    assert "models.stats.tps_exact" in graph["planner.decide.verdict"] or any(
        d.startswith("models.stats") for d in graph["planner.decide.verdict"])
