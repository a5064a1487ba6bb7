"""Hugging Face transformers' RoPE code path, transcribed into numpy with its dtypes (float32
frequencies, float32 angles and tables, the rotation in the model dtype: float32 here).

The logic follows (in our own words, no code copied) transformers' modeling_rope_utils.py:
_compute_default_rope_parameters, _compute_linear_scaling_rope_parameters,
_compute_dynamic_ntk_parameters (with dynamic_rope_update's seq_len = max(position_ids) + 1),
_compute_yarn_parameters (with `truncate`, `mscale`/`mscale_all_dim` and get_mscale's 1 for
factor <= 1), _compute_llama3_parameters, _compute_longrope_parameters and the proportional
(p-RoPE) rule; models/llama/modeling_llama.py LlamaRotaryEmbedding.forward (inv_freq @
position_ids in float32, cos and sin times attention_scaling), rotate_half and
apply_rotary_pos_emb; models/gptj/modeling_gptj.py rotate_every_two; models/qwen2_vl/
modeling_qwen2_vl.py apply_multimodal_rotary_pos_emb (a pair takes its position from its
section's axis). conformance/SPEC.md 2.4 and 2.4.2 state these conventions and where posenc's
definitions differ; tests/suite/hf_style_test.cpp shows this arithmetic passes `standard`.

Not expressible on this path (Unsupported): the backward rotation (`inverse`) and bloc97's `ntk`
scaling, which no transformers config names.

Each switch below reproduces one documented bug (bugs/zoo.py names the thread); with every
switch at its default the class is the faithful path, the zoo's control."""
import math

import numpy as np

import rotation
from cases import Unsupported, real
from floats import F32, bf16, f16, f32, rounder, tf32

DEFAULTS = {
    # The format the inv_freq buffer holds: "bf16" or "f16" when model.to(dtype) casts the
    # registered buffer with the weights and cos/sin are rebuilt from it.
    "inv_freq": "f32",
    # position_ids.float(); "bf16": positions cast to the bf16 compute dtype first.
    "positions": "f32",
    # The phase product inv_freq @ position_ids: "f32"; "bf16_autocast" (operands and result in
    # bf16); "tf32" (operands rounded to TF32 by a tensor-core GEMM); "f16" (inv_freq, positions and
    # their product in fp16).
    "phase": "f32",
    # The exponent 2i/d of base^(2i/d): "bf16" when it is formed in the bf16 compute dtype.
    "exponent": "f32",
    "rope_theta": True,       # False: the config's rope_theta not read, the default base 10000 used
    "rope_scaling": True,     # False: the config's rope_scaling not read (default frequencies, factor 1)
    "llama3_result": "scaled",  # "unscaled": llama3 frequencies computed, the unscaled ones returned
    "longrope": "hf",         # "always_long": long_factor at every seq_len; "long_at_original": seq_len >= original
    "longrope_attention": "hf",  # "sqrt_always": sqrt(1 + ln f / ln L0) also for factor <= 1
    "partial": "hf",          # "ignored": rotary_dim taken as head_dim; "head_dim_pairs": frequencies over
    #                           head_dim and pairs (i, i + head_dim/2) for the first rotary_dim/2 pairs
    "layout": "hf",           # "swapped": the other pairing; "half_table_interleaved": a half-layout
    #                           cos/sin table applied with an interleaved rotate
    "mrope_positions": "axes",  # "first_axis": every pair takes axis 0's position (1-D position_ids)
    # Read from the model's config.json (the `config` argument): "position_ratio": YaRN's factor
    # replaced by max_position_embeddings / original_max_position_embeddings whenever the latter
    # is given; and "hidden_over_heads": the rotated width taken as hidden_size / num_attention_heads
    # instead of the config's head_dim.
    "yarn_factor": "given",
    "rotary_dim_from": "params",
}


def check_switches(switches, defaults):
    unknown = set(switches) - set(defaults)
    if unknown:
        raise ValueError(f"unknown switches {sorted(unknown)}: allowed {sorted(defaults)}")
    return {**defaults, **switches}


def exponents(dim, count, fmt="f32"):
    """torch.arange(0, dim, 2, dtype=torch.int64).float() / dim, in float32 (or rounded to bf16)."""
    e = np.arange(0, 2 * count, 2, dtype=np.int64).astype(np.float32) / F32(dim)
    return rounder(fmt)(e)


def default_inv_freq(base, dim, exponent_format="f32"):
    """_compute_default_rope_parameters: 1 / base^(2i/dim) in float32 (a Python float base raised to
    a float32 tensor: the base rounded to float32)."""
    e = exponents(dim, dim // 2, exponent_format)
    return F32(1.0) / np.power(np.full(e.shape, base, dtype=np.float32), e)


class HFRope:
    def __init__(self, params, config=None, **switches):
        self.sw = check_switches(switches, DEFAULTS)
        self.p = params
        self.config = config
        if (self.sw["yarn_factor"] != "given" or self.sw["rotary_dim_from"] != "params") and config is None:
            raise ValueError("switches yarn_factor and rotary_dim_from read the model's config: pass config")
        if params.get("inverse"):
            raise Unsupported("the backward rotation: no transformers config expresses it")
        self.head_dim = params["head_dim"]
        self.rotary_dim = params["rotary_dim"]
        self.layout = params["layout"]
        self.proportional = params["partial"] == "proportional"
        self.sections = params.get("mrope_section") or []
        scaling = dict(params.get("scaling", {"kind": "none"}))
        if not self.sw["rope_scaling"]:
            scaling = {"kind": "none"}
        self.scaling = scaling
        self.base = real(params["base"]) if self.sw["rope_theta"] else 10000.0
        if self.sw["partial"] == "ignored":
            self.rotary_dim = self.head_dim
        if self.sw["rotary_dim_from"] == "hidden_over_heads":
            self.rotary_dim = config["hidden_size"] // config["num_attention_heads"]
        # The span rotated and the exponent's dimension (SPEC 2.3/2.4).
        self.span = self.head_dim if self.proportional else self.rotary_dim
        self.dim = self.head_dim if (self.proportional or self.sw["partial"] == "head_dim_pairs") else self.rotary_dim
        self.inv_freq, self.attention = self._parameters()
        self.inv_freq = rounder(self.sw["inv_freq"])(self.inv_freq)

    # --- modeling_rope_utils.py ---------------------------------------------------------------
    def _parameters(self):
        s = self.scaling
        kind = s["kind"]
        ex = self.sw["exponent"]
        if self.proportional:
            # p-RoPE: exponent over head_dim, frequency 0 past pair rotary_dim/2 (then / factor).
            inv = default_inv_freq(self.base, self.head_dim, ex)
            inv[self.rotary_dim // 2:] = 0
            if kind == "linear":
                inv = inv / F32(real(s["factor"]))
            elif kind != "none":
                raise Unsupported(f"proportional with {kind}")
            return inv, 1.0
        if self.sw["partial"] == "head_dim_pairs":
            inv = default_inv_freq(self.base, self.head_dim, ex)[: self.rotary_dim // 2]
            if kind != "none":
                raise Unsupported("head_dim_pairs models unscaled partial rotary only")
            return inv, 1.0
        d = self.dim
        if kind == "none":
            return default_inv_freq(self.base, d, ex), 1.0
        if kind == "linear":
            return default_inv_freq(self.base, d, ex) / F32(real(s["factor"])), 1.0
        if kind == "dynamic":
            return self._dynamic(s, d, ex), 1.0
        if kind == "yarn":
            return self._yarn(s, d, ex)
        if kind == "llama3":
            return self._llama3(s, d, ex), 1.0
        if kind == "longrope":
            return self._longrope(s, d, ex)
        raise Unsupported(f"scaling {kind}: no transformers rope_type")

    def _dynamic(self, s, d, ex):
        factor, original, seq_len = real(s["factor"]), int(s["original_max_positions"]), int(s["seq_len"])
        if seq_len <= original:
            return default_inv_freq(self.base, d, ex)  # the frequencies of init, never recomputed
        # seq_len is a tensor (max(position_ids) + 1): the new base is float32 tensor arithmetic.
        alpha = F32(F32(F32(factor) * F32(seq_len)) / F32(original)) - F32(factor - 1)
        base = F32(self.base) * np.power(alpha, F32(d / (d - 2)))
        e = exponents(d, d // 2, ex)
        return F32(1.0) / np.power(np.full(e.shape, base, dtype=np.float32), e)

    def _yarn(self, s, d, ex):
        factor, original = real(s["factor"]), int(s["original_max_positions"])
        if self.sw["yarn_factor"] == "position_ratio":
            factor = self.config["max_position_embeddings"] / original
        beta_fast = real(s.get("beta_fast", "0x1p+5"))
        beta_slow = real(s.get("beta_slow", "0x1p+0"))
        truncate = s.get("truncate", True)

        def get_mscale(scale, mscale=1.0):
            return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0

        if "attention_factor" in s:
            attention = real(s["attention_factor"])
        elif "mscale" in s and "mscale_all_dim" in s:
            attention = get_mscale(factor, real(s["mscale"])) / get_mscale(factor, real(s["mscale_all_dim"]))
        else:
            attention = get_mscale(factor)

        def correction_dim(rotations):
            return d * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(self.base))

        low, high = correction_dim(beta_fast), correction_dim(beta_slow)
        if truncate:
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, d - 1)
        if low == high:
            high += 0.001
        pos_freqs = np.power(np.full(d // 2, self.base, dtype=np.float32), exponents(d, d // 2, ex))
        extrapolation = F32(1.0) / pos_freqs
        interpolation = F32(1.0) / (F32(factor) * pos_freqs)
        ramp = np.clip((np.arange(d // 2, dtype=np.float32) - F32(low)) / F32(high - low), F32(0), F32(1))
        extrapolation_factor = F32(1) - ramp
        inv = interpolation * (F32(1) - extrapolation_factor) + extrapolation * extrapolation_factor
        return inv, attention

    def _llama3(self, s, d, ex):
        inv = default_inv_freq(self.base, d, ex)
        factor, low, high = real(s["factor"]), real(s["low_freq_factor"]), real(s["high_freq_factor"])
        original = int(s["original_max_positions"])
        low_wavelen, high_wavelen = F32(original / low), F32(original / high)
        wavelen = F32(2 * math.pi) / inv
        scaled = np.where(wavelen > low_wavelen, inv / F32(factor), inv)
        smooth = (F32(original) / wavelen - F32(low)) / F32(high - low)
        smoothed = (F32(1) - smooth) * scaled / F32(factor) + smooth * scaled
        medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
        scaled = np.where(medium, smoothed, scaled).astype(np.float32)
        return inv if self.sw["llama3_result"] == "unscaled" else scaled

    def _longrope(self, s, d, ex):
        factor, original, seq_len = real(s["factor"]), int(s["original_max_positions"]), int(s["seq_len"])
        if "attention_factor" in s:
            attention = real(s["attention_factor"])
        elif factor <= 1.0 and self.sw["longrope_attention"] == "hf":
            attention = 1.0
        else:
            attention = math.sqrt(1 + math.log(factor) / math.log(original))
        rule = self.sw["longrope"]
        long = {"hf": seq_len > original, "always_long": True, "long_at_original": seq_len >= original}[rule]
        ext = f32([real(v) for v in s["long_factor" if long else "short_factor"]])
        inv = F32(1.0) / (ext * np.power(np.full(d // 2, self.base, dtype=np.float32), exponents(d, d // 2, ex)))
        return inv, attention

    # --- LlamaRotaryEmbedding.forward and apply_rotary_pos_emb ---------------------------------
    def frequencies(self):
        if self.sw["partial"] == "head_dim_pairs":
            raise Unsupported("frequencies of a head_dim-pair table")
        return self.inv_freq, self.attention

    def _pair_positions(self, axes):
        count = len(self.inv_freq)
        if not self.sections or self.sw["mrope_positions"] == "first_axis":
            return np.full(count, axes[0], dtype=np.int64)
        owner = np.repeat(np.arange(len(self.sections)), self.sections)
        return np.array([axes[a] for a in owner], dtype=np.int64)

    def cos_sin(self, axes):
        p = self._pair_positions(axes)
        m = F32(self.attention)
        phase = self.sw["phase"]
        pos = rounder(self.sw["positions"])(p.astype(np.float64))
        if phase == "f32":
            freqs = pos * self.inv_freq
            return np.cos(freqs) * m, np.sin(freqs) * m
        if phase == "tf32":
            freqs = tf32(pos) * tf32(self.inv_freq)
            return np.cos(freqs) * m, np.sin(freqs) * m
        # In a bf16 or fp16 model the cos/sin of these 16-bit angles are rounded to the model dtype
        # anyway; the outputs here are float32, so only the angle's error is the bug's.
        if phase == "bf16_autocast":
            freqs = bf16(bf16(pos) * bf16(self.inv_freq))
            return np.cos(freqs) * m, np.sin(freqs) * m
        if phase == "f16":
            with np.errstate(over="ignore", invalid="ignore"):
                freqs = f16(f16(pos) * f16(self.inv_freq))
                return np.cos(freqs) * m, np.sin(freqs) * m
        raise ValueError(f"phase {phase!r}")

    def rotate(self, x, axes):
        cos, sin = self.cos_sin(axes)
        layout = self.sw["layout"]
        if layout == "half_table_interleaved":
            return rotation.rotate_half_table_interleaved(x, cos, sin, self.span)
        if self.sw["partial"] == "head_dim_pairs":
            # Pairs (i, i + head_dim/2) for i < rotary_dim/2; every other element copied.
            y = f32(x).copy()
            h = self.head_dim // 2
            a = np.arange(self.rotary_dim // 2)
            b = a + h
            xa, xb = y[a], y[b]
            y[a] = xa * cos - xb * sin
            y[b] = xb * cos + xa * sin
            return y
        pairing = self.layout
        if layout == "swapped":
            pairing = "interleaved" if self.layout == "half" else "half"
        return rotation.rotate(x, cos, sin, self.span, pairing)
