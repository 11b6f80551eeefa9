"""``junit``: JUnit XML, one testsuite per file and one failing testcase per finding (as Ruff)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import PurePath
from typing import Sequence

from viewlint.diagnostics import Diagnostic
from viewlint.output._common import RenderContext, verdict_suffix

# Characters XML 1.0 cannot carry even escaped; they are replaced rather than breaking the document.
# Lone surrogates are the undecodable bytes of a file name that is not UTF-8.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: str) -> str:
    return _INVALID_XML.sub("\ufffd", text)


def _classname(path: str) -> str:
    """The path without its suffix (``.py``, ``.pyi``, ``.ipynb``), like Ruff's classname."""
    pure = PurePath(path)
    return path[: -len(pure.suffix)] if pure.suffix else path


def build_tree(diagnostics: Sequence[Diagnostic]) -> ET.Element:
    """The ``<testsuites>`` element for these findings."""
    # With no findings the single passing "No errors found" case is still a test, as in Ruff.
    tests = len(diagnostics) or 1
    root = ET.Element(
        "testsuites",
        {"name": "viewlint", "tests": str(tests), "failures": str(len(diagnostics)), "errors": "0"},
    )
    if not diagnostics:
        suite = ET.SubElement(
            root, "testsuite", {"name": "viewlint", "tests": "1", "disabled": "0", "errors": "0", "failures": "0"}
        )
        ET.SubElement(suite, "testcase", {"name": "No errors found"})
        return root

    by_path: dict[str, list[Diagnostic]] = {}
    for diagnostic in diagnostics:  # dicts keep insertion order, so files stay in the given order
        by_path.setdefault(diagnostic.path, []).append(diagnostic)
    for path, found in by_path.items():
        suite = ET.SubElement(
            root,
            "testsuite",
            {
                "name": _clean(path),
                "tests": str(len(found)),
                "disabled": "0",
                "errors": "0",
                "failures": str(len(found)),
                "package": "org.viewlint",
            },
        )
        for d in found:
            attributes = {"name": f"org.viewlint.{d.code}", "classname": _clean(_classname(path))}
            where = f"line {d.start.row}, col {d.start.column}"
            if d.cell is None:
                attributes.update(line=str(d.start.row), column=str(d.start.column))
            else:  # rows of a notebook cell are not lines of the .ipynb file
                where = f"cell {d.cell}, {where}"
            case = ET.SubElement(suite, "testcase", attributes)
            failure = ET.SubElement(case, "failure", {"message": _clean(d.message)})
            failure.text = _clean(f"{where}, {d.message}{verdict_suffix(d)}")
    return root


def render(diagnostics: Sequence[Diagnostic], ctx: RenderContext) -> str:
    """The JUnit XML document, with an XML declaration and 4-space indentation."""
    tree = build_tree(diagnostics)
    ET.indent(tree, space="    ")
    # ASCII with character references: valid as declared whatever encoding stdout has.
    body = ET.tostring(tree, encoding="unicode").encode("ascii", "xmlcharrefreplace").decode("ascii")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
