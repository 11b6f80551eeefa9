"""`# noqa` comments: which findings they silence, and how `add_noqa` writes them."""

from __future__ import annotations

import pytest

from viewlint.suppression import Suppressions, add_noqa


def suppressed(source: str, code: str, row: int, rows: tuple[int, int] = (0, 0)) -> bool:
    return Suppressions.from_source(source).is_suppressed(code, row, rows)


@pytest.mark.parametrize(
    "comment",
    [
        "# noqa",
        "#noqa",
        "# NOQA",
        "# noqa: VL201",
        "# noqa:VL201",
        "# noqa: vl201",
        "# noqa: VL2",
        "# noqa:VL101,VL201",
        "# noqa: VL101, VL201",
        "# noqa: VL101 VL201",
        "# noqa: VL201 because the buffer is rebuilt each step",
        "# type: ignore  # noqa: VL201",
    ],
)
def test_line_noqa_forms_silence_vl201(comment: str) -> None:
    assert suppressed(f"x[idx].copy_(y)  {comment}\n", "VL201", 1)


@pytest.mark.parametrize("comment", ["# noqa: VL101", "# noqa: VL3", "# ruff: noqa", "# flake8: noqa: VL201", "# no qa"])
def test_comments_that_do_not_silence_vl201(comment: str) -> None:
    assert not suppressed(f"x[idx].copy_(y)  {comment}\n", "VL201", 1)


def test_noqa_only_applies_to_its_own_row() -> None:
    source = "a = 1  # noqa\nb = 2\n"
    assert suppressed(source, "VL201", 1)
    assert not suppressed(source, "VL201", 2)


def test_noqa_inside_a_string_does_not_count() -> None:
    source = 's = "# noqa"\nt = """\n# noqa: VL201\n"""\n'
    assert not suppressed(source, "VL201", 1)
    assert not suppressed(source, "VL201", 3, (2, 4))


def test_noqa_on_any_row_of_a_multi_line_statement() -> None:
    source = "cache.append(\n    x[:2],\n)  # noqa: VL101\nother(x)\n"
    assert suppressed(source, "VL101", 2, (1, 3))
    assert not suppressed(source, "VL101", 2)  # without the statement range only row 2 counts
    assert not suppressed(source, "VL101", 4, (4, 4))


def test_noqa_after_a_multi_line_string_covers_its_first_row() -> None:
    source = 'f(x[:1], """\ntext\n""")  # noqa: VL101\n'
    assert suppressed(source, "VL101", 1)


def test_file_level_viewlint_noqa_silences_everything() -> None:
    source = "# viewlint: noqa\nx[idx].copy_(y)\n"
    assert suppressed(source, "VL201", 2)
    assert suppressed(source, "VL401", 2)


def test_file_level_viewlint_noqa_with_codes() -> None:
    source = "# viewlint: noqa: VL2, VL401\nx = 1\n"
    assert suppressed(source, "VL201", 2)
    assert suppressed(source, "VL401", 2)
    assert not suppressed(source, "VL101", 2)


def test_flake8_file_noqa_is_file_level_but_not_with_codes() -> None:
    assert suppressed("# flake8: noqa\nx = 1\n", "VL201", 2)
    assert not suppressed("# flake8: noqa: VL201\nx = 1\n", "VL201", 2)


def test_ruff_file_noqa_is_not_ours() -> None:
    assert not suppressed("# ruff: noqa\nx = 1\n", "VL201", 2)


def test_reserved_codes_are_not_silenced_by_blanket_noqa() -> None:
    assert not suppressed("x = 1  # noqa\n", "VL002", 1)
    assert not suppressed("# viewlint: noqa\nx = 1\n", "VL000", 1)
    assert suppressed("x = 1  # noqa: VL002\n", "VL002", 1)


def test_untokenizable_source_falls_back_to_lines() -> None:
    source = 'x = (1,  # noqa: VL201\ns = "# noqa"\n'  # unclosed bracket: tokenize fails
    assert suppressed(source, "VL201", 1)
    assert not suppressed(source, "VL201", 2)


def test_add_noqa_appends_a_comment() -> None:
    new, changed = add_noqa("x[idx].copy_(y)\nz = 1\n", [(1, "VL201")])
    assert new == "x[idx].copy_(y)  # noqa: VL201\nz = 1\n"
    assert changed == 1


def test_add_noqa_groups_codes_per_row_without_duplicates() -> None:
    new, changed = add_noqa("a = f(x)\n", [(1, "VL402"), (1, "VL201"), (1, "VL402")])
    assert new == "a = f(x)  # noqa: VL201, VL402\n"
    assert changed == 1


def test_add_noqa_merges_with_an_existing_noqa() -> None:
    new, changed = add_noqa("a = f(x)  # noqa: VL101 keep this reason\n", [(1, "VL201"), (1, "VL101")])
    assert new == "a = f(x)  # noqa: VL101, VL201 keep this reason\n"
    assert changed == 1


def test_add_noqa_leaves_rows_already_covered() -> None:
    source = "a = f(x)  # noqa\nb = g(x)  # noqa: VL2\n"
    assert add_noqa(source, [(1, "VL201"), (2, "VL201")]) == (source, 0)


def test_add_noqa_keeps_crlf_line_endings() -> None:
    new, changed = add_noqa("a = 1\r\nb = 2\r\n", [(2, "VL301")])
    assert new == "a = 1\r\nb = 2  # noqa: VL301\r\n"
    assert changed == 1


def test_add_noqa_after_existing_comment_and_trailing_spaces() -> None:
    new, _ = add_noqa("a = 1   # keep\n", [(1, "VL301")])
    assert new == "a = 1   # keep  # noqa: VL301\n"
    assert Suppressions.from_source(new).is_suppressed("VL301", 1)


def test_add_noqa_moves_a_comment_out_of_a_multi_line_string() -> None:
    source = 'f(x[:1], """\ntext\n""")\n'
    new, changed = add_noqa(source, [(2, "VL101")])
    assert new == 'f(x[:1], """\ntext\n""")  # noqa: VL101\n'
    assert changed == 1


def test_add_noqa_moves_a_comment_past_backslash_continuations() -> None:
    new, _ = add_noqa("y = x + \\\n    z\n", [(1, "VL301")])
    assert new == "y = x + \\\n    z  # noqa: VL301\n"


def test_add_noqa_ignores_rows_outside_the_file() -> None:
    assert add_noqa("a = 1\n", [(5, "VL301"), (0, "VL301")]) == ("a = 1\n", 0)


def test_add_noqa_output_is_then_suppressed() -> None:
    source = "cache.append(x[:2])\nbuf[idx].zero_()\n"
    new, _ = add_noqa(source, [(1, "VL101"), (2, "VL201")])
    suppressions = Suppressions.from_source(new)
    assert suppressions.is_suppressed("VL101", 1)
    assert suppressions.is_suppressed("VL201", 2)
    assert not suppressions.is_suppressed("VL201", 1)
