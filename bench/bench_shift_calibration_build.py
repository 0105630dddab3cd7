"""Regenerate models/data/acceptance_reference_P128.npz and acceptance_features_P128.json.

Usage: python bench/bench_shift_calibration_build.py
Sources: examples/captures/mtp_spec_on_k7_int4_frontier.jsonl.gz (stack F spec-on K=7, P128,
copied from the shared decode captures) and models/data/mtp_per_prompt_F7.json (runs A+B).
"""

import io
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from models.drafting import acceptance_model as am  # noqa: E402
from models.drafting.acceptance import per_prompt_counters  # noqa: E402
from models.drafting.capture import load_capture  # noqa: E402

cap = load_capture(ROOT / "examples/captures/mtp_spec_on_k7_int4_frontier.jsonl.gz")
arrays = am.calibration_token_arrays(cap)
tok = np.concatenate([np.asarray(c, np.int32) for c in cap.completions])
off = np.r_[0, np.cumsum([len(c) for c in cap.completions])].astype(np.int64)
keys = np.array([am._prompt_key(p) for p in cap.prompts])
buf = io.BytesIO()
assert np.array_equal(arrays["offsets"], off)
np.savez_compressed(buf, tokens=tok, prompt_keys=keys, **arrays)
(ROOT / "models/data" / am.REFERENCE_FILE).write_bytes(buf.getvalue())
am.load_reference.cache_clear()
t = am.calibration_table(cap, per_prompt_counters("A+B"), arrays)
t = {"_source": "features: models.drafting.acceptance_model.calibration_table on "
     "examples/captures/mtp_spec_on_k7_int4_frontier.jsonl.gz (stack F spec-on K=7, P128); "
     "counters: runs A+B pooled from mtp_per_prompt_F7.json (prometheus per-prompt deltas, "
     "stack F, K=7); xng_top1 per set of left-out groups (key); walk_fit = acceptance_model.fit() on all prompts. Regenerate with "
     "bench/bench_shift_calibration_build.py.", **t}
m = am.fit(t)
t["walk_fit"] = {"model": am.MODEL_NAME, "states": list(am.STATES),
                 "coef": [float(v) for v in m.coef],
                 "cov_unscaled": [[float(v) for v in r] for r in m.cov_unscaled],
                 "s2": m.s2, "tau": m.tau, "nu": m.nu, "n_prompts": m.n_prompts,
                 "groups": m.groups}
(ROOT / "models/data" / am.CALIBRATION_FILE).write_text(json.dumps(t, separators=(",", ":"))
                                                        + "\n")
print("walk fit", t["walk_fit"]["coef"], "tau", m.tau)
print(len(t["rows"]), "rows;", len(buf.getvalue()), "bytes reference")
