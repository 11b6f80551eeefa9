# source: NVIDIA/Megatron-LM https://github.com/NVIDIA/Megatron-LM/commit/19afb90081b76915cd001d00862ae2bb9fd4430d — with sequence parallelism the embedding output went through scatter_to_sequence_parallel_region, whose _split_along_first_dim returns input_[off:off+n].contiguous() (a no-op on a contiguous first-dim slice, i.e. a view), so the rank-local activations handed to the decoder kept the full [s*tp, b, h] embeddings alive; the fix clones the scatter output ("Clone to facilitate GC").
import contextlib
from dataclasses import dataclass

import torch
from torch import Tensor


# ---- megatron/core/parallel_state.py (single-process stand-ins: TP=4, this is rank 0) ----

def get_tensor_model_parallel_world_size():
    return 4


def get_tensor_model_parallel_rank():
    return 0


@contextlib.contextmanager
def _fork():
    yield


class _RNGTracker:
    def fork(self):
        return _fork()


def get_cuda_rng_tracker():
    return _RNGTracker()


# ---- megatron/core/tensor_parallel/mappings.py -----------------------------------

def _split_along_first_dim(input_):
    """Split the tensor along its first dimension and keep the
    corresponding slice."""

    world_size = get_tensor_model_parallel_world_size()
    # Bypass the function if we are using only 1 GPU.
    if world_size == 1:
        return input_

    # Split along first dimension.
    dim_size = input_.size()[0]
    assert (
        dim_size % world_size == 0
    ), "First dimension of the tensor should be divisible by tensor parallel size"
    local_dim_size = dim_size // world_size
    rank = get_tensor_model_parallel_rank()
    dim_offset = rank * local_dim_size

    output = input_[dim_offset : dim_offset + local_dim_size].contiguous()  # want: A

    return output


def _gather_along_first_dim(input_):
    """Gather tensors and concatinate along the first dimension (single-process stand-in)."""
    world_size = get_tensor_model_parallel_world_size()
    if world_size == 1:
        return input_
    parts = [input_] + [torch.zeros_like(input_) for _ in range(world_size - 1)]
    return torch.cat(parts, dim=0).contiguous()


class _ScatterToSequenceParallelRegion(torch.autograd.Function):
    """Split the input and keep only the corresponding chuck to the rank."""

    @staticmethod
    def symbolic(graph, input_):
        return _split_along_first_dim(input_)

    @staticmethod
    def forward(ctx, input_):
        return _split_along_first_dim(input_)

    @staticmethod
    def backward(ctx, grad_output):
        return _gather_along_first_dim(grad_output)


def scatter_to_sequence_parallel_region(input_):
    return _ScatterToSequenceParallelRegion.apply(input_)


class tensor_parallel:  # namespace stand-in for megatron.core.tensor_parallel
    scatter_to_sequence_parallel_region = staticmethod(scatter_to_sequence_parallel_region)
    get_cuda_rng_tracker = staticmethod(get_cuda_rng_tracker)


# ---- megatron/core/models/common/embeddings/language_model_embedding.py ----------

@dataclass
class TransformerConfig:
    hidden_size: int = 64
    hidden_dropout: float = 0.0
    sequence_parallel: bool = True
    fp32_residual_connection: bool = False
    clone_scatter_output_in_embedding: bool = True


class LanguageModelEmbedding(torch.nn.Module):
    def __init__(self, config: TransformerConfig, vocab_size: int, max_sequence_length: int, num_tokentypes: int = 0):
        super().__init__()
        self.config = config
        self.add_position_embedding = True
        self.num_tokentypes = num_tokentypes
        self.word_embeddings = torch.nn.Embedding(vocab_size, config.hidden_size)
        self.position_embeddings = torch.nn.Embedding(max_sequence_length, config.hidden_size)
        self.tokentype_embeddings = None
        self.embedding_dropout = torch.nn.Dropout(config.hidden_dropout)

    def forward(self, input_ids: Tensor, position_ids: Tensor, tokentype_ids: int = None) -> Tensor:
        word_embeddings = self.word_embeddings(input_ids)
        if self.add_position_embedding:
            position_embeddings = self.position_embeddings(position_ids)
            embeddings = word_embeddings + position_embeddings
        else:
            embeddings = word_embeddings

        # Data format change to avoid explicit tranposes : [b s h] --> [s b h].
        embeddings = embeddings.transpose(0, 1).contiguous()

        if tokentype_ids is not None:
            assert self.tokentype_embeddings is not None
            tokentype_embedding = self.tokentype_embeddings(tokentype_ids).permute(1, 0, 2)
            embeddings = embeddings + tokentype_embedding
        else:
            assert self.tokentype_embeddings is None

        # If the input flag for fp32 residual connection is set, convert for float.
        if self.config.fp32_residual_connection:
            embeddings = embeddings.float()

        # Dropout.
        if self.config.sequence_parallel:
            embeddings = tensor_parallel.scatter_to_sequence_parallel_region(embeddings)  # want: A
            with tensor_parallel.get_cuda_rng_tracker().fork():
                embeddings = self.embedding_dropout(embeddings)
        else:
            embeddings = self.embedding_dropout(embeddings)

        return embeddings


# ---- megatron/model/language_model.py (legacy path, shown post-fix: look-alike) ----

class Embedding(torch.nn.Module):
    def __init__(self, hidden_size, vocab_size, max_sequence_length, embedding_dropout_prob, args):
        super().__init__()
        self.word_embeddings = torch.nn.Embedding(vocab_size, hidden_size)
        self.position_embeddings = torch.nn.Embedding(max_sequence_length, hidden_size)
        self.fp32_residual_connection = args.fp32_residual_connection
        self.sequence_parallel = args.sequence_parallel
        self.clone_scatter_output_in_embedding = args.clone_scatter_output_in_embedding
        self.embedding_dropout = torch.nn.Dropout(embedding_dropout_prob)

    def forward(self, input_ids, position_ids, tokentype_ids=None):
        words_embeddings = self.word_embeddings(input_ids)
        position_embeddings = self.position_embeddings(position_ids)
        embeddings = words_embeddings + position_embeddings

        # Data format change to avoid explicit tranposes : [b s h] --> [s b h].
        embeddings = embeddings.transpose(0, 1).contiguous()

        if self.fp32_residual_connection:
            embeddings = embeddings.float()

        # Dropout.
        if self.sequence_parallel:
            embeddings = tensor_parallel.scatter_to_sequence_parallel_region(embeddings)
            # `scatter_to_sequence_parallel_region` returns a view, which prevents
            # the original tensor from being garbage collected. Clone to facilitate GC.
            # Has a small runtime cost (~0.5%).
            if self.clone_scatter_output_in_embedding:
                embeddings = embeddings.clone()
            with tensor_parallel.get_cuda_rng_tracker().fork():
                embeddings = self.embedding_dropout(embeddings)
        else:
            embeddings = self.embedding_dropout(embeddings)

        return embeddings


class GPTModel(torch.nn.Module):
    """Embedding followed by a (tiny) decoder that saves its input for backward."""

    def __init__(self, embedding: torch.nn.Module, hidden_size: int):
        super().__init__()
        self.embedding = embedding
        self.decoder = torch.nn.Sequential(torch.nn.LayerNorm(hidden_size), torch.nn.Linear(hidden_size, hidden_size))

    def forward(self, input_ids, position_ids):
        decoder_input = self.embedding(input_ids=input_ids, position_ids=position_ids)
        hidden_states = self.decoder(decoder_input)
        return hidden_states


if __name__ == "__main__":
    torch.manual_seed(0)
    cfg = TransformerConfig()
    b, s = 2, 512
    input_ids = torch.randint(0, 100, (b, s))
    position_ids = torch.arange(s).unsqueeze(0).expand(b, s)

    model = GPTModel(LanguageModelEmbedding(cfg, vocab_size=100, max_sequence_length=s), cfg.hidden_size)
    out = model(input_ids, position_ids)
    decoder_input = model.embedding(input_ids, position_ids)
    print("buggy: local activations", decoder_input.numel() * 4, "bytes; storage kept", decoder_input.untyped_storage().nbytes())
    assert decoder_input.untyped_storage().nbytes() == 4 * decoder_input.numel() * 4
    out.sum().backward()

    legacy = Embedding(cfg.hidden_size, 100, s, 0.0, cfg)
    fixed_out = legacy(input_ids, position_ids)
    assert fixed_out.untyped_storage().nbytes() == fixed_out.numel() * 4
    print("fixed: storage kept", fixed_out.untyped_storage().nbytes())
