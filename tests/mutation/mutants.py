#!/usr/bin/python3
"""The mutants of posenc's formulas: a seedless, deterministic enumeration of single-token source
edits in the definitions of every family (docs/mutation.md).

  mutants.py list [--json]              every mutant: id, file, line, the line before and after
  mutants.py write ID OUT_DIR           OUT_DIR/<the file's path> = the file with mutant ID applied
  mutants.py cmake [ID...] > FILE       posenc_mutant(ID PATH UNITS...) per mutant (all when none
                                        named), for tests/mutation/CMakeLists.txt

Run with Debian's /usr/bin/python3: standard library only. Each mutant changes one site of one
file, by one operator:
  + <-> -, * <-> /, += <-> -=, *= <-> /= (binary operators, written with spaces around them)
  < <-> <=, > <-> >=, == <-> !=, && <-> ||
  unary minus dropped, ! dropped
  an integer or floating constant c -> c + 1, c - 1, 2c
  an if or ternary condition negated, forced true, forced false; true <-> false
  floor <-> ceil, bit_floor <-> bit_ceil, min <-> max, sin <-> cos, sin_index <-> cos_index,
  pair_first <-> pair_second; a floor, ceil, min or max call replaced by its first argument
  (the rounding or clamp dropped)
  the two arguments of pow, less or pow2_rational swapped
The sites are the bodies of the functions each target names (TARGETS). Binary operators and
comparisons are recognized by the spaces around them (the project's style writes a < b with
spaces and template brackets, std::vector<N>, without), so template arguments, pointers and
references are never sites. Not sites: loop increments (++i to --i never ends), capacity hints
(reserve), and the statements that form only a certified error bound or track exactness, which
the reference needs and an implementation does not (BOUND_ONLY below): a mutant there cannot
change a value.
"""
import json
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

# (path, short name, functions whose bodies are sites: None for every function in the file,
# {function: comment text after which its body is no longer a site}).
TARGETS = [
    ("spec/include/posenc/formulas/rope_frequencies.hpp", "formulas.rope_frequencies", None, {}),
    ("spec/include/posenc/formulas/sinusoidal_frequency.hpp", "formulas.sinusoidal_frequency", None, {}),
    ("spec/include/posenc/formulas/attention_scale.hpp", "formulas.attention_scale", None, {}),
    ("spec/include/posenc/params/sinusoidal.hpp", "params.sinusoidal",
     ["frequency_exponent", "sin_index", "cos_index"], {}),
    ("spec/include/posenc/params/rope.hpp", "params.rope", ["pair_count", "rotated_span"], {}),
    ("spec/src/rope_params.cpp", "spec.rope_params", ["pair_first", "pair_second", "pair_axis"], {}),
    ("spec/src/alibi_params.cpp", "spec.alibi_params", ["alibi_slope_exponent"], {}),
    ("spec/src/learned_params.cpp", "spec.learned_params", ["validate_learned_position"], {}),
    ("spec/include/posenc/params/attention.hpp", "params.attention", ["group_size", "kv_head"], {}),
    ("spec/src/attention_params.cpp", "spec.attention_params", ["attention_visible"], {}),
    ("reference/include/posenc/reference/sinusoidal.hpp", "reference.sinusoidal", None, {}),
    ("reference/include/posenc/reference/rope.hpp", "reference.rope", None, {}),
    ("reference/include/posenc/reference/alibi.hpp", "reference.alibi", None, {}),
    ("reference/include/posenc/reference/learned.hpp", "reference.learned", None, {}),
    ("reference/include/posenc/reference/attention.hpp", "reference.attention",
     ["bounded_dot", "attention_rotate", "attention_context", "attention_row"],
     {"attention_row": "The bound's ingredients"}),
]

# Identifiers of the statements that form only an error bound or track exactness (attention.hpp's
# BoundedVector sums): the value is `sum`, `numerator`, `out`, the rest certifies it.
BOUND_ONLY = {"propagated", "magnitudes", "magnitude", "error", "rounding", "bound", "doubles", "kDigits",
              "bottom", "terms", "reserve"}
# Conditions whose whole branch only keeps an exact result exact: bounded_dot's exact sum, which
# needs sums of products at 106 bits or more (exact_sum_of_products asks 106 <= digits); at long
# double's 64 it is never taken, and an implementation has no such branch.
EXACT_ONLY = {"exact_sum_of_products"}
# Conditions whose branch is a second path for the same values: attention_row's exact weights
# (`doubles` set: every weight exact, as when every logit of a row is exactly 0), which sums
# column by column so that an exact output stays exact. Long double code takes it too (q = 0
# rows, ExactTie), so its sites are mutants, named FUNCTION_tied_weights so that the ids of
# the function's other sites do not depend on them.
TIED_WEIGHTS = {"doubles"}

TOKEN = re.compile(r"""
   (?P<comment>//[^\n]*|/\*.*?\*/)
  |(?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  |(?P<number>(?:0[xX][0-9a-fA-F.]+(?:[pP][+-]?\d+)?|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)[uUlLfF]*)
  |(?P<ident>[A-Za-z_]\w*)
  |(?P<op><<=|>>=|\.\.\.|::|->|\+\+|--|<=>|<=|>=|==|!=|&&|\|\||\+=|-=|\*=|/=|%=|&=|\|=|\^=|<<|>>
        |[-+*/%<>=!~&|^?:;,.(){}\[\]\#])
  |(?P<space>\s+)
""", re.X | re.S)

BINARY = {"+": ("-", "plus_to_minus"), "-": ("+", "minus_to_plus"), "*": ("/", "times_to_div"),
          "/": ("*", "div_to_times"), "+=": ("-=", "plus_to_minus"), "-=": ("+=", "minus_to_plus"),
          "*=": ("/=", "times_to_div"), "/=": ("*=", "div_to_times"),
          "<": ("<=", "lt_to_le"), "<=": ("<", "le_to_lt"), ">": (">=", "gt_to_ge"), ">=": (">", "ge_to_gt"),
          "==": ("!=", "eq_to_ne"), "!=": ("==", "ne_to_eq"), "&&": ("||", "and_to_or"), "||": ("&&", "or_to_and")}
SWAPS = {"floor": "ceil", "ceil": "floor", "bit_floor": "bit_ceil", "bit_ceil": "bit_floor", "min": "max",
         "max": "min", "sin": "cos", "cos": "sin", "sin_index": "cos_index", "cos_index": "sin_index",
         "pair_first": "pair_second", "pair_second": "pair_first"}
DROPPED = {"floor", "ceil", "min", "max"}
ARGS_SWAPPED = {"pow", "less", "pow2_rational"}
KEYWORDS = {"return", "if", "else", "for", "while", "switch", "case", "const", "auto", "static_cast", "throw"}


class Token:
    def __init__(self, kind, text, start, line):
        self.kind, self.text, self.start, self.line = kind, text, start, line
        self.end = start + len(text)


def tokenize(text):
    """Code tokens (comments kept for the end markers; preprocessor lines dropped)."""
    out, pos, line = [], 0, 1
    line_start_code = True  # nothing but spaces since the line began
    skip_line = False
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            raise SystemExit(f"mutants.py: cannot tokenize at line {line}: {text[pos:pos + 20]!r}")
        kind = m.lastgroup
        tok = m.group(kind)
        if kind == "op" and tok == "#" and line_start_code:
            skip_line = True
        if kind == "space":
            if "\n" in tok:
                skip_line = False
                line_start_code = True
        else:
            if not skip_line:
                out.append(Token(kind, tok, pos, line))
            line_start_code = False
        line += tok.count("\n")
        pos = m.end()
    return out


def matching(tokens, i, open_, close):
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j].text == open_:
            depth += 1
        elif tokens[j].text == close:
            depth -= 1
            if depth == 0:
                return j
    raise SystemExit(f"mutants.py: no matching {close} for line {tokens[i].line}")


def functions(tokens):
    """(name, first body token index, closing brace index) of every function definition."""
    code = [k for k, t in enumerate(tokens) if t.kind != "comment"]
    out = []
    n = 0
    while n < len(code):
        k = code[n]
        t = tokens[k]
        if t.text == "{":
            # A function body: `name ( ... ) [const] [override] {`, not a lambda's (`]` before the `(`).
            m = n - 1
            while m >= 0 and tokens[code[m]].text in ("const", "override", "noexcept", "final"):
                m -= 1
            if m >= 0 and tokens[code[m]].text == ")":
                depth, p = 0, m
                while p >= 0:
                    txt = tokens[code[p]].text
                    depth += txt == ")"
                    depth -= txt == "("
                    if depth == 0:
                        break
                    p -= 1
                name = tokens[code[p - 1]] if p >= 1 else None
                if name is not None and name.kind == "ident" and name.text not in KEYWORDS:
                    end = matching(tokens, k, "{", "}")
                    out.append((name.text, k + 1, end))
                    n = code.index(end) + 1
                    continue
        n += 1
    return out


def statement_bounds(tokens, lo, hi):
    """For each token index in [lo, hi): the (start, end) token range of its statement: split at
    ; { } and at commas outside parentheses, brackets and braces."""
    bounds = {}
    start = lo
    depth = 0
    for k in range(lo, hi + 1):
        t = tokens[k].text if k < hi else ";"
        if t in "([":
            depth += 1
        elif t in ")]":
            depth -= 1
        if t in (";", "{", "}") or (t == "," and depth == 0):
            for j in range(start, k):
                bounds[j] = (start, k)
            start = k + 1
            if t in ("{", "}"):
                depth = 0
    return bounds


def spaced(text, tok):
    return tok.start > 0 and text[tok.start - 1] == " " and tok.end < len(text) and text[tok.end] == " "


def condition_of_ternary(tokens, q, lo):
    """Token range of the condition before the ternary `?` at index q."""
    depth = 0
    k = q - 1
    while k >= lo:
        t = tokens[k].text
        if t in ")]":
            depth += 1
        elif t in "([":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and (t in ("=", ",", "{", ";", ":", "return") or tokens[k].kind == "comment"):
            break
        k -= 1
    return k + 1, q


def top_level_ops(tokens, s, e):
    """The binary operators of tokens[s:e] outside parentheses."""
    depth, ops = 0, set()
    for j in range(s, e):
        t = tokens[j].text
        if t in "([":
            depth += 1
        elif t in ")]":
            depth -= 1
        elif depth == 0 and tokens[j].kind == "op" and t in set(BINARY) | {"?"}:
            ops.add(t)
    return ops


def call_extent(tokens, k):
    """For an identifier at k followed by `(`: (first token of the qualified name, the `(`, its `)`,
    the top-level commas inside)."""
    first = k
    while first >= 2 and tokens[first - 1].text == "::" and tokens[first - 2].kind == "ident":
        first -= 2
    open_ = k + 1
    close = matching(tokens, open_, "(", ")")
    commas, depth = [], 0
    for j in range(open_ + 1, close):
        t = tokens[j].text
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
        elif t == "," and depth == 0:
            commas.append(j)
    # A template argument list between the name and `(` is not expected at these call sites.
    return first, open_, close, commas


def shifted(c):
    """c + 1, c - 1 and 2c, without c itself or repeats (2 * 1 is 1 + 1), in that order."""
    values = []
    for v in (c + 1, c - 1, 2 * c):
        if v != c and v not in values:
            values.append(v)
    return values


def constant_variants(text):
    m = re.fullmatch(r"(\d+)([uUlL]*)", text)
    if m:
        c, suffix = int(m.group(1)), m.group(2)
        return [(f"{v}{suffix}" if v >= 0 else f"({v}{suffix})", f"const_{c}_to_{v}") for v in shifted(c)]
    m = re.fullmatch(r"(\d+\.\d*)([lLfF]?)", text)
    if m:
        c, suffix = float(m.group(1)), m.group(2)
        return [(f"{v!r}{suffix}" if v >= 0 else f"({v!r}{suffix})", f"const_{c:g}_to_{v:g}") for v in shifted(c)]
    return []


def mutants_of(path, short, wanted, stop_at):
    text = open(os.path.join(ROOT, path)).read()
    tokens = tokenize(text)
    found = []
    names_seen = {}
    for name, lo, hi in functions(tokens):
        names_seen[name] = names_seen.get(name, 0) + 1
        fname = name if names_seen[name] == 1 else f"{name}_{names_seen[name]}"
        if wanted is not None and name not in wanted:
            continue
        if name in stop_at:
            for k in range(lo, hi):
                if tokens[k].kind == "comment" and stop_at[name] in tokens[k].text:
                    hi = k
                    break
        excluded, tied = set(), set()
        for k in range(lo, hi):
            if tokens[k].text == "if" and tokens[k + 1].text == "(":
                close = matching(tokens, k + 1, "(", ")")
                end = matching(tokens, close + 1, "{", "}") if tokens[close + 1].text == "{" else close
                if any(tokens[j].text in EXACT_ONLY for j in range(k, close)):
                    excluded.update(range(k, end + 1))
                elif any(tokens[j].text in TIED_WEIGHTS for j in range(k, close)):
                    tied.update(range(k, end + 1))
        code = [k for k in range(lo, hi) if tokens[k].kind != "comment" and k not in excluded]
        stmt = statement_bounds(tokens, lo, hi)
        counters = {}
        edits = []  # (function name in the id, operator name, [(start, end, replacement)])
        site = [lo]  # the token whose mutants add() records

        def add(op, changes):
            edits.append((f"{fname}_tied_weights" if site[0] in tied else fname, op, changes))

        def branch(s, e):
            """Mutants of the condition tokens[s:e]: negated (unless a comparison flip or a dropped
            `!` already makes that mutant), forced true, forced false."""
            a, b = tokens[s].start, tokens[e - 1].end
            top = top_level_ops(tokens, s, e)
            flips = top & {"==", "!="} and not top & {"&&", "||", "?"}
            double_negation = tokens[s].text == "!" and not top_level_ops(tokens, s + 1, e)
            if not flips and not double_negation:
                add("cond_negated", [(a, a, "!("), (b, b, ")")])
            add("cond_true", [(a, b, "true")])
            add("cond_false", [(a, b, "false")])

        def bound_only(k):
            s, e = stmt.get(k, (k, k + 1))
            return any(tokens[j].text in BOUND_ONLY for j in range(s, e))

        for k in code:
            site[0] = k
            t = tokens[k]
            if bound_only(k):
                continue
            prev = tokens[k - 1] if k > lo else None
            nxt = tokens[k + 1] if k + 1 < hi else None
            if t.kind == "op" and t.text in BINARY and spaced(text, t):
                new, op = BINARY[t.text]
                add(op, [(t.start, t.end, new)])
            elif t.kind == "op" and t.text == "-" and not spaced(text, t) and prev is not None and (
                    prev.kind == "op" and prev.text not in (")", "]") or prev.text == "return"):
                add("neg_dropped", [(t.start, t.end, "")])
            elif t.kind == "op" and t.text == "!":
                add("not_dropped", [(t.start, t.end, "")])
            elif t.kind == "number":
                for new, op in constant_variants(t.text):
                    add(op, [(t.start, t.end, new)])
            elif t.kind == "ident" and t.text in ("true", "false"):
                add(f"{t.text}_to_{'false' if t.text == 'true' else 'true'}",
                    [(t.start, t.end, "false" if t.text == "true" else "true")])
            elif t.kind == "ident" and t.text == "if" and nxt is not None and nxt.text == "(":
                close = matching(tokens, k + 1, "(", ")")
                branch(k + 2, close)
            elif t.kind == "op" and t.text == "?":
                branch(*condition_of_ternary(tokens, k, lo))
            elif t.kind == "ident" and t.text == "case":
                colon = next(j for j in range(k, hi) if tokens[j].text == ":")
                add("case_dropped", [(t.start, tokens[colon].end, "")])
            if t.kind == "ident" and nxt is not None and nxt.text == "(" and (prev is None or prev.text != "."
                                                                            or t.text in ("sin_index", "cos_index",
                                                                                          "pair_first", "pair_second")):
                if t.text in SWAPS:
                    add(f"{t.text}_to_{SWAPS[t.text]}", [(t.start, t.end, SWAPS[t.text])])
                if t.text in DROPPED or t.text in ARGS_SWAPPED:
                    first, open_, close, commas = call_extent(tokens, k)
                    if t.text in DROPPED and commas or t.text in ("floor", "ceil") and not commas:
                        arg_end = tokens[commas[0] - 1].end if commas else tokens[close - 1].end
                        add(f"{t.text}_dropped",
                            [(tokens[first].start, tokens[open_ + 1].start, "("),
                             (arg_end, tokens[close].end, ")")])
                    if t.text in ARGS_SWAPPED and len(commas) == 1:
                        x = text[tokens[open_ + 1].start:tokens[commas[0] - 1].end]
                        y = text[tokens[commas[0] + 1].start:tokens[close - 1].end]
                        add("args_swapped", [(tokens[open_ + 1].start, tokens[close - 1].end, f"{y}, {x}")])
        for name, op, changes in edits:
            counters[name, op] = counters.get((name, op), 0) + 1
            mutant_id = f"{short}.{name}.{op}.{counters[name, op]}"
            line_no = text.count("\n", 0, changes[0][0]) + 1
            found.append({"id": mutant_id, "path": path, "function": name, "operator": op, "line": line_no,
                          "changes": changes})
    for m in found:
        m["before"], m["after"] = line_change(text, m["changes"])
    return found


def apply(text, changes):
    for start, end, new in sorted(changes, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def line_change(text, changes):
    lo = text.rfind("\n", 0, min(c[0] for c in changes)) + 1
    hi = text.find("\n", max(c[1] for c in changes))
    hi = len(text) if hi < 0 else hi
    shifted = [(s - lo, e - lo, n) for s, e, n in changes]
    before = text[lo:hi]
    return before.strip(), apply(before, shifted).strip()


def all_mutants():
    out = []
    for path, short, wanted, stop_at in TARGETS:
        out.extend(mutants_of(path, short, wanted, stop_at))
    ids = [m["id"] for m in out]
    if len(ids) != len(set(ids)):
        raise SystemExit("mutants.py: duplicate mutant ids")
    return out


# The translation units a mutant's implementation is built from (tests/mutation/CMakeLists.txt):
# the implementation's own (tests/mutation/implementation/) and the spec library's sources. A
# mutant rebuilds the units whose includes reach its file; the others are shared, built once.
INCLUDE_DIRS = ["spec/include", "reference/include", "spec/src", "tests/mutation/implementation"]
UNITS = sorted(
    [f"tests/mutation/implementation/{f}" for f in os.listdir(os.path.join(ROOT, "tests/mutation/implementation"))
     if f.endswith(".cpp")] +
    [f"spec/src/{f}" for f in os.listdir(os.path.join(ROOT, "spec/src")) if f.endswith(".cpp")])


def includes_of(path, cache={}):
    if path in cache:
        return cache[path]
    cache[path] = set()
    found = set()
    here = os.path.dirname(path)
    for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', open(os.path.join(ROOT, path)).read(), re.M):
        for d in [here] + INCLUDE_DIRS:
            candidate = os.path.normpath(os.path.join(d, name))
            if os.path.exists(os.path.join(ROOT, candidate)):
                found.add(candidate)
                found |= includes_of(candidate)
                break
    cache[path] = found
    return found


def units_of(path, functions=None):
    """The units a mutant of `path` rebuilds: those whose includes reach it. For a header whose
    sites are some named inline functions, only the units that can call one of them (a file of
    theirs names it): an inline function is emitted only where it is used, so a unit that never
    names it holds no copy, mutated or not (params/sinusoidal.hpp: 1 unit instead of 7)."""
    reaching = [u for u in UNITS if u == path or path in includes_of(u)]
    if functions is None or not path.endswith(".hpp"):
        return reaching
    name = re.compile(r"\b(" + "|".join(functions) + r")\b")

    def names(f):
        return f != path and name.search(open(os.path.join(ROOT, f)).read()) is not None

    return [u for u in reaching if names(u) or any(names(f) for f in includes_of(u))]


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    command = argv[1]
    mutants = all_mutants()
    by_id = {m["id"]: m for m in mutants}
    if command == "list":
        if "--json" in argv:
            print(json.dumps([{k: m[k] for k in ("id", "path", "function", "operator", "line", "before", "after")}
                              for m in mutants], indent=1))
        else:
            for m in mutants:
                print(f"{m['id']}\t{m['path']}:{m['line']}\t{m['before']}\t->\t{m['after']}")
        return 0
    if command == "write":
        if len(argv) != 4 or argv[2] not in by_id:
            print(f"mutants.py write: unknown mutant {argv[2:3]} (mutants.py list names them)", file=sys.stderr)
            return 2
        m = by_id[argv[2]]
        text = apply(open(os.path.join(ROOT, m["path"])).read(), m["changes"])
        # The implementation's units check that the mutated copy is the one they include.
        text += f"\n#define POSENC_MUTANT_APPLIED 1  // {m['id']}\n"
        out = os.path.join(argv[3], m["path"])
        os.makedirs(os.path.dirname(out), exist_ok=True)
        if not os.path.exists(out) or open(out).read() != text:
            with open(out, "w") as f:
                f.write(text)
        return 0
    if command == "cmake":
        ids = argv[2:] or [m["id"] for m in mutants]
        # A change to a mutated file (or to the enumeration) changes the mutants: configure again.
        files = " ".join(f"${{PROJECT_SOURCE_DIR}}/{t[0]}" for t in TARGETS)
        print(f"set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS {files})")
        for i in ids:
            if i not in by_id:
                print(f"mutants.py cmake: unknown mutant {i} (mutants.py list names them)", file=sys.stderr)
                return 2
            m = by_id[i]
            functions = next(t[2] for t in TARGETS if t[0] == m["path"])
            print(f"posenc_mutant({i} {m['path']} {' '.join(units_of(m['path'], functions))})")
        return 0
    print(f"mutants.py: unknown command {command!r} (list, write, cmake)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
