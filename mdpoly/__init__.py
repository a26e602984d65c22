"""mdpoly: a polyhedral source-to-source auto-parallelizer for C built on MDH expressions."""

__version__ = "0.1.0"
