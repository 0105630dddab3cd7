"""Capture loading: good files, stop_at_eos, prompt-set hash, bad input -> ModelInputError."""

from pathlib import Path

import json
import numpy as np
import pytest

from models.drafting.capture import load_capture, prompt_set_hash
from models.errors import ModelInputError

FIX = Path(__file__).resolve().parents[2] / "fixtures"
EX = Path(__file__).resolve().parents[3] / "examples" / "captures"


@pytest.mark.parametrize("name", ["capture_small.jsonl", "capture_small.jsonl.gz"])
def test_load_small(name):
    c = load_capture(FIX / name)
    assert c.ids == ["g-1", "g-2", "x-3"]
    assert c.groups == ["g", "g", "x"]
    assert all(p.dtype == np.int32 for p in c.prompts + c.completions)
    assert c.completions[0].tolist() == [5, 6, 106, 1, 106, 107]
    assert c.eos_tokens_removed == 0
    assert c.n_completion_tokens == 13


def test_stop_at_eos_keeps_eos_and_counts_removed():
    c = load_capture(FIX / "capture_small.jsonl", stop_at_eos=True)
    assert c.completions[0].tolist() == [5, 6, 106]       # cut after first EOS (106)
    assert c.completions[1].tolist() == [9, 10, 11]       # no EOS: unchanged
    assert c.completions[2].tolist() == [1]               # EOS first: keep it only
    assert c.eos_tokens_removed == 3 + 0 + 3
    c2 = load_capture(FIX / "capture_small.jsonl", stop_at_eos=True, eos_ids=(107,))
    assert c2.completions[0].tolist() == [5, 6, 106, 1, 106, 107]
    assert c2.eos_tokens_removed == 0


def test_stop_at_eos_same_cut_on_every_reading_path(tmp_path, monkeypatch):
    """One EOS cut for the fast reader, its per-line fallback and the line-by-line reader."""
    import models.drafting.capture as cm

    lines = (FIX / "capture_small.jsonl").read_text().splitlines()
    # "-0" is valid JSON (0) the fast reader cannot vouch for: that line is re-read slowly
    lines[0] = lines[0].replace("[5, 6, 106, 1, 106, 107]", "[5, -0, 106, 1, 106, 107]")
    f = tmp_path / "c.jsonl"
    f.write_text("\n".join(lines) + "\n")
    want = [[5, 0, 106], [9, 10, 11], [1]]
    c = load_capture(f, stop_at_eos=True)
    assert [x.tolist() for x in c.completions] == want and c.eos_tokens_removed == 6

    def no_fast(*a, **k):
        raise cm._SlowPath

    monkeypatch.setattr(cm, "_load_fast", no_fast)
    c = load_capture(f, stop_at_eos=True)
    assert [x.tolist() for x in c.completions] == want and c.eos_tokens_removed == 6


def test_stop_at_eos_real_capture_count():
    c = load_capture(EX / "ar_reference_bf16.jsonl.gz", stop_at_eos=True)
    assert c.eos_tokens_removed == 1000
    assert c.n_completion_tokens == 65536 - 1000


def test_prompt_set_hash_matches_shared_readme():
    c = load_capture(EX / "ar_reference_int4_frontier_specoff.jsonl.gz")
    assert c.prompt_set_hash() == "43df0c18b56abde3"
    assert load_capture(EX / "ar_longform_aime_int4.jsonl.gz").prompt_set_hash() == "4c427242457b252f"
    # order-independent
    assert prompt_set_hash(c.prompts[::-1]) == "43df0c18b56abde3"


@pytest.mark.parametrize("name,line,field", [
    ("bad_capture_empty.jsonl", 1, None),
    ("bad_capture_truncated.jsonl", 2, None),
    ("bad_capture_invalid_json.jsonl", 2, None),
    ("bad_capture_missing_field.jsonl", 2, "completion_token_ids"),
    ("bad_capture_non_integer.jsonl", 1, "completion_token_ids"),
    ("bad_capture_float_token.jsonl", 1, "prompt_token_ids"),
    ("bad_capture_negative.jsonl", 3, "completion_token_ids"),
    ("bad_capture_empty_completion.jsonl", 1, "completion_token_ids"),
    ("bad_capture_not_object.jsonl", 1, None),
    ("bad_capture_garbage.jsonl.gz", None, None),
    ("bad_capture_truncated.jsonl.gz", None, None),
])
def test_bad_input_raises_input_error(name, line, field):
    path = FIX / name
    with pytest.raises(ModelInputError) as ei:
        load_capture(path)
    e = ei.value
    assert e.file == str(path)
    assert e.line is not None and e.line >= 1
    if line is not None:
        assert e.line == line
    assert e.field == field
    msg = str(e)
    assert "\n" not in msg and name in msg and f":{e.line}" in msg


def test_missing_file():
    with pytest.raises(ModelInputError) as ei:
        load_capture(FIX / "capture_does_not_exist.jsonl")
    assert "capture_does_not_exist" in str(ei.value)


# --- fast path (msgspec + numba) against the line-by-line reader ------------------------

import models.drafting.capture as capture_mod  # noqa: E402

_EDGE = {
    # CRLF, blank and whitespace lines, "-0", spaces in arrays, int id, non-string group,
    # a NaN in an ignored field (msgspec refuses it, the line-by-line reader accepts it)
    "mixed.jsonl": b'{"id":"a-1","prompt_token_ids":[1,2],"completion_token_ids":[3,-0, 106, 5]}'
                   b'\r\n\n  \n{"id":7,"group":5,"kind":"k","prompt_token_ids":[ 1 ],'
                   b'"completion_token_ids":[2147483647],"x":NaN}\r\n'
                   b'{"id":"g-2","prompt_token_ids":[4],"completion_token_ids":[1,1]}',
    "dup_key.jsonl": b'{"id":"a","prompt_token_ids":[1],"completion_token_ids":[3],"id":"b-1"}\n',
    "big_id.jsonl": b'{"id":123456789012345678901234567890,"prompt_token_ids":[1],'
                    b'"completion_token_ids":[3]}\n{"id":"x","prompt_token_ids":[1],'
                    b'"completion_token_ids":[3]}\n',
    "lone_cr.jsonl": b'{"id":"a","prompt_token_ids":[1],"completion_token_ids":[3]}\r'
                     b'{"id":"b","prompt_token_ids":[1],"completion_token_ids":[3, 2.0]}\n',
    "bom.jsonl": b'\xef\xbb\xbf{"id":"a","prompt_token_ids":[1],"completion_token_ids":[3]}\n',
    "bad_utf8.jsonl": b'{"id":"a","prompt_token_ids":[1],"completion_token_ids":[3],"t":"\xff"}\n',
    "two_values.jsonl": b'{"id":"a","prompt_token_ids":[1],"completion_token_ids":[3]} {}\n',
    "too_big.jsonl": b'{"id":"a","prompt_token_ids":[1],"completion_token_ids":[3]}\n'
                     b'{"id":"b","prompt_token_ids":[1],"completion_token_ids":[2147483648]}\n',
    "nested.jsonl": b'{"id":"a","prompt_token_ids":[[1]],"completion_token_ids":[3]}\n',
    "bool_token.jsonl": b'{"id":"a","prompt_token_ids":[1],"completion_token_ids":[3,true]}\n',
    "no_newline_truncated.jsonl": b'{"id":"a","prompt_token_ids":[1],"completion_token_ids":[3]}'
                                  b'\n{"id":"b","prompt_token_ids":[1],"completion_token_ids":[3',
}


def _outcome(path, **kw):
    try:
        c = load_capture(path, **kw)
    except ModelInputError as e:
        return ("error", str(e), e.file, e.line, e.field)
    assert all(a.dtype == np.int32 for a in c.prompts + c.completions)
    return ("ok", c.ids, c.groups, [p.tolist() for p in c.prompts],
            [x.tolist() for x in c.completions], c.eos_tokens_removed)


def _slow_outcome(monkeypatch, path, **kw):
    with monkeypatch.context() as m:
        def refuse(*a, **k):
            raise capture_mod._SlowPath
        m.setattr(capture_mod, "_load_fast", refuse)
        return _outcome(path, **kw)


@pytest.mark.parametrize("chunk", [None, 16, 100])
def test_fast_path_matches_line_by_line(tmp_path, monkeypatch, chunk):
    if chunk is not None:  # several chunks: line numbers and records across chunk edges
        monkeypatch.setattr(capture_mod, "_CHUNK_BYTES", chunk)
    files = [FIX / n for n in ("capture_small.jsonl", "capture_small.jsonl.gz")]
    files += sorted(FIX.glob("bad_capture_*"))
    for name, data in _EDGE.items():
        (tmp_path / name).write_bytes(data)
        files.append(tmp_path / name)
    for f in files:
        for kw in ({}, {"stop_at_eos": True}):
            assert _outcome(f, **kw) == _slow_outcome(monkeypatch, f, **kw), (f.name, kw)


def test_fast_path_edge_values(tmp_path):
    f = tmp_path / "mixed.jsonl"
    f.write_bytes(_EDGE["mixed.jsonl"])
    c = load_capture(f, stop_at_eos=True)
    assert c.ids == ["a-1", "7", "g-2"]
    assert c.groups == ["a", "k", "g"]
    assert [x.tolist() for x in c.completions] == [[3, 0, 106], [2147483647], [1]]
    assert c.eos_tokens_removed == 1 + 0 + 1
    f2 = tmp_path / "too_big.jsonl"
    f2.write_bytes(_EDGE["too_big.jsonl"])
    with pytest.raises(ModelInputError) as ei:
        load_capture(f2)
    assert (ei.value.line, ei.value.field) == (2, "completion_token_ids")
    assert "out of range (2147483648)" in str(ei.value)


def test_valid_capture_never_needs_the_slow_parser(monkeypatch):
    def slow(*a, **k):
        raise AssertionError("line-by-line parser used on a valid capture")
    monkeypatch.setattr(capture_mod, "_parse_line", slow)
    c = load_capture(EX / "ar_reference_bf16.jsonl.gz", stop_at_eos=True)
    assert len(c) == 128 and c.eos_tokens_removed == 1000
    assert c.n_completion_tokens == 65536 - 1000


def _parse_ref(text: bytes):
    """What the vectorised token parser must say about one array text."""
    try:
        v = json.loads(text)
    except ValueError:
        return None
    ok = (isinstance(v, list) and v and text.startswith(b"[") and text.endswith(b"]")
          and all(type(x) is int and 0 <= x <= 2**31 - 1 for x in v)
          and not any(c in text for c in b"-.eE"))
    return v if ok else None


def test_token_parser_against_json():
    """The compiled token parser against json: ids of 1 to 12 digits, the int32 edge,
    whitespace, and arrays the fast path must refuse (empty, nested, negative, float,
    non-arrays), one after another in one buffer."""
    rng = np.random.default_rng(1)
    texts = [b"[0]", b"[ 12 ,\t0\n]", b"[2147483647]", b"[2147483648]", b"[4294967295]",
             b"[999999999999]", b"[123456789]", b"[1234567890]", b"[]", b"[ ]", b"[[1]]",
             b"[-1]", b"[1.0]", b"[1e3]", b"5", b'"12"', b"{}", b"[true]", b"[1,[2]]",
             b"[0,0]"]  # valid JSON only: msgspec has refused the rest (e.g. [00])
    for _ in range(300):
        k = int(rng.integers(1, 12))
        ids = [int(rng.integers(0, 10 ** int(rng.integers(1, 11)))) for _ in range(k)]
        sep = [b",", b", ", b" ,"][int(rng.integers(0, 3))]
        texts.append(b"[" + sep.join(str(i).encode() for i in ids) + b"]")
    texts = [t for t in texts if _parse_ref(t) is not None or t in texts[:20]]
    bounds = np.zeros(len(texts) + 1, np.int64)
    bounds[1:] = np.cumsum([len(t) for t in texts])
    buf = np.frombuffer(b"".join(texts), np.uint8)
    out = np.empty(int(np.count_nonzero(buf == 44)) + len(texts), np.int32)
    counts = np.empty(len(texts), np.int64)
    used = capture_mod._parse_token_arrays(buf, bounds, out, counts)
    want = [_parse_ref(t) for t in texts]
    assert counts.tolist() == [len(w) if w is not None else -1 for w in want]
    assert out[:used].tolist() == [x for w in want if w is not None for x in w]


def _rec(rid, p, c):
    return json.dumps({"id": rid, "prompt_token_ids": p, "completion_token_ids": c}) + "\n"


@pytest.mark.parametrize("slow", [False, True])
def test_repeated_records_are_marked_as_one_prompt(tmp_path, monkeypatch, slow):
    """A repeated id, or the same stream under another id, is one prompt (its cluster); a
    prompt with another completion is another record."""
    import gzip

    import models.drafting.capture as cm

    if slow:
        monkeypatch.setattr(cm, "_load_fast", lambda *a: (_ for _ in ()).throw(cm._SlowPath()))
    f = tmp_path / "c.jsonl.gz"
    with gzip.open(f, "wt") as fh:
        fh.write(_rec("a-1", [2, 3], [4, 5]) + _rec("a-2", [2, 9], [4])
                 + _rec("a-1", [2, 3], [4, 6]) + _rec("b-1", [2, 3], [4, 5]))
    cap = load_capture(f)
    assert len(cap) == 4 and cap.prompt_cluster.tolist() == [0, 1, 0, 0]
    f2 = tmp_path / "ok.jsonl"
    f2.write_text(_rec("a-1", [2, 3], [4, 5]) + _rec("a-2", [2, 3], [4]))
    assert load_capture(f2).prompt_cluster is None


def test_an_id_reused_for_different_prompts_keeps_them_apart(tmp_path):
    """Twelve prompts under one id are twelve prompts (they had been one cluster: the
    bootstrap then resampled one prompt, a zero-width interval)."""
    f = tmp_path / "same_id.jsonl"
    f.write_text("".join(_rec("x", [2, 10 + i], [4, i]) for i in range(12))
                 + _rec("x", [2, 10], [4, 7]))
    cap = load_capture(f)
    assert cap.prompt_cluster.tolist() == list(range(12)) + [0]


@pytest.mark.parametrize("text, needle", [
    # deeper than any recursion limit a library sets (pytensor raises it to 10,000)
    ('{"id":"a","x":' + "[" * 200_000 + "]" * 200_000 + ',"prompt_token_ids":[1],'
     '"completion_token_ids":[2]}\n', ":1: invalid JSON: nested too deep to read"),
    ('{"id":' + "9" * 5000 + ',"prompt_token_ids":[1],"completion_token_ids":[2]}\n',
     "field 'id': id is an integer of 5,000 characters"),
    ('{"id":"a","prompt_token_ids":[' + "9" * 5000 + '],"completion_token_ids":[2]}\n',
     "field 'prompt_token_ids': token 0 out of range (an integer of 5,000 characters)"),
    ('{"id":"a","prompt_token_ids":[1],"completion_token_ids":[2]}\n{"id":"x"\n',
     ":2: invalid JSON: Expecting ',' delimiter at column 10"),
])
def test_odd_lines_are_one_line_errors(tmp_path, text, needle):
    """Nesting thousands deep, integers longer than int() reads (a RecursionError and a
    ValueError traceback before), and the column of a line cut short before its newline
    (it was 'column 1', json.loads's next line)."""
    f = tmp_path / "odd.jsonl"
    f.write_text(text)
    with pytest.raises(ModelInputError) as e:
        load_capture(f)
    assert needle in str(e.value)


def test_a_long_integer_in_an_ignored_field_is_ignored_by_every_reader(tmp_path,
                                                                       monkeypatch):
    import models.drafting.capture as cm

    f = tmp_path / "extra.jsonl"
    f.write_text("".join('{"id":"a-%d","x":%s,"prompt_token_ids":[1,%d],'
                         '"completion_token_ids":[2,3]}\n' % (i, "9" * 5000, i)
                         for i in range(3)))
    fast = load_capture(f)
    monkeypatch.setattr(cm, "_load_fast", lambda *a: (_ for _ in ()).throw(cm._SlowPath()))
    slow = load_capture(f)
    assert fast.ids == slow.ids == ["a-0", "a-1", "a-2"]
