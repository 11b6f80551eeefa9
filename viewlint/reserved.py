"""The documentation of the reserved codes VL000-VL002 (problems with the input, not with tensors).

`viewlint rule VL000` prints it, SARIF embeds it as the descriptor's help, and docs/rules.md
includes it, in the same sections as a rule's documentation.
"""

from __future__ import annotations

from viewlint.diagnostics import INTERNAL_ERROR, IO_ERROR, RESERVED_CODES, SYNTAX_ERROR

_NOT_SELECTABLE = """## Configuration
Reported whatever `select`, `ignore` and `per-file-ignores` say, and never silenced by
`# noqa`: a file viewlint could not lint is never passed over in silence. Naming this code
in `--ignore` or `ignore` prints a warning and changes nothing. Exclude the file instead
(`extend-exclude`) if it is not meant to be linted."""

_BODIES = {
    SYNTAX_ERROR: """## What it does
Reports a file (or notebook) that is not valid Python: the parser's message, at the row and
column where it stopped.

## Why is this bad?
No rule can look at a file that does not parse, so none of its findings would be reported:
the file would pass without having been checked.

## Example
```python
def forward(self, x)
    return x
```
gives `VL000 syntax error: expected ':'`.

It also names a statement that Python accepts but viewlint's parser (libcst) cannot read,
such as `(size): int = 1` in a class: the rest of the file is linted, and the VL000 says
which lines were not (`statement not analysed (lines 4-9: `class Cache:`)…`), since their
findings are missing.
""",
    IO_ERROR: """## What it does
Reports a file that viewlint could not read as source: permission denied, a broken symbolic
link, a file that is not text in its declared encoding (a NUL byte, invalid UTF-8), a file
over 8 MiB, or a notebook that is not a Jupyter notebook (not JSON, no `cells` list, an
nbformat version other than 4, a cell without `cell_type` or `source`, no code cells).

## Why is this bad?
The file was meant to be linted (it was named or matched `include`) but was not; without this
finding it would look clean.

## Example
`viewlint broken.ipynb` on a notebook cut off half-way gives
`broken.ipynb:1:1: VL001 invalid notebook: not valid JSON: Expecting ',' delimiter (line 40, column 5)`.
""",
    INTERNAL_ERROR: """## What it does
Reports a crash inside viewlint (a rule, or the analysis) while linting this file, naming the
rule when one crashed. The other rules and files are still linted; the run exits with 2.

## Why is this bad?
The findings of the crashed rule for this file are missing. Please report it with the file
(or the smallest part of it that still crashes) and `viewlint --version`.

## Example
`model.py:1:1: VL002 internal error in rule VL201: KeyError: 'x'`
""",
}

RESERVED_DOCUMENTATION: dict[str, str] = {
    code: f"# {RESERVED_CODES[code]} ({code})\n\n{body}\n{_NOT_SELECTABLE}\n" for code, body in _BODIES.items()
}

RESERVED_SUMMARIES = {
    SYNTAX_ERROR: "The file is not valid Python.",
    IO_ERROR: "The file cannot be read, decoded, or parsed as a notebook.",
    INTERNAL_ERROR: "viewlint crashed while linting the file.",
}
