"""Auto-tuning of the lowering's parameters: search space, search driver, persistent cache."""
