"""VL103: `torch.save` (or `pickle.dump`) of a view writes the whole base storage to the file."""

from __future__ import annotations

import re

from typing import Optional

import libcst as cst

from viewlint.analysis import features
from viewlint.analysis.flow import CALLERS_PASS
from viewlint.analysis.module_index import ModuleIndex
from viewlint.analysis.serializing import Serialized, serializing_functions
from viewlint.analysis.values import UNKNOWN, Kind, Value
from viewlint.diagnostics import Applicability
from viewlint.rule import Rule
from viewlint.analysis.returns import quoted_base
from viewlint.analysis.tree import descendants

# Expressions that take a `.clone()` suffix without parentheses.
_ATOMS = (cst.Name, cst.Attribute, cst.Subscript, cst.Call)
# Calls that serialise a tensor by its storage: a tensor pickles as its whole storage, a view included.
_SERIALIZERS = frozenset({"torch.save", "pickle.dump", "pickle.dumps"})
# `torch.distributed`'s object collectives pickle what they send: serialiser -> (position, keyword) of the object.
_SENT = {
    "torch.distributed.scatter_object_list": (1, "scatter_object_input_list"),
    "torch.distributed.broadcast_object_list": (0, "object_list"),
    "torch.distributed.send_object_list": (0, "object_list"),
    "torch.distributed.all_gather_object": (1, "obj"),
    "torch.distributed.gather_object": (0, "obj"),
}


def _receiver(serializer: str) -> str:
    if serializer in _SENT:
        return "ranks it goes to get"
    return "bytes get" if serializer == "pickle.dumps" else "file gets"


# A view that is one row picked by a name (`[i]` of a loop): `images[i]`, `flat["images"][i]`.
_ROW_BY_NAME = re.compile(r"\[[A-Za-z_]\w*\]$")


class ViewSerialized(Rule):
    """
    ## What it does
    Flags `torch.save(obj, f)` where `obj` is a view of part of a tensor (a slice, a row, a
    `split`/`chunk`/`unbind` piece), or a dict/list/tuple/dataclass holding such views,
    including rows obtained by iterating a batch (`{k: row for k, row in zip(keys, batch)}`).
    `pickle.dump(obj, f)` and `pickle.dumps(obj)` too: a tensor pickles the same way; and
    what `torch.distributed`'s object collectives send (`scatter_object_list`,
    `broadcast_object_list`, `send_object_list`, `all_gather_object`, `gather_object`), which
    pickle it. A module's `state_dict()` holds such views where the same file points parameters'
    `.data` at slices of one flat buffer (`p.data = flat[a:b].view_as(p)`, ZeRO's
    `for p, q in zip(params, unflatten(flat, params)): p.data = q.data`): `torch.save(layer.state_dict())`
    writes the whole buffer into each layer's file. A call of a function of the module that saves its
    argument is reported where the view goes into what it is given (`Part(ids=chunk)`).

    ## Why it matters
    `torch.save` serialises *storages*, not the elements a view shows: saving `hidden[:, -1]`
    of a `[8, 512, 4096]` activation writes all 512 positions, and saving each row of a batch
    to its own file writes the whole batch into every file. Files become as large as the
    base tensor, and loading one allocates all of it again (the loaded value is still a view
    of that big storage). Only when a container holds *every* part of the base is nothing
    wasted.

    ## Example
    ```python
    torch.save(hidden[:, -1], "last_token.pt")         # writes all of `hidden`
    for key, row in zip(keys, embeddings):
        torch.save({"embedding": row}, f"{key}.pt")     # each file holds all rows
    ```

    ## Fix
    Save copies that own exactly their elements:
    ```python
    torch.save(hidden[:, -1].clone(), "last_token.pt")
        torch.save({"embedding": row.clone()}, f"{key}.pt")
    ```
    A view whose ownership "fix" may not copy (`.contiguous()`, `.to()`) is VL102's.
    Fix safety: unsafe. `--unsafe-fixes` wraps a directly saved view in `.clone()`.
    """

    code = "VL103"
    name = "view-serialized"
    summary = "`torch.save` (or `pickle.dump`) of a view (or of a container of views) writes the whole base storage"
    fix_applicability = Applicability.UNSAFE

    @classmethod
    def prefilter_needs(cls, index: object, settings: object) -> features.Needs:
        aliases = getattr(index, "aliases", {})
        pickled = any(target == "pickle" or target.startswith("pickle.") for target in aliases.values())
        # `dump`/`dumps` only where the module imports pickle (`json.dump` is everywhere).
        sent = tuple(name.rsplit(".", 1)[-1] for name in _SENT)
        helpers = tuple(serializing_functions(index)) if isinstance(index, ModuleIndex) else ()  # `save_tensor(t, path)`
        return features.calls("save", "dump", "dumps", *sent, *helpers) if pickled else features.calls("save", *sent, *helpers)

    def visit_Call(self, node: cst.Call) -> None:
        facts = self.facts
        serializer = facts.qualify(node.func)
        if isinstance(node.func, cst.Name) and node.func.value in serializing_functions(facts.index) \
                and facts.lookup(node.func.value).kind is Kind.UNKNOWN:
            self._check_helper(node, node.func.value)
            return
        if serializer not in _SERIALIZERS and serializer not in _SENT:
            return
        saved = self._saved_argument(node, *_SENT.get(serializer, (0, "obj")))  # type: ignore[arg-type]
        # `clone_all(state) if args.clone else state`: each arm is what is saved on some run.
        while isinstance(saved, cst.IfExp):
            saved = saved.body if self._saved_view(facts.value_of(saved.body), one_file=serializer == "torch.save") is not None else saved.orelse
        if saved is None:
            return
        view = self._saved_view(facts.value_of(saved), one_file=serializer == "torch.save")
        if view is None:
            return
        text = facts.short_source(saved)
        direct = facts.value_of(saved).is_view
        what = "is a view" if direct else "holds a view"
        message = (
            f"`{serializer}({'…, ' if _SENT.get(serializer, (0,))[0] else ''}{text}, …)`: `{text}` {what} of {quoted_base(view.base)} (via `{view.origin}`), so the "
            f"{_receiver(serializer)} the whole storage of {quoted_base(view.base)}, not just the viewed elements"
        )
        if direct:
            replacement = f"{facts.source_for_edit(saved)}.clone()" if isinstance(saved, _ATOMS) else f"({facts.source_for_edit(saved)}).clone()"
            self.report(saved, message, fix_message=f"save `{text}.clone()`", edits=((saved, replacement),))
        else:
            self.report(saved, message, fix_message="save `.clone()`s of the views")

    def _check_helper(self, node: cst.Call, name: str) -> None:
        """`append_tensor_to_file(path, chunk)`, a function of this module that pickles (or saves) that parameter, or
        a field of it (`save_chunk(out, Part(ids=chunk))`): what this call passes is written, whatever other calls
        pass (the helper's own save sees all its callers' arguments joined)."""
        facts = self.facts
        for entry in serializing_functions(facts.index)[name]:
            argument = self._saved_argument(node, entry.position, entry.parameter)
            if argument is None:
                continue
            value = facts.value_of(argument)
            if entry.field:
                value = value.field(entry.field) if value.fields else UNKNOWN
            one_file = entry.serializer == "torch.save"
            view = self._saved_view(value, one_file=one_file)
            if view is None or view.why == CALLERS_PASS or not facts.bound_here(view.base or ""):
                continue  # no view, or one this function is handed: its own callers are where it is made
            if self._saved_by_helper(name, entry, one_file):
                continue  # every caller passes a view: the helper's save (or its helper's) sees one, and reports it there
            text = facts.short_source(argument)
            held = f"`{text}.{entry.field}`" if entry.field else f"`{text}`"
            self.report(
                self._made_at(argument, view),
                f"`{name}(…)` writes {held} with `{entry.serializer}`, and {held} "
                f"{'is' if value.is_view else 'holds'} a view of {quoted_base(view.base)} (via `{view.origin}`): the "
                f"{_receiver(entry.serializer)} the whole storage of {quoted_base(view.base)}, not just the viewed elements",
                fix_message="pass a `.clone()` of the view",
            )

    def _made_at(self, argument: cst.BaseExpression, view: Value) -> cst.BaseExpression:
        """Where the fix goes: for a name bound once in this function to an object or a display holding the view
        (`part = FeaturePartition(ids=chunk)`, then `save_part(part, path)`), the element that is the view."""
        function = self.facts.contexts.function
        if not isinstance(argument, cst.Name) or function is None or function.node is None:
            return argument
        bound = [n for n in descendants(function.node) if isinstance(n, cst.Assign) and len(n.targets) == 1
                 and isinstance(n.targets[0].target, cst.Name) and n.targets[0].target.value == argument.value]
        if len(bound) != 1 or not isinstance(bound[0].value, (cst.Call, cst.Tuple, cst.List, cst.Dict)):
            return argument
        found = self.facts.holding_node(bound[0].value, lambda value: value.is_view and value.base == view.base)
        return found if found is not None else argument

    def _saved_by_helper(self, name: str, entry: Serialized, one_file: bool) -> bool:
        summaries = self.facts.summaries
        passed = summaries.entry_values(None, name) if summaries is not None else None
        value = (passed or {}).get(f"{entry.parameter}.{entry.field}" if entry.field else entry.parameter)
        if value is None and entry.field and passed and entry.parameter in passed:
            joined = passed[entry.parameter]
            value = joined.field(entry.field) if joined.fields else None
        return value is not None and self._saved_view(value, one_file=one_file) is not None

    @staticmethod
    def _saved_argument(node: cst.Call, position: int, keyword: str) -> Optional[cst.BaseExpression]:
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == keyword:
                return arg.value
        positional = [a for a in node.args if a.keyword is None and not a.star]
        return positional[position].value if len(positional) > position else None

    def _saved_view(self, value: Value, one_file: bool = False) -> Optional[Value]:
        """A plain view of part of a tensor inside the saved object (maybe-views are VL102's).

        `one_file`: `torch.save` writes each storage once per file, so what holds every piece of a split of a base
        (`list(x.chunk(4))`) writes nothing more than the pieces; nor does a list of rows taken by a loop's index
        (`[{"image": images[i]} for i in range(n)]`), most often all of them. (`pickle` writes the storage again
        for each tensor.)"""
        views = value.retained_views()
        if any(v.is_maybe_view_of_view and v.partial for v in views):
            return None
        collected = value.kind is Kind.WRAPPER and value.wrapper in ("list", "tuple") or value.kind is Kind.TENSOR_SEQUENCE
        for view in views:
            if not (view.is_view and view.partial and view.base is not None):
                continue
            if one_file and (value.covers_base(view.base) or value.every_piece or value.whole_partition):
                continue
            if one_file and collected and _ROW_BY_NAME.search(view.origin or "") is not None:
                continue
            return view
        return None
