"""ALiBi as Press, Smith and Lewis define it ("Train Short, Test Long", get_slopes in
ofirpress/attention_with_linear_biases): for n heads with m the largest power of two <= n, head h
< m has slope 2^(-8(h+1)/m) and head m + j has 2^(-4(2j+1)/m) (every other slope of 2m heads); the
bias of query i and key j is -slope * (i - j) (causal) or -slope * |i - j| (symmetric), in binary64.

The paper's code forms the geometric sequence by repeated products of a rounded ratio, whose error
grows with the head index past posenc's bound of 2 units (conformance/SPEC.md 5); this transcription
evaluates each slope as one power of two of an exact exponent (m is a power of two), as
tests/plugins/double_plugin.c does. Each switch reproduces one documented bug (bugs/zoo.py)."""
from cases import Unsupported, positions
from hf_style import check_switches

DEFAULTS = {
    # "power_of_two_formula": 2^(-8(h+1)/n) for every n (the rule of a power-of-two head count),
    # as (2^8)^(1/n) raised to -(h + 1); "exponent_h": 2^(-8h/m), one factor too few per head.
    "slopes": "paper",
    "bias_sign": "negative",      # "positive": slope * (i - j), a reward for distance
    "tensor_parallel": 1,         # > 1: rank r's heads take the slopes of rank 0's heads
}


class Alibi:
    def __init__(self, params, **switches):
        self.sw = check_switches(switches, DEFAULTS)
        self.n = params["n_heads"]
        self.mode = params["mode"]

    def slope(self, h):
        n = self.n
        tp = self.sw["tensor_parallel"]
        if tp > 1:
            h = h % (n // tp)
        if self.sw["slopes"] == "power_of_two_formula":
            x = (2.0 ** 8) ** (1.0 / n)
            return 1.0 / x ** (h + 1)
        m = 1 << (n.bit_length() - 1)
        if h < m:
            k = h if self.sw["slopes"] == "exponent_h" else h + 1
            return 2.0 ** (-8.0 * k / m)
        return 2.0 ** (-4.0 * (2 * (h - m) + 1) / m)

    def outputs(self, ctype, test):
        if ctype == "alibi_slopes":
            return [self.slope(h) for h in range(self.n)]
        if ctype == "alibi_bias":
            i = positions([test["queryPosition"]])[0]
            j = positions([test["keyPosition"]])[0]
            d = i - j if self.mode == "causal" else abs(i - j)
            if d == 0:
                return [0.0]
            b = -self.slope(test["head"]) * d
            return [-b if self.sw["bias_sign"] == "positive" else b]
        raise Unsupported(ctype)
