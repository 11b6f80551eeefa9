"""What an object holds in an attribute its constructor sets from a parameter (`self.states = states`): what the
constructor's callers in the module pass, as far as being a tensor, or a list or tuple of tensors, goes.

Asked by the evaluator for `self.<attr>` where nothing else says what the attribute is. Only an attribute the class
assigns nowhere else counts, and only what every caller passes: `BatchedCache([torch.cat(p) for p in parts])`
makes `self.states` a list of tensors, and `[s[i:i + 1] for s in self.states]` rows of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from viewlint.analysis.module_index import ClassInfo
from viewlint.analysis.value_ops import container_value
from viewlint.analysis.values import UNKNOWN_TENSOR, Kind, Value

if TYPE_CHECKING:
    from viewlint.analysis.summaries import ModuleSummaries


def constructor_argument(summaries: "Optional[ModuleSummaries]", info: ClassInfo, attr: str) -> Optional[Value]:
    """What the callers of `info`'s constructor pass for the parameter it keeps in `self.<attr>`, or None."""
    parameter = info.constructor_parameters.get(attr)  # (the index's one reading of the class's assignments)
    if summaries is None or parameter is None:
        return None
    passed = (summaries.entry_values(info.name, "__init__") or {}).get(parameter)
    if passed is None:
        return None
    if passed.is_tensor and not passed.optional:
        return UNKNOWN_TENSOR.with_(device=passed.device, why=f"what the callers of `{info.name}(...)` pass")
    if passed.kind is Kind.WRAPPER and passed.wrapper in ("list", "tuple") and passed.elements \
            and all(e.is_tensor and not e.optional for e in passed.elements):
        item = UNKNOWN_TENSOR.with_(why=f"items of what the callers of `{info.name}(...)` pass")
        return container_value((item,), passed.wrapper)  # type: ignore[arg-type]
    return None
