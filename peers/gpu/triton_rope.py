"""A Triton RoPE kernel as users write one (the common style of Liger-Kernel's and Unsloth's
kernels: a float32 cos/sin cache built in torch from a float32 inv_freq, the rotation of the half
layout in registers in float32, the result stored in the tensor's dtype), written for this peer,
no framework code copied. On a GPU it runs compiled; on the CPU under TRITON_INTERPRET=1."""
import torch
import triton
import triton.language as tl

import peer_driver


@triton.jit
def _rope_half(x_ptr, cos_ptr, sin_ptr, out_ptr, half: tl.constexpr, block: tl.constexpr):
    row = tl.program_id(0)
    i = tl.arange(0, block)
    inside = i < half
    x1 = tl.load(x_ptr + row * 2 * half + i, mask=inside).to(tl.float32)
    x2 = tl.load(x_ptr + row * 2 * half + half + i, mask=inside).to(tl.float32)
    c = tl.load(cos_ptr + row * half + i, mask=inside)
    s = tl.load(sin_ptr + row * half + i, mask=inside)
    tl.store(out_ptr + row * 2 * half + i, (x1 * c - x2 * s).to(out_ptr.dtype.element_ty), mask=inside)
    tl.store(out_ptr + row * 2 * half + half + i, (x2 * c + x1 * s).to(out_ptr.dtype.element_ty), mask=inside)


def rope(x, positions, base):
    """x [tokens, head_dim] rotated at positions (a 1-D integer tensor), Llama's half layout."""
    d = x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64, device=x.device).float() / d))
    freqs = positions.to(x.device).float()[:, None] * inv_freq[None, :]
    cos, sin = freqs.cos().contiguous(), freqs.sin().contiguous()
    out = torch.empty_like(x)
    _rope_half[(x.shape[0],)](x.contiguous(), cos, sin, out, half=d // 2, block=triton.next_power_of_2(d // 2))
    return out


class TritonRope:
    """The peer_driver adapter: rope_rotate cases this kernel expresses (one axis, half layout,
    full rotary, no scaling, not inverse); the others are reported unsupported."""
    name = "triton"
    framework = "a Triton RoPE kernel (float32 cos/sin cache, rotation in registers)"
    rows = {"f32": ("f32", "float32"), "bf16": ("bf16", "bfloat16"), "f16": ("f16", "float16")}
    working_format = "f32"

    def __init__(self, device):
        self.version = f"triton {triton.__version__} (torch {torch.__version__}, {device})"

    def describe(self, row):
        return f"triton-{row}: {self.framework}, {self.version}, dtype {self.rows[row][1]}"

    def prepare(self, case, group):
        p = case.params
        if case.type != "rope_rotate":
            raise peer_driver.Unsupported(f"{case.type}: the kernel rotates x only")
        if p["layout"] != "half" or p["rotary_dim"] != p["head_dim"] or p["inverse"] or "mrope_section" in p:
            raise peer_driver.Unsupported("not the half layout with full rotary, forward, one axis")
        if p["scaling"]["kind"] != "none":
            raise peer_driver.Unsupported(f"scaling {p['scaling']['kind']}: the kernel's cache has none")
        return p["base"]

    def outputs(self, case, base, row):
        x = case.inputs(row, torch=True)["x"]
        position = case.positions()["position"][0]
        if not -2**63 <= position < 2**63:
            raise peer_driver.Unsupported("a position outside int64")
        return rope(x[None, :], torch.tensor([position]), base)[0]
