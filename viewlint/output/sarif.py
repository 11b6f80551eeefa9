"""``sarif``: a SARIF 2.1.0 log with one run, for GitHub code scanning and other SARIF viewers."""

from __future__ import annotations

import json
from typing import Any, Sequence

import viewlint
from viewlint.diagnostics import RESERVED_CODES, Diagnostic, Edit, Location, rule_url
from viewlint.output._common import (
    RenderContext,
    is_reserved,
    relative_uri,
    root_uri,
    valid_json,
)

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"


def _region(start: Location, end: Location) -> dict[str, int]:
    """A 1-based SARIF region; clamped so a degenerate location still validates."""
    start_line = max(start.row, 1)
    start_column = max(start.column, 1)
    end_line = max(end.row, start_line)
    end_column = max(end.column, 1)
    if end_line == start_line:
        end_column = max(end_column, start_column)
    return {"startLine": start_line, "startColumn": start_column, "endLine": end_line, "endColumn": end_column}


def _artifact_location(path: str, ctx: RenderContext) -> dict[str, str]:
    """``{"uri", "uriBaseId"}`` relative to the root, or an absolute file: URI outside it."""
    uri, relative = relative_uri(path, ctx.root)
    return {"uri": uri, "uriBaseId": SRCROOT} if relative else {"uri": uri}


def _replacement(edit: Edit) -> dict[str, Any]:
    return {"deletedRegion": _region(edit.start, edit.end), "insertedContent": {"text": edit.content}}


def _rule_descriptor(code: str, ctx: RenderContext) -> dict[str, Any]:
    """A reportingDescriptor: the rule's name, summary and Markdown documentation."""
    rule = ctx.rules[code]
    documentation = rule.documentation()
    descriptor: dict[str, Any] = {
        "id": code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary or rule.name},
        "fullDescription": {"text": documentation, "markdown": documentation},
        "help": {"text": documentation, "markdown": documentation},
        "defaultConfiguration": {"enabled": bool(rule.default_enabled), "level": "warning"},
        "properties": {
            "fix": rule.fix_applicability.value if rule.fix_applicability else "none",
            "default_enabled": bool(rule.default_enabled),
            "options": _jsonable(dict(rule.options)),
        },
    }
    return _with_help_uri(descriptor, code)


def _with_help_uri(descriptor: dict[str, Any], code: str) -> dict[str, Any]:
    """``helpUri`` (the same URL as JSON's ``url``) when the rules' documentation is published."""
    url = rule_url(code)
    if url is not None:
        descriptor["helpUri"] = url
    return descriptor


def _reserved_descriptor(code: str) -> dict[str, Any]:
    """A descriptor for VL000-VL002, so viewers can name the rule of an input error."""
    from viewlint.reserved import RESERVED_DOCUMENTATION

    name = RESERVED_CODES[code]
    documentation = RESERVED_DOCUMENTATION[code]
    return _with_help_uri({
        "id": code,
        "name": name,
        "shortDescription": {"text": name.replace("-", " ")},
        "help": {"text": documentation, "markdown": documentation},
        "defaultConfiguration": {"level": "error"},
    }, code)


def _jsonable(value: Any) -> Any:
    """Options come from TOML and are JSON already; sets and other oddities become lists/strings."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(_jsonable(v) for v in value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _result(diagnostic: Diagnostic, rule_index: dict[str, int], ctx: RenderContext) -> dict[str, Any]:
    location = _artifact_location(diagnostic.path, ctx)
    properties: dict[str, Any] = {}
    if diagnostic.cell is None:
        where: dict[str, Any] = {"physicalLocation": {"artifactLocation": location,
                                                      "region": _region(diagnostic.start, diagnostic.end)}}
    else:
        # Rows in a notebook cell are not lines of the .ipynb file: the file, the cell as a logical
        # location, and the position in the cell as properties.
        where = {"physicalLocation": {"artifactLocation": location},
                 "logicalLocations": [{"name": f"cell {diagnostic.cell}", "kind": "module"}]}
        properties["cell"] = diagnostic.cell
        properties["cellRegion"] = _region(diagnostic.start, diagnostic.end)
    result: dict[str, Any] = {
        "ruleId": diagnostic.code,
        "level": "error" if is_reserved(diagnostic) else "warning",
        "message": {"text": diagnostic.message},
        "locations": [where],
    }
    if diagnostic.code in rule_index:
        result["ruleIndex"] = rule_index[diagnostic.code]
    fix = diagnostic.fix
    if fix is not None and fix.edits and diagnostic.cell is None:
        # SARIF's artifactChanges/replacements need at least one item, so edit-less fixes are omitted.
        result["fixes"] = [
            {
                "description": {"text": fix.message},
                "artifactChanges": [
                    {"artifactLocation": dict(location), "replacements": [_replacement(e) for e in fix.edits]}
                ],
                "properties": {"applicability": fix.applicability.value},
            }
        ]
    if diagnostic.verdict is not None:
        properties["verdict"] = diagnostic.verdict.to_json()
    if properties:
        result["properties"] = properties
    return result


def build_log(diagnostics: Sequence[Diagnostic], ctx: RenderContext) -> dict[str, Any]:
    """The SARIF log as a dict: every known rule, plus reserved codes that occur, then the results."""
    descriptors = [_rule_descriptor(code, ctx) for code in sorted(ctx.rules)]
    seen_reserved = sorted({d.code for d in diagnostics if d.code in RESERVED_CODES and d.code not in ctx.rules})
    descriptors.extend(_reserved_descriptor(code) for code in seen_reserved)
    rule_index = {descriptor["id"]: i for i, descriptor in enumerate(descriptors)}
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "viewlint",
                        "version": viewlint.__version__,
                        "rules": descriptors,
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"uri": root_uri(ctx.root)}},
                # Diagnostic columns count characters (code points), not UTF-16 units.
                "columnKind": "unicodeCodePoints",
                "results": [_result(d, rule_index, ctx) for d in diagnostics],
            }
        ],
    }


def render(diagnostics: Sequence[Diagnostic], ctx: RenderContext) -> str:
    """The SARIF log as indented JSON text."""
    return json.dumps(valid_json(build_log(diagnostics, ctx)), indent=2) + "\n"
