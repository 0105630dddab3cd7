"""spec-planner: decisions (verdicts, repeat plans, budgets, drafting projections) and the CLI.

The statistics live in :mod:`models`; this package turns them into decisions and reports.
"""

__version__ = "0.1.0"
