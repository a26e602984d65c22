"""Backends render a checked ``Plan`` to target source text; they make no decisions."""
