"""The analysis layer: the one place that knows PyTorch semantics.

``semantics`` holds the tables (which ops return views, which copy, which syncs),
``values`` the abstract values the walker computes for expressions, and ``walker``
the single pass over a module that keeps tensor facts per function in statement
order and calls the rules.
"""
