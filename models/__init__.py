"""Statistical and simulation models of spec-planner (NumPy core; PyMC only for MCMC)."""
