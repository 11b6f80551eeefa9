"""viewlint's rules, one module per rule. Installed as ``viewlint.rules``."""
