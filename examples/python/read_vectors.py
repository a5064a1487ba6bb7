import json, math

def my_rope(x, pos, head_dim, base, interleaved):  # the implementation under test
    y = list(x)
    for i in range(head_dim // 2):
        a, b = (2 * i, 2 * i + 1) if interleaved else (i, i + head_dim // 2)
        t = pos * base ** (-2 * i / head_dim)
        y[a], y[b] = x[a] * math.cos(t) - x[b] * math.sin(t), x[a] * math.sin(t) + x[b] * math.cos(t)
    return y

doc = json.load(open("vectors/rope/none.json"))
for g in doc["testGroups"]:
    p = g["params"]
    if g["type"] != "rope_rotate" or p["rotary_dim"] != p["head_dim"] or p["inverse"]:
        continue
    for t in g["tests"]:
        x = [float.fromhex(v) for v in t["x"]]
        y = my_rope(x, int(t["position"][0]), p["head_dim"], float.fromhex(p["base"]), p["layout"] == "interleaved")
        err = max(abs(a - float.fromhex(e)) for a, e in zip(y, t["expected"]["f64"]))
        print(t["tcId"], t["position"][0], f"max abs error {err:.3g}")
