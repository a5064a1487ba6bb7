#!/usr/bin/python3
"""The bug zoo: positional-encoding bugs that shipped in widely used frameworks, each reproduced as a
switch of a faithful transcription of that framework's code path (hf_style.py, vllm_style.py,
alibi_style.py), written out as a results file (conformance/SPEC.md section 7) and judged by
`posenc verify`. docs/bugs.md is the list with how posenc catches each one.

    bugs/zoo.py check   --cli build/posenc [--vectors vectors] [--out DIR] [--only ID,...]
    bugs/zoo.py measure --cli build/posenc [--vectors vectors] [--out DIR]   # rewrites bugs/caught.json
    bugs/zoo.py doc                                                          # rewrites docs/bugs.md's table

`check` (the CTest test `bugs_zoo`, label `bugs`): every control (a style with no switch) must pass `standard` on
its files, every mutant must fail `standard` on its own, and each mutant's first failing case must
be the one bugs/caught.json records, and docs/bugs.md's table must be the one `doc` writes from
it. `measure` runs both profiles and records, per bug, the first vector file, tcId and flags that
catch it and the verdict and worst margin under `standard` and `strict`: the numbers docs/bugs.md
quotes.

Interpreter: Debian's /usr/bin/python3 with its numpy (nothing else is needed)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # the test runs from the source tree: leave no __pycache__ in it

import cases  # noqa: E402
from alibi_style import Alibi  # noqa: E402
from hf_style import HFRope  # noqa: E402
from vllm_style import VllmRope  # noqa: E402

STYLES = {"hf": HFRope, "vllm": VllmRope, "alibi": Alibi}
STYLE_NAMES = {
    "hf": "Hugging Face transformers path (bugs/hf_style.py)",
    "vllm": "vLLM path (bugs/vllm_style.py)",
    "alibi": "ALiBi per Press et al. (bugs/alibi_style.py)",
}


@dataclass(frozen=True)
class Bug:
    id: str
    project: str
    threads: tuple           # ((url, title), ...): the report and the fix
    bug_class: str
    mechanism: str           # one sentence
    style: str               # which faithful path the mutant switches
    switches: dict
    files: tuple             # the vector files it is judged on
    related: tuple = ()      # ((url, title), ...): the same mechanism elsewhere
    note: str = ""
    control: str = ""        # the control for `files` when not `style`'s (a branch the style has no faithful form of)
    hf_config: str = ""      # judged on this model's vectors (posenc generate --hf-config), not `files`

    @property
    def control_style(self):
        return self.control or self.style


def gh(repo, kind, number, title):
    return (f"https://github.com/{repo}/{kind}/{number}", title)


# --- the zoo ----------------------------------------------------------------------------------
# Every thread below was read in its repository's tracker (title quoted); the mechanism is the
# thread's, in our words. The switch reproduces it on the named path; `files` are where posenc
# shows it.
BUGS = [
    # RoPE angle and table precision
    Bug("transformers-inv-freq-bf16", "Hugging Face transformers",
        (gh("huggingface/transformers", "issues", 25681,
            "LlamaRotaryEmbedding (wrong cache value when casting model to float16/bfloat16)"),
         gh("huggingface/transformers", "issues", 29496, "Precision issues in Mistral rotary embeddings")),
        "frequencies in a 16-bit format",
        "The inv_freq buffer is cast with the weights by model.to(bfloat16), and the cos/sin cache rebuilt "
        "from it carries a 2^-9 relative error in every angle.",
        "hf", {"inv_freq": "bf16"}, ("rope/none.json",),
        related=(gh("NVIDIA/Megatron-LM", "issues", 744,
                    "[QUESTION] In RotaryEmbedding, the datatype of inv_freq and the corresponding sin/cos "
                    "computations should maintained as torch.float32?"),
                 gh("InternLM/InternLM", "issues", 237, "[Bug] position embedding 在进入buffer后会跟随model 改为bfloat16"))),
    Bug("sglang-jax-inv-freq-bf16", "SGLang-JAX",
        (gh("sgl-project/sglang-jax", "issues", 1472,
            "[Bug] RoPE inverse frequencies are quantized before phase computation"),
         gh("sgl-project/sglang-jax", "pull", 1473, "fix(rope): compute rotary phases in float32")),
        "frequencies in a 16-bit format",
        "RotaryEmbedding.__call__ converts the float32 inverse frequencies to the model dtype (bf16) before "
        "multiplying them by float32 positions, so the phase error grows with the position.",
        "hf", {"inv_freq": "bf16"}, ("rope/mrope.json",)),
    Bug("gpt-neox-table-fp16", "EleutherAI GPT-NeoX",
        (gh("EleutherAI/gpt-neox", "issues", 1003,
            "RotaryEmbedding computation is wrong for certain position/feature pairs in reduced precision "
            "(both fp16 and bfloat)"),),
        "angles in a 16-bit format",
        "The cos/sin cache is computed in the model precision: inv_freq, the positions, their product and "
        "cos/sin all in fp16 (position 1857, pair 1: angle 1045 instead of 1044.27).",
        "hf", {"phase": "f16"}, ("rope/partial.json",)),
    Bug("transformers-autocast-bf16", "Hugging Face transformers",
        (gh("huggingface/transformers", "pull", 29285, "RoPE loses precision for Llama / Gemma + Gemma logits.float()"),),
        "angles in a 16-bit format",
        "Under bf16 autocast the phase matmul inv_freq @ position_ids runs in bf16, so the angle and its "
        "cos/sin are bf16 values.",
        "hf", {"phase": "bf16_autocast"}, ("rope/none.json",)),
    Bug("transformers-tf32-phase", "Hugging Face transformers",
        (gh("huggingface/transformers", "issues", 48428,
            "RoPE corruption due to TF32 on B200 (possibly others) when using "
            "`torch.set_float32_matmul_precision(\"high\")`"),),
        "angles in a 16-bit format",
        "inv_freq @ position_ids is a float32 GEMM that is dispatched to TF32 tensor cores, whose 10-bit "
        "mantissa rounds position 2049 to 2048 (and every frequency to 11 bits).",
        "hf", {"phase": "tf32"}, ("rope/none.json",),
        related=(gh("NVIDIA/TensorRT-LLM", "pull", 19532,
                    "[None][fix] Compute the Cosmos3 rotary table with a broadcast multiply, not a K=1 matmul"),)),
    Bug("keras-hub-positions-bf16", "KerasHub (Keras NLP)",
        (gh("keras-team/keras-hub", "issues", 1494, "Gemma discrepancies"),),
        "positions in a 16-bit format",
        "Gemma's RoPE casts the positions to the compute dtype bfloat16, so positions 8190 and 8191 both "
        "become 8192.",
        "hf", {"positions": "bf16"}, ("rope/none.json",),
        related=(gh("oarriaga/paz", "pull", 415, "Fix cached-decode vs full-forward divergence in bfloat16 Gemma4"),)),
    Bug("keras-hub-exponent-bf16", "KerasHub (Keras NLP)",
        (gh("keras-team/keras-hub", "pull", 1497, "Keep rope at float32 precision"),
         gh("keras-team/keras-hub", "pull", 1508, "Always run the rotary embedding layer in float32")),
        "frequencies in a 16-bit format",
        "Gemma's freq_exponents (2/d) * arange are cast to the bf16 compute dtype and the timescale "
        "base^exponent is formed there, so exponents and frequencies carry bf16 rounding.",
        "hf", {"exponent": "bf16", "inv_freq": "bf16"}, ("rope/none.json",)),
    # Configuration fields not read
    Bug("gpt-fast-rope-base", "PyTorch gpt-fast",
        (gh("meta-pytorch/gpt-fast", "pull", 181, "Fix rope base issue with llama 3"),),
        "rope_theta not read",
        "Llama 3's base (rope_theta 500000) sits in the Hugging Face config under a name gpt-fast did not "
        "read, so its default base 10000 was used (the report: gpt-fast issue #179).",
        "hf", {"rope_theta": False}, ("rope/none.json",),
        related=(gh("NVIDIA/TransformerEngine", "issues", 849, "`inv_freq` of `RotaryPositionEmbedding` is hard-coded to 10k"),
                 gh("lyogavin/airllm", "pull", 369, "Carry rope_theta from the config in the MLX Llama path (fixes #368)"),
                 gh("marin-community/levanter", "pull", 649, "Add rope theta to llama config, test with llama 3"))),
    Bug("torchtune-codellama-base", "PyTorch torchtune",
        (gh("meta-pytorch/torchtune", "issues", 1341, "Fix CodeLlama RoPE base param"),),
        "rope_theta not read",
        "CodeLlama's RoPE base (1000000) was not passed to the rotary embedding, which used its default 10000.",
        "hf", {"rope_theta": False}, ("rope/none.json",)),
    Bug("unsloth-theta-dropped", "Unsloth",
        (gh("unslothai/unsloth", "pull", 7028, "Keep native RoPE scaling when extending context; carry rope_theta for linear"),),
        "rope_theta not read",
        "Extending the context replaced the config's RoPE block with a synthesized linear one that carried no "
        "rope_theta; on transformers v5 (theta inside rope_parameters) the base fell back to 10000.",
        "hf", {"rope_theta": False}, ("rope/none.json",)),
    Bug("unsloth-llama3-scaling-dropped", "Unsloth",
        (gh("unslothai/unsloth", "pull", 6197,
            "Fix Llama 3.1+ rope scaling dropped on the FastLanguageModel path (long inputs become gibberish "
            "past ~29K tokens)"),),
        "rope_scaling not read",
        "Unsloth's replacement LlamaRotaryEmbedding computed vanilla inv_freq and never read config.rope_scaling, "
        "so Llama 3.1/3.2/3.3 ran without their llama3 scaling.",
        "hf", {"rope_scaling": False}, ("rope/llama3.json",)),
    Bug("mlx-vlm-scaling-ignored", "MLX-VLM",
        (gh("Blaizzy/mlx-vlm", "pull", 1710,
            "fix(rope): apply declared rope_scaling in models that ignored it (Llama-3.2-Vision and 9 others)"),),
        "rope_scaling not read",
        "Ten models declare rope_scaling in their config dataclass and build a plain nn.RoPE without it, so "
        "Llama-3.2-Vision's llama3 scaling is never applied.",
        "hf", {"rope_scaling": False}, ("rope/llama3.json",),
        related=(gh("lablup/mlxcel", "issues", 1355,
                    "fix(llama3): apply llama3 rope_scaling frequencies on the shared Llama path (Llama 3.1/3.2 "
                    "text and Llama 3.2 Vision)"),
                 gh("sbryngelson/ANEForge", "pull", 58, "fix(llm): Llama-3.1 rope_scaling (fixes long-context degeneration)"))),
    Bug("transformers-llama3-discarded", "Hugging Face transformers",
        (gh("huggingface/transformers", "pull", 32330, "Llama 3.1: Fix incorrect `inv_freq` assignment"),),
        "scaled frequencies discarded",
        "_compute_llama3_parameters computed the llama3-scaled frequencies into a new tensor and returned the "
        "unscaled inv_freq.",
        "hf", {"llama3_result": "unscaled"}, ("rope/llama3.json",)),
    # YaRN
    Bug("vllm-yarn-mscale-ignored", "vLLM",
        (gh("vllm-project/vllm", "issues", 48621, "[Bug]: Ministral3 RoPE scaling ignores YaRN mscale and nested Llama 4 fields"),
         gh("vllm-project/vllm", "pull", 48629, "[Bugfix][Model] Align Ministral3 scaling config with Transformers")),
        "YaRN attention factor",
        "Generic YaRN set its cache multiplier to yarn_get_mscale(factor) and ignored mscale and "
        "mscale_all_dim (Ministral 3: 1.2773 where transformers gives 1.0).",
        "vllm", {"yarn_mscale": "ignore_ratio"}, ("rope/yarn.json",)),
    Bug("vllm-yarn-attention-factor-dropped", "vLLM",
        (gh("vllm-project/vllm", "pull", 46280, "[Bugfix] YaRN RoPE: honor explicit attention_factor from the rope config"),
         gh("vllm-project/vllm", "pull", 48351, "[Bugfix] YaRN RoPE: honor explicit attention_factor from the rope config")),
        "YaRN attention factor",
        "get_rope's YaRN keyword whitelist did not forward attention_factor, so an explicit value was replaced "
        "by yarn_get_mscale(factor) (Laguna-XS.2: 1.4159 instead of 1.0).",
        "vllm", {"yarn_mscale": "drop_attention_factor"}, ("rope/yarn.json",),
        related=(gh("ml-explore/mlx-lm", "pull", 1507, "rope_utils: honor an explicit `attention_factor` in YaRN scaling"),)),
    Bug("sglang-yarn-attention-factor-squared", "SGLang",
        (gh("sgl-project/sglang", "pull", 33558, "[Laguna] fix YaRN mscale double-application in rope config"),),
        "YaRN attention factor",
        "Hugging Face's final attention_factor was copied into SGLang's attn_factor, a multiplier on its own "
        "yarn_get_mscale(factor): the scale applied twice (factor 128: 1.4852 becomes 2.2058).",
        "vllm", {"yarn_mscale": "attention_factor_as_attn_factor"}, ("rope/yarn.json",)),
    Bug("trtllm-yarn-attention-factor-relogged", "NVIDIA TensorRT-LLM",
        (gh("NVIDIA/TensorRT-LLM", "pull", 16379, "[None][fix] laguna: honour attention_factor as final YaRN scaling coefficient"),),
        "YaRN attention factor",
        "The final attention_factor was stored as mscale and passed through 0.1 * mscale * ln(factor) + 1 again "
        "(factor 64: +12.2%).",
        "vllm", {"yarn_mscale": "attention_factor_as_mscale"}, ("rope/yarn.json",)),
    Bug("vllm-yarn-truncate-ignored", "vLLM",
        (gh("vllm-project/vllm", "issues", 27722, "[Bug]: `yarn_find_correction_range` incorrect for GPT-OSS"),
         gh("vllm-project/vllm", "pull", 28244, "Add truncate arg to yarn to match openai implementation of gpt-oss")),
        "YaRN correction range",
        "gpt-oss's config sets truncate: false, but vLLM always floored and ceiled YaRN's correction range.",
        "vllm", {"yarn_truncate": "always"}, ("rope/yarn.json",),
        related=(gh("sgl-project/sglang", "pull", 14270, "Fix gpt-oss yarn with `truncate` argument"),)),
    Bug("transformers-yarn-factor-from-positions", "Hugging Face transformers",
        (gh("huggingface/transformers", "issues", 38224, "YaRN: factor is not effective with original_max_position_embeddings"),),
        "YaRN factor",
        "_compute_yarn_parameters replaced rope_scaling's factor by max_position_embeddings / "
        "original_max_position_embeddings whenever the latter was given, so Qwen2.5's recommended YaRN "
        "(factor 4, original 32768, max_position_embeddings 32768) ran with factor 1, unscaled.",
        "hf", {"yarn_factor": "position_ratio"}, (), hf_config="tests/data/hf_configs/qwen2.5-7b-instruct-yarn.json",
        note="Judged on the model's own vectors (posenc generate --hf-config): the ratio needs the config's "
             "max_position_embeddings, which no shipped vector's parameters carry."),
    # LongRoPE
    Bug("mlx-lm-longrope-always-long", "MLX LM",
        (gh("ml-explore/mlx-lm", "pull", 660, "Fix SuScaledRoPE"),),
        "LongRoPE factor selection",
        "SuScaledRoPE accepted short_factor and short_mscale but always applied the long factors, whatever the "
        "sequence length.",
        "hf", {"longrope": "always_long"}, ("rope/longrope.json",),
        related=(gh("lablup/mlxcel", "issues", 1358,
                    "fix(phi3): select LongRoPE short or long factors by sequence position and read mscale overrides"),)),
    Bug("mlx-lm-longrope-scale-below-one", "MLX LM",
        (gh("ml-explore/mlx-lm", "pull", 660, "Fix SuScaledRoPE"),),
        "LongRoPE attention factor",
        "SuScaledRoPE computed its attention scale sqrt(1 + ln(factor) / ln(original)) even for factor <= 1, "
        "where it is 1.",
        "hf", {"longrope_attention": "sqrt_always"}, ("rope/longrope.json",),
        note="Caught only by the LongRoPE group with factor 0.5 added for it (rope/longrope.json, flag "
             "FactorBelowOne): no earlier vector had a LongRoPE factor <= 1."),
    Bug("unsloth-longrope-at-original", "Unsloth",
        (gh("unslothai/unsloth", "pull", 10681, "Use the short RoPE factor at exactly original_max_position_embeddings"),),
        "LongRoPE factor selection",
        "The short factors were selected only for seq_len < original_max_position_embeddings, so a sequence of "
        "exactly the pretraining length took the long factors.",
        "hf", {"longrope": "long_at_original"}, ("rope/longrope.json",)),
    # Dynamic NTK
    Bug("vllm-dynamic-ntk-at-max-length", "vLLM",
        (gh("vllm-project/vllm", "issues", 3488, "[Bug]: DynamicNTKScalingRotaryEmbedding implementation is different from Transformers"),
         gh("vllm-project/vllm", "issues", 41236, "[Bug]: Dynamic NTK RoPE scaling is wrong")),
        "dynamic NTK length",
        "DynamicNTKScalingRotaryEmbedding evaluates the new base once, at max_len = factor * "
        "max_position_embeddings (factor^2 - (factor - 1) inside the power), for every sequence, even those "
        "inside the original context.",
        "vllm", {"dynamic": "max_length"}, ("rope/dynamic.json",), control="hf",
        note="vLLM has no per-forward dynamic NTK to be faithful to; the control for rope/dynamic.json is the "
             "Hugging Face path, whose rule posenc's vectors follow."),
    Bug("vllm-dynamic-ntk-below-trained", "vLLM",
        (gh("vllm-project/vllm", "issues", 52665,
            "[Bug][NomicBert] Dynamic NTK corrupts RoPE cache when served length is below training length"),
         gh("vllm-project/vllm", "pull", 52675, "[Bugfix] Skip Dynamic NTK scaling when served length is below trained length")),
        "dynamic NTK length",
        "The dynamic NTK formula factor * L / L0 - (factor - 1) is applied with a length below the trained one "
        "without flooring it there, so the term reaches 0 or below and the base becomes 0 or complex.",
        "vllm", {"dynamic": "served_unfloored"}, ("rope/dynamic.json",), control="hf",
        note="As for the bug above, the control for rope/dynamic.json is the Hugging Face path."),
    # Partial rotary
    Bug("vllm-partial-rotary-ignored", "vLLM",
        (gh("vllm-project/vllm", "pull", 43770, "[Bugfix] fix wrong partial_rotary_factor calculation for bailing_moe model."),),
        "partial rotary",
        "bailing_moe derived partial_rotary_factor from a missing rotary_dim (defaulting to head_dim), so "
        "Ling-flash-2.0's factor 0.5 became 1 and the whole head was rotated.",
        "vllm", {"partial": "ignored"}, ("rope/partial.json",)),
    Bug("mlx-lm-glm-partial-ignored", "MLX LM",
        (gh("ml-explore/mlx-lm", "pull", 1698, "Honor partial_rotary_factor in glm"),),
        "partial rotary",
        "GLMAttention builds its RoPE over the whole head_dim, so GLM checkpoints that rotate half the head "
        "(partial_rotary_factor 0.5) get every dimension rotated.",
        "hf", {"partial": "ignored"}, ("rope/partial.json",)),
    Bug("vllm-mla-partial-applied", "vLLM",
        (gh("vllm-project/vllm", "pull", 41185, "[Bugfix] BailingMoeV2.5: rotate full qk_rope_head_dim in MLA RoPE"),),
        "partial rotary",
        "The linear-attention layers' partial_rotary_factor 0.5 was applied to the MLA layers' rope head too, so "
        "only half of qk_rope_head_dim was rotated.",
        "vllm", {"partial": "halved"}, ("rope/none.json",)),
    Bug("pie-partial-head-dim-frequencies", "pie",
        (gh("pie-project/pie", "issues", 602,
            "rope_partial uses head_dim instead of rotary_dim for frequencies and pair offset (Qwen3.6 accuracy "
            "degrades with context length)"),
         gh("pie-project/pie", "pull", 603, "rope_partial: rotate over the rotary width, not the head width (Metal + CUDA)")),
        "partial rotary",
        "rope_partial rotated the first rotary_dim/2 pairs with frequencies theta^(-2i/head_dim) and pairs "
        "(i, i + head_dim/2) instead of the rotary width's.",
        "hf", {"partial": "head_dim_pairs"}, ("rope/partial.json",)),
    # Layouts
    Bug("llama.cpp-rope-type-norm-for-neox", "llama.cpp",
        (gh("ggml-org/llama.cpp", "pull", 13260, "llama : plamo rope type is neox"),
         gh("ggml-org/llama.cpp", "pull", 13261, "llama: orion rope type is neox")),
        "layout",
        "PLaMo and Orion were given ggml's NORM rope type (pairs 2i, 2i + 1) where their weights need NEOX "
        "(pairs i, i + n/2); PLaMo was broken so for over a year.",
        "hf", {"layout": "swapped"}, ("rope/none.json",),
        note="Transcribed onto the Hugging Face path: ggml's own CPU path forms its angles by a float32 "
             "recurrence that already fails `standard` at head_dim 128 (SPEC.md 5), so it cannot serve as a "
             "passing control."),
    Bug("deepseek-v32-indexer-interleaved", "vLLM, MLX LM, vLLM Ascend",
        (gh("vllm-project/vllm", "pull", 28968, "[DeepSeek] Fix DeepSeek V3.2 Rope Embedding"),
         gh("ml-explore/mlx-lm", "pull", 1431, "Fix deepseek indexer")),
        "layout",
        "DeepSeek-V3.2's sparse-attention indexer applied its RoPE interleaved (GPT-J style) where the model "
        "uses the non-interleaved (NeoX) pairing; the reference code carried the same mistake.",
        "vllm", {"is_neox_style": "swapped"}, ("rope/none.json",),
        related=(gh("vllm-project/vllm-ascend", "pull", 4641, "[BugFix][DS 3.2] Fix ds indexer accuracy problem caused by rope."),
                 gh("sgl-project/sglang", "issues", 13530, "[Bug] DeepSeek V3.2 indexer RoPE fix"))),
    Bug("vllm-ascend-mrope-always-neox", "vLLM Ascend",
        (gh("vllm-project/vllm-ascend", "issues", 12765,
            "[Bug]: `AscendMRotaryEmbedding.forward_oot` hardcodes Neox-style (chunk-half) rotation for the "
            "`torch_npu.npu_mrope` path, producing wrong results for GPT-J style models (e.g. GLM-OCR)."),
         gh("vllm-project/vllm-ascend", "pull", 12820, "[BugFix] Fix MRotaryEmbedding issue #12765")),
        "layout",
        "The NPU M-RoPE path always used NeoX (half) pairing, ignoring is_neox_style, so GPT-J-style M-RoPE "
        "models (GLM-4V, GLM-OCR) had every element paired with the wrong partner.",
        "vllm", {"is_neox_style": "always_neox"}, ("rope/mrope.json",),
        note="Caught only by the M-RoPE group with interleaved pairs added for it (rope/mrope.json, flag "
             "InterleavedMRoPE): every earlier M-RoPE vector used the half layout."),
    Bug("transformers-omni-mixed-layout", "Hugging Face transformers",
        (gh("huggingface/transformers", "issues", 47328,
            "Qwen2.5-Omni Token2Wav DiT uses mismatched RoPE layout (half-split cos/sin with interleaved rotate) "
            "— regression from #39847"),),
        "layout",
        "The DiT's rotary embedding builds cos/sin for the half layout (cat(freqs, freqs)) and applies them "
        "with an interleaved rotate, which is not a rotation.",
        "hf", {"layout": "half_table_interleaved"}, ("rope/none.json",)),
    Bug("vllm-ascend-nonpow2-rotary-sin", "vLLM Ascend",
        (gh("vllm-project/vllm-ascend", "issues", 12723,
            "[Bug]: Ascend-dispatched rotary path (Triton rope) corrupts Q/K norms for GLM-5.2 DSpark draft "
            "(bf16, NeoX, head_dim=192); forward_native restores accept_len 3.06 -> 5.55"),),
        "kernel indexing",
        "The Triton RoPE kernel read the sin half of each cache row from next_power_of_2(rotary_dim) / 2 on "
        "instead of rotary_dim / 2, so for rotary_dim 192 sin came from the wrong offset and past the row.",
        "vllm", {"sin_offset": "padded"}, ("rope/partial.json",),
        note="Past the end of a cache row the kernel read other memory; the mutant reads 0 there (a masked "
             "load). Power-of-two rotary dims are unaffected, as in the report."),
    # M-RoPE positions
    Bug("liger-mrope-1d-positions", "Liger-Kernel",
        (gh("linkedin/Liger-Kernel", "pull", 276, "fix qwen2-vl: create correct rope position_ids when position_ids is None"),),
        "M-RoPE positions",
        "Qwen2-VL's forward built text-style 1-D position ids when none were passed, so every M-RoPE section "
        "(temporal, height, width) took the same position instead of the 3-D rope index.",
        "hf", {"mrope_positions": "first_axis"}, ("rope/mrope.json",)),
    # ALiBi
    Bug("mlx-alibi-power-of-two-slopes", "MLX",
        (gh("ml-explore/mlx", "issues", 343, "alibi error if log2(num_heads) is not an integer"),
         gh("ml-explore/mlx", "pull", 3071, "Fix ALiBi slopes for non-power-of-2 num_heads")),
        "ALiBi slopes",
        "create_alibi_slope used (2^8)^(1/n) raised to -(h + 1), the rule of a power-of-two head count, for "
        "every n (3, 5, 6, 7, 12 heads got wrong slopes).",
        "alibi", {"slopes": "power_of_two_formula"}, ("alibi/slopes.json",)),
    Bug("aprender-alibi-exponent", "aprender",
        (gh("paiml/aprender", "pull", 2143, "fix(serve): ALiBi head slopes off-by-one in exponent — 2^(-8h/n) not 2^(-8(h+1)/n) (PMAT-858)"),),
        "ALiBi slopes",
        "compute_slopes used 2^(-8h/n), one factor too few per head (head 0 had slope 1).",
        "alibi", {"slopes": "exponent_h"}, ("alibi/slopes.json",)),
    Bug("attention-gym-alibi-sign", "PyTorch attention-gym",
        (gh("meta-pytorch/attention-gym", "pull", 86, "fix alibi bias"),),
        "ALiBi bias sign",
        "The FlexAttention ALiBi score_mod added slope * (q_idx - kv_idx), a reward for distance, instead of "
        "slope * (kv_idx - q_idx).",
        "alibi", {"bias_sign": "positive"}, ("alibi/bias.json",)),
    Bug("megatron-deepspeed-alibi-tensor-parallel", "BigScience Megatron-DeepSpeed",
        (gh("bigscience-workshop/Megatron-DeepSpeed", "issues", 227,
            "Likely bug in Alibi positional embeddings together with Tensor Parallelism."),),
        "ALiBi slopes",
        "With tensor parallelism every rank took the slice of the ALiBi tensor of the first heads, so rank r's "
        "heads got rank 0's slopes.",
        "alibi", {"tensor_parallel": 2}, ("alibi/bias.json",),
        related=(gh("flashinfer-ai/flashinfer", "issues", 1606,
                    "[Feature] ALiBi support for tensor parallelism: need alibi_head_offset in attention kernels"),)),
]

# The files each faithful path (no switch) expresses; `check` and `measure` judge each on the
# ones its mutants use, where it must pass `standard`.
CONTROLS = {
    "hf": ("rope/none.json", "rope/partial.json", "rope/proportional.json", "rope/mrope.json", "rope/linear.json",
           "rope/dynamic.json", "rope/yarn.json", "rope/llama3.json", "rope/longrope.json"),
    "vllm": ("rope/none.json", "rope/partial.json", "rope/mrope.json", "rope/linear.json", "rope/yarn.json",
             "rope/llama3.json"),
    "alibi": ("alibi/slopes.json", "alibi/bias.json"),
}


def check_registry():
    ids = [b.id for b in BUGS]
    if len(set(ids)) != len(ids):
        raise ValueError("bugs/zoo.py: duplicate bug ids")
    for b in BUGS:
        if b.hf_config:
            continue  # judged on the model's own vectors, with the faithful path as their control
        files = set(CONTROLS.get(b.control_style, ()))
        if not set(b.files) <= files:
            raise ValueError(f"bug {b.id}: files {sorted(set(b.files) - files)} have no {b.control_style} control")
        for style in (b.style, b.control_style):
            if style not in STYLES:
                raise ValueError(f"bug {b.id}: style {style!r}: must be one of {', '.join(STYLES)}")


# --- judging ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Task:
    name: str
    style: str
    switches: dict
    files: tuple
    vectors: str          # the folder of the vector files
    own_vectors: bool     # a folder generated here (`posenc verify --own-vectors`)
    config: dict = None   # the Hugging Face config the vectors were generated from


def results_file(out, task):
    def make(params, file):
        extra = {"config": task.config} if task.config is not None else {}
        return STYLES[task.style](params, **extra, **task.switches)

    fmt, working = ("f64", "f64") if task.style == "alibi" else ("f32", "f32")
    results = cases.results_for(task.vectors, task.files, make, fmt)
    path = os.path.join(out, task.name.replace(":", "-") + ".results.json")
    cases.write_results(path, f"bug zoo: {task.name}", fmt, working, results)
    return path, len(results)


def verify(cli, task, results, profile, report):
    cmd = [cli, "verify", "--results", results, "--profile", profile, "--filter", ",".join(task.files),
           "--checks", "accuracy", "--report", report, "--max-failures", "1", "--vectors", task.vectors]
    if task.own_vectors:
        cmd.append("--own-vectors")
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)}: exit {run.returncode}\n{run.stdout}\n{run.stderr}")
    with open(report) as f:
        return run.returncode, json.load(f)


def first_failure(report, task):
    """The first failing case in the task's file order (lowest tcId of the first file with a
    failure), with its flags from the vector file."""
    by_file = {g["file"]: g for g in report["groups"]}
    for file in task.files:
        group = by_file.get(file)
        if group and group["failures"]:
            tc = min(f["tcId"] for f in group["failures"])
            flags = next(t.get("flags", []) for g in cases.load(task.vectors, file)["testGroups"]
                         for t in g["tests"] if t["tcId"] == tc)
            return {"file": file, "tcId": tc, "flags": flags}
    return None


def worst_margin(report):
    """The largest margin over the files (error / bound; above 1 fails), with where it is."""
    worst = max(report["groups"], key=lambda g: margin_value(g["worstMargin"]["value"]))
    m = worst["worstMargin"]
    return {"value": margin_value(m["value"]), "file": worst["file"], "tcId": m["tcId"], "format": m["format"],
            "position": m["position"]}


def margin_value(v):
    return float("inf") if v in ("inf", "nan") else float(v)


def judge(cli, out, task, profiles):
    with np.errstate(all="ignore"):  # mutants overflow and make NaN on purpose; posenc judges those values
        results, count = results_file(out, task)
    outcome = {"answered": count, "files": list(task.files)}
    for profile in profiles:
        report_path = os.path.join(out, f"{task.name.replace(':', '-')}.{profile}.report.json")
        status, report = verify(cli, task, results, profile, report_path)
        outcome[profile] = {
            "conformant": status == 0,
            "checks": report["summary"]["accuracy"],
            "worstMargin": worst_margin(report),
            "firstFailure": first_failure(report, task),
        }
    return outcome


def model_vectors(cli, out, config_path):
    """A model's vectors (`posenc generate --hf-config`), named after the config file (--name):
    rope/<config stem>.json in a folder of its own."""
    stem = os.path.splitext(os.path.basename(config_path))[0]
    folder = os.path.join(out, "model-vectors", stem)
    subprocess.run([cli, "generate", "--hf-config", config_path, "--name", stem, "--out", folder], check=True,
                   capture_output=True)
    with open(config_path) as f:
        return folder, f"rope/{stem}.json", json.load(f)


def tasks_for(cli, vectors, out, bugs):
    """Every control and every bug of `bugs` as a task."""
    tasks = []
    for style, files in CONTROLS.items():
        used = {f for b in bugs if b.control_style == style and not b.hf_config for f in b.files}
        if used:  # the control on the files its mutants use, in CONTROLS' order
            tasks.append(Task("control:" + style, style, {}, tuple(f for f in files if f in used), vectors, False))
    models = {}
    for b in bugs:
        if b.hf_config and b.hf_config not in models:
            folder, file, config = model_vectors(cli, out, os.path.join(REPO, b.hf_config))
            models[b.hf_config] = (folder, file, config)
            tasks.append(Task(f"control:{b.control_style}:{os.path.basename(b.hf_config)}", b.control_style, {},
                              (file,), folder, True, config))
    for b in bugs:
        if b.hf_config:
            folder, file, config = models[b.hf_config]
            tasks.append(Task(b.id, b.style, b.switches, (file,), folder, True, config))
        else:
            tasks.append(Task(b.id, b.style, b.switches, b.files, vectors, False))
    return tasks


def run(cli, vectors, out, bugs, profiles, jobs=2):
    """Every control and every bug of `bugs`, judged under `profiles`."""
    tasks = tasks_for(cli, vectors, out, bugs)
    with ThreadPoolExecutor(jobs) as pool:
        futures = {t.name: pool.submit(judge, cli, out, t, profiles) for t in tasks}
        return {name: f.result() for name, f in futures.items()}


CAUGHT = os.path.join(HERE, "caught.json")


def describe(outcome, profile):
    o = outcome[profile]
    m = o["worstMargin"]
    first = o["firstFailure"]
    where = f"first {first['file']} tcId {first['tcId']} {first['flags']}" if first else "no failure"
    return (f"{'CONFORMANT' if o['conformant'] else 'NOT CONFORMANT'}, worst margin {m['value']:.3g} "
            f"({m['file']} tcId {m['tcId']} {m['format']}), {where}")


def controls_recorded():
    with open(CAUGHT) as f:
        return json.load(f)["controls"]


def check(args):
    """The CTest test: controls pass standard, every mutant fails it at the recorded first case."""
    bugs = selected(args.only)
    with open(CAUGHT) as f:
        recorded = json.load(f)["bugs"]
    outcomes = run(args.cli, args.vectors, args.out, bugs, ["standard"], args.jobs)
    problems = []
    for name, outcome in outcomes.items():
        line = f"{name}: {describe(outcome, 'standard')}"
        print(line)
        std = outcome["standard"]
        if name.startswith("control:"):
            if not std["conformant"]:
                problems.append(f"{name}: the faithful path fails standard")
            continue
        if std["conformant"]:
            problems.append(f"{name}: the mutant passes standard (posenc does not catch it)")
        elif name not in recorded:
            problems.append(f"{name}: not in bugs/caught.json (run bugs/zoo.py measure)")
        elif std["firstFailure"] != recorded[name]["standard"]["firstFailure"]:
            problems.append(f"{name}: first failure {std['firstFailure']}, bugs/caught.json records "
                            f"{recorded[name]['standard']['firstFailure']}")
    current, expected = doc_text({"bugs": recorded, "controls": controls_recorded()})
    if current != expected:
        problems.append("docs/bugs.md's table differs from bugs/caught.json (run bugs/zoo.py doc)")
    for p in problems:
        print("FAIL", p)
    print(f"{len(bugs)} bugs, {len(outcomes) - len(bugs)} controls: "
          + ("all as expected" if not problems else f"{len(problems)} problems"))
    return 1 if problems else 0


def measure(args):
    """Both profiles for every bug and control; writes bugs/caught.json."""
    outcomes = run(args.cli, args.vectors, args.out, BUGS, ["standard", "strict"], args.jobs)
    for name, outcome in outcomes.items():
        print(f"{name}:\n  standard: {describe(outcome, 'standard')}\n  strict:   {describe(outcome, 'strict')}")
    record = {"about": "written by bugs/zoo.py measure: each bug's verdict, worst margin and first failing case "
                    "under standard and strict, on the files bugs/zoo.py names",
           "controls": {k: v for k, v in outcomes.items() if k.startswith("control:")},
           "bugs": {k: v for k, v in outcomes.items() if not k.startswith("control:")}}
    with open(CAUGHT, "w") as f:
        json.dump(record, f, indent=1, sort_keys=True)
        f.write("\n")
    return 0


# --- docs/bugs.md --------------------------------------------------------------------------------
DOC = os.path.join(REPO, "docs", "bugs.md")
BEGIN, END = "<!-- BEGIN bugs/zoo.py doc -->", "<!-- END bugs/zoo.py doc -->"


def fmt_margin(v):
    return "inf" if v == float("inf") else f"{v:.3g}"


def verdict_cell(outcome):
    return ("passes" if outcome["conformant"] else "fails") + ", margin " + fmt_margin(outcome["worstMargin"]["value"])


def caught_cell(outcome):
    first = outcome["firstFailure"]
    if not first:
        return "not caught"
    flags = ", ".join(first["flags"]) or "no flag"
    return f"{first['file']} tcId {first['tcId']} ({flags})"


def link(thread):
    url, title = thread
    repo, kind, number = url.split("/")[3] + "/" + url.split("/")[4], url.split("/")[5], url.split("/")[6]
    short = repo.split("/")[1]
    return f"[{short} {'#' if kind == 'issues' else 'PR #'}{number}]({url} \"{title.replace(chr(34), chr(39))}\")"


def doc_section(recorded):
    """The generated part of docs/bugs.md: the zoo table and the controls, from bugs/caught.json."""
    lines = ["| # | bug | project: threads | class | mechanism | first caught under `standard` | `standard` | `strict` |",
             "|---|---|---|---|---|---|---|---|"]
    for n, b in enumerate(BUGS, 1):
        r = recorded["bugs"][b.id]
        threads = ", ".join(link(t) for t in b.threads)
        if b.related:
            threads += "; same mechanism: " + ", ".join(link(t) for t in b.related)
        mechanism = b.mechanism + (f" *{b.note}*" if b.note else "")
        lines.append(f"| {n} | `{b.id}` | {b.project}: {threads} | {b.bug_class} | {mechanism} | "
                     f"{caught_cell(r['standard'])} | {verdict_cell(r['standard'])} | {verdict_cell(r['strict'])} |")
    lines += ["", "The controls, each faithful path with no switch on the files its mutants use:", "",
              "| control | files | `standard` | `strict` |", "|---|---|---|---|"]
    for name, r in recorded["controls"].items():
        parts = name.split(":")
        path = STYLE_NAMES[parts[1]] + (f" on the vectors of tests/data/hf_configs/{parts[2]}" if len(parts) > 2 else "")
        lines.append(f"| {path} | {', '.join(r['files'])} | {verdict_cell(r['standard'])} | {verdict_cell(r['strict'])} |")
    return "\n".join(lines)


def doc_text(recorded):
    with open(DOC) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        raise ValueError(f"{DOC}: no {BEGIN} ... {END} section")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return text, head + BEGIN + "\n" + doc_section(recorded) + "\n" + END + tail


def doc(args):
    with open(CAUGHT) as f:
        recorded = json.load(f)
    _, new = doc_text(recorded)
    with open(DOC, "w") as f:
        f.write(new)
    print(f"wrote {DOC}")
    return 0


def selected(only):
    if not only:
        return BUGS
    wanted = only.split(",")
    unknown = set(wanted) - {b.id for b in BUGS}
    if unknown:
        raise SystemExit(f"--only: unknown bug ids {sorted(unknown)}")
    return [b for b in BUGS if b.id in wanted]


def main():
    check_registry()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["check", "measure", "doc"])
    parser.add_argument("--cli", help="the posenc CLI (check, measure)")
    parser.add_argument("--vectors", default=os.path.join(REPO, "vectors"))
    parser.add_argument("--out", help="folder for the results files and reports (default: a temporary one)")
    parser.add_argument("--only", help="comma-separated bug ids (check)")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    if args.command != "doc" and not args.cli:
        parser.error(f"{args.command} needs --cli (the posenc CLI)")
    with tempfile.TemporaryDirectory() as tmp:
        if not args.out:
            args.out = tmp
        os.makedirs(args.out, exist_ok=True)
        return {"check": check, "measure": measure, "doc": doc}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
