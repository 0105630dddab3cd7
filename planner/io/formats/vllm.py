"""vLLM benchmark results: ``vllm bench serve`` / ``benchmark_serving.py``, throughput, latency.

Three JSON shapes, each mapped to runs honestly:

``serve`` (``--save-result``, or ``--append-result`` with one JSON object per line)
    One file (or line) is one benchmark run against a server: one run. The default metric is
    ``output_throughput`` (output tokens/s); any other top-level number is selectable
    (``mean_tpot_ms``, ``median_itl_ms``, ``mean_ttft_ms``, ``total_token_throughput``, ...).
    Latencies (``*_ms``) are lower-is-better and carried as such, never inverted. The config
    is the file's ``config`` field (``--metadata config=NAME``), else its ``label`` when that
    is not just the backend name, else the caller's folder label, else the file name. The
    file does not say which machine served it: the instance is left unset (each run its own
    instance) unless the caller gives one. A run that completed fewer requests than it sent
    (``completed`` < ``num_prompts``, or ``failed`` > 0) keeps its value and carries
    ``requests`` = ``"completed/sent"`` (:func:`requests_done`), which the verdict notes.
``throughput`` (``benchmark_throughput.py`` / ``vllm bench throughput --output-json``)
    One run. Default metric ``output_tokens_per_second`` when the file has it, else
    ``tokens_per_second`` (prompt + output tokens per second, as vLLM writes it).
``latency`` (``benchmark_latency.py`` / ``vllm bench latency --output-json``)
    Each entry of ``latencies`` (seconds per batch) is a run of one process: same instance
    (the file's), metric ``latency_s``, lower is better.
"""

from __future__ import annotations

from planner.errors import InputError
from planner.io.formats._common import (Document, Format, fallback_config, make_run,
                                        pick_metric, refuse_metric, text_field, value)
from planner.io.rows import Run

__all__ = ["FORMATS", "requests_done", "is_serve", "looks_like_serve", "looks_like_throughput", "looks_like_latency", "read_serve",
           "read_throughput", "read_latency"]


def looks_like_serve(record: dict) -> bool:
    """A serving-benchmark record (vLLM or SGLang): ``output_throughput``, ``completed``,
    ``duration`` (both tools always write the three)."""
    return {"output_throughput", "completed", "duration"} <= record.keys()


def is_serve(doc: Document) -> bool:
    """A file of serving-benchmark records (one object, or JSON Lines), vLLM's or SGLang's."""
    recs = doc.records
    return bool(recs) and all(looks_like_serve(r) for _, r in recs)


def looks_like_throughput(record: dict) -> bool:
    """A ``benchmark_throughput.py`` result."""
    return {"elapsed_time", "requests_per_second", "tokens_per_second"} <= record.keys()


def looks_like_latency(record: dict) -> bool:
    """A ``benchmark_latency.py`` result."""
    return {"avg_latency", "latencies"} <= record.keys()


def _count(v) -> int | None:
    """A non-negative whole count of a record (JSON ints only: not bool, not 128.0), else None."""
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def requests_done(record: dict) -> str:
    """``"completed/sent"`` when a serving run completed fewer requests than it sent, else ''.

    Sent is ``num_prompts`` (what ``vllm bench serve --save-result`` records); without it,
    ``completed + failed`` (``failed``: SGLang's and newer vLLM's count of failed requests).
    Failed requests return no tokens while the run's ``duration`` still counts them, so its
    throughput measures a smaller workload than the other runs'."""
    done, sent, failed = (_count(record.get(k)) for k in ("completed", "num_prompts", "failed"))
    if done is None:
        return ""
    if sent is None and failed:
        sent = done + failed
    return f"{done}/{sent}" if sent is not None and done < sent else ""


def _serve_config(record: dict, path: str, config: str | None) -> str:
    named = text_field(record, "config")
    if named:
        return named
    label = text_field(record, "label")
    if label and label not in (text_field(record, "backend"), text_field(record, "endpoint_type")):
        return label
    return fallback_config(path, config)


def read_serve(records: list[tuple[int, dict]], *, path: str, metric: str | None = None,
               config: str | None = None, instance: str | None = None,
               config_key=_serve_config, what: str = "vLLM serve") -> list[Run]:
    """Runs of serving-benchmark records, one run per record.

    Parameters
    ----------
    records : list of (int, dict)
        (line, record) pairs: one JSON file is line 1; a JSONL file gives its line numbers.
    path : str
        The file, for messages and the ``source`` of each run.
    metric : str, optional
        Field to read (default ``output_throughput``).
    config, instance : str, optional
        The caller's config label (used when the record names none) and instance.
    """
    runs = []
    for k, (line, rec) in enumerate(records):
        name, v = pick_metric(rec, metric, "output_throughput", path=path, line=line, what=what)
        runs.append(make_run(config=config_key(rec, path, config), tps=v, metric=name,
                             path=path, line=line, rep=k, instance=instance or "",
                             timestamp=text_field(rec, "date"),
                             extra={"model": text_field(rec, "model_id"),
                                    **({"requests": requests_done(rec)}
                                       if requests_done(rec) else {})}))
    return runs


def read_throughput(record: dict, *, path: str, metric: str | None = None,
                    config: str | None = None, instance: str | None = None) -> list[Run]:
    """One run of a ``benchmark_throughput.py`` result."""
    default = ("output_tokens_per_second" if "output_tokens_per_second" in record
               else "tokens_per_second")
    name, v = pick_metric(record, metric, default, path=path, line=1, what="vLLM throughput")
    cfg = text_field(record, "config") or fallback_config(path, config)
    return [make_run(config=cfg, tps=v, metric=name, path=path, line=1, rep=0,
                     instance=instance or "")]


def read_latency(record: dict, *, path: str, metric: str | None = None,
                 config: str | None = None, instance: str | None = None) -> list[Run]:
    """One run per entry of ``latencies`` (seconds), all on the file's instance."""
    if metric not in (None, "latency_s"):
        refuse_metric(metric, path, ("latency_s",), "vLLM latency")
    lat = record.get("latencies")
    if not isinstance(lat, list) or not lat:
        raise InputError("expected a non-empty list of latencies (seconds)", file=path,
                         field="latencies")
    cfg = text_field(record, "config") or fallback_config(path, config)
    inst = instance or fallback_config(path, None)
    return [make_run(config=cfg, tps=value(x, path=path, line=None, field="latencies",
                                                metric="latency_s"),
                     metric="latency_s", path=path, line=1, rep=k, instance=inst,
                     cold=False)
            for k, x in enumerate(lat)]



def _one(looks_like):
    return lambda doc: isinstance(doc.data, dict) and looks_like(doc.data)


#: The formats this module declares (``--format vllm`` picks one of them by content).
FORMATS = (
    Format("vllm-latency", "vLLM bench latency JSON (benchmark_latency.py)",
           sniff=_one(looks_like_latency), read=lambda doc, **kw: read_latency(doc.data, **kw),
           family="vllm"),
    Format("vllm-throughput", "vLLM bench throughput JSON (benchmark_throughput.py)", sniff=_one(looks_like_throughput),
           read=lambda doc, **kw: read_throughput(doc.data, **kw), family="vllm"),
    Format("vllm-serve", "vLLM bench serve saved results (a run per record)", sniff=is_serve, read=lambda doc, **kw: read_serve(doc.records, **kw),
           family="vllm", refusal=("no output_throughput", "output_throughput")),
)
