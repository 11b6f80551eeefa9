"""docs/rules.md is generated from the rules; it must not be stale."""

from conftest import ROOT

from viewlint.docs import render_rules_markdown
from viewlint.registry import all_rules


def test_rules_md_is_up_to_date():
    current = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert current == render_rules_markdown(), "docs/rules.md is stale: run `python -m viewlint.docs`"


def test_rules_md_documents_every_rule():
    text = render_rules_markdown()
    for code, rule in all_rules().items():
        assert f"## {code} {rule.name}" in text
        assert "### What it does" in text


def test_readme_lists_every_rule():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for code in all_rules():
        assert code in readme, f"README.md does not mention {code}"
