"""Load captured greedy decode streams (``.jsonl`` / ``.jsonl.gz``).

A capture has one JSON object per line and per prompt with at least
``prompt_token_ids`` (list of int), ``completion_token_ids`` (list of int) and ``id``.
Other fields (text, hashes, request metadata) are ignored and may be absent.
An optional ``group`` field (string) is kept; if absent, the group is derived from ``id``
as the part before the first ``-`` (e.g. ``mmlu_pro-006f3a2112`` -> ``mmlu_pro``), or
from ``kind`` when present.

Errors in the input raise :class:`models.errors.ModelInputError` naming file, line and field.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence, Union

import msgspec
import numpy as np

from models.errors import ModelInputError
from models.kernels.capture import parse_token_arrays as _parse_token_arrays

#: Gemma end-of-sequence ids: ``<eos>`` = 1, ``<end_of_turn>`` = 106 (decode/README.md).
DEFAULT_EOS_IDS = (1, 106)

_INT32_MAX = 2**31 - 1


@dataclass
class Capture:
    """Greedy token streams of one capture file.

    Attributes
    ----------
    ids : list of str
        Record ids (``id`` field), in file order.
    prompts : list of numpy.ndarray
        int32[prompt_len] prompt token ids per record.
    completions : list of numpy.ndarray
        int32[completion_len] completion token ids per record (after ``stop_at_eos``).
    groups : list of str or None
        Prompt group per record (``group`` field, else ``kind``, else ``id`` prefix before
        the first ``-``); None if no record yields one.
    path : str or None
        The file read.
    eos_tokens_removed : int
        Completion tokens dropped by ``stop_at_eos`` (0 when not requested).
    prompt_cluster : numpy.ndarray of int or None
        When records repeat (same id, or the same prompt and completion under another id):
        the distinct prompt of each record, 0.. in order of first appearance; None when
        every record is distinct.
    """

    ids: list
    prompts: list
    completions: list
    groups: list | None = None
    path: str | None = None
    eos_tokens_removed: int = 0
    prompt_cluster: np.ndarray | None = None

    def distinct(self) -> "Capture":
        """The first record of each distinct prompt (:attr:`prompt_cluster`); ``self`` when
        no record repeats. For per-prompt statistics of a prompt *set* (``planner shift``),
        where a copy would count a prompt twice."""
        if self.prompt_cluster is None:
            return self
        _, first = np.unique(self.prompt_cluster, return_index=True)
        keep = sorted(first.tolist())
        return Capture([self.ids[i] for i in keep], [self.prompts[i] for i in keep],
                       [self.completions[i] for i in keep],
                       None if self.groups is None else [self.groups[i] for i in keep],
                       self.path, self.eos_tokens_removed)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def n_completion_tokens(self) -> int:
        """Total completion tokens (int)."""
        return int(sum(len(c) for c in self.completions))

    def prompt_set_hash(self) -> str:
        """Prompt-set identity hash, see :func:`prompt_set_hash`."""
        return prompt_set_hash(self.prompts)

    def subset(self, idx: Sequence[int]) -> "Capture":
        """A capture with the records at positions ``idx`` (in that order)."""
        idx = list(idx)
        return Capture(
            ids=[self.ids[i] for i in idx],
            prompts=[self.prompts[i] for i in idx],
            completions=[self.completions[i] for i in idx],
            groups=None if self.groups is None else [self.groups[i] for i in idx],
            path=self.path,
            eos_tokens_removed=self.eos_tokens_removed,
        )


def _compact_json_ids(ids: Iterable[int]) -> str:
    return "[" + ",".join(str(int(x)) for x in ids) + "]"


def prompt_set_hash(prompts: Iterable[Sequence[int]]) -> str:
    """Prompt-set identity hash as defined in the shared decode README.

    ``first 16 hex of sha256(concat(sorted(sha256(compact_json(prompt_token_ids)))))``:
    each prompt's ids are serialised as compact JSON (``[2,105,...]``, no spaces), hashed
    with sha256 (hex digest), the hex digests are sorted, concatenated and hashed again.

    Parameters
    ----------
    prompts : iterable of sequences of int
        Prompt token ids per record.

    Returns
    -------
    str
        16 lowercase hex characters (e.g. ``43df0c18b56abde3`` for the P128 set).
    """
    digests = sorted(hashlib.sha256(_compact_json_ids(p).encode()).hexdigest() for p in prompts)
    return hashlib.sha256("".join(digests).encode()).hexdigest()[:16]


class _LongInt(str):
    """An integer literal longer than Python's ``int()`` reads (4,300 digits): its text.
    Such a number in a field the reader ignores does not stop the line, as in the faster
    readers; as an id or a token id it is an error."""


def _parse_int(text: str):
    """``json.loads``'s ``parse_int``: ``int(text)``, or :class:`_LongInt` when too long."""
    return int(text) if len(text) <= 4300 else _LongInt(text)


def _token_array(value, *, file, line, field_name, allow_empty):
    if not isinstance(value, list):
        raise ModelInputError(f"expected a list of token ids, got {type(value).__name__}",
                              file=file, line=line, field=field_name)
    if not value and not allow_empty:
        raise ModelInputError("empty token list", file=file, line=line, field=field_name)
    for i, x in enumerate(value):
        if isinstance(x, _LongInt):
            raise ModelInputError(f"token {i} out of range (an integer of {len(x):,} "
                                  "characters); ids must be 0..2^31-1",
                                  file=file, line=line, field=field_name)
        if isinstance(x, bool) or not isinstance(x, int):
            raise ModelInputError(f"token {i} is not an integer ({x!r})",
                                  file=file, line=line, field=field_name)
        if x < 0 or x > _INT32_MAX:
            raise ModelInputError(f"token {i} out of range ({x}); ids must be 0..2^31-1",
                                  file=file, line=line, field=field_name)
    return np.asarray(value, dtype=np.int32)


def _eos_lengths(out, starts, lengths, eos_ids):
    """The ``stop_at_eos`` cut, written once: per completion
    (``out[starts[i]:starts[i] + lengths[i]]``), the length up to and including its first
    EOS id (``lengths[i]`` when it has none)."""
    hits = np.flatnonzero(np.isin(out, np.asarray(eos_ids, dtype=np.int32)))
    keep = lengths.copy()
    if hits.size:
        j = np.searchsorted(hits, starts)
        first = hits[np.minimum(j, hits.size - 1)]
        cut = (j < hits.size) & (first < starts + lengths)
        keep[cut] = first[cut] - starts[cut] + 1
    return keep


def _cut_at_eos(c: np.ndarray, eos_ids) -> tuple:
    """One completion cut by :func:`_eos_lengths`, and how many tokens the cut dropped."""
    keep = int(_eos_lengths(c, np.zeros(1, np.int64), np.array([c.size], np.int64),
                            eos_ids)[0])
    return c[:keep], c.size - keep


def _group_of(rec: dict, rid: str):
    return _group_from(rec.get("group"), rec.get("kind"), rid)


def _group_from(g, k, rid: str):
    if isinstance(g, str) and g:
        return g
    if isinstance(k, str) and k:
        return k
    if "-" in rid:  # an id like "-1" has no prefix: no group (it was the group "")
        return rid.split("-", 1)[0] or None
    return None


# ---------------------------------------------------------------------------------------
# Fast path: msgspec checks each line's JSON and record shape in C and hands back the two
# token arrays as raw text; one compiled pass (models.kernels.capture) parses and
# range-checks all token ids of a chunk into one int32 array. Records become views into that array, so no Python int is
# ever made per token and memory stays at the int32 data plus one chunk of text. Anything
# the fast path cannot vouch for is handled by the line-by-line parser above (_parse_line):
# a line it rejects is re-parsed slowly (values it cannot represent, e.g. ``-0``), and any
# input error, read error or undecodable byte re-reads the whole file slowly, so errors
# (file, line, field, wording) are exactly those of the line-by-line reader.
# ---------------------------------------------------------------------------------------

#: Bytes of text decoded per step of the fast path (bounds its transient memory).
_CHUNK_BYTES = 1 << 26


class _SlowPath(Exception):
    """The fast reader cannot vouch for this file: read it line by line instead."""


class _Record(msgspec.Struct):
    id: Union[str, int]
    prompt_token_ids: msgspec.Raw
    completion_token_ids: msgspec.Raw
    group: Any = None
    kind: Any = None


_DECODER = msgspec.json.Decoder(_Record)


def _read_chunks(p: Path, gz: bool, fname: str | None = None):
    """Yield the file's bytes in pieces of about ``_CHUNK_BYTES`` ending at a newline
    (only the last piece may lack one), within the bounds of :mod:`models.files`: at most
    ``MAX_FILE_BYTES`` (decompressed), a line at most ``MAX_LINE_CHARS``, no NUL byte, no
    ``BLANK_RUN_BYTES`` of nothing but blank space (a gzip bomb of spaces or blank lines).

    Raises
    ------
    models.errors.ModelInputError
        A bound is passed (naming the file and the byte offset).
    """
    from models.files import BLANK_RUN_BYTES, MAX_FILE_BYTES, MAX_LINE_CHARS, mib

    name = str(p) if fname is None else fname
    with (gzip.open(p, "rb") if gz else open(p, "rb")) as fh:
        rest = b""
        total = blank = 0
        while True:
            block = fh.read(_CHUNK_BYTES)
            if not block:
                if rest:
                    yield rest
                return
            k = block.find(b"\0")
            if k >= 0:
                raise ModelInputError(f"a binary file (a NUL byte at byte {total + k}"
                                      f"{' of the decompressed data' if gz else ''}), not a "
                                      "JSON Lines capture", file=name)
            total += len(block)
            blank = blank + len(block) if not block.strip() else len(block) - len(block.rstrip())
            if blank >= BLANK_RUN_BYTES:
                raise ModelInputError(f"{mib(blank)} of nothing but spaces and blank lines "
                                      f"(up to byte {total}): not a capture"
                                      f"{' (a gzip bomb?)' if gz else ''}", file=name)
            if total > MAX_FILE_BYTES:
                raise ModelInputError(f"more than the {mib(MAX_FILE_BYTES)} a capture may hold"
                                      f"{' decompressed (a gzip bomb?)' if gz else ''}",
                                      file=name)
            buf = rest + block if rest else block
            cut = buf.rfind(b"\n") + 1
            if cut == 0:
                rest = buf
                if len(rest) > MAX_LINE_CHARS:
                    raise ModelInputError(f"a line longer than {mib(MAX_LINE_CHARS)} (the bound "
                                          "of a line)", file=name)
                continue
            rest = buf[cut:]
            yield buf[:cut] if rest else buf


def _load_fast(p: Path, fname: str, gz: bool, stop_at_eos: bool, eos_ids) -> Capture:
    ids, prompts, comps, groups = [], [], [], []
    removed = 0
    line0 = 1  # file line number of the chunk's first line
    for buf in _read_chunks(p, gz, fname):
        if not buf.isascii():
            buf.decode("utf-8")  # UnicodeDecodeError -> slow path (its exact message)
        if b"\r" in buf and buf.count(b"\r") != buf.count(b"\r\n"):
            raise _SlowPath  # a lone CR ends a line in text mode: leave numbering to it
        lines = buf.split(b"\n")
        n_lines = len(lines) - 1  # the chunk's newlines
        if buf.endswith(b"\n"):
            lines.pop()
        recs = []  # (line number, line, _Record or None)
        raws = []
        for i, line in enumerate(lines):
            if not line or line.isspace():  # = not line.strip(), without copying the line
                continue
            try:
                rec = _DECODER.decode(line)
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
                recs.append((line0 + i, line, None))
                continue
            recs.append((line0 + i, line, rec))
            raws.append(rec.prompt_token_ids)
            raws.append(rec.completion_token_ids)
        if raws:
            joined = b"".join(raws)
            text = np.frombuffer(joined, dtype=np.uint8)
            bounds = np.zeros(len(raws) + 1, np.int64)
            bounds[1:] = np.cumsum(np.fromiter(map(len, raws), np.int64, len(raws)))
            # an array of k ids takes at least 2k + 1 bytes ('[', digits, commas, ']'), so
            # (bytes - arrays) / 2 bounds the ids; np.empty only reserves it (pages the
            # kernel does not write are never touched) and counting commas took 17-34 ms
            out = np.empty((len(joined) - len(raws)) // 2 + 1, np.int32)
            del joined  # (text keeps the bytes alive until it goes)
            counts = np.empty(len(raws), np.int64)
            used = _parse_token_arrays(text, bounds, out, counts)
            del text
            # shrink to the ids written: realloc in place (a large block is remapped, not
            # copied; no view of out exists yet)
            out.resize((used,), refcheck=False)
            starts = np.zeros(len(raws), np.int64)
            np.cumsum(np.maximum(counts[:-1], 0), out=starts[1:])
            c_start, c_len = starts[1::2], counts[1::2]
            keep = (_eos_lengths(out, c_start, np.maximum(c_len, 0), eos_ids) if stop_at_eos
                    else c_len)
            starts, counts, c_end = starts.tolist(), counts.tolist(), (c_start + keep).tolist()
        j = 0  # index of the record's prompt array in raws
        for lineno, line, rec in recs:
            if rec is not None and counts[j] > 0 and counts[j + 1] > 0:
                rid = rec.id if isinstance(rec.id, str) else str(rec.id)
                pa, ca = starts[j], starts[j + 1]
                pr, co = out[pa:pa + counts[j]], out[ca:c_end[j // 2]]
                removed += counts[j + 1] - (c_end[j // 2] - ca)
                grp = _group_from(rec.group, rec.kind, rid)
            else:
                text = line[:-1] if line.endswith(b"\r") else line
                text = text.decode("utf-8") + ("\n" if lineno < line0 + n_lines else "")
                try:
                    parsed = _parse_line(text, lineno, fname)
                except ModelInputError:
                    raise _SlowPath from None
                if parsed is None:
                    if rec is not None:
                        j += 2
                    continue
                rid, pr, co, grp = parsed
                if stop_at_eos:
                    co, dropped = _cut_at_eos(co, eos_ids)
                    removed += dropped
            if rec is not None:
                j += 2
            ids.append(rid)
            prompts.append(pr)
            comps.append(co)
            groups.append(grp)
        line0 += n_lines
    if not ids:
        raise _SlowPath
    return Capture(ids=ids, prompts=prompts, completions=comps,
                   groups=groups if any(g is not None for g in groups) else None,
                   path=fname, eos_tokens_removed=removed)


def _parse_line(text: str, lineno: int, fname: str):
    """Parse and validate one line (``text`` as read in text mode, newline kept).

    Returns ``(id, prompt, completion, group)`` or None for a blank line; raises
    :class:`~models.errors.ModelInputError` naming file, line and field.
    """
    if not text.strip():
        return None
    try:
        # the line without its newline, so a column counts on this line (json.loads put
        # an object cut short before the newline at "line 2, column 1")
        rec = json.loads(text.rstrip("\r\n"), parse_int=_parse_int)
    except json.JSONDecodeError as e:
        what = "truncated line" if not text.endswith("\n") else "invalid JSON"
        raise ModelInputError(f"{what}: {e.msg} at column {e.colno}",
                              file=fname, line=lineno) from None
    except RecursionError:  # nested arrays / objects thousands deep
        raise ModelInputError("invalid JSON: nested too deep to read", file=fname,
                              line=lineno) from None
    if not isinstance(rec, dict):
        raise ModelInputError("expected a JSON object per line", file=fname,
                              line=lineno)
    for key in ("id", "prompt_token_ids", "completion_token_ids"):
        if key not in rec:
            raise ModelInputError("missing field", file=fname, line=lineno, field=key)
    rid = rec["id"]
    if isinstance(rid, _LongInt):
        raise ModelInputError(f"id is an integer of {len(rid):,} characters; give it as a "
                              "string", file=fname, line=lineno, field="id")
    if not isinstance(rid, (str, int)) or isinstance(rid, bool):
        raise ModelInputError("id must be a string or integer",
                              file=fname, line=lineno, field="id")
    rid = str(rid)
    pr = _token_array(rec["prompt_token_ids"], file=fname, line=lineno,
                      field_name="prompt_token_ids", allow_empty=False)
    co = _token_array(rec["completion_token_ids"], file=fname, line=lineno,
                      field_name="completion_token_ids", allow_empty=False)
    return rid, pr, co, _group_of(rec, rid)


def load_capture(path, *, stop_at_eos: bool = False, eos_ids=DEFAULT_EOS_IDS) -> Capture:
    """Read a capture file, streaming line by line.

    Parameters
    ----------
    path : str or os.PathLike
        ``.jsonl`` or ``.jsonl.gz`` file (gzip is detected from the magic bytes, not the
        name). Blank lines are skipped.
    stop_at_eos : bool, default False
        Cut each completion at its first EOS token. The EOS token itself is KEPT as the
        last token (the target model does emit it in a forward; a server that stops at EOS
        still generates it), everything after it is dropped and counted in
        ``Capture.eos_tokens_removed``. This removes the degenerate post-EOS tails of
        ``ignore_eos`` captures, which inflate every drafter's acceptance.
    eos_ids : tuple of int, default (1, 106)
        EOS ids (Gemma ``<eos>`` = 1, ``<end_of_turn>`` = 106).

    Returns
    -------
    Capture

    Raises
    ------
    models.errors.ModelInputError
        Unreadable / not gzip-decodable file, empty file, invalid or truncated JSON line,
        a line that is not an object, missing ``id`` / ``prompt_token_ids`` /
        ``completion_token_ids``, non-integer or negative token ids, empty prompt or
        completion. The message is one line naming file and line (1-based). Repeated
        records are kept and marked (:attr:`Capture.prompt_cluster`).
    """
    fname = str(path)
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            magic = fh.read(2)
    except OSError as e:
        raise ModelInputError(f"cannot read capture: {e.strerror or e}", file=fname) from None
    gz = magic == b"\x1f\x8b"
    cap = _load(p, fname, gz, stop_at_eos, eos_ids)
    _mark_duplicates(cap)
    return cap


def _mark_duplicates(cap: Capture) -> None:
    """Set ``cap.prompt_cluster`` when records repeat: a record id repeated with the same
    prompt token ids (the prompt captured again, any completion), or the same prompt and
    completion token ids under another id (a greedy stream repeated).

    A repeated record counts one prompt twice, so a bootstrap over records would narrow
    (about sqrt(2) for a capture doubled). The records are kept (every replay reads them:
    a capture repeated to time the replay is a real workload), and the bootstrap resamples
    distinct prompts with all their copies (a cluster bootstrap, :mod:`planner.decide.draft`).
    An id reused for different prompts does not join them: those are different prompts
    (twelve prompts all under one id had been one cluster, and a zero-width interval).
    The check is a set over (id, prompt) and over 16-byte blake2b digests of each record's
    token arrays (hashed in place, no copy).
    """
    ids = cap.ids
    p_keys = [hashlib.blake2b(np.ascontiguousarray(pr), digest_size=16).digest()
              for pr in cap.prompts]
    keys = [pk + hashlib.blake2b(np.ascontiguousarray(co), digest_size=16).digest()
            for pk, co in zip(p_keys, cap.completions)]
    id_keys = list(zip(ids, p_keys))
    if len(set(id_keys)) == len(ids) and len(set(keys)) == len(keys):
        return
    by_id: dict = {}
    by_key: dict = {}
    cluster = np.empty(len(ids), np.int64)
    n_clusters = 0
    for k, (idk, key) in enumerate(zip(id_keys, keys)):
        c = by_id.get(idk)
        if c is None:
            j = by_key.get(key)  # 128-bit digests: a collision is not a practical risk
            if j is not None:
                c = cluster[j]
        if c is None:
            c = n_clusters
            n_clusters += 1
        cluster[k] = c
        by_id.setdefault(idk, c)
        by_key.setdefault(key, k)
    cap.prompt_cluster = cluster


def _bounded(fh, fname: str):
    """The lines of the open text file ``fh`` within the bounds of :func:`_read_chunks`
    (the line-by-line reader's; its NUL bytes are refused per line by :func:`_parse_line`)."""
    from models.files import BLANK_RUN_BYTES, MAX_FILE_BYTES, MAX_LINE_CHARS, mib

    total = blank = 0
    k = 0
    while True:
        line = fh.readline(MAX_LINE_CHARS + 1)
        if not line:
            return
        k += 1
        if len(line) > MAX_LINE_CHARS:
            raise ModelInputError(f"a line longer than {mib(MAX_LINE_CHARS)} (the bound of a "
                                  "line)", file=fname, line=k)
        total += len(line)
        if total > MAX_FILE_BYTES:
            raise ModelInputError(f"more than the {mib(MAX_FILE_BYTES)} a capture may hold",
                                  file=fname, line=k)
        blank = blank + len(line) if not line.strip() else 0
        if blank >= BLANK_RUN_BYTES:
            raise ModelInputError(f"{mib(blank)} of nothing but spaces and blank lines: not "
                                  "a capture", file=fname, line=k)
        yield line


def _load(p: Path, fname: str, gz: bool, stop_at_eos: bool, eos_ids) -> Capture:
    """Fast reader, falling back to the line-by-line one (see the fast-path comment)."""
    ids, prompts, comps, groups = [], [], [], []
    removed = 0
    magic = b"\x1f\x8b" if gz else b""
    try:
        return _load_fast(p, fname, gz, stop_at_eos, eos_ids)
    except (_SlowPath, gzip.BadGzipFile, EOFError, zlib.error, UnicodeDecodeError, OSError):
        pass  # the line-by-line reader below decides, with its exact error
    lineno = 0
    try:
        raw = gzip.open(p, "rb") if magic == b"\x1f\x8b" else open(p, "rb")
        with raw, io.TextIOWrapper(raw, encoding="utf-8") as fh:
            for lineno, text in enumerate(_bounded(fh, fname), start=1):
                parsed = _parse_line(text, lineno, fname)
                if parsed is None:
                    continue
                rid, pr, co, grp = parsed
                if stop_at_eos:
                    co, dropped = _cut_at_eos(co, eos_ids)
                    removed += dropped
                ids.append(rid)
                prompts.append(pr)
                comps.append(co)
                groups.append(grp)
    except ModelInputError:
        raise
    except (gzip.BadGzipFile, EOFError, zlib.error, UnicodeDecodeError, OSError) as e:
        where = f"after line {lineno}" if lineno else "at start"
        msg = " ".join(str(e).split()) or type(e).__name__
        raise ModelInputError(f"corrupt or truncated file ({where}): {msg}",
                              file=fname, line=lineno + 1) from None
    if not ids:
        raise ModelInputError("empty capture (no records)", file=fname, line=1)
    return Capture(ids=ids, prompts=prompts, completions=comps,
                   groups=groups if any(g is not None for g in groups) else None,
                   path=fname, eos_tokens_removed=removed)
