"""Kinds of code met in pass twenty-five: each lint kind is checked with the prefilter on and off; what a message
or a belief claims, with real torch."""

from __future__ import annotations

import textwrap

from conftest import lint_snippet as _lint, run_snippet as _run
from viewlint.beliefs import beliefs_of_text


def _beliefs(source: str) -> dict[tuple[int, str], dict]:
    return {(r["line"], r["target"]): r for r in beliefs_of_text(textwrap.dedent(source).lstrip("\n"), "m.py")}


# ---------------------------------------------------------------- a layer whose class is chosen before it is built
CHOSEN = """
    import torch
    from torch import nn


    class SelfBlock(nn.Module):
        def forward(self, hidden):
            return hidden[:, 0]


    class CrossBlock(nn.Module):
        def forward(self, hidden):
            return hidden[:, -1]


    BLOCKS = {"self": SelfBlock, "cross": CrossBlock}


    class Encoder(nn.Module):
        def __init__(self, cross: bool):
            super().__init__()
            block_class = CrossBlock if cross else SelfBlock
            self.block = block_class()
            self.other = BLOCKS["cross" if cross else "self"]()
            self.bank = {}

        def forward(self, x: torch.Tensor, key: str):
            first = self.block(x)
            self.bank[key] = first
            second = self.other(x)
            self.bank[key + "/other"] = second.clone()
            return first + second
"""


def test_a_layer_built_from_a_choice_of_classes_returns_what_any_of_their_forwards_returns():
    # `block_class = A if c else B; self.block = block_class()` and `self.other = BLOCKS[kind]()`: calling either runs
    # one of the classes' `forward`s, each a view of its input. Before, both calls were a module's output of unknown
    # kind, and the store below went unreported (the prefilter and the walk agree: `_lint` runs both).
    beliefs = _beliefs(CHOSEN)
    assert beliefs[(27, "first")]["view"] is True and beliefs[(27, "first")]["base"] == "x"
    assert beliefs[(29, "second")]["view"] is True and beliefs[(29, "second")]["base"] == "x"
    assert _lint(CHOSEN) == [(28, "VL101")]  # the clone stored beside it owns its storage


def test_the_chosen_layers_entry_pins_the_whole_input_with_real_torch():
    scope = _run(CHOSEN)
    torch = scope["torch"]
    for cross in (False, True):
        encoder = scope["Encoder"](cross)
        x = torch.randn(64, 8)
        encoder(x, "k")
        kept = encoder.bank["k"]
        assert kept.untyped_storage().nbytes() == x.untyped_storage().nbytes() >= 8 * kept.numel() * kept.element_size()
        assert encoder.bank["k/other"].untyped_storage().nbytes() == encoder.bank["k/other"].numel() * 4


def test_the_caller_evidence_reaches_a_chosen_classs_forward():
    # The chosen classes' `forward`s are called by `Encoder.forward` (the call graph's edge): what it passes (`x`, a
    # 3-D tensor) is what their parameter holds in their own walk.
    source = CHOSEN.replace("def forward(self, x: torch.Tensor, key: str):", "def forward(self, x: torch.Tensor, key: str):\n"
                            "            b, n, d = x.shape").replace("return hidden[:, 0]", "picked = hidden[:, 0]\n"
                                                                        "            return picked")
    beliefs = _beliefs(source)
    picked = beliefs[(7, "picked")]
    assert picked["tensor"] is True and picked["rank"] == 2


# ---------------------------------------------------------------- a helper's view of an unnamed temporary
HELPER_OF_TEMPORARY = """
    import torch
    from torch import nn


    def cls_token(act):
        return act[:, 0, :]


    class Extractor(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(8, 8)

        def forward(self, x):
            return self.proj(x)


    def collect(loader):
        model = Extractor()
        feats = []
        for batch in loader:
            feats.append(cls_token(model(batch)))
        return feats


    def collect_any(model: nn.Module, loader):
        feats = []
        for batch in loader:
            feats.append(cls_token(model(batch)))
        return feats


    def collect_owned(model: nn.Module, loader):
        feats = []
        for batch in loader:
            feats.append(cls_token(model(batch)).clone())
        return feats
"""


def test_a_helpers_view_of_an_unnamed_temporary_is_a_view_of_what_the_call_spells():
    # `cls_token(model(batch))` is what `out = model(batch); cls_token(out)` is: a view of each batch's whole output,
    # kept by the list. Before, the temporary had no name to be a view of, and the view was dropped.
    assert _lint(HELPER_OF_TEMPORARY) == [(22, "VL101"), (29, "VL101")]


def test_the_kept_token_pins_each_batchs_whole_output_with_real_torch():
    scope = _run(HELPER_OF_TEMPORARY)
    torch = scope["torch"]
    batches = [torch.randn(4, 16, 8) for _ in range(3)]
    kept = scope["collect"](batches)
    owned = scope["collect_owned"](scope["Extractor"](), batches)
    for token, clone in zip(kept, owned):
        assert token.untyped_storage().nbytes() == 4 * 16 * 8 * 4 == 16 * token.numel() * token.element_size()
        assert clone.untyped_storage().nbytes() == clone.numel() * clone.element_size()


# ---------------------------------------------------------------- a block behind a flag it clears: the first call only
FIRST_CALL = """
    import torch
    from torch import nn


    class Drop(nn.Module):
        def __init__(self):
            super().__init__()
            self.first = True
            self.enabled = True
            self.built = 0

        def initialize_masks(self, waveforms):
            self.built += 1
            masks = torch.ones(4, waveforms.shape[1], device=waveforms.device)
            counts = torch.randint(0, 3, (4,), device=waveforms.device)
            for i in range(4):
                if counts[i] == 0:
                    continue
                masks[i, : counts[i]] = 0
            return masks

        def forward(self, waveforms):
            if self.first:
                self.masks = self.initialize_masks(waveforms)
                self.first = False
            return waveforms * self.masks[:1]


    class Redrawn(Drop):
        def forward(self, waveforms):
            if self.enabled:
                self.masks = self.initialize_masks(waveforms)
            return waveforms * self.masks[:1]
"""


def test_a_block_behind_a_flag_it_clears_runs_on_the_first_call_only():
    # speechbrain's `FastDropChunk.forward`: `if self.first: ...; self.first = False` builds the masks once, so the
    # syncs in what it calls are not per step. A block behind a flag it leaves set (`if self.enabled:`) runs on every
    # call: the helper it calls is hot there.
    assert _lint(FIRST_CALL) == [(17, "VL403"), (19, "VL401")]
    only_first = FIRST_CALL.replace("""    class Redrawn(Drop):
        def forward(self, waveforms):
            if self.enabled:
                self.masks = self.initialize_masks(waveforms)
            return waveforms * self.masks[:1]
""", "")
    assert _lint(only_first) == []


def test_the_cleared_flag_builds_once_and_the_set_flag_every_call_with_real_torch():
    scope = _run(FIRST_CALL)
    torch = scope["torch"]
    once, every = scope["Drop"](), scope["Redrawn"]()
    for _ in range(5):
        once(torch.ones(2, 6))
        every(torch.ones(2, 6))
    assert (once.built, every.built) == (1, 5)


def test_a_registry_of_many_classes_is_not_a_choice_the_calls_walk():
    # Up to `MAX_CLASSES` (8) classes are a choice whose `forward`s a call joins; a registry of more is left unknown, as
    # a module's output of unknown kind (each call would walk every class's `forward`).
    many = "\n".join(f"class Block{i}(nn.Module):\n    def forward(self, hidden):\n        return hidden[:, {i}]\n"
                     for i in range(9))
    source = ("import torch\nfrom torch import nn\n\n" + many + "\nBLOCKS = {" + ", ".join(f'"b{i}": Block{i}' for i in range(9))
              + "}\n\n\nclass Encoder(nn.Module):\n    def __init__(self, kind):\n        super().__init__()\n"
              "        self.block = BLOCKS[kind]()\n\n    def forward(self, x):\n        first = self.block(x)\n"
              "        return first\n")
    few = source.replace(', "b8": Block8', "")
    line = source.splitlines().index("        first = self.block(x)") + 1
    assert _beliefs(source)[(line, "first")]["view"] is None
    assert _beliefs(few)[(line, "first")]["view"] is True
