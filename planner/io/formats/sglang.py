"""SGLang ``bench_serving`` results (``--output-file``: JSONL, one benchmark run per line).

Each line is one benchmark run against a server: one run. The default metric is
``output_throughput`` (output tokens/s); ``mean_tpot_ms``, ``median_itl_ms``, ``mean_ttft_ms``,
``mean_e2e_latency_ms``, ... are selectable and are lower-is-better. The config is the line's
``tag`` (``--tag NAME``), else the caller's folder label, else the file name. The file does not
say which machine served it: the instance is left unset unless the caller gives one.
"""

from __future__ import annotations

from planner.io.formats._common import Format, fallback_config, text_field
from planner.io.formats.vllm import is_serve, read_serve
from planner.io.rows import Run

__all__ = ["FORMATS", "looks_like", "read"]

#: Fields SGLang writes and vLLM does not.
_MARKERS = ("mean_e2e_latency_ms", "total_output_tokens_retokenized", "input_throughput")


def looks_like(record: dict) -> bool:
    """An SGLang ``bench_serving`` record."""
    return "output_throughput" in record and any(k in record for k in _MARKERS)


def _config(record: dict, path: str, config: str | None) -> str:
    return text_field(record, "tag") or fallback_config(path, config)


def read(records: list[tuple[int, dict]], *, path: str, metric: str | None = None,
         config: str | None = None, instance: str | None = None) -> list[Run]:
    """One run per record; see the module docstring for the mapping."""
    return read_serve(records, path=path, metric=metric, config=config, instance=instance,
                      config_key=_config, what="SGLang bench_serving")


#: The format this module declares: a serving benchmark's records with SGLang's own fields
#: (detected before ``vllm-serve``; either may be forced on the other's records).
FORMATS = (Format("sglang", "SGLang bench_serving output file (JSONL, a run per line)",
                  sniff=lambda doc: is_serve(doc) and all(looks_like(r) for _, r in doc.records),
                  read=lambda doc, **kw: read(doc.records, **kw), refines="vllm-serve",
                  accepts=is_serve, refusal=("no output_throughput", "output_throughput")),)
