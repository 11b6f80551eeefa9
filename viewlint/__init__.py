"""viewlint: find the memory and speed bugs that come from PyTorch tensor views and copies."""

import os
import sys

__version__ = "0.1.0"


def _rules_of_a_source_tree() -> None:
    """In a source tree (a checkout, an unpacked sdist) the rules are the `rules/` folder beside
    this package, which an install maps to `viewlint.rules` (pyproject's package-dir). Imported
    from there (`python -m viewlint` or `python -m pytest` run in that folder import it ahead of
    the installed copy), the package maps them itself; an installed copy has `viewlint/rules/`."""
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    rules = os.path.join(os.path.dirname(here), "rules")
    if "viewlint.rules" in sys.modules or os.path.isdir(os.path.join(here, "rules")):
        return
    if not os.path.isfile(os.path.join(rules, "__init__.py")):
        return
    spec = importlib.util.spec_from_file_location("viewlint.rules", os.path.join(rules, "__init__.py"),
                                                  submodule_search_locations=[rules])
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["viewlint.rules"] = module
    spec.loader.exec_module(module)


_rules_of_a_source_tree()
