"""Hugging Face's RoPE as a user writes it in torch: rotate_half, a float32 inv_freq and a cos/sin
cache (transformers' models/llama/modeling_llama.py: LlamaRotaryEmbedding, rotate_half and
apply_rotary_pos_emb, v4.38-v4.45), and the same with every step in float64.

The half layout (rotate_half pairs element i with i + head_dim/2), full rotary, no scaling."""
import torch


def rotate_half(x):
    """Rotates half the hidden dims of the input (transformers' rotate_half)."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, cos, sin):
    """transformers' apply_rotary_pos_emb, for q alone: q * cos + rotate_half(q) * sin."""
    return (q * cos) + (rotate_half(q) * sin)


class RotaryEmbedding:
    """LlamaRotaryEmbedding: inv_freq = 1 / base^(2i/d) from an int64 arange made float32, and the
    cos/sin rows of the positions, emb = cat(freqs, freqs). dtype=torch.float64 is the variant
    with every step in binary64."""

    def __init__(self, dim, base=10000.0, dtype=torch.float32):
        self.dtype = dtype
        self.inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(dtype) / dim))

    def cos_sin(self, positions, dtype):
        t = positions.to(self.dtype)  # HF: position_ids.float()
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype), emb.sin().to(dtype)


def hf_rope(x, position, base, dtype=torch.float32):
    """One head's x (a 1-D tensor) rotated at `position` (an int)."""
    rope = RotaryEmbedding(x.shape[-1], base, dtype)
    cos, sin = rope.cos_sin(torch.tensor([position], dtype=torch.int64), x.dtype)
    return apply_rotary_pos_emb(x[None, :], cos, sin)[0]
