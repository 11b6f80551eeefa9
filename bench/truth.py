#!/usr/bin/env python3
"""What the analysis believes against what each value really is at run time.

Runs real model code offline on the CPU (tiny random-config transformers models built from configs,
with `generate()` for the causal LMs, and diffusers' UNet and VAE at tiny sizes) under a tracer
limited to the libraries' own files. After each statement that binds (an assignment, a `for` target),
the tracer records what every target holds: a tensor (a view: `_base is not None`; contiguous; its
device), a tuple or list of tensors, or something else. Then `viewlint beliefs` is run on the same
files, and each binding's belief is compared with what it held.

It prints, per model and in all:
- tensor recall: of the bindings that held a tensor every time they ran, the share the analysis
  believes are tensors; tensor precision: of the bindings believed tensors (and run), the share
  that held a tensor every time (`may`: at least once, in brackets);
- the same for views (`_base is not None`), and the recall of views of part of their storage (what
  pins memory; a view that reaches all of its storage, such as `F.linear`'s 3-D output, does not);
- not-a-view precision: of the tensors believed to have no `_base`, the share that never had one;
- the recall and precision of ranks (`dim()`, for the bindings that held a tensor of one rank every time);
- the wrong claims (believed a tensor, never one; believed a view, never one; believed not a
  tensor or not a view when it always was one; believed a rank it did not have);
- the largest causes of misses, grouped by the syntactic form of what the binding is bound to.

Set-up (a venv that sees the pinned CPU torch; nothing is downloaded at run time):

    python3 -m venv --system-site-packages .venv-truth
    .venv-truth/bin/pip install transformers==5.23.0 diffusers==0.42.1
    .venv-truth/bin/python bench/truth.py --viewlint "path/to/viewlint"

`--json FILE` writes every compared binding (for a closer look); `--models llama,gpt2` runs some.
`--models heldout-dev` and `--models heldout-test --totals-only` run models the analysis was not developed on:
the first to read misses from, the second kept unread, to check that what was learnt generalises.
A benchmark script, not a test: it needs transformers and diffusers, which the tests do not install.
"""

from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
import traceback
from typing import Any, Callable, Optional

MISSING = object()


# ---------------------------------------------------------------- what a binding holds at run time
def observe(value: Any) -> tuple[str, bool, bool, Optional[bool], Optional[str], Optional[int]]:
    """(kind, view, partial, contiguous, device, rank): kind is "tensor", "tensors" (a tuple or list of them) or
    "other"; view: `_base is not None`; partial: a view that reaches less than all of its storage (keeping it
    keeps bytes it cannot read). A view that reaches all of it (`F.linear`'s 3-D output, the reshaped result of
    a matmul) pins nothing: in memory it is a tensor that owns its storage."""
    import torch

    if isinstance(value, torch.Tensor):
        try:
            contiguous = bool(value.is_contiguous())
        except RuntimeError:  # sparse or other layouts
            contiguous = None
        view = value._base is not None
        partial = False
        if view:
            try:
                reach = 0 if value.numel() == 0 else (value.storage_offset() + 1 + sum(
                    (size - 1) * stride for size, stride in zip(value.shape, value.stride()))) * value.element_size()
                partial = reach < value.untyped_storage().nbytes() or value.storage_offset() > 0
            except RuntimeError:
                partial = True
        return "tensor", view, partial, contiguous, value.device.type, value.dim()
    if isinstance(value, (tuple, list)) and value and all(isinstance(v, torch.Tensor) for v in value):
        return "tensors", False, False, None, None, None
    return "other", False, False, None, None, None


class Statements:
    """For one source file: each line's innermost statement, and the targets of the binding ones."""

    def __init__(self, path: str) -> None:
        self.of_line: dict[int, tuple[int, int]] = {}  # line -> (first, last) line of its innermost statement
        self.targets: dict[int, list[str]] = {}  # first line -> target names ("x", "self.x")
        self.forms: dict[int, ast.AST] = {}  # first line -> the bound expression (or the `for` node)
        try:
            with open(path, encoding="utf-8") as handle:
                tree = ast.parse(handle.read())
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            return
        statements = [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]
        in_functions = _function_statements(tree)
        # Outer statements first, so inner ones overwrite the lines they cover.
        for node in sorted(statements, key=lambda n: (n.lineno, -(n.end_lineno or n.lineno))):
            last = node.end_lineno or node.lineno
            if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.Try, ast.FunctionDef,
                                 ast.AsyncFunctionDef, ast.ClassDef)):
                header_end = node.body[0].lineno - 1 if getattr(node, "body", None) else last
                span = range(node.lineno, max(header_end, node.lineno) + 1)
            else:
                span = range(node.lineno, last + 1)
            for line in span:
                self.of_line[line] = (node.lineno, last)
            names: list[str] = []
            if id(node) not in in_functions:
                continue  # module and class bodies run at import: the analysis records bindings in functions
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    names.extend(_names(target))
                self.forms[node.lineno] = node.value
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
                names.extend(_names(node.target))
                self.forms[node.lineno] = node.value
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                names.extend(_names(node.target))
                self.forms[node.lineno] = node
            if names:
                self.targets[node.lineno] = names


def _function_statements(tree: ast.AST) -> set[int]:
    """The ids of the statements whose innermost scope is a function (not a module or class body)."""
    found: set[int] = set()

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt) and in_function:
                found.add(id(child))
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, True)
            elif isinstance(child, ast.ClassDef):
                visit(child, False)
            else:
                visit(child, in_function)

    visit(tree, False)
    return found


def _names(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
        return [f"self.{target.attr}"]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts if not isinstance(e, ast.Starred) for n in _names(e)]
    return []


class Tracer:
    """Records, after each binding statement of a traced file runs, what its targets hold."""

    def __init__(self, roots: list[str]) -> None:
        self.roots = tuple(os.path.join(os.path.abspath(r), "") for r in roots)
        self.files: dict[str, Statements] = {}
        self.seen: dict[tuple[str, int, str], list[tuple[str, bool, bool, Optional[bool], Optional[str]]]] = collections.defaultdict(list)
        self._pending: dict[int, tuple[str, int, int]] = {}  # id(frame) -> (file, first line of its last statement, where it began)
        self._keep: dict[str, bool] = {}

    def _traced(self, filename: str) -> bool:
        keep = self._keep.get(filename)
        if keep is None:
            keep = self._keep[filename] = filename.startswith(self.roots) and filename.endswith(".py")
            if keep:
                self.files[filename] = Statements(filename)
        return keep

    def global_trace(self, frame: Any, event: str, arg: Any) -> Optional[Callable[..., Any]]:
        if event == "call" and self._traced(frame.f_code.co_filename):
            return self.local_trace
        return None

    def _flush(self, frame: Any) -> None:
        pending = self._pending.pop(id(frame), None)
        if pending is None:
            return
        filename, first, _ = pending
        statements = self.files[filename]
        frame_locals = frame.f_locals
        for target in statements.targets.get(first, ()):
            if target.startswith("self."):
                owner = frame_locals.get("self", MISSING)
                value = getattr(owner, target[5:], MISSING) if owner is not MISSING else MISSING
            else:
                value = frame_locals.get(target, MISSING)
            if value is MISSING:
                continue
            try:
                self.seen[(filename, first, target)].append(observe(value))
            except Exception:  # a value whose attributes raise: not recorded
                pass

    def local_trace(self, frame: Any, event: str, arg: Any) -> Optional[Callable[..., Any]]:
        if event == "line":
            filename = frame.f_code.co_filename
            statement = self.files[filename].of_line.get(frame.f_lineno)
            pending = self._pending.get(id(frame))
            # The same statement again: a loop ran it once more (the code went back), or the evaluation of a statement
            # over several lines came back to its first line (`x = torch.zeros(\n ...\n)` calls on the first line),
            # which is still the one run: its target is not bound yet.
            again = pending is not None and frame.f_lineno == statement[0] and frame.f_lasti <= pending[2] \
                if statement is not None else False
            if pending is not None and (statement is None or statement[0] != pending[1] or again):
                self._flush(frame)
                pending = None
            if statement is not None and statement[0] in self.files[filename].targets and pending is None:
                self._pending[id(frame)] = (filename, statement[0], frame.f_lasti)
        elif event in ("return", "exception"):
            if event == "return":
                self._flush(frame)
            else:
                self._pending.pop(id(frame), None)
        return self.local_trace


# ---------------------------------------------------------------- the models
def _causal(config_class: str, model_class: str, **config: Any) -> Callable[[], None]:
    def run() -> None:
        import torch
        import transformers

        cfg = getattr(transformers, config_class)(**config)
        model = getattr(transformers, model_class)(cfg).eval()
        ids = torch.randint(3, cfg.vocab_size, (2, 7))
        with torch.no_grad():
            model(ids)
            model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=3, do_sample=False,
                           pad_token_id=0)
    return run


_SMALL = dict(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=64)


def _bert() -> None:
    import torch
    import transformers

    cfg = transformers.BertConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                  num_attention_heads=4, max_position_embeddings=64)
    model = transformers.BertForMaskedLM(cfg).eval()
    with torch.no_grad():
        ids = torch.randint(3, 128, (2, 9))
        model(input_ids=ids, attention_mask=torch.ones_like(ids))


def _vit() -> None:
    import torch
    import transformers

    cfg = transformers.ViTConfig(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                 intermediate_size=64, num_labels=3)
    model = transformers.ViTForImageClassification(cfg).eval()
    with torch.no_grad():
        model(pixel_values=torch.randn(2, 3, 32, 32))


def _t5() -> None:
    import torch
    import transformers

    cfg = transformers.T5Config(vocab_size=128, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2,
                                num_heads=4, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    model = transformers.T5ForConditionalGeneration(cfg).eval()
    ids = torch.randint(3, 128, (2, 7))
    with torch.no_grad():
        model(input_ids=ids, decoder_input_ids=ids[:, :4])
        model.generate(ids, max_new_tokens=3, do_sample=False)


def _whisper() -> None:
    import torch
    import transformers

    cfg = transformers.WhisperConfig(vocab_size=128, num_mel_bins=16, d_model=32, encoder_layers=2, decoder_layers=2,
                                     encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                                     decoder_ffn_dim=64, max_source_positions=16, max_target_positions=32,
                                     pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)
    model = transformers.WhisperForConditionalGeneration(cfg).eval()
    features = torch.randn(2, 16, 32)
    with torch.no_grad():
        model(input_features=features, decoder_input_ids=torch.tensor([[1, 5, 6], [1, 7, 8]]))


def _qwen2_vl() -> None:
    import torch
    import transformers

    text = dict(_SMALL, hidden_size=64, intermediate_size=128, rope_scaling={"type": "mrope", "mrope_section": [2, 2, 4]},
                num_attention_heads=4, num_key_value_heads=2)
    cfg = transformers.Qwen2VLConfig(text_config=text, vision_config=dict(depth=2, embed_dim=32, hidden_size=64, num_heads=4,
                                                                          mlp_ratio=2, patch_size=4, spatial_merge_size=2,
                                                                          temporal_patch_size=2, in_channels=3),
                                     image_token_id=100, video_token_id=101, vision_start_token_id=102, vocab_size=128)
    model = transformers.Qwen2VLForConditionalGeneration(cfg).eval()
    grid = torch.tensor([[1, 4, 4]])  # one image: 1 x 4 x 4 patches, merged 2 x 2 into 4 tokens
    pixels = torch.randn(16, 3 * 2 * 4 * 4)
    ids = torch.tensor([[5, 102, 100, 100, 100, 100, 6, 7]])
    with torch.no_grad():
        model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), pixel_values=pixels, image_grid_thw=grid,
                       max_new_tokens=3, do_sample=False, pad_token_id=0)


def _unet() -> None:
    import diffusers
    import torch

    model = diffusers.UNet2DConditionModel(
        sample_size=16, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(32, 64),
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"), up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=32, attention_head_dim=8, norm_num_groups=8).eval()
    with torch.no_grad():
        model(torch.randn(2, 4, 16, 16), torch.tensor([10, 20]), encoder_hidden_states=torch.randn(2, 5, 32))


def _vae() -> None:
    import diffusers
    import torch

    model = diffusers.AutoencoderKL(in_channels=3, out_channels=3, down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
                                    up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"), block_out_channels=(16, 32),
                                    latent_channels=4, norm_num_groups=8, layers_per_block=1, sample_size=32).eval()
    with torch.no_grad():
        latents = model.encode(torch.randn(1, 3, 32, 32)).latent_dist.sample()
        model.decode(latents)


def _seq2seq_bart() -> None:
    import torch
    import transformers

    cfg = transformers.BartConfig(vocab_size=128, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                                  decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
                                  max_position_embeddings=64, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                                  decoder_start_token_id=2, forced_eos_token_id=None)
    model = transformers.BartForConditionalGeneration(cfg).eval()
    ids = torch.randint(3, 128, (2, 7))
    with torch.no_grad():
        model(input_ids=ids, decoder_input_ids=ids[:, :4])
        model.generate(ids, max_new_tokens=3, do_sample=False)


def _clip() -> None:
    import torch
    import transformers

    cfg = transformers.CLIPConfig(
        text_config=dict(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                         max_position_embeddings=16),
        vision_config=dict(image_size=32, patch_size=8, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                           num_attention_heads=4),
        projection_dim=16)
    model = transformers.CLIPModel(cfg).eval()
    with torch.no_grad():
        model(input_ids=torch.randint(3, 128, (2, 7)), pixel_values=torch.randn(2, 3, 32, 32))


def _encoder(config_class: str, model_class: str, **config: Any) -> Callable[[], None]:
    def run() -> None:
        import torch
        import transformers

        cfg = getattr(transformers, config_class)(**config)
        model = getattr(transformers, model_class)(cfg).eval()
        ids = torch.randint(3, 128, (2, 9))
        with torch.no_grad():
            model(input_ids=ids, attention_mask=torch.ones_like(ids))
    return run


def _image(config_class: str, model_class: str, **config: Any) -> Callable[[], None]:
    def run() -> None:
        import torch
        import transformers

        cfg = getattr(transformers, config_class)(**config)
        model = getattr(transformers, model_class)(cfg).eval()
        with torch.no_grad():
            model(pixel_values=torch.randn(2, 3, 32, 32))
    return run


def _swin() -> None:
    import torch
    import transformers

    cfg = transformers.SwinConfig(image_size=32, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 4], window_size=4,
                                  num_labels=3)
    model = transformers.SwinForImageClassification(cfg).eval()
    with torch.no_grad():
        model(pixel_values=torch.randn(2, 3, 32, 32))


def _wav2vec2() -> None:
    import torch
    import transformers

    cfg = transformers.Wav2Vec2Config(vocab_size=32, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                      intermediate_size=64, conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3),
                                      num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)
    model = transformers.Wav2Vec2ForCTC(cfg).eval()
    with torch.no_grad():
        model(torch.randn(2, 400))


def _dit() -> None:
    import diffusers
    import torch

    model = diffusers.DiTTransformer2DModel(num_attention_heads=2, attention_head_dim=8, in_channels=4, num_layers=2,
                                            sample_size=8, patch_size=2, num_embeds_ada_norm=10, norm_num_groups=8).eval()
    with torch.no_grad():
        model(torch.randn(2, 4, 8, 8), timestep=torch.tensor([1, 2]), class_labels=torch.tensor([1, 2]))


def _sd3() -> None:
    import diffusers
    import torch

    model = diffusers.SD3Transformer2DModel(sample_size=8, patch_size=2, in_channels=4, num_layers=2, attention_head_dim=8,
                                            num_attention_heads=2, joint_attention_dim=16, caption_projection_dim=16,
                                            pooled_projection_dim=8, out_channels=4, pos_embed_max_size=16).eval()
    with torch.no_grad():
        model(torch.randn(2, 4, 8, 8), encoder_hidden_states=torch.randn(2, 5, 16), pooled_projections=torch.randn(2, 8),
              timestep=torch.tensor([1, 2]))


def _flux() -> None:
    import diffusers
    import torch

    model = diffusers.FluxTransformer2DModel(patch_size=1, in_channels=16, num_layers=1, num_single_layers=1,
                                             attention_head_dim=8, num_attention_heads=2, joint_attention_dim=16,
                                             pooled_projection_dim=8, axes_dims_rope=(2, 2, 4)).eval()
    with torch.no_grad():
        model(hidden_states=torch.randn(1, 16, 16), encoder_hidden_states=torch.randn(1, 5, 16),
              pooled_projections=torch.randn(1, 8), timestep=torch.tensor([1.0]), img_ids=torch.zeros(16, 3),
              txt_ids=torch.zeros(5, 3))


def _vae_tiny() -> None:
    import diffusers
    import torch

    model = diffusers.AutoencoderTiny(encoder_block_out_channels=(8, 8), decoder_block_out_channels=(8, 8),
                                      num_encoder_blocks=(1, 1), num_decoder_blocks=(1, 1), latent_channels=4).eval()
    with torch.no_grad():
        model.decode(model.encode(torch.randn(1, 3, 16, 16)).latents)


MODELS: dict[str, Callable[[], None]] = {
    "llama": _causal("LlamaConfig", "LlamaForCausalLM", **_SMALL),
    "qwen2": _causal("Qwen2Config", "Qwen2ForCausalLM", **_SMALL),
    "mixtral": _causal("MixtralConfig", "MixtralForCausalLM", **_SMALL, num_local_experts=4, num_experts_per_tok=2),
    "gpt2": _causal("GPT2Config", "GPT2LMHeadModel", vocab_size=128, n_embd=32, n_layer=2, n_head=4, n_positions=64),
    "qwen2_vl": _qwen2_vl,
    "bert": _bert,
    "vit": _vit,
    "whisper": _whisper,
    "t5": _t5,
    "unet": _unet,
    "vae": _vae,
}

# Models no pass tuned the analysis on, for measuring how the inference generalises to model code it has not
# seen (issue 26: "it will also be measured on model code the team does not see"). Two sets: `--models
# heldout-dev` is the set a pass may read misses from; `--models heldout-test` is kept unread (a pass compares
# only its totals before and after), so that what the dev set taught can be checked on code nobody looked at.
HELD_OUT_DEV: dict[str, Callable[[], None]] = {
    "mistral": _causal("MistralConfig", "MistralForCausalLM", **_SMALL),
    "qwen3_moe": _causal("Qwen3MoeConfig", "Qwen3MoeForCausalLM", **_SMALL, head_dim=8, num_experts=4,
                         num_experts_per_tok=2, moe_intermediate_size=32),
    "phi3": _causal("Phi3Config", "Phi3ForCausalLM", **_SMALL, pad_token_id=0),
    "gemma2": _causal("Gemma2Config", "Gemma2ForCausalLM", **_SMALL, head_dim=8),
    "opt": _causal("OPTConfig", "OPTForCausalLM", vocab_size=128, hidden_size=32, ffn_dim=64, num_hidden_layers=2,
                   num_attention_heads=4, max_position_embeddings=64, word_embed_proj_dim=32),
    "gpt_neox": _causal("GPTNeoXConfig", "GPTNeoXForCausalLM", vocab_size=128, hidden_size=32, intermediate_size=64,
                        num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=64),
    "bart": _seq2seq_bart,
    "clip": _clip,
    "dit": _dit,
    "sd3": _sd3,
    "gemma3": _causal("Gemma3TextConfig", "Gemma3ForCausalLM", **_SMALL, head_dim=8),
    "cohere": _causal("CohereConfig", "CohereForCausalLM", **_SMALL),
    "granite": _causal("GraniteConfig", "GraniteForCausalLM", **_SMALL),
    "mamba": _causal("MambaConfig", "MambaForCausalLM", vocab_size=128, hidden_size=32, num_hidden_layers=2, state_size=4),
    "xglm": _causal("XGLMConfig", "XGLMForCausalLM", vocab_size=128, d_model=32, ffn_dim=64, num_layers=2, attention_heads=4,
                    max_position_embeddings=64),
    "electra": _encoder("ElectraConfig", "ElectraForMaskedLM", vocab_size=128, embedding_size=16, hidden_size=32,
                        intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=64),
    "albert": _encoder("AlbertConfig", "AlbertForMaskedLM", vocab_size=128, embedding_size=16, hidden_size=32,
                       intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=64),
    "deberta_v2": _encoder("DebertaV2Config", "DebertaV2ForMaskedLM", vocab_size=128, hidden_size=32, intermediate_size=64,
                           num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=64),
    "resnet": _image("ResNetConfig", "ResNetForImageClassification", num_channels=3, embedding_size=8, hidden_sizes=[8, 16],
                     depths=[1, 1], num_labels=3),
    "dinov2": _image("Dinov2Config", "Dinov2Model", image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=64),
    "siglip": _image("SiglipVisionConfig", "SiglipVisionModel", image_size=32, patch_size=8, hidden_size=32,
                     num_hidden_layers=2, num_attention_heads=4, intermediate_size=64),
    "segformer": _image("SegformerConfig", "SegformerForSemanticSegmentation", num_encoder_blocks=2, depths=[1, 1],
                        sr_ratios=[2, 1], hidden_sizes=[8, 16], num_attention_heads=[1, 2], decoder_hidden_size=16,
                        num_labels=3, patch_sizes=[7, 3], strides=[4, 2], mlp_ratios=[2, 2]),
}
HELD_OUT_TEST: dict[str, Callable[[], None]] = {
    "qwen3": _causal("Qwen3Config", "Qwen3ForCausalLM", **_SMALL, head_dim=8),
    "olmo2": _causal("Olmo2Config", "Olmo2ForCausalLM", **_SMALL),
    "starcoder2": _causal("Starcoder2Config", "Starcoder2ForCausalLM", **_SMALL),
    "falcon": _causal("FalconConfig", "FalconForCausalLM", vocab_size=128, hidden_size=32, num_hidden_layers=2,
                      num_attention_heads=4),
    "bloom": _causal("BloomConfig", "BloomForCausalLM", vocab_size=128, hidden_size=32, n_layer=2, n_head=4),
    "gpt_bigcode": _causal("GPTBigCodeConfig", "GPTBigCodeForCausalLM", vocab_size=128, n_embd=32, n_layer=2, n_head=4,
                           n_positions=64),
    "distilbert": _encoder("DistilBertConfig", "DistilBertForMaskedLM", vocab_size=128, dim=32, hidden_dim=64, n_layers=2,
                           n_heads=4, max_position_embeddings=64),
    "roberta": _encoder("RobertaConfig", "RobertaForSequenceClassification", vocab_size=128, hidden_size=32,
                        intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=64,
                        pad_token_id=1),
    "swin": _swin,
    "wav2vec2": _wav2vec2,
    "flux": _flux,
    "vae_tiny": _vae_tiny,
}
ALL_MODELS = {**MODELS, **HELD_OUT_DEV, **HELD_OUT_TEST}
MODEL_SETS = {"heldout-dev": list(HELD_OUT_DEV), "heldout-test": list(HELD_OUT_TEST)}


# ---------------------------------------------------------------- comparing
def form_of(node: Optional[ast.AST]) -> str:
    """The syntactic form of what a binding is bound to, for grouping misses."""
    if node is None:
        return "?"
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return "for over " + form_of(node.iter)
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute):
            receiver = func.value
            if isinstance(receiver, ast.Name) and receiver.id == "self":
                return f"self.<attr>(…)"
            if isinstance(receiver, ast.Name) and receiver.id in ("torch", "F", "nn", "np", "math"):
                return f"{receiver.id}.{func.attr}(…)"
            if isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) and receiver.value.id == "self":
                return f"self.<attr>.{func.attr}(…)" if func.attr in ("update", "forward") else "self.<attr>.<method>(…)"
            return f"<expr>.{func.attr}(…)"
        if isinstance(func, ast.Name):
            return "<name>(…)" if func.id[:1].islower() else "<Class>(…)"
        return "<call>(…)"
    if isinstance(node, ast.Subscript):
        return "subscript"
    if isinstance(node, ast.Attribute):
        return "self.<attr>" if isinstance(node.value, ast.Name) and node.value.id == "self" else "<expr>.<attr>"
    return type(node).__name__.lower()


def compare(tracer: Tracer, beliefs: dict[tuple[str, int, str], dict[str, Any]], relative: Callable[[str], str]) -> dict[str, Any]:
    rows = []
    for (filename, line, target), observations in tracer.seen.items():
        key = (relative(filename), line, target)
        belief = beliefs.get(key)
        kinds = {o[0] for o in observations}
        always_tensor = kinds == {"tensor"}
        views = [o[1] for o in observations if o[0] == "tensor"]
        partial = [o[2] for o in observations if o[0] == "tensor"]
        ranks = {o[5] for o in observations if o[0] == "tensor"}
        rows.append({
            "path": key[0], "line": line, "target": target, "runs": len(observations),
            "always_tensor": always_tensor, "ever_tensor": "tensor" in kinds,
            "always_view": always_tensor and all(views), "ever_view": any(views),
            "always_partial": always_tensor and all(partial), "ever_partial": any(partial),
            "rank": ranks.pop() if always_tensor and len(ranks) == 1 else None,
            "believed": belief, "form": form_of(tracer.files[filename].forms.get(line)),
        })
    return {"rows": rows}


def _share(hits: int, total: int) -> str:
    return f"{hits}/{total} ({100.0 * hits / total:.1f}%)" if total else "0/0"


def metrics(rows: list[dict[str, Any]]) -> dict[str, Any]:
    judged = [r for r in rows if r["believed"] is not None]
    tensors = [r for r in judged if r["always_tensor"]]
    believed_tensor = [r for r in judged if r["believed"]["tensor"] is True]
    views = [r for r in judged if r["always_view"]]
    believed_view = [r for r in judged if r["believed"]["view"] is True]
    believed_owner = [r for r in judged if r["believed"]["view"] is False and r["always_tensor"]]
    partials = [r for r in judged if r["always_partial"]]
    return {
        "bindings": len(rows), "unmatched": len(rows) - len(judged),
        "tensor_recall": (sum(1 for r in tensors if r["believed"]["tensor"] is True), len(tensors)),
        "tensor_precision": (sum(1 for r in believed_tensor if r["always_tensor"]), len(believed_tensor)),
        "tensor_precision_may": (sum(1 for r in believed_tensor if r["ever_tensor"]), len(believed_tensor)),
        "view_recall": (sum(1 for r in views if r["believed"]["view"] is True), len(views)),
        "view_precision": (sum(1 for r in believed_view if r["always_view"]), len(believed_view)),
        "view_precision_may": (sum(1 for r in believed_view if r["ever_view"]), len(believed_view)),
        # The other side of a view claim: of the tensors believed to have no `_base`, how many never had one.
        "not_view_precision": (sum(1 for r in believed_owner if not r["ever_view"]), len(believed_owner)),
        "partial_recall": (sum(1 for r in partials if r["believed"]["view"] is True), len(partials)),
        # Ranks: of the bindings that hold a tensor of one rank every time, how many the analysis gives a rank, and
        # of the ranks it gives, how many are that one.
        "rank_recall": (sum(1 for r in tensors if r["rank"] is not None and r["believed"].get("rank") == r["rank"]),
                        sum(1 for r in tensors if r["rank"] is not None)),
        "rank_precision": (sum(1 for r in judged if r["believed"].get("rank") is not None and r["believed"]["rank"] == r["rank"]),
                           sum(1 for r in judged if r["believed"].get("rank") is not None and r["ever_tensor"])),
    }


def _line(name: str, m: dict[str, Any]) -> str:
    return (f"{name:<10} {m['bindings']:>8}  {_share(*m['tensor_recall']):>18} {_share(*m['tensor_precision']):>18}  "
            f"{_share(*m['view_recall']):>16} {_share(*m['partial_recall']):>19} {_share(*m['view_precision']):>16}")


def wrong_claims(rows: list[dict[str, Any]]) -> list[str]:
    out = []
    for r in rows:
        b = r["believed"]
        if b is None:
            continue
        where = f"{r['path']}:{r['line']} {r['target']} [{r['form']}]"
        if b["tensor"] is True and not r["ever_tensor"]:
            out.append(f"believed a tensor, never one: {where}")
        elif b["tensor"] is False and r["always_tensor"]:
            out.append(f"believed not a tensor, always one: {where}")
        elif b["view"] is True and r["ever_tensor"] and not r["ever_view"]:
            out.append(f"believed a view, never one: {where}")
        elif b["view"] is False and r["always_partial"]:
            out.append(f"believed it owns its storage, always a view of part of one: {where}")
        elif b["view"] is False and r["always_view"]:
            out.append(f"believed not a view, always one: {where}")
        elif b.get("rank") is not None and r["ever_tensor"] and b["rank"] != r["rank"]:
            out.append(f"believed {b['rank']}-D, was {r['rank'] if r['rank'] is not None else 'of several ranks'}: {where}")
    return sorted(set(out))


def miss_causes(rows: list[dict[str, Any]], which: str) -> list[tuple[str, int, list[str]]]:
    groups: dict[str, list[str]] = collections.defaultdict(list)
    for r in rows:
        b = r["believed"]
        if b is None:
            continue
        if which == "tensor" and r["always_tensor"] and b["tensor"] is not True:
            groups[r["form"]].append(f"{r['path']}:{r['line']} {r['target']}")
        if which == "partial view" and r["always_partial"] and b["view"] is not True:
            groups[r["form"]].append(f"{r['path']}:{r['line']} {r['target']}")
        if which == "view" and r["always_view"] and b["view"] is not True:
            groups[r["form"]].append(f"{r['path']}:{r['line']} {r['target']}")
    ranked = sorted(groups.items(), key=lambda item: -len(item[1]))
    return [(form, len(where), where[:3]) for form, where in ranked]


def run_beliefs(viewlint: str, files: list[str], relative: Callable[[str], str]) -> dict[tuple[str, int, str], dict[str, Any]]:
    found: dict[tuple[str, int, str], dict[str, Any]] = {}
    for start in range(0, len(files), 50):
        chunk = files[start:start + 50]
        # Run from a folder of its own: `python -m viewlint` in a checkout imports that checkout's package before the one
        # a `PYTHONPATH=<tree>` in `--viewlint` names, and the comparison of two trees would compare one with itself.
        result = subprocess.run(shlex.split(viewlint) + ["beliefs", *[os.path.abspath(f) for f in chunk]], capture_output=True,
                                text=True, check=False, cwd=tempfile.gettempdir())
        if result.returncode != 0:
            sys.exit(f"viewlint beliefs failed ({result.returncode}): {result.stderr[-2000:]}")
        for line in result.stdout.splitlines():
            record = json.loads(line)
            found[(record["path"], record["line"], record["target"])] = record
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--viewlint", default="viewlint", help="the command that runs viewlint")
    parser.add_argument("--models", default=",".join(MODELS),
                        help="comma-separated, of: " + ", ".join(ALL_MODELS) + "; or a set: " + ", ".join(MODEL_SETS)
                        + " (default: the eleven models the analysis is developed on)")
    parser.add_argument("--json", help="write every compared binding to this file")
    parser.add_argument("--top", type=int, default=8, help="how many miss causes to print")
    parser.add_argument("--totals-only", action="store_true",
                        help="print the figures only, not which bindings were missed or wrongly claimed (for a set "
                             "kept unread: `--models heldout-test --totals-only`)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import torch  # noqa: F401  (imported before tracing starts)
    import diffusers
    import transformers

    roots = [os.path.dirname(transformers.__file__), os.path.dirname(diffusers.__file__)]
    site = os.path.dirname(roots[0])

    def relative(filename: str) -> str:
        return os.path.relpath(filename, site).replace(os.sep, "/")

    all_rows: list[dict[str, Any]] = []
    per_model: list[tuple[str, dict[str, Any], float]] = []
    names = [m.strip() for m in args.models.split(",") if m.strip()]
    names = [n for name in names for n in MODEL_SETS.get(name, [name])]
    for name in names:
        tracer = Tracer(roots)
        started = time.perf_counter()
        sys.settrace(tracer.global_trace)
        try:
            ALL_MODELS[name]()
        except Exception:
            sys.settrace(None)
            print(f"== {name}: failed\n{traceback.format_exc(limit=3)}", file=sys.stderr)
            continue
        finally:
            sys.settrace(None)
        elapsed = time.perf_counter() - started
        files = sorted({f for (f, _, _) in tracer.seen})
        beliefs = run_beliefs(args.viewlint, files, relative)
        rows = compare(tracer, beliefs, relative)["rows"]
        for row in rows:
            row["model"] = name
        all_rows.extend(rows)
        per_model.append((name, metrics(rows), elapsed))

    header = (f"{'model':<10} {'bindings':>8}  {'tensor recall':>18} {'tensor precision':>18}  {'view recall':>16} "
              f"{'partial-view recall':>19} {'view precision':>16}")
    print(header)
    for name, m, elapsed in per_model:
        print(_line(name, m))
    # A binding of a shared file (`generation/utils.py`) run by several models counts once per model above;
    # in all, each (path, line, target) counts once, with every model's observations.
    merged: dict[tuple[str, int, str], dict[str, Any]] = {}
    for row in all_rows:
        key = (row["path"], row["line"], row["target"])
        if key in merged:
            old = merged[key]
            old["always_tensor"] = old["always_tensor"] and row["always_tensor"]
            old["ever_tensor"] = old["ever_tensor"] or row["ever_tensor"]
            old["always_view"] = old["always_view"] and row["always_view"]
            old["ever_view"] = old["ever_view"] or row["ever_view"]
            old["always_partial"] = old["always_partial"] and row["always_partial"]
            old["ever_partial"] = old["ever_partial"] or row["ever_partial"]
            old["rank"] = old["rank"] if old["rank"] == row["rank"] else None
        else:
            merged[key] = dict(row)
    rows = list(merged.values())
    m = metrics(rows)
    print(_line("all", m))
    print(f"ranks: recall {_share(*m['rank_recall'])}, precision {_share(*m['rank_precision'])}")
    print(f"not-a-view precision (believed no `_base`, never had one): {_share(*m['not_view_precision'])}")
    print(f"(`may` precision: tensors {_share(*m['tensor_precision_may'])}, views {_share(*m['view_precision_may'])}; "
          f"{m['unmatched']} bindings had no belief)")
    claims = wrong_claims(rows)
    if args.totals_only:
        print(f"wrong claims: {len(claims)}")
        return
    for which in ("tensor", "view", "partial view"):
        print(f"\nlargest causes of {which} misses (by the form of the bound expression):")
        for form, count, examples in miss_causes(rows, which)[:args.top]:
            print(f"  {count:>4}  {form:<28} e.g. {'; '.join(examples)}")
    print(f"\nwrong claims: {len(claims)}")
    for claim in claims[:40]:
        print("  " + claim)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(rows, handle, indent=1)


if __name__ == "__main__":
    main()
