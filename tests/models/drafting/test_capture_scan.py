"""The one-pass capture scanner (models.drafting._scan, issue 9).

What must hold: a line the scanner calls plain is valid JSON and the scanner reads it as
``json.loads`` does (id, both token arrays, group, kind); every other line is left to the
msgspec + line-by-line reader, so a capture loads to the same arrays, ids, groups and
errors with or without the scanner. Checked on hand-written lines, on ~6,000 random
mutations of valid records, and on whole files.
"""

import json
import random

import numpy as np
import pytest

from models.drafting import capture as C
from models.drafting._scan import N_COLS, scan_records
from models.errors import ModelInputError

BASE = '{"id":"p-1","group":"g","prompt_token_ids":[2,105,4],"completion_token_ids":[7,0,1]}'


def _scan(text: str):
    buf = text.encode("utf-8")
    n = buf.count(b"\n") + (0 if buf.endswith(b"\n") else 1)
    rec = np.zeros((n, N_COLS), np.int64)
    out = np.zeros(len(buf) // 2 + 1, np.int32)
    used = scan_records(np.frombuffer(buf, np.uint8), out, rec)
    return buf, rec, out[:used]


def _fields(buf, row, out):
    """What the scanner read from one plain line, as json.loads would give it."""
    rid = buf[row[4]:row[5]].decode() if row[3] == 0 else row[4]
    text = {}
    for name, col in (("group", 10), ("kind", 13)):
        text[name] = buf[row[col + 1]:row[col + 2]].decode() if row[col] == 2 else None
    return (rid, out[row[6]:row[6] + row[7]].tolist(), out[row[8]:row[8] + row[9]].tolist(),
            text["group"], text["kind"])


def _expected(line: str):
    d = json.loads(line)
    return (d["id"], d["prompt_token_ids"], d["completion_token_ids"], d.get("group"),
            d.get("kind"))


@pytest.mark.parametrize("line", [
    BASE,
    '  { "id" : 12 , "prompt_token_ids" : [ 0 ] , "completion_token_ids":[2147483647] }  \r',
    '{"completion_token_ids":[5],"prompt_token_ids":[6],"id":"x","kind":"math","group":null}',
    '{"id":"a","text":"he said \\"hi\\"\\n\\u00e9","meta":{"a":[1,-2.5e3,true,false,null,{}],'
    '"b":[]},"prompt_token_ids":[1],"completion_token_ids":[2],"x":-0.0}',
    '{"id":"é ü","prompt_token_ids":[1],"completion_token_ids":[2],"id2":"x"}',
])
def test_plain_lines_are_read_as_json_loads_reads_them(line):
    buf, rec, out = _scan(line)
    assert rec[0, 0] == 0, rec[0]
    assert _fields(buf, rec[0], out) == _expected(line)


@pytest.mark.parametrize("line", [
    '{"id":"a","prompt_token_ids":[01],"completion_token_ids":[2]}',        # leading zero
    '{"id":"a","prompt_token_ids":[1,],"completion_token_ids":[2]}',        # trailing comma
    '{"id":"a","prompt_token_ids":[],"completion_token_ids":[2]}',          # empty: words it
    '{"id":"a","prompt_token_ids":[-1],"completion_token_ids":[2]}',        # negative
    '{"id":"a","prompt_token_ids":[1.0],"completion_token_ids":[2]}',       # a float
    '{"id":"a","prompt_token_ids":[2147483648],"completion_token_ids":[2]}',  # > int32
    '{"id":"a","id":"b","prompt_token_ids":[1],"completion_token_ids":[2]}',  # key twice
    '{"id":"a\\tb","prompt_token_ids":[1],"completion_token_ids":[2]}',     # escaped id
    '{"id":true,"prompt_token_ids":[1],"completion_token_ids":[2]}',
    '{"id":"a","prompt_token_ids":[1]}',                                    # field missing
    '{"id":"a","prompt_token_ids":[1],"completion_token_ids":[2]} x',       # trailing text
    '{"id":"a","prompt_token_ids":[1],"completion_token_ids":[2]}{"id":"b"}',  # two values
    '{"id":"a","x":NaN,"prompt_token_ids":[1],"completion_token_ids":[2]}',  # json.loads only
    '{"id":"a","x":[1 2],"prompt_token_ids":[1],"completion_token_ids":[2]}',
    '{"id":"a","x":"\\q","prompt_token_ids":[1],"completion_token_ids":[2]}',  # bad escape
    '{"id":"a","group":3,"prompt_token_ids":[1],"completion_token_ids":[2]}',
    '[1, 2]', '{}', '{"id":"a",', '\ufeff' + BASE,
    '{"id":"a","x":' + '[' * 70 + ']' * 70 + ',"prompt_token_ids":[1],"completion_token_ids":[2]}',
])
def test_everything_else_is_left_to_the_reader_that_words_errors(line):
    _, rec, _ = _scan(line)
    assert rec[0, 0] == 2


def test_blank_lines_and_several_lines():
    buf, rec, out = _scan(BASE + "\n \t\r\n" + BASE.replace('"p-1"', "7") + "\n")
    assert rec[:, 0].tolist() == [0, 1, 0]
    assert _fields(buf, rec[2], out)[0] == 7
    assert _fields(buf, rec[0], out) == _expected(BASE)


def _mutations(rng: random.Random, n: int):
    alphabet = list('{}[]",:0123456789-.eE \\tnulfrsa\x01é')
    extra = ['"text":"a\\"b"', '"m":{"k":[1,{"z":null}]}', '"n":-1.5e-3', '"b":true']
    for _ in range(n):
        parts = ['"id":' + rng.choice(['"q-%d"' % rng.randint(0, 9), str(rng.randint(0, 99))]),
                 '"prompt_token_ids":[%s]' % ",".join(str(rng.randint(0, 300))
                                                     for _ in range(rng.randint(1, 4))),
                 '"completion_token_ids":[%s]' % ",".join(str(rng.randint(0, 300))
                                                         for _ in range(rng.randint(1, 4)))]
        if rng.random() < 0.5:
            parts.append(rng.choice(extra))
        if rng.random() < 0.3:
            parts.append('"group":' + rng.choice(['"g"', "null", '""']))
        rng.shuffle(parts)
        line = "{" + ",".join(parts) + "}"
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            pos = rng.randrange(len(line) + 1)
            op = rng.random()
            if op < 0.4 and pos < len(line):
                line = line[:pos] + line[pos + 1:]
            elif op < 0.7:
                line = line[:pos] + rng.choice(alphabet) + line[pos:]
            elif pos < len(line):
                line = line[:pos] + rng.choice(alphabet) + line[pos + 1:]
        yield line


def test_random_mutations_never_misread():
    """~6,000 records, valid and broken: whenever the scanner says plain, json.loads parses
    the line and gives the same fields (and every valid unmutated record is plain)."""
    rng = random.Random(11)
    plain = fallback = 0
    for line in _mutations(rng, 6000):
        buf, rec, out = _scan(line)
        if rec[0, 0] == 0:
            plain += 1
            assert _fields(buf, rec[0], out) == _expected(line), line
        else:
            fallback += 1
    assert plain > 1500 and fallback > 1500, (plain, fallback)


def _load(path, fast: bool, monkeypatch, **kw):
    with monkeypatch.context() as mp:
        if not fast:
            mp.setattr(C, "_scan_chunk", lambda *a: None)
        try:
            return C.load_capture(path, **kw)
        except ModelInputError as exc:
            return str(exc)


def _same(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return (a.ids == b.ids and a.groups == b.groups and
            a.eos_tokens_removed == b.eos_tokens_removed and
            len(a.prompts) == len(b.prompts) and
            all(np.array_equal(x, y) and x.dtype == y.dtype
                for x, y in zip(a.prompts + a.completions, b.prompts + b.completions)))


def test_whole_files_load_the_same_with_and_without_the_scanner(tmp_path, monkeypatch):
    """Files of mutated lines (so some chunks fall back, some errors are worded) and files of
    valid ones, with and without the EOS cut: the same capture or the same error."""
    rng = random.Random(5)
    lines = list(_mutations(rng, 400))
    valid = []
    for ln in lines:
        try:
            json.loads(ln)
            valid.append(ln)
        except ValueError:
            pass
    files = {"valid": "\n".join(valid) + "\n", "mixed": "\n".join(lines[:40]),
             "blank": "\n\n".join(valid[:30]) + "\n",
             "crlf": "\r\n".join(valid[:30]) + "\r\n"}
    for name, text in files.items():
        p = tmp_path / f"{name}.jsonl"
        p.write_text(text, encoding="utf-8")
        for eos in (False, True):
            a = _load(p, True, monkeypatch, stop_at_eos=eos, eos_ids=(1, 7))
            b = _load(p, False, monkeypatch, stop_at_eos=eos, eos_ids=(1, 7))
            assert _same(a, b), (name, eos, a if isinstance(a, str) else "capture",
                                 b if isinstance(b, str) else "capture")


def test_a_standard_capture_is_read_by_the_scanner(monkeypatch):
    """The shipped captures are all plain: the scanner reads them (no chunk falls back)."""
    from pathlib import Path

    calls = []
    real = C._scan_chunk
    monkeypatch.setattr(C, "_scan_chunk", lambda *a: calls.append(real(*a)) or calls[-1])
    root = Path(__file__).resolve().parents[3]
    cap = C.load_capture(root / "examples/captures/ar_reference_bf16.jsonl.gz")
    assert calls and all(c is not None for c in calls)
    assert len(cap) == 128
