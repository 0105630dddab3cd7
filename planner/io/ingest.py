"""``planner ingest``: build a runs table from folders of benchmark results.

Two kinds of folder are read.

Benchmark tools' result files (vLLM ``bench serve`` / throughput / latency, SGLang
``bench_serving``, pyperf, hyperfine; see :mod:`planner.io.formats`), one folder per config:
``DIR/<config>/.../*.json[l]``. The config of a run is the one its file names (vLLM's
``config`` metadata or ``label``, SGLang's ``tag``, hyperfine's command), else the first folder
under ``DIR``, else the file name; for pyperf the folder wins and the benchmark name is the
workload. A ``.json``/``.jsonl`` file in a config folder that does not parse (truncated,
corrupt) is an error naming the file and line; files of no known format are skipped, counted
and named. Instances: as each reader says
(a pyperf file is one machine), or the ``instance`` given; otherwise blank (``planner verdict``
then reads each config's runs as one session on a machine of its own when no platform is known,
each run as its own instance on a platform with noise data). ``rep`` counts a config's runs on
one instance across files, in file-name order; that order is the reader's, not a server
session's, so every ingested run is written warm (``cold`` 0): a first run is flagged cold
only from a real ``rep`` / ``phase`` / ``session`` of a runs table.

The benchmark harness's result folders, when ``DIR`` holds ``summary.json`` files: walks
``DIR`` for ``summary.json`` files (fields ``tps``, ``job_id``, ``ppl``, ``duration_s``,
``completed``, ``model``). The config of a run is the ``name`` of the nearest
``manifest.json`` (the submission's) in the summary's folder or above it (up to ``DIR``);
without one, the first folder under ``DIR`` (``DIR/<config>/.../summary.json``), or the
summary's own folder when it sits directly in ``DIR``. Each HF job (``job_id``) is its own
instance; without a job id the run's folder is. Runs with ``completed: false`` are skipped
and counted.
"""

from __future__ import annotations

import json
from pathlib import Path

from planner.errors import InputError
from planner.io._parse import HUGE_INTEGER
from planner.io.files import read_text
from planner.io.platforms import canonical_platform
from planner.io.rows import Run, validate_run

__all__ = ["ingest"]

#: Defaults of the harness's runs (official HF jobs, bench_serving client, 128x512 prompts).
_HARNESS = {"platform": "hf-a10g-small", "metric": "bench_serving", "workload": "128x512"}


def _read_json(path: Path) -> dict:
    try:
        d = json.loads(read_text(path, str(path)))  # bounded (planner.io.files)
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", file=str(path)) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"unreadable JSON: {exc.msg}", file=str(path), line=exc.lineno) from None
    except ValueError:
        raise InputError(HUGE_INTEGER, file=str(path)) from None
    except OSError as exc:
        raise InputError(f"unreadable: {exc.strerror}", file=str(path)) from None
    if not isinstance(d, dict):
        raise InputError("expected a JSON object", file=str(path))
    return d


def _config_for(summary: Path, root: Path) -> str:
    d = summary.parent
    while True:
        m = d / "manifest.json"
        if m.is_file():
            man = _read_json(m)
            name = man.get("name")
            if not isinstance(name, str) or not name.strip():
                raise InputError("manifest has no 'name'", file=str(m), field="name")
            return name.strip(" ")  # a control character stays: validate_run names it
        if d == root or root not in d.parents:
            break
        d = d.parent
    rel = summary.parent.relative_to(root)
    return rel.parts[0] if rel.parts else root.name


def ingest(root: str | Path, *, platform: str | None = None, metric: str | None = None,
           workload: str | None = None, format: str | None = None,
           instance: str | None = None) -> tuple[list[Run], dict]:
    """Collect runs from result folders (harness summaries or benchmark tools' files).

    Parameters
    ----------
    root : str or Path
        Folder to walk.
    platform, workload : str, optional
        Values for these columns of every run. Harness folders default to ``hf-a10g-small``
        and ``128x512``; tools' files to '' (unknown).
    metric : str, optional
        Harness folders: the metric label of every run (default ``bench_serving``, the
        benchmark client's output throughput). Tools' files: the field to read (default the
        format's output-token throughput).
    format : str, optional
        Read every ``*.json``/``*.jsonl`` file as this format (:func:`planner.io.formats.format_names`)
        instead of detecting each; the harness's ``summary.json`` folders are read only when
        no format is given.
    instance : str, optional
        Tools' files: the instance of every run whose file cannot say.

    Returns
    -------
    runs : list of Run
    stats : dict
        ``found``, ``skipped_incomplete`` (harness) or ``skipped_unrecognised`` (tools' files);
        ``merged`` (configs whose runs came from two or more first-level folders: a shared
        manifest name, or a file naming a config another folder holds) and, for harness
        folders, ``other_results`` (tools' result files beside the summaries, not read).

    Raises
    ------
    InputError
        ``root`` is not a folder, holds no result file, or one is unreadable / lacks a valid
        value.
    """
    root = Path(root)
    if not root.is_dir():
        raise InputError("not a folder", file=str(root))
    files = sorted(root.rglob("summary.json"))
    if format is not None or not files:
        return _ingest_results(root, platform=platform, metric=metric, workload=workload,
                               format=format, instance=instance)
    if instance is not None:
        raise InputError("harness results name their instance (job_id)", file=str(root),
                         field="instance")
    platform = canonical_platform(platform or _HARNESS["platform"])
    metric = metric or _HARNESS["metric"]
    workload = workload or _HARNESS["workload"]
    runs, skipped = [], 0
    folders: dict[str, dict] = {}
    seen_jobs: dict[str, str] = {}
    counts: dict[str, int] = {}
    for f in files:
        d = _read_json(f)
        done = d.get("completed")
        if done is not None and not isinstance(done, bool):
            raise InputError(f"expected true or false, got {done!r}", file=str(f),
                             field="completed")
        if done is False:
            skipped += 1
            continue
        tps = d.get("tps")
        if isinstance(tps, bool) or not isinstance(tps, (int, float)):
            raise InputError(f"missing or invalid tps: {tps!r}", file=str(f), field="tps")
        ppl = d.get("ppl")
        if ppl is not None and (isinstance(ppl, bool) or not isinstance(ppl, (int, float))):
            # a perplexity that is not a number is an error, not a silently empty column
            # (its range is checked with the run: planner.io.limits.PPL)
            raise InputError(f"not a number: {ppl!r}", file=str(f), field="ppl")
        cfg = _config_for(f, root)
        folders.setdefault(cfg, {})[_top(f, root)] = None
        job = d.get("job_id")
        inst = str(job) if job else str(f.parent.relative_to(root))
        if job and job in seen_jobs:
            raise InputError(f"job_id {job!r} also in {seen_jobs[job]}: the same HF job "
                             "counted twice", file=str(f), field="job_id")
        if job:
            seen_jobs[job] = str(f)
        rep = counts.get(cfg, 0)
        counts[cfg] = rep + 1
        # the check every reader makes (planner.io.rows.validate_run): what ingest writes,
        # verdict reads
        runs.append(validate_run(
            Run(config=cfg, tps=float(tps), instance=inst, rep=rep, platform=platform,
                metric=metric, workload=workload, phase="measure", cold=False,
                ppl=None if ppl is None else float(ppl),
                timestamp=str(d.get("timestamp", "") or ""), run_group=str(root.name), line=0,
                extra={"source": str(f), "model": d.get("model", "")}), file=str(f)))
    return runs, {"found": len(files), "skipped_incomplete": skipped,
                  "merged": _merged(folders),
                  "other_results": _other_results(root)}


def _top(f: Path, root: Path) -> str:
    """The first folder under ``root`` holding ``f`` (``.`` for a file directly in it)."""
    rel = f.parent.relative_to(root)
    return rel.parts[0] if rel.parts else "."


def _merged(folders: dict[str, dict]) -> dict[str, list[str]]:
    """Configs whose runs came from two or more first-level folders: ``{config: folders}``."""
    return {c: list(v) for c, v in folders.items() if len(v) > 1}


def _other_results(root: Path) -> list[str]:
    """Benchmark tools' result files beside the harness's ``summary.json`` files (read only
    when the folder holds no summary: ingest them on their own)."""
    from planner.io.formats import detect_format

    out = []
    for f in sorted(p for p in root.rglob("*") if p.is_file()
                    and p.suffix.lower() in (".json", ".jsonl")
                    and p.name not in ("summary.json", "manifest.json")):
        try:
            text = read_text(f, str(f))
        except (OSError, InputError):
            continue
        if _json_error(text, f.suffix.lower()) is None and \
                detect_format(text, str(f)) != "table":
            out.append(str(f.relative_to(root)))
    return out


def _ingest_results(root: Path, *, platform, metric, workload, format, instance):
    """Runs of every tool result file below ``root`` (see the module docstring)."""
    from planner.io.formats import detect_format, format_names, read_results

    files = sorted(p for p in root.rglob("*") if p.is_file()
                   and p.suffix.lower() in (".json", ".jsonl"))
    runs, skipped = [], 0
    skipped_files: list[str] = []
    folders: dict[str, dict] = {}
    import hashlib

    digests: dict[bytes, Path] = {}
    for f in files:
        try:
            text = read_text(f, str(f))  # bounded; binary, UTF-16 and non-UTF-8 refused
        except OSError as exc:
            raise InputError(f"unreadable: {exc.strerror}", file=str(f)) from None
        rel = f.parent.relative_to(root)
        bad = _json_error(text, f.suffix.lower())
        if bad is not None and (rel.parts or format is not None):
            # a result file's place (DIR/<config>/...) that does not parse: a truncated or
            # corrupt result, not a file to skip
            msg, line = bad
            raise InputError(f"unreadable result file: {msg}", file=str(f), line=line)
        fmt = format or ("table" if bad is not None else detect_format(text, str(f)))
        if fmt == "table":
            skipped += 1
            skipped_files.append(str(f.relative_to(root)))
            continue
        digest = hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()
        if digest in digests:
            # a result file copied: its runs are not new runs (timestamps, at least, differ
            # between two real runs); counted twice they would narrow every interval
            raise InputError(f"a byte-identical copy of {digests[digest]}: a copy is not a "
                             "second run; remove one", file=str(f))
        digests[digest] = f
        got = read_results(text, path=str(f), format=fmt, metric=metric,
                           config=rel.parts[0] if rel.parts else None, instance=instance)
        for r in got:
            folders.setdefault(r.config, {})[_top(f, root)] = None
        runs.extend(got)
    if not runs:
        names = ", ".join(n for n in format_names() if n != "table")
        raise InputError(f"no benchmark result files ({names}) or summary.json below this "
                         f"folder ({skipped} other JSON files)", file=str(root))
    counts: dict[tuple, int] = {}
    plat = canonical_platform(platform) if platform else ""
    for r in runs:
        key = (r.config, r.instance)
        r.rep = counts.get(key, 0)   # file-name order: never a cold flag (r.cold is False)
        counts[key] = r.rep + 1
        r.cold = False
        r.platform = plat
        r.workload = workload or r.workload
        r.run_group = root.name
        validate_run(r, file=r.extra.get("source"))  # the names given here too
    return runs, {"found": len(files), "skipped_unrecognised": skipped,
                  "skipped_files": skipped_files, "merged": _merged(folders)}


def _json_error(text: str, suffix: str) -> tuple[str, int] | None:
    """Why ``text`` is neither a JSON document nor JSON lines, and its line; None if it is.

    A ``.jsonl`` file reports its first bad line; a ``.json`` file the error of the document.
    """
    if not text.strip():
        return "empty file", 1
    try:
        json.loads(text)
        return None
    except json.JSONDecodeError as exc:
        whole = (exc.msg, exc.lineno)
    except ValueError:
        return HUGE_INTEGER, None
    for k, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            json.loads(line)
        except json.JSONDecodeError as exc:
            return whole if suffix == ".json" else (f"{exc.msg} (JSON lines)", k)
        except ValueError:
            return HUGE_INTEGER, k
    return None
