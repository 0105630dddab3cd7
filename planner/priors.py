"""Resolve the ``--prior`` option: a platform name, ``weak``, or a noise JSON file."""

from __future__ import annotations

import json
from pathlib import Path

from models.noise import WEAK, NoisePrior, known_platforms, platform_prior
from planner.errors import InputError


def resolve_prior(spec: str | None, platform: str | None) -> tuple[NoisePrior | None, str]:
    """Return (prior or None, label).

    Parameters
    ----------
    spec : str or None
        ``None``/``auto``: the platform's embedded prior when the platform is known, else none
        (weakly informative, data must carry the noise). ``weak``/``none``: weakly informative.
        A platform name (``hf-a10g-small``, ``local-a10g``, ``published-n4``). Otherwise a path
        to a JSON file written by ``planner calibrate``.
    platform : str or None
        Platform of the runs (column ``platform`` or ``--platform``).

    Raises
    ------
    InputError
        Unreadable or malformed prior file, unknown platform name.
    """
    if spec is None or spec == "auto":
        if platform:
            try:
                return platform_prior(platform), f"platform:{platform}"
            except KeyError:
                return None, "weak"
        return None, "weak"
    if spec in ("weak", "none"):
        return None, "weak"
    try:
        return platform_prior(spec), f"platform:{spec}"
    except KeyError:
        pass
    p = Path(spec)
    if not p.exists():
        raise InputError(f"not a platform ({', '.join(known_platforms())}, weak) nor an existing "
                         "file", file=spec, field="--prior")
    try:
        d = json.loads(p.read_text(encoding="utf-8"))
        if "prior" in d:
            d = d["prior"]
        prior = NoisePrior.from_dict(d)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", file=spec, line=exc.lineno,
                         field="--prior") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"not a noise prior (needs tau and sigma with kind/scale[/df]): {exc}",
                         file=spec, field="--prior") from None
    return prior, f"file:{spec}"


__all__ = ["resolve_prior", "WEAK"]
