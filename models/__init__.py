"""Statistical and simulation models of spec-planner (NumPy core; PyMC only for MCMC)."""

from models.kernels._cache import configure_cache_dir as _configure_numba_cache

_configure_numba_cache()  # before any kernel module imports numba (see models/kernels/_cache.py)
