"""vLLM's rotary embedding code path (get_rope and its classes), transcribed into numpy with its
dtypes. SGLang's rotary layers and TensorRT-LLM's torch path follow the same classes.

The logic follows (in our own words, no code copied) vllm/model_executor/layers/rotary_embedding/:
base.py RotaryEmbedding (_compute_inv_freq: 1 / base^(arange(0, rotary_dim, 2) / rotary_dim) in
float32; _compute_cos_sin_cache: a float32 position times inv_freq, cos and sin, one row per
position; forward_native: rotary part rotated, the rest passed), common.py (apply_rotary_emb_torch
for the neox and GPT-J styles, yarn_find_correction_range, yarn_linear_ramp_mask,
yarn_get_mscale), yarn_scaling_rope.py YaRNScalingRotaryEmbedding (mscale from attention_factor,
else from the mscale/mscale_all_dim ratio, else yarn_get_mscale(factor); `truncate`),
deepseek_scaling_rope.py (yarn_get_mscale with an mscale argument), llama3_rope.py
Llama3RotaryEmbedding, linear_scaling_rope.py, mrope.py MRotaryEmbedding (sections over the
pairs' cos/sin) and dynamic_ntk_scaling_rope.py (the base evaluated at one length).

Modelled: a cache row is computed for any position (vLLM sizes its cache by the model's
context; the vectors' positions beyond it stand for a model with that context). vLLM has no
per-forward dynamic NTK: its class evaluates the base at one length, so dynamic cases are
Unsupported but for the two documented bugs that switch that length; LongRoPE picks its factors by
max_model_len rather than the sequence (Phi3LongRoPEScaledRotaryEmbedding), a deliberate
departure from Hugging Face: Unsupported here, as are the backward rotation and `ntk`.

Each switch reproduces one documented bug (bugs/zoo.py names the thread); with every switch at
its default the class is the faithful path."""
import math

import numpy as np

import rotation
from cases import Unsupported, real
from floats import F32
from hf_style import check_switches

DEFAULTS = {
    # How YaRN's cache multiplier (self.mscale) is formed: "vllm" (attention_factor if given, else
    # the mscale/mscale_all_dim ratio, else yarn_get_mscale(factor)); "ignore_ratio":
    # yarn_get_mscale(factor) even when the config gives mscale and mscale_all_dim;
    # "drop_attention_factor": an explicit attention_factor not forwarded by get_rope;
    # "attention_factor_as_attn_factor": the final attention_factor multiplied by
    # yarn_get_mscale(factor) again; "attention_factor_as_mscale": the final attention_factor
    # passed through 0.1 * m * ln(factor) + 1 again.
    "yarn_mscale": "vllm",
    "yarn_truncate": "config",  # "always": the correction range always floored/ceiled
    # Dynamic NTK (DynamicNTKScalingRotaryEmbedding), which evaluates the base at one length:
    # "max_length": at factor * original, whatever the sequence; "served_unfloored": at the
    # sequence's length without flooring it at the original (alpha <= 0 below it). None: not
    # expressed (vLLM has no per-forward dynamic NTK to be faithful to).
    "dynamic": None,
    "partial": "config",      # "ignored": rotary_dim = head_dim; "halved": rotary_dim = head_dim / 2
    "is_neox_style": "config",  # "swapped": the other style; "always_neox" (for M-RoPE only)
    "sin_offset": "row",      # "padded": sin read from next_power_of_2(rotary_dim) / 2 on in the row
}


def yarn_get_mscale(scale, mscale=1.0):
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


class VllmRope:
    def __init__(self, params, **switches):
        self.sw = check_switches(switches, DEFAULTS)
        self.p = params
        if params.get("inverse"):
            raise Unsupported("the backward rotation")
        if params["partial"] == "proportional":
            raise Unsupported("proportional partial rotary")
        self.head_dim = params["head_dim"]
        self.rotary_dim = params["rotary_dim"]
        if self.sw["partial"] == "ignored":
            self.rotary_dim = self.head_dim
        elif self.sw["partial"] == "halved":
            self.rotary_dim = self.head_dim // 2
        if self.rotary_dim % 2:
            raise Unsupported(f"rotary_dim {self.rotary_dim}: no pairs")
        self.base = real(params["base"])
        self.sections = params.get("mrope_section") or []
        neox = params["layout"] == "half"
        if self.sw["is_neox_style"] == "swapped":
            neox = not neox
        elif self.sw["is_neox_style"] == "always_neox" and self.sections:
            neox = True
        self.layout = "half" if neox else "interleaved"
        self.scaling = params.get("scaling", {"kind": "none"})
        self.inv_freq, self.mscale = self._parameters()

    def _inv_freq(self, base):
        e = np.arange(0, self.rotary_dim, 2).astype(np.float32) / F32(self.rotary_dim)
        return F32(1.0) / np.power(np.full(e.shape, base, dtype=np.float32), e)

    def _parameters(self):
        s = self.scaling
        kind = s["kind"]
        if kind == "none":
            return self._inv_freq(self.base), 1.0
        if kind == "linear":
            return self._inv_freq(self.base) / F32(real(s["factor"])), 1.0
        if kind == "llama3":
            return self._llama3(s), 1.0
        if kind == "yarn":
            return self._yarn(s)
        if kind == "dynamic" and self.sw["dynamic"] is not None:
            return self._dynamic(s), 1.0
        raise Unsupported(f"scaling {kind} on the vLLM path")

    def _dynamic(self, s):
        factor, original, seq_len = real(s["factor"]), int(s["original_max_positions"]), int(s["seq_len"])
        d = self.rotary_dim
        length = {"served_unfloored": seq_len, "max_length": original * factor}[self.sw["dynamic"]]
        with np.errstate(divide="ignore", invalid="ignore"):
            alpha = factor * length / original - (factor - 1)
            base = self.base * alpha ** (d / (d - 2)) if alpha > 0 else 0.0 if alpha == 0 else float("nan")
            return self._inv_freq(base)

    def _llama3(self, s):
        inv = self._inv_freq(self.base)
        factor, low, high = real(s["factor"]), real(s["low_freq_factor"]), real(s["high_freq_factor"])
        original = int(s["original_max_positions"])
        low_wavelen, high_wavelen = F32(original / low), F32(original / high)
        wavelen = F32(2 * math.pi) / inv
        smooth = (F32(original) / wavelen - F32(low)) / F32(high - low)
        mid = (F32(1) - smooth) * inv / F32(factor) + smooth * inv
        return np.where(wavelen < high_wavelen, inv, np.where(wavelen > low_wavelen, inv / F32(factor), mid)).astype(
            np.float32)

    def _yarn(self, s):
        factor, original = real(s["factor"]), int(s["original_max_positions"])
        beta_fast = real(s.get("beta_fast", "0x1p+5"))
        beta_slow = real(s.get("beta_slow", "0x1p+0"))
        truncate = s.get("truncate", True) if self.sw["yarn_truncate"] == "config" else True
        attention_factor = real(s["attention_factor"]) if "attention_factor" in s else None
        mscale = real(s["mscale"]) if "mscale" in s else None
        mscale_all_dim = real(s["mscale_all_dim"]) if "mscale_all_dim" in s else None
        how = self.sw["yarn_mscale"]
        if how == "drop_attention_factor":
            attention_factor = None
        if how == "attention_factor_as_attn_factor" and attention_factor is not None:
            m = yarn_get_mscale(factor) * attention_factor
        elif how == "attention_factor_as_mscale" and attention_factor is not None:
            m = yarn_get_mscale(factor, attention_factor)
        elif attention_factor is not None and how in ("vllm", "ignore_ratio"):
            m = attention_factor
        elif mscale and mscale_all_dim and how != "ignore_ratio":
            m = yarn_get_mscale(factor, mscale) / yarn_get_mscale(factor, mscale_all_dim)
        else:
            m = yarn_get_mscale(factor)
        d = self.rotary_dim

        def correction_dim(rotations):
            return d * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(self.base))

        low, high = correction_dim(beta_fast), correction_dim(beta_slow)
        if truncate:
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, d - 1)
        if low == high:
            high += 0.001
        e = np.arange(0, d, 2).astype(np.float32) / F32(d)
        pos_freqs = np.power(np.full(e.shape, self.base, dtype=np.float32), e)
        extrapolation = F32(1.0) / pos_freqs
        interpolation = F32(1.0) / (F32(factor) * pos_freqs)
        ramp = np.clip((np.arange(d // 2, dtype=np.float32) - F32(low)) / F32(high - low), F32(0), F32(1))
        mask = F32(1) - ramp
        return interpolation * (F32(1) - mask) + extrapolation * mask, m

    def frequencies(self):
        return self.inv_freq, self.mscale

    def _row(self, position):
        """One cos_sin_cache row for a position: [m cos t_i..., m sin t_i...] in float32."""
        freqs = F32(position) * self.inv_freq
        m = F32(self.mscale)
        return np.concatenate([np.cos(freqs) * m, np.sin(freqs) * m]).astype(np.float32)

    def cos_sin(self, axes):
        h = len(self.inv_freq)
        if self.sections:
            # MRotaryEmbedding: the rows of each axis, the pairs of a section from its axis.
            owner = np.repeat(np.arange(len(self.sections)), self.sections)
            rows = [self._row(a) for a in axes]
            row = np.concatenate([[rows[owner[i]][i] for i in range(h)],
                                  [rows[owner[i]][h + i] for i in range(h)]]).astype(np.float32)
        else:
            row = self._row(axes[0])
        cos = row[:h]
        if self.sw["sin_offset"] == "padded":
            # A kernel that sizes its lanes by the next power of two of rotary_dim and starts the
            # sin half at that padded size / 2: for a non-power-of-two rotary_dim it reads sin
            # (and past the row's end, which a masked load returns as 0) from the wrong offset.
            pad = 1 << (self.rotary_dim - 1).bit_length()
            idx = pad // 2 + np.arange(h)
            sin = np.where(idx < 2 * h, row[np.minimum(idx, 2 * h - 1)], F32(0)).astype(np.float32)
        else:
            sin = row[h:]
        return cos, sin

    def rotate(self, x, axes):
        cos, sin = self.cos_sin(axes)
        return rotation.rotate(x, cos, sin, self.rotary_dim, self.layout)
