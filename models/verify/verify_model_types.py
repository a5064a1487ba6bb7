"""Every transformers model type whose text model applies RoPE, run by its own code and judged by posenc.

For each model type (CONFIG_MAPPING of the installed transformers) whose modeling file has rotary
or ALiBi code: its config class's defaults with small sizes (and, where its rotary module reads
`rope_parameters`, one config per rope_type), the text model built from it, and a forward over
posenc's inputs. What runs is transformers' own code: the model's forward computes position
embeddings with its rotary module, and each attention layer projects, rotates and hands q and k to
the attention function. Three things are put in place around it, none of them arithmetic:
- the q/k projections (every nn.Linear of an attention module) return the case's vector x for
  every head (a forward hook; fused qkv projections get x in each head's q, k and v alike), and
  normalizations inside the attention module return their input (q_norm, k_norm, ...), so that
  the rotation acts on x itself;
- the attention function (config._attn_implementation, AttentionInterface) records the rotated q
  and returns zeros, so every layer runs and none of them attends;
- torch's float32 (`torch.float`, `Tensor.float()`, the default dtype) is float64 while the model
  is built and run, so transformers' float32 frequency and angle arithmetic runs in binary64 and
  its result can be judged against posenc's binary64 vectors under `standard` (an angle formed in
  binary64, SPEC.md section 5).
posenc's side: `posenc serve --hf-config` on the config.json that `save_pretrained` would write
(PretrainedConfig.to_json_string(use_diff=True): keys at their class default omitted), through the
Python package; its rope_rotate cases are the inputs, and the judge gives the verdict per layer.

Each layer is classified: agrees (every case passes), no rotation (q comes out as x: a NoPE
layer), or differs. A model type is verified when every layer of posenc's scope (the
full-attention layers when the config has layer_types, else every layer) that rotates agrees.

The layout that the registry records is measured too, not read from the code: a probe forward at
position 1 with the unit vectors e_j as q shows which element each one is paired with.

Usage (the venv's python, .venv/bin/python; PYTHONPATH=python/src):
  verify_model_types.py --cli build/posenc [--types llama,cohere,...] [--registry FILE --docs FILE]
"""
import argparse
import contextlib
import importlib
import json
import os
import re
import sys
import tempfile
import time
import traceback
import warnings

import torch

import posenc
import transformers
from transformers import AutoModel, PreTrainedModel
from transformers.modeling_utils import AttentionInterface
from transformers.models.auto.configuration_auto import CONFIG_MAPPING, model_type_to_module_name

VERSION = transformers.__version__
# Tiny matrices: one thread (torch's pool costs more than it saves here, ~25x on a busy machine).
torch.set_num_threads(1)
warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()

# Small sizes put on every config that has the attribute (the class defaults are model-sized).
TINY = {
    "vocab_size": 256, "intermediate_size": 64, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 32,
    "num_experts": 4, "num_local_experts": 4, "n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 1,
    "n_group": 1, "topk_group": 1, "num_key_value_heads": 1, "num_attention_heads": 2, "ffn_hidden_size": 64,
    "kv_lora_rank": 64, "q_lora_rank": 64, "first_k_dense_replace": 0, "pad_token_id": 0,
}
# A head width for configs whose head_dim is hidden_size / num_attention_heads.
HEAD_DIM = 64
MAX_LAYERS = 12
MAX_PARAMETERS = 50_000_000
ROPE_TYPES = ("linear", "dynamic", "yarn", "llama3", "longrope")


# --- running transformers in binary64 ----------------------------------------------------------
@contextlib.contextmanager
def binary64():
    """torch.float, Tensor.float() and the default dtype as float64 (see the module docstring)."""
    saved = torch.float, torch.float32, torch.Tensor.float, torch.get_default_dtype()
    float64 = torch.float64
    # transformers names float32 both ways (`torch.float` in the default frequencies and angles,
    # `torch.float32` in YaRN's ramp and LongRoPE's factors).
    torch.float = torch.float32 = float64
    torch.Tensor.float = lambda self, *a, **k: self.to(float64)
    torch.set_default_dtype(float64)
    try:
        yield
    finally:
        torch.float, torch.float32, torch.Tensor.float = saved[:3]
        torch.set_default_dtype(saved[3])


class Capture:
    """The attention function of the model under test: records each call's q and k."""
    calls = []

    @staticmethod
    def attention(module, query, key, value, attention_mask, **kwargs):
        Capture.calls.append((query.detach().clone(), key.detach().clone()))
        b, h, s, _ = query.shape
        return torch.zeros(b, s, h, value.shape[-1], dtype=query.dtype), None


AttentionInterface.register("posenc_capture", Capture.attention)


class NotRun(Exception):
    """The model type could not be run here (the message says why)."""


# --- model types and their tiny configs --------------------------------------------------------
def modeling_source(model_type):
    try:
        module = importlib.import_module(f"transformers.models.{model_type_to_module_name(model_type)}")
    except Exception:
        return ""
    folder = os.path.dirname(module.__file__)
    text = ""
    for name in sorted(os.listdir(folder)):
        if name.startswith("modeling_") and name.endswith(".py"):
            with open(os.path.join(folder, name)) as f:
                text += f.read()
    return text


# Code that rotates or biases by position (not words that merely contain "rope", as "property").
RELEVANT = re.compile(r"RotaryEmbedding|apply_rotary|rotary_emb|rope_theta|rope_parameters|alibi", re.IGNORECASE)


def candidates():
    """Model types whose modeling code mentions rotary embeddings or ALiBi."""
    out = []
    for mt in sorted(CONFIG_MAPPING.keys()):
        src = modeling_source(mt)
        if RELEVANT.search(src):
            out.append(mt)
    return out


def text_config_of(config):
    try:
        text = config.get_text_config(decoder=True)
    except Exception:
        text = config
    return text


def model_class(text_config, model_type):
    """The text model's base class: AutoModel's, or the modeling module's *Model class whose
    config_class is the text config's class."""
    try:
        return AutoModel._model_mapping[type(text_config)]
    except Exception:
        pass
    module = importlib.import_module(f"transformers.models.{model_type_to_module_name(model_type)}")
    found = []
    for sub in os.listdir(os.path.dirname(module.__file__)):
        if sub.startswith("modeling_") and sub.endswith(".py"):
            m = importlib.import_module(f"{module.__name__}.{sub[:-3]}")
            for obj in vars(m).values():
                if (isinstance(obj, type) and issubclass(obj, PreTrainedModel) and obj.__name__.endswith("Model")
                        and getattr(obj, "config_class", None) is type(text_config)
                        and not obj.__name__.endswith("PreTrainedModel")):
                    found.append(obj)
    if not found:
        raise NotRun(f"no text model class for {type(text_config).__name__}")
    return min(found, key=lambda c: len(c.__name__))


def tiny(config, rope_type=None, head_width=HEAD_DIM):
    """The config with small sizes (a copy), and rope_type's parameters when given."""
    c = config.__class__.from_dict(config.to_dict())
    text = text_config_of(c)
    for key, value in TINY.items():
        if hasattr(text, key) and getattr(text, key) is not None and not isinstance(getattr(text, key), (list, dict)):
            setattr(text, key, value)
    if getattr(text, "num_attention_heads", None):
        explicit = getattr(text, "head_dim", None)
        rp = rope_dict(text) or {}
        # M-RoPE's sections count the pairs of the whole head: the head keeps its width.
        width = 2 * sum(rp["mrope_section"]) if rp.get("mrope_section") else head_width
        head = explicit if isinstance(explicit, int) and 0 < explicit <= 256 else width
        text.hidden_size = width * text.num_attention_heads if hasattr(text, "hidden_size") else None
        if isinstance(explicit, int):
            text.head_dim = head
        if getattr(text, "qk_rope_head_dim", None):
            text.qk_rope_head_dim = text.qk_nope_head_dim = 32
            text.v_head_dim = 32
            if hasattr(text, "head_dim"):
                text.head_dim = 32
    if getattr(text, "num_hidden_layers", 0) > MAX_LAYERS and not hybrid(text):
        text.num_hidden_layers = MAX_LAYERS
    if rope_type == "mrope":
        # Qwen2-VL's published sections (head_dim 128); the rope_type stays.
        rope_dict(text)["mrope_section"] = [16, 24, 24]
    elif rope_type:
        set_rope_type(text, rope_type)
    return c


def hybrid(text):
    """A config whose attention layers are a few of many (their indices depend on the count)."""
    return any(hasattr(text, k) for k in ("attn_layer_period", "attn_layer_indices", "hybrid_override_pattern",
                                           "layers_block_type", "mamba_d_state"))


def rope_dict(text):
    rp = getattr(text, "rope_parameters", None)
    if isinstance(rp, dict) and "full_attention" in rp and isinstance(rp["full_attention"], dict):
        return rp["full_attention"]
    return rp if isinstance(rp, dict) else None


def set_rope_type(text, rope_type):
    rp = rope_dict(text)
    if rp is None:
        raise NotRun("no rope_parameters")
    head = getattr(text, "head_dim", None) or text.hidden_size // text.num_attention_heads
    pairs = int(head * rp.get("partial_rotary_factor", 1.0)) // 2
    original = 4096
    text.max_position_embeddings = 4 * original
    for k in [k for k in rp if k not in ("rope_theta", "partial_rotary_factor", "mrope_section")]:
        del rp[k]
    rp["rope_type"] = rope_type
    if rope_type == "linear":
        rp["factor"] = 4.0
    elif rope_type == "dynamic":
        rp["factor"] = 2.0
        text.max_position_embeddings = original
    elif rope_type == "yarn":
        rp.update(factor=4.0, original_max_position_embeddings=original)
    elif rope_type == "llama3":
        rp.update(factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0, original_max_position_embeddings=original)
    elif rope_type == "longrope":
        rp.update(factor=4.0, original_max_position_embeddings=original,
                  short_factor=[1.0 + 0.01 * i for i in range(pairs)], long_factor=[1.0 + 0.5 * i for i in range(pairs)])


# --- running the model ---------------------------------------------------------------------------
def attention_modules(model):
    return [m for m in model.modules()
            if type(m).__name__.endswith("Attention") and any(isinstance(c, torch.nn.Linear) for c in m.modules())]


def install_hooks(model, feed):
    """Every Linear in an attention module returns feed() tiled to its width; norms there return
    their input."""
    handles = []

    def linear_hook(module, args, output):
        x = feed()  # (tokens, D)
        reps = -(-output.shape[-1] // x.shape[-1])
        tiled = x.repeat(1, reps)[:, :output.shape[-1]]
        return tiled.expand(output.shape).to(output.dtype).clone()

    def identity_hook(module, args, output):
        return args[0] if args and isinstance(args[0], torch.Tensor) and args[0].shape == output.shape else output

    for attn in attention_modules(model):
        for m in attn.modules():
            if isinstance(m, torch.nn.Linear):
                handles.append(m.register_forward_hook(linear_hook))
            elif "norm" in type(m).__name__.lower() and m is not attn:
                handles.append(m.register_forward_hook(identity_hook))
    return handles


# Query temperatures some attentions apply after RoPE, by the function's name in their modeling
# module: q only (not k) times a factor of the position, outside the rotation posenc's vectors
# describe (hf_config.cpp reports them). The harness makes the factor 1, as it does the norms.
QUERY_TEMPERATURES = {
    "get_llama_4_attn_scale": "its attention multiplies q after RoPE by 1 + beta * ln(1 + floor(position / "
                              "original_max_position_embeddings)) (get_llama_4_attn_scale, rope_parameters' "
                              "llama_4_scaling_beta): a query temperature posenc's vectors do not express, made 1 "
                              "for this run",
}


def neutralize_query_temperature(model):
    """Makes the query temperatures of QUERY_TEMPERATURES 1 in the modeling modules of the model's
    attention layers (for the whole process: every run of those modules is this harness's); their notes."""
    notes = []
    for attn in attention_modules(model):
        module = sys.modules[type(attn).__module__]
        for name, note in QUERY_TEMPERATURES.items():
            original = getattr(module, name, None)
            if original is None:
                continue
            if not getattr(original, "posenc_neutralized", False):
                def one(*args, _original=original, **kwargs):
                    return torch.ones_like(_original(*args, **kwargs))
                one.posenc_neutralized = True
                setattr(module, name, one)
            if note not in notes:
                notes.append(note)
    return notes


class Runner:
    """A model type's text model in binary64, run over tokens (x, position)."""

    def __init__(self, config):
        self.config = config
        self.text = text_config_of(config)
        cls = model_class(self.text, config.model_type)
        with binary64():
            torch.manual_seed(0)
            self.text._attn_implementation = "posenc_capture"
            # Sized on the meta device first: a config whose other sizes TINY does not reach
            # (byte-level hash embeddings, vision towers) is not built at all.
            try:
                with torch.device("meta"):
                    count = sum(p.numel() for p in cls._from_config(self.text).parameters())
            except Exception:
                count = 0
            if count > MAX_PARAMETERS:
                raise NotRun(f"{cls.__name__}: {count:,} parameters after shrinking its config (more than "
                             f"{MAX_PARAMETERS:,}): sizes this harness does not know to shrink")
            try:
                self.model = cls._from_config(self.text, attn_implementation="posenc_capture")
            except Exception as e:
                raise NotRun(f"{cls.__name__} not built from the tiny config: {type(e).__name__}: {str(e)[:200]}")
            self.model = self.model.to(torch.float64).eval()
        if not attention_modules(self.model):
            raise NotRun(f"{cls.__name__}: no attention module with projections")
        self.x = None
        install_hooks(self.model, lambda: self.x)
        self.hidden = getattr(self.text, "hidden_size", None)
        self.harness_notes = neutralize_query_temperature(self.model)

    def run(self, x, positions):
        """Each attention layer's rotated q of head 0, (tokens, width), for q = x[t] at positions[t]
        (a list of ints, or of per-axis lists for M-RoPE)."""
        self.x = x
        n = x.shape[0]
        pos = torch.tensor(positions, dtype=torch.int64)
        pos = pos.T[:, None, :] if pos.dim() == 2 else pos[None, :]
        Capture.calls = []
        with binary64(), torch.no_grad():
            embeds = torch.zeros(1, n, self.hidden or 1, dtype=torch.float64)
            try:
                self.model(inputs_embeds=embeds, position_ids=pos, use_cache=False)
            except Exception as e:
                if not Capture.calls:
                    raise NotRun(f"forward failed: {type(e).__name__}: {str(e)[:200]}")
        if not Capture.calls:
            raise NotRun("its attention does not call transformers' attention function (AttentionInterface), "
                         "where the rotated q is read")
        return [q[0, 0].clone() for q, _ in Capture.calls]


def layer_scope(text, rotating):
    """The layers posenc's vectors describe (posenc reads the full-attention layers' RoPE): the
    full-attention ones when the config's layer_types has rotating ones, else every layer."""
    kinds = getattr(text, "layer_types", None)
    if isinstance(kinds, list):
        full = [i for i in rotating if i < len(kinds) and kinds[i] == "full_attention"]
        if full:
            return set(i for i in range(len(kinds)) if kinds[i] == "full_attention"), kinds
    return None, kinds


def probe_layout(runner, head_dim, rope_part):
    """(layout, rotated span, backward) measured at position 1 with q = e_j: the element e_0 is
    paired with, and the direction: posenc's rotation (SPEC.md 2.3) moves e_0 to +m sin t in its
    partner, the backward one (`inverse`, NanoChat's flipped rotate_half) to -m sin t."""
    eye = torch.eye(head_dim, dtype=torch.float64)
    outs = runner.run(eye, [1] * head_dim)
    layouts = []
    for q in outs:
        q = q[:, rope_part(q.shape[-1])]
        moved = [j for j in range(head_dim) if not torch.equal(q[j], eye[j])]
        if not moved:
            layouts.append(("none", 0, False))
            continue
        span = max(moved) + 1
        partner = int(torch.argmax(torch.abs(q[0, 1:]))) + 1
        layouts.append(("interleaved" if partner == 1 else "half" if partner == span // 2 else f"pairs (0, {partner})",
                        span, bool(q[0, partner] < 0)))
    return layouts


def rope_slice(text, d):
    """The q elements posenc's head describes: the RoPE part (DeepSeek's MLA: its last
    qk_rope_head_dim), else the whole head."""
    def part(width):
        return slice(width - d, width) if width != d and getattr(text, "qk_rope_head_dim", None) == d else slice(0, width)
    return part


def verify_config(config, cli, label):
    """One config: posenc's cases for its config.json judged on every layer's rotation.
    Returns a dict with the per-layer outcome."""
    runner = Runner(config)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "config.json")
        with open(path, "w") as f:
            f.write(config.to_json_string(use_diff=True))
        try:
            session = posenc.Session(profile="standard", formats=["f64"], cli=cli, hf_config=path)
        except posenc.PosencError as e:
            # The CLI's error line, not its notes before it.
            lines = [l for l in str(e).split("\n") if l.strip() and "posenc: note:" not in l]
            why = re.sub(r"^.*ended \(status \d+\): ", "", lines[-1] if lines else str(e))
            return {"config": label, "posenc_error": why[:300]}
        notes = session_notes(cli, path)
        with session:
            cases = [c for c in session.cases(valid=True) if c.type == "rope_rotate"]
            if not cases:
                return {"config": label, "posenc_error": "no rope_rotate cases"}
            d = cases[0].params["head_dim"]
            part = rope_slice(runner.text, d)
            layouts = probe_layout(runner, d, part)
            layers = {}
            groups = {}
            for c in cases:
                groups.setdefault(c.group, []).append(c)
            for group in groups.values():
                seq_len = group[0].params.get("scaling", {}).get("seq_len")
                xs = [c.x("f64", torch=True).to(torch.float64) for c in group]
                # One int per token, or one per axis (M-RoPE): position_ids (batch, tokens) or (axes, batch, tokens).
                pos = [[int(a) for a in c.raw["position"]] for c in group]
                pos = [p[0] if len(p) == 1 else p for p in pos]
                if seq_len is not None:
                    top = int(seq_len) - 1
                    xs.append(torch.zeros(d, dtype=torch.float64))
                    pos.append([top] * len(pos[0]) if isinstance(pos[0], list) else top)
                outs = runner.run(torch.stack(xs), pos)
                judged = {}  # layers with the same q share one judgement
                for i, q in enumerate(outs):
                    q = q[:, part(q.shape[-1])]
                    entry = layers.setdefault(i, {"pass": 0, "fail": 0, "worst": 0.0, "unrotated": True, "first": None})
                    if not torch.equal(q[:len(group)], torch.stack(xs)[:len(group)]):
                        entry["unrotated"] = False
                    key = q[:len(group)].numpy().tobytes()
                    if key not in judged:
                        judged[key] = session.judge_file(group[0].file, "f64",
                                                         [(c, q[k].numpy()) for k, c in enumerate(group)])
                    verdicts = judged[key]
                    for v in verdicts:
                        entry["pass" if v.passed else "fail"] += 1
                        if v.margin is not None:
                            entry["worst"] = max(entry["worst"], v.margin)
                        if not v.passed and entry["first"] is None:
                            entry["first"] = v.describe().splitlines()[0] + (f" at {v.inputs}" if v.inputs else "")
    scope, kinds = layer_scope(runner.text, [i for i, e in layers.items() if not e["unrotated"]])
    scope = set(layers) if scope is None else scope & set(layers)
    result = {"config": label, "layers": {}, "notes": notes, "params": cases[0].params, "harness": runner.harness_notes}
    for i, e in layers.items():
        kind = "no rotation" if e["unrotated"] else "agrees" if e["fail"] == 0 else "differs"
        result["layers"][i] = {"kind": kind, "type": kinds[i] if isinstance(kinds, list) and i < len(kinds) else None,
                               "in_scope": i in scope, "pass": e["pass"], "fail": e["fail"], "worst": e["worst"],
                               "first": e["first"], "layout": layouts[i] if i < len(layouts) else None}
    rotating = [i for i in scope if result["layers"][i]["kind"] != "no rotation"]
    result["agrees"] = bool(rotating) and all(result["layers"][i]["kind"] == "agrees" for i in rotating)
    result["rotating"] = bool(rotating)
    return result


def session_notes(cli, path):
    """posenc's notes on a config (what `posenc eval --hf-config` prints on stderr)."""
    import subprocess
    run = subprocess.run([cli, "generate", "--hf-config", path, "--out", os.path.join(os.path.dirname(path), "v")],
                         capture_output=True, text=True)
    return [line.split(": ", 2)[-1] for line in run.stderr.splitlines() if line.startswith("posenc: note:")]


def verify_type(model_type, cli, variants=None, skip_composites=False):
    """verify_type_configs, with what fails outside a config's run recorded as not run."""
    try:
        return verify_type_configs(model_type, cli, variants, skip_composites)
    except Exception as e:
        return {"model_type": model_type, "configs": [], "not_run": f"{type(e).__name__}: {str(e)[:200]}"}


def verify_type_configs(model_type, cli, variants=None, skip_composites=False):
    """Every config of one model type: its defaults, then each rope_type its config can hold
    (variants: those rope types; None: all). skip_composites: a model type whose language model is
    another model type (its text_config's) is recorded, not run again."""
    out = {"model_type": model_type, "configs": []}
    try:
        with binary64():
            base = CONFIG_MAPPING[model_type]()
    except Exception as e:
        out["not_run"] = f"config class {CONFIG_MAPPING[model_type].__name__}() fails: {type(e).__name__}: {str(e)[:160]}"
        return out
    text = text_config_of(base)
    out["text_model_type"] = text.model_type
    if skip_composites and text.model_type != model_type and text.model_type in CONFIG_MAPPING:
        return out
    out["default_theta"] = getattr(type(text), "default_theta", None)
    rp = rope_dict(text)
    out["rope_parameters"] = dict(rp) if rp else None
    out["attribute_map"] = dict(getattr(type(text), "attribute_map", {}) or {})
    wanted = list(ROPE_TYPES) if variants is None else variants
    labels = [None] + ([w for w in wanted if w != "mrope"] if rp is not None and "mrope_section" not in rp else [])
    if rp is not None and "mrope_section" not in rp and "mrope_section" in modeling_source(model_type) and \
            (variants is None or "mrope" in variants):
        labels.append("mrope")  # its attention reads M-RoPE sections when the config has them
    # The head width of the defaults, for a model whose code assumes it (M-RoPE's default sections).
    default_width = None
    if getattr(text, "num_attention_heads", None) and getattr(text, "hidden_size", None):
        default_width = text.hidden_size // text.num_attention_heads
    for rope_type in labels:
        label = rope_type or "defaults"
        try:
            first = out["configs"][0] if out["configs"] else None
            if first is not None and not first.get("rotating"):
                break  # the defaults did not run, or did not rotate: no rope_type would
            try:
                config = tiny(base, rope_type, 128 if rope_type == "mrope" else HEAD_DIM)
                out["configs"].append(verify_config(config, cli, label))
            except NotRun:
                if not default_width or default_width > 256 or default_width == HEAD_DIM:
                    raise
                config = tiny(base, rope_type, default_width)
                out["configs"].append(verify_config(config, cli, label))
        except NotRun as e:
            out["configs"].append({"config": label, "not_run": str(e)})
        except Exception as e:
            out["configs"].append({"config": label, "not_run": f"{type(e).__name__}: {str(e)[:200]}",
                                   "trace": traceback.format_exc()[-600:]})
    return out


# --- the registry and its documentation, from the results ----------------------------------------
# Model types that are not language models by their name: vision, audio and video towers,
# image tokenizers, speech models (out of scope: posenc's --hf-config is the text model's RoPE).
NOT_TEXT = re.compile(r"vision|audio|video|vq|image|speech|asr|tts|bigvgan|token2wav|_dit$|codec|mimi|sam\d|"
                      r"sam_|dinov|lightglue|loftr|pixtral|vjepa|patcher|perciever|mlcd|sapiens|doclayout|eomt|"
                      r"efficientloftr|parakeet|moonshine|transcribe|diarization|xcodec|timesfm|esm")


# Differences traced to the model's own code (what it computes that posenc's reading of its config
# does not), written beside the run's evidence in its row; the run still decides the outcome.
TRACED = {
    "deepseek_v4": "traced in modeling_deepseek_v4.py: apply_rotary_pos_emb rotates the last "
                   "int(head_dim * partial_rotary_factor) elements of the head ([nope | rope], interleaved pairs), "
                   "and the layers other than sliding_attention take the 'compress' RoPE (compress_rope_theta); "
                   "posenc reads the config as a Llama-style head with the top-level rope_theta",
}


def outcome(r):
    """(state, why) of one model type's results: verified, differs, no rotation, ALiBi, not a text
    model, refused by posenc, not run."""
    state, why = outcome_of_runs(r)
    if state == "differs" and r["model_type"] in TRACED:
        why = f"{TRACED[r['model_type']]}; the run: {why}"
    if state != "verified" and NOT_TEXT.search(r["model_type"]):
        return "not a text model", f"the name says so (a vision, audio or other tower); the run: {state}" + \
            (f": {why}" if why else "")
    if state != "verified" and re.search(r"alibi", modeling_source(r["model_type"]), re.IGNORECASE):
        return "ALiBi", ("its attention adds ALiBi biases (`--hf-config` reads RoPE; posenc's alibi/*.json vectors "
                         f"judge slopes and biases given explicitly); the run: {state}" + (f": {why}" if why else ""))
    return state, why


def outcome_of_runs(r):
    if "not_run" in r:
        return "not run", r["not_run"]
    configs = r["configs"]
    defaults = configs[0] if configs else {}
    if "not_run" in defaults:
        return "not run", defaults["not_run"]
    if "posenc_error" in defaults:
        return "refused by posenc", defaults["posenc_error"]
    if not defaults.get("rotating"):
        return "no rotation", "q leaves every attention layer of its defaults unrotated"
    bad = [c for c in configs if not c.get("agrees")]
    if not bad:
        return "verified", ""
    # A failure at position 0, where every rotation is the identity (times the attention factor):
    # q was not x when it was rotated, so its attention does something to q between the projection
    # and the rotation that this harness does not undo (a scale, a mixing); nothing was judged.
    for c in bad:
        for layer in c.get("layers", {}).values():
            if layer["in_scope"] and layer["kind"] == "differs" and re.search(r"at position=(\[0(, 0)*\]|0)$",
                                                                               layer["first"] or ""):
                return "not run", ("q at position 0 is not the input: its attention changes q between the "
                                   "projection and the rotation (the harness neutralizes projections and norms "
                                   f"only); {c['config']}: {layer['first']}")
    why = []
    for c in bad:
        if "not_run" in c:
            why.append(f"{c['config']}: not run ({c['not_run']})")
        elif "posenc_error" in c:
            why.append(f"{c['config']}: posenc refuses it ({c['posenc_error']})")
        else:
            first = next((l for l in c["layers"].values() if l["in_scope"] and l["kind"] == "differs"), None)
            why.append(f"{c['config']}: " + (first["first"] if first else "no RoPE layer in scope"))
    return "differs", "; ".join(why)


def measured_layout(r):
    """The layout and span the probe found on the first rotating layer in scope of the defaults."""
    c = r["configs"][0] if r.get("configs") else {}
    for layer in c.get("layers", {}).values():
        if layer["in_scope"] and layer["kind"] != "no rotation" and layer["layout"]:
            return layer["layout"]
    return None


def layer_kinds(c):
    """Layer kinds other than posenc's RoPE layers, in words (by layer type where the config has
    layer_types; the tiny config's layer counts, not a real model's)."""
    kinds, total = {}, len(c.get("layers", {}))
    for layer in c.get("layers", {}).values():
        if layer["in_scope"] and layer["kind"] != "no rotation":
            continue
        where = f"{layer['type']} layers" if layer["type"] else "some layers"
        what = "apply no RoPE (q unrotated)" if layer["kind"] == "no rotation" else \
            "rotate with posenc's vectors" if layer["kind"] == "agrees" else "rotate otherwise (not in posenc's vectors)"
        kinds[(where, what)] = kinds.get((where, what), 0) + 1
    return "; ".join(f"{where} ({n} of {total} in the tiny config) {what}" for (where, what), n in kinds.items())


def full_attention_value(v):
    """A per-layer-type class default ({"full_attention": ..., "sliding_attention": ...}, or Gemma's
    {"global": ..., "local": ...}): the full-attention layers' value, as posenc reads them."""
    if isinstance(v, dict):
        for key in ("full_attention", "global"):
            if key in v:
                return v[key]
        return None
    return v


# The config keys posenc's reader looks up (models/src/hf_config.cpp): their attribute_map aliases
# go into the registry.
READ_KEYS = {"hidden_size", "num_attention_heads", "head_dim", "max_position_embeddings", "rope_theta",
             "partial_rotary_factor", "rotary_dim", "rotary_pct", "rotary_emb_base", "n_positions", "n_embd", "n_head",
             "rope_scaling", "rope_parameters", "qk_rope_head_dim", "num_hidden_layers", "original_max_position_embeddings"}


def c_string(text):
    return json.dumps(text, ensure_ascii=True)


def entries(results):
    """{text model type: entry dict} for the registry."""
    out = {}
    run = {r["model_type"] for r in results if r.get("configs")}
    for r in results:
        text_type = r.get("text_model_type") or r["model_type"]
        if text_type != r["model_type"] and text_type in run:
            continue  # its language model is verified as its own model type
        if text_type != r["model_type"] and not r.get("configs") and "not_run" not in r:
            r = dict(r, not_run=f"its language model, {text_type}, has no rotary code of its own to run")
        state, why = outcome(r)
        layout = measured_layout(r)
        params = r["configs"][0].get("params", {}) if r.get("configs") else {}
        extra = layer_kinds(r["configs"][0]) if r.get("configs") else ""
        note = why if state != "verified" else extra
        harness = "; ".join(r["configs"][0].get("harness", [])) if r.get("configs") else ""
        if harness:
            note = f"{note}; {harness}" if note else harness
        if state == "no rotation":
            note = "its attention leaves q unrotated (no RoPE)" + (f"; {extra}" if extra else "")
        rp = r.get("rope_parameters") or {}
        out[text_type] = {
            "state": state, "note": note, "layout": layout[0] if layout else None,
            "span": layout[1] if layout else None, "backward": bool(layout and len(layout) > 2 and layout[2]),
            "params": params,
            "default_theta": full_attention_value(r.get("default_theta")) or 10000.0,
            "default_partial": rp.get("partial_rotary_factor", 1.0),
            "attribute_map": r.get("attribute_map", {}),
            "scalings": [c["config"] + (f" ({c['params']['scaling']['kind']})" if c["config"] == "defaults" and
                                    c.get("params", {}).get("scaling", {}).get("kind", "none") != "none" else "")
                     for c in r.get("configs", []) if c.get("agrees")],
            "composites": [],
        }
    for r in results:
        text_type = r.get("text_model_type") or r["model_type"]
        if text_type != r["model_type"] and text_type in out and text_type in run:
            out[text_type]["composites"].append(r["model_type"])
    return out


def write_registry(path, table):
    lines = [f"// Generated by models/verify/verify_model_types.py from transformers {VERSION} (`make verify-models`);",
             "// do not edit. One entry per text model type, sorted: model_type, layout, backward, verified,",
             "// default_theta, default_partial_rotary_factor, attribute_map, note (model_types.hpp).",
             f'#define POSENC_MODEL_TYPES_VERIFIED_WITH "transformers {VERSION}"']
    for mt in sorted(table):
        e = table[mt]
        if e["layout"] not in ("half", "interleaved"):
            layout, note = "half", e["note"] or f"measured pairing {e['layout']}"
        else:
            layout, note = e["layout"], e["note"]
        aliases = ";".join(f"{k}={v}" for k, v in sorted(e["attribute_map"].items()) if k in READ_KEYS or v in READ_KEYS)
        lines.append(f"{{{c_string(mt)}, RopeLayout::{layout}, {'true' if e['backward'] else 'false'}, "
                     f"{'true' if e['state'] == 'verified' else 'false'}, "
                     f"{float(e['default_theta'])!r}, {float(e['default_partial'])!r}, {c_string(aliases)}, "
                     f"{c_string(note)}}},")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def write_docs(path, table, variants):
    counts = {}
    for e in table.values():
        counts[e["state"]] = counts.get(e["state"], 0) + 1
    lines = [
        "# Model types verified against transformers",
        "",
        f"Generated by `models/verify/verify_model_types.py` (`make verify-models`) with transformers {VERSION}; do not",
        "edit. Each model type whose modeling code has rotary or ALiBi code is built from its config class's defaults",
        "with small sizes" + (", plus one config per rope_type (`linear`, `dynamic`, `yarn`, `llama3`, `longrope`; M-RoPE "
                              "sections where its attention reads them) where its config holds `rope_parameters`"
                              if variants else " (this run: the defaults only, `--no-variants`; CTest "
                              "`peers_model_types` runs the rope_types on a sample on every commit)") + ";",
        "its text model runs posenc's inputs through its own rotary module and attention",
        "(in binary64), and posenc judges every layer's rotated q against the vectors `posenc serve --hf-config` makes",
        "from the config.json `save_pretrained` would write (standard profile, f64). *verified*: every config agrees",
        "on every RoPE layer posenc's vectors describe (the full-attention layers where the config has `layer_types`).",
        "The layout and the direction (*backward*: rotation by -t, posenc's `inverse`) are measured (a probe at position",
        "1 with unit vectors), and `--hf-config` reads them from this table",
        "(`models/src/model_types.inc`, generated with this page). A model type not listed here is read as a",
        "Llama-style model with a note saying it is not verified.",
        "",
        "Outcomes: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) + f" ({len(table)} text model types).",
        "",
        "| model type | outcome | layout | rotated span / head | scalings agreeing | other positional features, or why not |",
        "|---|---|---|---|---|---|",
    ]
    for mt in sorted(table):
        e = table[mt]
        p = e["params"]
        span = f"{p.get('rotary_dim')} / {p.get('head_dim')}" if p else ""
        if p.get("partial") == "proportional":
            span += " (proportional)"
        name = f"`{mt}`" + (f" (also {', '.join(f'`{c}`' for c in sorted(e['composites']))})" if e["composites"] else "")
        note = e["note"].replace("|", "\\|")
        layout = (e["layout"] or "") + (", backward" if e["backward"] else "")
        lines.append(f"| {name} | {e['state']} | {layout} | {span} | {', '.join(e['scalings'])} | {note} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def read_registry(path):
    """{model_type: (layout, backward, verified)} of a registry file."""
    out = {}
    with open(path) as f:
        for line in f:
            m = re.match(r'\{"([^"]+)", RopeLayout::(\w+), (true|false), (true|false),', line)
            if m:
                out[m.group(1)] = (m.group(2), m.group(3) == "true", m.group(4) == "true")
    return out


def check(results, registry_path):
    """Problems where this run and the registry (what posenc reads) disagree."""
    registry = read_registry(registry_path)
    problems = []
    for mt, e in entries(results).items():
        if mt not in registry:
            problems.append(f"{mt}: not in {registry_path}")
            continue
        layout, backward, verified = registry[mt]
        if e["layout"] in ("half", "interleaved") and e["layout"] != layout:
            problems.append(f"{mt}: measured layout {e['layout']}, the registry says {layout}")
        if e["layout"] in ("half", "interleaved") and e["backward"] != backward:
            problems.append(f"{mt}: measured {'backward' if e['backward'] else 'forward'} rotation, the registry says "
                            f"{'backward' if backward else 'forward'}")
        if verified and e["state"] != "verified":
            problems.append(f"{mt}: the registry says verified, this run: {e['state']}: {e['note']}")
        if not verified and e["state"] == "verified":
            problems.append(f"{mt}: verified by this run, the registry says not ({registry_path} is stale)")
    return problems


def parse_types(spec):
    """"llama:all,cohere,phi3:longrope" -> [(model type, [rope types] or None for the defaults only)]."""
    out = []
    for item in spec.split(","):
        mt, _, variants = item.partition(":")
        out.append((mt, list(ROPE_TYPES) if variants == "all" else variants.split("+") if variants else []))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", required=True, help="the posenc CLI")
    ap.add_argument("--types", help="comma-separated model types (default: every candidate)")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--no-variants", action="store_true", help="only each config class's defaults")
    ap.add_argument("--registry", help="write the registry (models/src/model_types.inc) here")
    ap.add_argument("--skip-composites", action="store_true",
                    help="with --types: record a model type whose language model is another one, as the full run does")
    ap.add_argument("--resume", action="store_true", help="keep the model types --json already has")
    ap.add_argument("--shard", metavar="K/N", help="run every Nth model type from the Kth (several processes)")
    ap.add_argument("--results", metavar="JSON,...", help="no run: the registry and docs of earlier runs' --json")
    ap.add_argument("--check", metavar="REGISTRY", help="fail where this run and REGISTRY (what posenc reads) differ")
    ap.add_argument("--docs", help="write the table (docs/models.md) here")
    args = ap.parse_args()
    types = parse_types(args.types) if args.types else [(mt, None if not args.no_variants else []) for mt in candidates()]
    if args.shard:
        k, n = (int(v) for v in args.shard.split("/"))
        types = types[k::n]
    results = []
    for path in (args.results.split(",") if args.results else []):
        with open(path) as f:
            results += json.load(f)
    if args.results:
        types = []  # the results given are the run
    if args.resume and args.json and os.path.exists(args.json):
        with open(args.json) as f:
            results = json.load(f)  # an interrupted run's model types are kept, the rest run
        done = {r["model_type"] for r in results}
        types = [t for t in types if t[0] not in done]
    started = time.time()
    for mt, variants in types:
        t0 = time.time()
        r = verify_type(mt, args.cli, variants, skip_composites=not args.types or args.skip_composites)
        results.append(r)
        if not r["configs"] and "not_run" not in r:
            print(f"{mt:28} language model: {r['text_model_type']}", flush=True)
        if "not_run" in r:
            print(f"{mt:28} not run: {r['not_run']}", flush=True)
        for c in r["configs"]:
            state = ("not run: " + c["not_run"]) if "not_run" in c else ("posenc: " + c["posenc_error"]) \
                if "posenc_error" in c else ("agrees" if c["agrees"] else "DIFFERS" if c["rotating"] else "no rotation")
            print(f"{mt:28} {c['config']:9} {state}  ({time.time() - t0:.1f} s)", flush=True)
        if args.json:  # after every model type, so that a long run's results so far are kept
            with open(args.json, "w") as f:
                json.dump(results, f, indent=1, default=str)
    table = entries(results)
    print(f"{len(table)} text model types in {time.time() - started:.0f} s: " +
          ", ".join(f"{sum(e['state'] == k for e in table.values())} {k}" for k in sorted({e['state'] for e in table.values()})))
    problems = check(results, args.check) if args.check else []
    for p in problems:
        print(f"verify_model_types: {p}", file=sys.stderr)
    if args.registry:
        write_registry(args.registry, table)
    if args.docs:
        write_docs(args.docs, table, any(len(r.get("configs", [])) > 1 for r in results))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
