"""Rule discovery and selection: unique, well-formed, documented codes; Ruff's selection semantics."""

from __future__ import annotations

import re

import pytest

import viewlint.registry as registry
from viewlint.analysis.module_index import ModuleIndex
from viewlint.diagnostics import RESERVED_CODES, Applicability
from viewlint.rule import Rule
from viewlint.settings import Settings

CODE = re.compile(r"^VL\d{3}$")
NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
SECTIONS = ["What it does", "Why it matters", "Example", "Fix"]
SHIPPED = registry.all_rules()


def test_rules_are_discovered_from_the_package() -> None:
    assert "VL201" in SHIPPED
    assert list(SHIPPED) == sorted(SHIPPED)
    for code, rule in SHIPPED.items():
        assert rule.code == code
        assert rule.__module__.startswith("viewlint.rules."), rule.__module__


def test_codes_are_unique_and_well_formed() -> None:
    assert all(CODE.match(code) for code in SHIPPED)
    assert not set(SHIPPED) & set(RESERVED_CODES), "VL000-VL002 are reserved for bad input"
    classes = [rule for rule in SHIPPED.values()]
    assert len({id(rule) for rule in classes}) == len(classes), "one class per code"
    names = [rule.name for rule in classes]
    assert len(names) == len(set(names)), "rule names are unique"


def test_a_code_defined_twice_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two modules defining the same code must fail loudly, not shadow each other."""
    import types

    first = types.ModuleType("viewlint.rules.fake_one")
    second = types.ModuleType("viewlint.rules.fake_two")
    for module in (first, second):
        rule = type("Clash", (Rule,), {"code": "VL201", "name": "clash", "__module__": module.__name__})
        module.Clash = rule  # type: ignore[attr-defined]
    import importlib
    import pkgutil

    modules = {"fake_one": first, "fake_two": second}
    monkeypatch.setattr(pkgutil, "iter_modules", lambda path: [pkgutil.ModuleInfo(None, name, False) for name in modules])  # type: ignore[arg-type]
    monkeypatch.setattr(importlib, "import_module", lambda name: modules[name.rsplit(".", 1)[1]])
    registry.all_rules.cache_clear()
    try:
        with pytest.raises(registry.RegistryError, match="VL201"):
            registry.all_rules()
    finally:
        monkeypatch.undo()
        registry.all_rules.cache_clear()
    assert registry.all_rules() == SHIPPED


@pytest.mark.parametrize("code", list(SHIPPED))
def test_each_rule_has_name_summary_and_documentation(code: str) -> None:
    rule = SHIPPED[code]
    assert NAME.match(rule.name), f"{code}: name {rule.name!r} must be kebab-case"
    assert rule.summary and rule.summary == rule.summary.strip() and "\n" not in rule.summary
    assert rule.doc_sections()[: len(SECTIONS)] == SECTIONS, f"{code}: docstring sections must start with {SECTIONS}"
    doc = rule.documentation()
    assert doc.startswith(f"# {rule.name} ({code})\n\n## What it does\n")
    for section in SECTIONS:  # no empty section
        body = doc.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
        assert body.strip(), f"{code}: section {section!r} is empty"
    assert "```python" in doc.split("## Example\n", 1)[1], f"{code}: the example needs a code block"
    assert isinstance(rule.default_enabled, bool)
    assert rule.fix_applicability is None or isinstance(rule.fix_applicability, Applicability)
    needs = rule.prefilter_needs(ModuleIndex(), Settings())
    assert needs is None or (isinstance(needs, tuple) and all(
        conjunction and all(kind in ("call", "attr", "flag") and value for kind, value in conjunction) for conjunction in needs
    )), f"{code}: malformed prefilter needs {needs!r}"
    assert all(isinstance(name, str) for name in rule.options)


# --- selection semantics, on a fixed set of fake rules ---------------------------------------------


def fake(code: str, default: bool = True) -> type[Rule]:
    return type(f"Fake{code}", (Rule,), {"code": code, "name": f"fake-{code.lower()}", "default_enabled": default})


@pytest.fixture
def fake_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    rules = {code: fake(code, default) for code, default in [("VL101", True), ("VL102", False), ("VL201", True), ("VL202", True), ("VL301", False)]}
    monkeypatch.setattr(registry, "all_rules", lambda: rules)


def selected(select=None, extend_select=(), ignore=(), extend_ignore=()) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(registry.resolve_selection(select, extend_select, ignore, extend_ignore))


@pytest.mark.usefixtures("fake_rules")
@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, ["VL101", "VL201", "VL202"]),  # default-on rules only
        ({"select": ["ALL"]}, ["VL101", "VL102", "VL201", "VL202", "VL301"]),
        ({"select": ["VL1"]}, ["VL101", "VL102"]),  # a prefix turns on default-off rules too
        ({"select": ["VL20"]}, ["VL201", "VL202"]),
        ({"select": ["vl201"]}, ["VL201"]),  # case-insensitive
        ({"select": []}, []),
        ({"extend_select": ["VL301"]}, ["VL101", "VL201", "VL202", "VL301"]),
        ({"ignore": ["VL2"]}, ["VL101"]),  # ignore beats the default set
        ({"extend_ignore": ["VL101"]}, ["VL201", "VL202"]),
        ({"select": ["ALL"], "ignore": ["VL1", "VL301"]}, ["VL201", "VL202"]),
        # The more specific selector wins.
        ({"select": ["VL2"], "ignore": ["VL201"]}, ["VL202"]),
        ({"select": ["VL201"], "ignore": ["VL2"]}, ["VL201"]),
        ({"ignore": ["VL2"], "extend_select": ["VL202"]}, ["VL101", "VL202"]),
        ({"select": ["ALL"], "ignore": ["ALL"]}, []),  # a tie goes to ignore
        ({"select": ["VL2"], "ignore": ["VL2"]}, []),
        ({"ignore": ["ALL"], "extend_select": ["VL1"]}, ["VL101", "VL102"]),
    ],
)
def test_selection(arguments: dict, expected: list[str]) -> None:
    assert selected(**arguments) == expected


@pytest.mark.usefixtures("fake_rules")
@pytest.mark.parametrize(
    ("selector", "known"),
    [("ALL", True), ("all", True), ("VL", True), ("VL2", True), ("VL201", True), ("vl10", True), ("VL000", True),
     ("VL001", True), ("VL9", False), ("VL2011", False), ("E501", False), ("", False)],
)
def test_known_code_or_prefix(selector: str, known: bool) -> None:
    assert registry.known_code_or_prefix(selector) is known


def test_an_opt_in_rule_says_why_in_its_own_terms():
    from viewlint.registry import all_rules

    rules = all_rules()
    for code in ("VL101", "VL401"):
        assert "Off by default" in rules[code].documentation()
    assert "view pins memory" in rules["VL101"].documentation()
    assert "view pins memory" not in rules["VL401"].documentation()  # a sync rule: its reason is the device
    assert "13 of 17" in rules["VL401"].documentation()
