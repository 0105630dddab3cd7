"""MTP / EAGLE chain acceptance models.

An acceptance model for a chain drafter of depth K is a *survival curve*
``s[i-1] = P(accepted length >= i)``, i = 1..K, per drafted verify step (vLLM's
"per-position acceptance rate"; acceptance is prefix based, so the curve is
non-increasing). The accepted-length distribution of one step is
``pmf[a] = s[a-1] - s[a]`` with ``s[-1] := 1`` and ``s[K] := 0``; the step commits
``a + 1`` tokens (accepted drafts + the bonus/correction token), so the expected tokens per
target forward is ``1 + sum(s)``.

Three kinds of input are supported:

* a curve (``per_position_acceptance`` of a record, or a user list),
* a per-step histogram of accepted lengths (``accept_len_histogram``; the only full-scale
  one is ``Q6_P128_perstep_hist``),
* per-prompt counters (``mtp_acceptance_per_prompt.jsonl``; frontier stack F, K=7, runs A
  and B x 128 prompts) giving every prompt its own curve (see :func:`per_prompt_curves`).

Embedded defaults (``models/data/mtp_acceptance.json`` and
``models/data/mtp_per_prompt_F7.json``) are copies of the shared measurement files with
their ``source`` fields; the record ``F7_P128_calib`` (curve 0.729/0.554/0.439/0.361/
0.301/0.252/0.213, 3.849 tokens/forward, vLLM prometheus counters) is the default.

This module never reads files outside the project at run time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from models.errors import ModelInputError

K_MIN, K_MAX = 1, 16
DEFAULT_RECORD = "F7_P128_calib"

__all__ = [
    "AcceptanceModel", "validate_curve", "validate_k", "curve_from_histogram", "pmf_from_curve",
    "load_records", "record_model", "default_model", "load_acceptance", "scale_curve",
    "per_prompt_counters", "per_prompt_curves", "step_token_var", "calibration_ids",
    "K_MIN", "K_MAX",
]


def _data_text(name: str) -> str:
    return resources.files("models").joinpath("data", name).read_text(encoding="utf-8")


def validate_k(k: int, *, field: str = "k", file: str | None = None) -> int:
    """Check a chain depth K.

    Parameters
    ----------
    k : int
        Draft tokens per verify step.

    Returns
    -------
    int

    Raises
    ------
    ModelInputError
        If ``k`` is not an integer in 1..16.
    """
    try:
        ki = int(k)
    except (TypeError, ValueError):
        raise ModelInputError(f"K must be an integer in {K_MIN}..{K_MAX}, got {k!r}", field=field,
                              file=file) from None
    if ki != k or not K_MIN <= ki <= K_MAX:
        raise ModelInputError(f"K must be an integer in {K_MIN}..{K_MAX}, got {k!r}", field=field,
                              file=file)
    return ki


def validate_curve(curve: Sequence[float], *, k: int | None = None, field: str = "curve",
                   file: str | None = None, allow_zero: bool = False) -> np.ndarray:
    """Validate a survival curve ``P(accepted >= i)``, i = 1..K.

    Parameters
    ----------
    curve : sequence of float, shape (K,)
        Per-position acceptance rates (survival curve), non-increasing, each in (0, 1]
        (``[0, 1]`` with ``allow_zero``).
    k : int, optional
        Expected length; the curve must have exactly ``k`` entries when given.

    Returns
    -------
    numpy.ndarray, float64, shape (K,)

    Raises
    ------
    ModelInputError
        Not numeric, K outside 1..16, a value outside (0, 1], increasing anywhere, or length
        different from ``k``.
    """
    if isinstance(curve, (list, tuple)) and any(isinstance(x, (str, bool)) for x in curve):
        raise ModelInputError("acceptance curve must be a list of numbers (a value is "
                              "quoted or a boolean)", field=field, file=file)
    try:
        arr = np.asarray(curve, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ModelInputError("acceptance curve must be a list of numbers", field=field,
                              file=file) from None
    validate_k(arr.size, field=field, file=file)
    if k is not None and arr.size != k:
        raise ModelInputError(f"acceptance curve has {arr.size} positions but K={k}", field=field,
                              file=file)
    if not np.all(np.isfinite(arr)):
        raise ModelInputError("acceptance curve has a non-finite value", field=field, file=file)
    lo_ok = arr >= 0 if allow_zero else arr > 0
    if not np.all(lo_ok & (arr <= 1)):
        raise ModelInputError("acceptance curve values must lie in (0, 1]", field=field, file=file)
    if np.any(np.diff(arr) > 1e-12):
        raise ModelInputError("acceptance curve must be non-increasing (P(accepted >= i))",
                              field=field, file=file)
    return arr


def pmf_from_curve(curve: np.ndarray) -> np.ndarray:
    """Accepted-length pmf from survival curve(s).

    Parameters
    ----------
    curve : array, shape (..., K)

    Returns
    -------
    numpy.ndarray, shape (..., K+1)
        ``pmf[..., a] = P(accepted draft tokens == a)``, a = 0..K.
    """
    c = np.asarray(curve, dtype=float)
    one = np.ones(c.shape[:-1] + (1,))
    zero = np.zeros(c.shape[:-1] + (1,))
    s = np.concatenate([one, c, zero], axis=-1)
    return np.clip(s[..., :-1] - s[..., 1:], 0.0, 1.0)


def curve_from_histogram(hist: Mapping[int | str, float], k: int | None = None, *,
                              field: str = "accept_len_histogram", file: str | None = None
                              ) -> np.ndarray:
    """Survival curve from a per-step histogram of accepted draft lengths.

    Parameters
    ----------
    hist : mapping
        Accepted draft tokens per step (0..K) -> number of steps.
    k : int, optional
        Chain depth; defaults to the largest key.

    Returns
    -------
    numpy.ndarray, shape (K,)

    Raises
    ------
    ModelInputError
        Negative counts, keys outside 0..K, or zero total.
    """
    try:
        items = {int(a): float(n) for a, n in hist.items()}
    except (TypeError, ValueError, AttributeError):
        raise ModelInputError("histogram must map accepted length -> count", field=field,
                              file=file) from None
    kk = validate_k(k if k is not None else max(items), field=field, file=file)
    counts = np.zeros(kk + 1)
    for a, n in items.items():
        if not 0 <= a <= kk or n < 0:
            raise ModelInputError(f"histogram key {a} / count {n} outside 0..{kk} / >= 0",
                             field=field, file=file)
        counts[a] = n
    tot = counts.sum()
    if tot <= 0:
        raise ModelInputError("histogram is empty", field=field, file=file)
    surv = counts[::-1].cumsum()[::-1] / tot  # P(A >= a), a = 0..K
    return np.clip(surv[1:], 1e-9, 1.0)


def step_token_var(curve: np.ndarray) -> np.ndarray:
    """Variance of tokens committed per step, ``Var(A + 1)``, for curve(s) of shape (..., K)."""
    pmf = pmf_from_curve(curve)
    a = np.arange(pmf.shape[-1])
    m = (pmf * a).sum(-1)
    return (pmf * a * a).sum(-1) - m * m


@dataclass
class AcceptanceModel:
    """A chain acceptance model: a global curve plus optional per-prompt curves.

    Attributes
    ----------
    curve : numpy.ndarray, shape (K,)
        Global survival curve ``P(accepted >= i)``.
    source : str
        Where the numbers come from (record id and repository path).
    prompt_curves : dict[str, numpy.ndarray] or None
        Prompt id -> own survival curve, shape (K,) (per-prompt heterogeneity).
    prompt_sha : dict[str, str] or None
        Prompt id -> prompt_sha256, used to check the prompt set against a capture.
    """

    curve: np.ndarray
    source: str = ""
    prompt_curves: dict[str, np.ndarray] | None = None
    prompt_sha: dict[str, str] | None = None
    meta: dict = field(default_factory=dict)

    @property
    def k(self) -> int:
        """Chain depth K (draft tokens per step)."""
        return int(self.curve.size)

    @property
    def tokens_per_forward(self) -> float:
        """Expected committed tokens per verify step, ``1 + sum(curve)`` (no truncation)."""
        return float(1.0 + self.curve.sum())

    def curves_for(self, ids: Sequence[str], *, file: str | None = None,
                   subset: bool = False) -> np.ndarray:
        """Curves for the given prompt ids, shape (P, K).

        Without per-prompt curves every prompt gets the global curve.

        Parameters
        ----------
        ids : sequence of str, length P
        file : str, optional
            Named in the error.
        subset : bool, default False
            Accept ``ids`` covering only some of the per-prompt curves (a capture of some
            of the calibration prompts); every id must still have a curve.

        Raises
        ------
        ModelInputError
            If per-prompt curves exist but the prompt set differs from ``ids`` (with
            ``subset``: an id without a curve).
        """
        ids = list(ids)
        if self.prompt_curves is None:
            return np.broadcast_to(self.curve, (len(ids), self.k)).copy()
        missing = [i for i in ids if i not in self.prompt_curves]
        extra = () if subset else set(self.prompt_curves) - set(ids)
        if missing or extra:
            raise ModelInputError(
                f"acceptance prompt set does not match the capture: {len(missing)} capture "
                f"prompts without counters (e.g. {missing[:1]}), {len(extra)} counter prompts "
                "not in the capture", file=file, field="id")
        return np.stack([self.prompt_curves[i] for i in ids])

    def truncated(self, k: int) -> "AcceptanceModel":
        """The model restricted to the first ``k`` positions (caveat: a deeper curve cut
        short slightly under-predicts a shallower measured run: the measured K=8 curve summed
        over its first 6 positions gives 3.28 against 3.35 measured at K=6 on the same stack).

        Raises
        ------
        ModelInputError
            If ``k`` exceeds the model's depth.
        """
        k = validate_k(k)
        if k > self.k:
            raise ModelInputError(f"K={k} exceeds the acceptance curve depth {self.k}; give a "
                             "deeper --curve", field="k")
        pc = None if self.prompt_curves is None else {
            i: c[:k] for i, c in self.prompt_curves.items()}
        return AcceptanceModel(self.curve[:k].copy(), self.source + f" (first {k} positions)",
                               pc, self.prompt_sha, dict(self.meta))


def load_records() -> list[dict]:
    """The embedded MTP chain records (copy of the shared ``mtp_acceptance.json``)."""
    return json.loads(_data_text("mtp_acceptance.json"))["records"]


def _src(rec: dict) -> str:
    s = rec.get("source") or {}
    return f"{rec.get('id')} ({s.get('path', '?')} blob {s.get('blob', '?')}, {s.get('ref', '?')})"


def _record_curve(rec: dict, *, file: str | None = None) -> np.ndarray:
    k = rec.get("k")
    k = k if isinstance(k, int) and not isinstance(k, bool) else None
    if "per_position_acceptance" in rec:  # (an empty list is refused by the check)
        return validate_curve(rec["per_position_acceptance"], k=k,
                              field="per_position_acceptance", file=file)
    if rec.get("accept_len_histogram"):
        return curve_from_histogram(rec["accept_len_histogram"], rec.get("k"), file=file)
    if "curve" in rec:
        return validate_curve(rec["curve"], k=k, field="curve", file=file)
    raise ModelInputError("record has neither per_position_acceptance, curve nor "
                     "accept_len_histogram", file=file, field=str(rec.get("id", "record")))


def record_model(record_id: str = DEFAULT_RECORD) -> AcceptanceModel:
    """Acceptance model from an embedded record id (e.g. ``F7_P128_calib``,
    ``Q6_P128_perstep_hist`` which uses the histogram, ``KS_P128_k4``).

    Raises
    ------
    ModelInputError
        Unknown record id.
    """
    for rec in load_records():
        if rec["id"] == record_id:
            return AcceptanceModel(_record_curve(rec), _src(rec),
                                   meta={"record": record_id,
                                         "measured_tokens_per_forward":
                                             rec.get("tokens_per_forward")})
    ids = ", ".join(r["id"] for r in load_records()[:6])
    raise ModelInputError(f"unknown acceptance record {record_id!r} (known e.g. {ids}, ...)",
                     field="curve")


def default_model() -> AcceptanceModel:
    """The default K=7 model: record ``F7_P128_calib`` (3.849 tokens/forward)."""
    return record_model(DEFAULT_RECORD)


def scale_curve(curve: np.ndarray, target_tpf: np.ndarray | float, *, iters: int = 60
                ) -> np.ndarray:
    """Power-scale a curve to a target tokens/forward: ``s ** theta`` with
    ``1 + sum(s ** theta) = target``.

    The power transform keeps the curve non-increasing in (0, 1] and its conditional
    acceptances rising with depth (the measured shape: 0.73 -> 0.85 over depth for the K=7 frontier).

    Parameters
    ----------
    curve : array, shape (K,) or (P, K)
    target_tpf : float or array, shape (P,)
        Target tokens/forward, clipped to (1 + 1e-6, K + 1 - 1e-6).

    Returns
    -------
    numpy.ndarray, shape (P, K)
    """
    c = np.clip(np.atleast_2d(np.asarray(curve, dtype=float)), 1e-12, 1 - 1e-12)
    tgt = np.atleast_1d(np.asarray(target_tpf, dtype=float))
    k = c.shape[1]
    c = np.broadcast_to(c, (tgt.size, k))
    tgt = np.clip(tgt, 1 + 1e-6, k + 1 - 1e-6)
    lo = np.full(tgt.size, -12.0)  # log theta
    hi = np.full(tgt.size, 12.0)
    lc = np.log(c)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        e = 1 + np.exp(lc * np.exp(mid)[:, None]).sum(1)
        too_high = e > tgt  # theta too small -> increase
        lo = np.where(too_high, mid, lo)
        hi = np.where(too_high, hi, mid)
    th = np.exp(0.5 * (lo + hi))
    return np.exp(lc * th[:, None])


def per_prompt_counters(run: str = "B") -> list[dict]:
    """Embedded per-prompt counters (frontier stack F, K=7, P128) for run ``A`` or ``B``.

    Each row: ``id``, ``prompt_sha256``, ``num_drafts``, ``num_accepted``,
    ``tokens_per_forward``, ``accepted_per_pos`` (run A only).
    """
    data = json.loads(_data_text("mtp_per_prompt_F7.json"))
    runs = [r.strip().upper() for r in run.split("+")]
    rows = [r for r in data["rows"] if r["run"] in runs]
    if not rows:
        raise ModelInputError(f"no per-prompt counters for run {run!r} (A, B or A+B)", field="run")
    return rows


def _calibration_keys() -> dict[str, str]:
    """{prompt key: calibration id} of the 128 calibration prompts (P128, prompt_set_hash
    43df0c18b56abde3). The key is the first 16 hex of sha256 of the prompt's int64 token
    ids (``acceptance_model._prompt_key``), stored in
    ``models/data/acceptance_reference_P128.npz`` in the row order of
    ``models/data/acceptance_features_P128.json``, whose rows name the ids."""
    global _CAL_KEYS
    if _CAL_KEYS is None:
        with resources.files("models").joinpath(
                "data", "acceptance_reference_P128.npz").open("rb") as fh:
            keys = [str(k) for k in np.load(fh)["prompt_keys"]]
        ids = [r["id"] for r in json.loads(_data_text("acceptance_features_P128.json"))["rows"]]
        if len(keys) != len(ids):  # pragma: no cover - shipped data
            raise RuntimeError("calibration keys and ids disagree in length")
        _CAL_KEYS = dict(zip(keys, ids))
    return _CAL_KEYS


_CAL_KEYS: dict | None = None


def calibration_ids(prompts: Sequence[Sequence[int]]) -> list[str | None]:
    """The calibration prompt each prompt is, matched by its token ids.

    The measured per-prompt counters (:func:`per_prompt_counters`) belong to the 128
    calibration prompts; a capture holding some of them, under any id and in any order,
    can read those counters for them instead of a model's prediction.

    Parameters
    ----------
    prompts : sequence of int sequences, length P
        Prompt token ids of each record.

    Returns
    -------
    list of (str or None), length P
        The calibration id (``per_prompt_counters`` row ``id``) of each prompt whose
        token ids are exactly a calibration prompt's, else None.
    """
    import hashlib

    keys = _calibration_keys()
    return [keys.get(hashlib.sha256(np.asarray(p, np.int64).tobytes()).hexdigest()[:16])
            for p in prompts]


def per_prompt_curves(rows: Sequence[dict], base_curve: np.ndarray, *, mode: str = "scaled",
                      shrink: bool = True, file: str | None = None
                      ) -> tuple[dict[str, np.ndarray], dict]:
    """Per-prompt curves from per-prompt counters.

    Parameters
    ----------
    rows : sequence of dict
        Counter rows (``id``, ``num_drafts``, ``num_accepted``, optional
        ``accepted_per_pos``). Rows sharing an id (runs A+B) are pooled.
    base_curve : array, shape (K,)
        Global curve whose shape is power-scaled to each prompt's tokens/forward.
    mode : {"scaled", "own"}
        ``scaled``: ``base_curve ** theta_p`` matched to the prompt's tokens/forward.
        ``own``: the prompt's own ``accepted_per_pos / num_drafts`` (needs run A).
    shrink : bool
        Empirical-Bayes shrinkage of the prompt means toward the token-weighted mean by
        ``var_true / var_obs`` where ``var_noise`` = step-token variance / num_drafts. The
        measured per-prompt tokens/forward already carry sampling noise of ~130 steps; a
        replay adds that noise again, so without shrinkage the simulated spread would be
        too wide.

    Returns
    -------
    curves : dict[str, numpy.ndarray]
        id -> curve, shape (K,).
    info : dict
        ``shrink_factor``, ``var_obs``, ``var_noise``, ``n_prompts``.

    Raises
    ------
    ModelInputError
        Missing counters, non-positive drafts, or ``own`` without ``accepted_per_pos``.
    """
    k = base_curve.size
    acc: dict[str, list[float]] = {}
    pos: dict[str, np.ndarray] = {}
    for j, r in enumerate(rows, 1):
        try:
            nd, na = float(r["num_drafts"]), float(r["num_accepted"])
            pid = str(r["id"])
        except (KeyError, TypeError, ValueError):
            raise ModelInputError("per-prompt row needs id, num_drafts, num_accepted", file=file,
                             line=j) from None
        if nd <= 0 or na < 0 or na > k * nd:
            raise ModelInputError(f"bad counters num_drafts={nd} num_accepted={na} for K={k}",
                             file=file, line=j, field="num_drafts")
        a = acc.setdefault(pid, [0.0, 0.0])
        a[0] += nd
        a[1] += na
        if r.get("accepted_per_pos") is not None:
            app = np.asarray(r["accepted_per_pos"], dtype=float)
            if app.size != k:
                raise ModelInputError(f"accepted_per_pos has {app.size} entries, K={k}", file=file,
                                 line=j, field="accepted_per_pos")
            pos[pid] = pos.get(pid, np.zeros(k)) + app
    ids = list(acc)
    nd = np.array([acc[i][0] for i in ids])
    tpf = 1 + np.array([acc[i][1] for i in ids]) / nd
    info: dict = {"n_prompts": len(ids), "mode": mode, "shrink": shrink}
    if mode == "own":
        if set(pos) != set(ids):
            raise ModelInputError("mode 'own' needs accepted_per_pos for every prompt (run A)",
                             file=file, field="accepted_per_pos")
        curves = {i: np.clip(np.minimum.accumulate(pos[i] / acc[i][0]), 1e-6, 1.0)
                  for i in ids}
        info["shrink_factor"] = 1.0
        return curves, info
    if mode != "scaled":
        raise ModelInputError(f"unknown per-prompt mode {mode!r} (scaled, own)", field="mode")
    raw = scale_curve(base_curve, tpf)
    w = nd / nd.sum()
    mean = float((w * tpf).sum())  # token-weighted-ish (draft-weighted) mean
    var_obs = float((w * (tpf - mean) ** 2).sum())
    var_noise = float((w * step_token_var(raw) / nd).sum())
    factor = 1.0
    if shrink and var_obs > 0:
        factor = float(np.sqrt(max(var_obs - var_noise, 0.0) / var_obs))
    target = mean + factor * (tpf - mean)
    curves_arr = scale_curve(base_curve, target)
    info.update(shrink_factor=factor, var_obs=var_obs, var_noise=var_noise,
                mean_tokens_per_forward=mean)
    return {i: curves_arr[j] for j, i in enumerate(ids)}, info


def load_acceptance(path: str | Path | None = None, *, curve: Sequence[float] | None = None,
                    k: int | None = None, per_prompt: str | None = None,
                    per_prompt_mode: str = "scaled", shrink: bool = True) -> AcceptanceModel:
    """Build an acceptance model from a file, a record id, or an explicit curve.

    Parameters
    ----------
    path : str or Path, optional
        A record id of the embedded data (e.g. ``Q6_P128_perstep_hist``), or a file:
        JSON object with ``per_position_acceptance`` / ``curve`` / ``accept_len_histogram``
        (+ ``k``), a JSON list of such records (first mtp_chain record used), or JSONL
        per-prompt counters (rows with ``id``, ``num_drafts``, ``num_accepted``).
    curve : sequence of float, optional
        Explicit survival curve (overrides ``path``).
    k : int, optional
        Truncate to this depth (must not exceed the curve's depth).
    per_prompt : str, optional
        ``"A"``, ``"B"`` or ``"A+B"``: attach the embedded per-prompt counters of stack F
        (only valid for a K=7 model, or after truncation to K <= 7 with the ``scaled`` mode).
    per_prompt_mode, shrink
        See :func:`per_prompt_curves`.

    Returns
    -------
    AcceptanceModel

    Raises
    ------
    ModelInputError
        Invalid curve / histogram / counters, unreadable JSON, K out of range.
    """
    rows: list[dict] | None = None
    fname = None
    if curve is not None:
        model = AcceptanceModel(validate_curve(curve), "user curve")
    elif path is None:
        model = default_model()
    elif not Path(str(path)).exists() and any(r["id"] == str(path) for r in load_records()):
        model = record_model(str(path))
    else:
        fname = str(path)
        from models.files import loads_json, read_text  # bounded; no 5,000-digit ints

        text = read_text(path)
        try:
            obj = loads_json(text, fname)
        except json.JSONDecodeError:
            obj = None
            rows = []
            for j, line in enumerate(text.splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    rows.append(loads_json(line, fname))
                except json.JSONDecodeError as exc:
                    raise ModelInputError(f"not JSON: {exc.msg}", file=fname, line=j) from None
            rows = [r for r in rows if not r.get("_meta")]
            if rows and all(isinstance(r, dict) and "num_drafts" not in r for r in rows) and \
                    any(r.get("method", "mtp_chain") == "mtp_chain" and
                        ("per_position_acceptance" in r or "curve" in r or
                         "accept_len_histogram" in r) for r in rows):
                obj, rows = rows, None  # JSON Lines of curve records, not per-prompt counters
        if isinstance(obj, dict) and "num_drafts" in obj:
            obj, rows = None, [obj]  # a one-line per-prompt JSONL file
        if obj is not None:
            recs = obj if isinstance(obj, list) else obj.get("records", [obj]) \
                if isinstance(obj, dict) else None
            if not recs or not isinstance(recs[0], dict):
                raise ModelInputError("expected a JSON object or list of records", file=fname)
            rec = next((r for r in recs if r.get("method", "mtp_chain") == "mtp_chain"), None)
            if rec is None:
                raise ModelInputError("no mtp_chain record in file", file=fname)
            model = AcceptanceModel(_record_curve(rec, file=fname), f"{fname}:{rec.get('id', '')}")
        else:
            if not rows:
                raise ModelInputError("no per-prompt rows", file=fname)
            kk = validate_k(rows[0].get("k") or len(rows[0].get("accepted_per_pos") or []) or 7,
                            file=fname)
            base = default_model().curve if kk == 7 else None
            if base is None:
                if not all(r.get("accepted_per_pos") for r in rows):
                    raise ModelInputError("per-prompt counters for K != 7 need accepted_per_pos",
                                     file=fname)
                tot = np.sum([r["accepted_per_pos"] for r in rows], axis=0) / \
                    np.sum([r["num_drafts"] for r in rows])
                base = validate_curve(np.clip(tot, 1e-6, 1), file=fname)
            else:
                # global curve of these counters: own positions if present, else base scaled
                if all(r.get("accepted_per_pos") for r in rows):
                    tot = np.sum([r["accepted_per_pos"] for r in rows], axis=0) / \
                        np.sum([r["num_drafts"] for r in rows])
                    base = validate_curve(np.clip(tot, 1e-6, 1), file=fname)
            pc, info = per_prompt_curves(rows, base, mode=per_prompt_mode, shrink=shrink,
                                         file=fname)
            model = AcceptanceModel(base, f"{fname} (per-prompt counters)", pc,
                                    {str(r["id"]): r.get("prompt_sha256") for r in rows},
                                    meta={"per_prompt": info})
            rows = None
    if per_prompt:
        if model.k != 7:
            raise ModelInputError("embedded per-prompt counters are K=7 (stack F); use a K=7 "
                                  "curve", field="per_prompt")
        rws = per_prompt_counters(per_prompt)
        pc, info = per_prompt_curves(rws, model.curve, mode=per_prompt_mode, shrink=shrink)
        model = AcceptanceModel(model.curve, model.source + f" + per-prompt run {per_prompt}",
                                pc, {r["id"]: r["prompt_sha256"] for r in rws},
                                meta={**model.meta, "per_prompt": info})
    if k is not None:
        k = validate_k(k)
        if k != model.k:
            model = model.truncated(k)
    return model
