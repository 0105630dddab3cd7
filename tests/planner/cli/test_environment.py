"""Crashes from the environment: a terminal that cannot encode Δ, a notebook's MPLBACKEND, no
home directory, a read-only file system, Ctrl-C while the command starts. Each gives the right
answer (transliterate, Agg, a temporary folder) or one line and exit code 2, never a signal or
a traceback. (A damaged or unwritable numba cache: tests/models/kernels/test_jit.py.)"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
QUICK = ["verdict", "--a", "308.49", "--b", "308.05", "--platform", "hf-a10g-small"]


def _planner(args, env_changes=None, cwd=None, timeout=300):
    env = dict(os.environ)
    env.pop("MPLBACKEND", None)
    for k, v in (env_changes or {}).items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return subprocess.run([sys.executable, "-m", "planner", *map(str, args)], env=env,
                          cwd=cwd or ROOT, capture_output=True, timeout=timeout)


def test_an_ascii_terminal_gets_transliterated_text():
    out = _planner(QUICK, {"PYTHONIOENCODING": "ascii"})
    assert out.returncode == 0, out.stderr.decode(errors="replace")[-2000:]
    text = out.stdout.decode("ascii")  # nothing that is not ASCII
    assert "Delta" in text and "+/-" in text and "Traceback" not in out.stderr.decode()
    err = _planner(["verdict", "--a", "308", "--b", "309", "--prior", "nø—prior"],
                   {"PYTHONIOENCODING": "ascii"})
    msg = err.stderr.decode("ascii")
    assert err.returncode == 2 and msg.count("\n") == 1 and "--" in msg, msg
    latin = _planner(QUICK, {"PYTHONIOENCODING": "latin-1"})
    assert latin.returncode == 0 and "±".encode("latin-1") in latin.stdout


def test_the_ascii_map_and_its_fallbacks():
    from planner.__main__ import _transliterate

    import codecs

    s = "Δ ±0.1 % — 95 % … ≥ é ☃"

    codecs.register_error("planner-test", _transliterate)
    assert s.encode("ascii", "planner-test") == b"Delta +/-0.1 % -- 95 % ... >= e ?"


def test_one_blas_thread_unless_the_user_chose():
    from planner.__main__ import BLAS_THREAD_VARS, one_blas_thread

    env = {}
    assert one_blas_thread(env) and env == {"OPENBLAS_NUM_THREADS": "1"}
    for var in BLAS_THREAD_VARS:
        env = {var: "4"}
        assert not one_blas_thread(env) and env == {var: "4"}, var
    env = {"OPENBLAS_NUM_THREADS": ""}  # set but empty: OpenBLAS ignores it, so do we
    assert one_blas_thread(env) and env["OPENBLAS_NUM_THREADS"] == "1"


@pytest.mark.parametrize("chosen, want", [(None, 1), ("2", 2)])
def test_the_command_runs_with_one_blas_thread(chosen, want):
    """What OpenBLAS itself reports inside a ``planner`` process (threadpoolctl), with the
    variables of this test process removed and with a user's own count."""
    code = ("import sys, runpy\n"
            "import threadpoolctl\n"
            "import atexit\n"
            "atexit.register(lambda: print('BLAS', sorted({i['num_threads'] for i in "
            "threadpoolctl.threadpool_info() if i['user_api'] == 'blas'}), file=sys.stderr))\n"
            "sys.argv = ['planner', 'verdict', '--a', '308.49', '--b', '308.05']\n"
            "runpy.run_module('planner', run_name='__main__')\n")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1)
    if want > cores:  # OpenBLAS caps a count at the cores this process may use
        pytest.skip(f"{cores} core(s): OpenBLAS runs {cores} thread(s) whatever is asked")
    from planner.__main__ import BLAS_THREAD_VARS

    env = {k: v for k, v in os.environ.items() if k not in BLAS_THREAD_VARS}
    if chosen:
        env["OPENBLAS_NUM_THREADS"] = chosen
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    assert f"BLAS [{want}]" in out.stderr.decode(), out.stderr.decode()[-2000:]


@pytest.mark.parametrize("backend", ["module://matplotlib_inline.backend_inline", "bogus"])
def test_a_notebook_backend_does_not_break_html_reports(tmp_path, backend):
    page = tmp_path / "r.html"
    out = _planner([*QUICK, "--html", page], {"MPLBACKEND": backend})
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    assert b"Traceback" not in out.stderr and "data:image/png;base64" in page.read_text()


@pytest.mark.parametrize("home", ["", "/", "relative/home", None, "/nonexistent-home"])
def test_no_home_makes_no_folder_at_the_root(tmp_path, home):
    code = ("import os, sys\n"
            "from planner.__main__ import homeless_dirs\n"
            "homeless_dirs()\n"
            "import matplotlib\n"
            "print(matplotlib.get_configdir()); print(matplotlib.get_cachedir())\n"
            "print(os.environ['PYTENSOR_FLAGS'])\n")
    env = dict(os.environ)
    for k in ("MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "PYTENSOR_FLAGS", "HOME"):
        env.pop(k, None)
    if home is not None:
        env["HOME"] = home
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    config, cache, flags = out.stdout.split("\n")[:3]
    for d in (config, cache, flags.split("=", 1)[1]):
        assert not d.startswith(("/.", str(tmp_path))), d  # not / nor the current folder
        assert "spec-planner-" in d
    assert list(tmp_path.iterdir()) == []
    assert not os.path.exists("/nonexistent-home")  # a missing home is not made
    if home != "":
        return  # the whole command once (it compiles the kernels, ~15 s)
    done = _planner([*QUICK, "--html", "r.html"], {"HOME": home, "MPLCONFIGDIR": None,
                                                    "XDG_CACHE_HOME": None}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]


def test_a_home_is_left_alone(tmp_path):
    from planner import __main__ as m

    old = dict(os.environ)
    try:
        os.environ["HOME"] = str(tmp_path)
        os.environ.pop("MPLCONFIGDIR", None)
        m.homeless_dirs()
        assert "MPLCONFIGDIR" not in os.environ
    finally:
        os.environ.clear()
        os.environ.update(old)


def test_a_read_only_file_system_is_one_line(cli, tmp_path, monkeypatch):
    import tempfile

    def erofs(*a, **k):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(tempfile, "mkstemp", erofs)
    md = tmp_path / "r.md"
    code, _, err = cli(*QUICK, "--md", md)
    assert code == 2 and err.count("\n") == 1 and "Read-only file system" in err, err
    assert not md.exists()


def test_an_os_error_anywhere_is_one_line(cli, monkeypatch):
    import planner.cli as c

    def boom(*a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/some/where")

    monkeypatch.setattr(c, "app", boom)
    code, _, err = cli(*QUICK)
    assert code == 2 and err == "planner: error: /some/where: No space left on device\n"


_STARTING = """
import sys
from planner.__main__ import quiet_sigint, run
quiet_sigint()  # what planner/__init__ does first for 'planner' and 'python -m planner'
sys.argv = ["planner", *{args!r}]
sys.stdout.write("go\\n"); sys.stdout.flush()
run()
"""


def test_ctrl_c_while_starting_is_quiet(tmp_path):
    """SIGINT at any moment of the first 300 ms after spec-planner's first line: exit 130,
    never a traceback. (Before it, Python's own start-up, ``site`` and ``runpy``, is
    Python's to handle.)"""
    bad = []
    for delay in (0.0, 0.005, 0.02, 0.04, 0.07, 0.1, 0.15, 0.25):
        p = subprocess.Popen([sys.executable, "-c", _STARTING.format(args=QUICK)],
                             cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert p.stdout.readline() == b"go\n"
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
        if b"Traceback" in err or p.returncode not in (130, 0):
            bad.append((delay, p.returncode, err.decode(errors="replace")[-600:]))
    assert not bad, bad


def test_the_cli_installs_the_quiet_handler_first_thing(monkeypatch):
    import planner

    old = signal.getsignal(signal.SIGINT)
    try:
        for argv, quiet in ((["python", "-m", "planner", "verdict"], True),
                            (["/venv/bin/python", "/venv/bin/planner", "verdict"], True),
                            (["python", "-c", "import planner"], False),
                            (["python", "-m", "pytest"], False)):
            signal.signal(signal.SIGINT, signal.default_int_handler)
            monkeypatch.setattr(sys, "orig_argv", argv)
            planner._cli_start()
            assert (signal.getsignal(signal.SIGINT) is planner._exit_130) is quiet, argv
    finally:
        signal.signal(signal.SIGINT, old)
