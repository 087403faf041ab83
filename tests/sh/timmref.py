"""timmref.py - the other side of vtool's safetensors, for tests/sh/safetensors.sh.

A minimal safetensors reader and writer in NumPy (8 bytes of header
length, a JSON header, raw little-endian data: no safetensors package),
and the forward pass of timm's VisionTransformer over a state dict under
timm's names, in float64, written from timm's code (vision_transformer.py,
eva.py, pos_embed_sincos.py, pos_embed.py), not from vitpipe's: the patch
embedding is timm's Conv2d over the image, qkv is split as timm's
Attention splits it, RoPE-Mixed turns pairs as apply_rot_embed_cat does,
a position table is resampled as resample_abs_pos_embed does (PyTorch's
antialiased bicubic).  PyTorch is not a test dependency: NumPy stands in
for it.  vitpipe's own pe.params (liere:B) follow lib/pe/pe.h.

usage: timmref.py COMMAND ARGS (see main)
"""
import json
import math
import struct
import sys

import numpy as np

DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4",
          "U8": "u1"}


def st_read(path):
    """{name: float64 array}, metadata."""
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    meta = head.pop("__metadata__", {})
    data = raw[8 + n:]
    out = {}
    for name, e in head.items():
        b, end = e["data_offsets"]
        if e["dtype"] == "BF16":
            a = (np.frombuffer(data[b:end], "<u2").astype("<u4") << 16).view("<f4")
        else:
            a = np.frombuffer(data[b:end], DTYPES[e["dtype"]])
        out[name] = a.reshape(e["shape"]).astype(np.float64)
    return out, meta


def st_write(path, tensors, meta=None, dtypes=None):
    """tensors {name: array} as F32, or dtypes[name] (F16, BF16, F64)."""
    header, chunks, at = {}, [], 0
    if meta:
        header["__metadata__"] = meta
    for name, a in tensors.items():
        dt = (dtypes or {}).get(name, "F32")
        if dt == "BF16":  # round to nearest even, as torch does
            u = np.ascontiguousarray(a, "<f4").view("<u4").astype(np.uint64)
            raw = ((u + 0x7fff + ((u >> 16) & 1)) >> 16).astype("<u2").tobytes()
        else:
            raw = np.ascontiguousarray(a, DTYPES[dt]).tobytes()
        header[name] = {"dtype": dt, "shape": list(np.shape(a)),
                        "data_offsets": [at, at + len(raw)]}
        chunks.append(raw)
        at += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))


def layer_norm(x, w, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-6) * w + b


_erf = np.vectorize(math.erf)


def gelu(x):
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def rot(x):
    """timm's rot: [x0, x1, x2, x3] -> [-x1, x0, -x3, x2]."""
    return np.stack([-x[..., 1::2], x[..., ::2]], -1).reshape(x.shape)


def aa_weights(n_in, n_out):
    """PyTorch's antialiased bicubic (align_corners False) as a matrix."""
    scale = n_in / n_out
    support = 2 * scale if scale >= 1 else 2.0
    inv = 1 / scale if scale >= 1 else 1.0

    def f(x):
        x, a = abs(x), -0.5
        if x < 1:
            return ((a + 2) * x - (a + 3)) * x * x + 1
        if x < 2:
            return (((x - 5) * x + 8) * x - 4) * a
        return 0.0
    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        c = scale * (i + 0.5)
        lo, hi = max(int(c - support + 0.5), 0), min(int(c + support + 0.5), n_in)
        w = np.array([f((j - c + 0.5) * inv) for j in range(lo, hi)])
        m[i, lo:hi] = w / w.sum()
    return m


def resample_abs_pos_embed(pe, new, old):
    """timm's resample_abs_pos_embed, one prefix token: [1, 1+G, D]."""
    D = pe.shape[-1]
    grid = pe[0, 1:].reshape(old[0], old[1], D)
    grid = np.einsum("yi,ijd->yjd", aa_weights(old[0], new[0]), grid)
    grid = np.einsum("xj,yjd->yxd", aa_weights(old[1], new[1]), grid)
    return np.concatenate([pe[:, :1], grid.reshape(1, -1, D)], 1)


def expm(a):
    """exp of square matrices [..., n, n]: scaling and squaring, Taylor."""
    norm = np.abs(a).sum(-1).max()
    s = max(0, int(math.ceil(math.log2(norm / 0.25))) if norm > 0 else 0)
    a = a / 2 ** s
    out = term = np.broadcast_to(np.eye(a.shape[-1]), a.shape).copy()
    for k in range(1, 20):
        term = term @ a / k
        out = out + term
    for _ in range(s):
        out = out @ out
    return out


def liere_rotations(params, b, axes, hd, pos):
    """lib/pe/pe.h's liere:b set params -> R [T][nb][b][b]: generators
    U[axes][nb][k] (upper triangles, row-major over i < j), A = U - U^T."""
    nb, k = hd // b, b * (b - 1) // 2
    iu = np.triu_indices(b, 1)
    g = np.zeros((axes, nb, b, b))
    g[:, :, iu[0], iu[1]] = params.reshape(axes, nb, k)
    g = g - np.swapaxes(g, -1, -2)
    return expm(np.einsum("ta,anij->tnij", pos, g))


def forward(sd, meta, img, pos, heads):
    """Logits [B][C] of images img [B][C][H][W] (normalized), positions
    pos [T][axes] (y, x) of the patch tokens (rotary encodings)."""
    w = sd["patch_embed.proj.weight"]
    D, C, ph, pw = w.shape
    B, _, H, W = img.shape
    # Conv2d(C, D, kernel p, stride p), then flatten(2).transpose(1, 2)
    x = img.reshape(B, C, H // ph, ph, W // pw, pw)
    x = np.einsum("bcyhxw,dchw->byxd", x, w).reshape(B, -1, D) + sd["patch_embed.proj.bias"]
    x = np.concatenate([np.broadcast_to(sd["cls_token"], (B, 1, D)), x], 1)
    N = x.shape[1]
    if "pos_embed" in sd:
        pe = sd["pos_embed"]
        if pe.shape[1] != N:
            old = int(round(math.sqrt(pe.shape[1] - 1)))
            pe = resample_abs_pos_embed(pe, (H // ph, W // pw), (old, old))
        x = x + pe
    depth = 1 + max(int(n.split(".")[1]) for n in sd if n.startswith("blocks."))
    hd = D // heads
    spec = meta.get("VIT_PE", "")
    for l in range(depth):
        p = f"blocks.{l}."
        a = layer_norm(x, sd[p + "norm1.weight"], sd[p + "norm1.bias"])
        qkv = a @ sd[p + "attn.qkv.weight"].T + sd[p + "attn.qkv.bias"]
        q, k, v = qkv.reshape(B, N, 3, heads, hd).transpose(2, 0, 3, 1, 4)
        if "rope.freqs" in sd:  # get_mixed_freqs, apply_rot_embed_cat
            f = sd["rope.freqs"][:, l]  # [2][heads][hd / 2]
            t_x, t_y = pos[:, 1], pos[:, 0]
            ang = t_x[None, :, None] * f[0][:, None, :] + t_y[None, :, None] * f[1][:, None, :]
            sin, cos = np.repeat(np.sin(ang), 2, -1), np.repeat(np.cos(ang), 2, -1)
            q[:, :, 1:] = q[:, :, 1:] * cos + rot(q[:, :, 1:]) * sin
            k[:, :, 1:] = k[:, :, 1:] * cos + rot(k[:, :, 1:]) * sin
        if spec.startswith("liere:"):
            b = int(spec.split(":")[1])
            sets = sd["pe.params"]
            for h in range(heads):
                R = liere_rotations(sets[l * heads + h], b, pos.shape[1], hd, pos)
                for t in (q, k):
                    y = t[:, h, 1:].reshape(B, N - 1, hd // b, b)
                    t[:, h, 1:] = np.einsum("tnij,btnj->btni", R, y).reshape(B, N - 1, hd)
        att = softmax(q @ np.swapaxes(k, -1, -2) * hd ** -0.5)
        o = (att @ v).transpose(0, 2, 1, 3).reshape(B, N, D)
        o = o @ sd[p + "attn.proj.weight"].T + sd[p + "attn.proj.bias"]
        x = x + o * sd.get(p + "gamma_1", sd.get(p + "ls1.gamma", 1.0))
        a = layer_norm(x, sd[p + "norm2.weight"], sd[p + "norm2.bias"])
        m = gelu(a @ sd[p + "mlp.fc1.weight"].T + sd[p + "mlp.fc1.bias"])
        m = m @ sd[p + "mlp.fc2.weight"].T + sd[p + "mlp.fc2.bias"]
        x = x + m * sd.get(p + "gamma_2", sd.get(p + "ls2.gamma", 1.0))
    x = layer_norm(x, sd["norm.weight"], sd["norm.bias"])
    return x[:, 0] @ sd["head.weight"].T + sd["head.bias"]


def normalized(images, mean, std):
    """u8 images [B][H][W][C] -> (v / 255 - mean) / std as [B][C][H][W]."""
    x = images.astype(np.float64) / 255
    x = (x - np.asarray(mean, float)) / np.asarray(std, float)
    return x.transpose(0, 3, 1, 2)


def floats(s, n):
    v = [float(t) for t in s.split(",")]
    return v * n if len(v) == 1 else v


def compare(args):
    """compare WEIGHTS IMAGES.npy STREAM LOGITS.jsonl [HEADS [MEAN STD]]:
    the forward's logits against vit-eval --predict --logits --json's, to
    1e-5 of the largest; prints the error."""
    sd, meta = st_read(args[0])
    images = np.load(args[1])
    if images.ndim == 3:
        images = images[..., None]
    from vtread import vtread
    pos = next(vtread(open(args[2], "rb"))[1])["pos"].astype(np.float64)
    got = np.array([json.loads(l)["logits"] for l in open(args[3])])
    D = sd["cls_token"].shape[-1]
    heads = int(args[4]) if len(args) > 4 else int(meta.get("VIT_HEADS", D // 64))
    C = images.shape[-1]
    mean = floats(args[5] if len(args) > 5 else meta.get("MEAN", "0"), C)
    std = floats(args[6] if len(args) > 6 else meta.get("STD", "1"), C)
    # The positions the model's encoding sees: the stream's mapped into
    # its own convention (vit-train(1), Positions); timm's rope-mixed
    # takes integer positions, which the map of a linspace stream gives.
    if "VIT_POS_SCALE" in meta:
        pos = pos * floats(meta["VIT_POS_SCALE"], pos.shape[1]) + floats(meta["VIT_POS_SHIFT"], pos.shape[1])
    want = forward(sd, meta, normalized(images[:len(got)], mean, std), pos, heads)
    err = np.abs(got - want).max() / np.abs(want).max()
    print(f"max |vitpipe - numpy| / max |logit| = {err:.2e} over {got.shape}")
    if not err <= 1e-5:
        sys.exit(f"logits differ: {err:.3g}")


def images(args):
    """images N SIDE CHANNELS OUT.npy [LABELS.npy CLASSES]: seeded u8
    images, and labels."""
    n, side, c = int(args[0]), int(args[1]), int(args[2])
    rng = np.random.default_rng(side * 7 + c)
    np.save(args[3], rng.integers(0, 256, (n, side, side, c), dtype=np.uint8))
    if len(args) > 4:
        np.save(args[4], rng.integers(0, int(args[5]), n).astype(np.int64))


def make_timm(args):
    """make-timm KIND OUT [DTYPES]: a random state dict under timm's names
    (dim 32, depth 2, heads 2, mlp 64, 16x16 RGB images of 4x4 patches, 5
    classes): KIND abs (pos_embed, layer scale ls1/ls2.gamma) or rope
    (rope.freqs, EVA's gamma_1/gamma_2); DTYPES mixed: some F16 and BF16."""
    kind, D, depth, M, C, G = args[0], 32, 2, 64, 5, 4
    rng = np.random.default_rng(11)
    r = lambda *s: rng.standard_normal(s) * 0.3  # noqa: E731
    sd = {"cls_token": r(1, 1, D)}
    if kind == "abs":
        sd["pos_embed"] = r(1, 1 + G * G, D)
    sd["patch_embed.proj.weight"] = r(D, 3, 4, 4)
    sd["patch_embed.proj.bias"] = r(D)
    if kind == "rope":
        sd["rope.freqs"] = rng.standard_normal((2, depth, 2, 8)) * 0.8
    for l in range(depth):
        p = f"blocks.{l}."
        ls = ("ls1.gamma", "ls2.gamma") if kind == "abs" else ("gamma_1", "gamma_2")
        sd.update({p + "norm1.weight": 1 + r(D), p + "norm1.bias": r(D),
                   p + "attn.qkv.weight": r(3 * D, D), p + "attn.qkv.bias": r(3 * D),
                   p + "attn.proj.weight": r(D, D), p + "attn.proj.bias": r(D),
                   p + ls[0]: 1 + r(D), p + ls[1]: 1 + r(D),
                   p + "norm2.weight": 1 + r(D), p + "norm2.bias": r(D),
                   p + "mlp.fc1.weight": r(M, D), p + "mlp.fc1.bias": r(M),
                   p + "mlp.fc2.weight": r(D, M), p + "mlp.fc2.bias": r(D)})
    sd.update({"norm.weight": 1 + r(D), "norm.bias": r(D), "head.weight": r(C, D),
               "head.bias": r(C)})
    dtypes = {}
    if len(args) > 2 and args[2] == "mixed":
        dtypes = {"blocks.0.mlp.fc1.weight": "F16", "blocks.1.attn.qkv.weight": "BF16",
                  "head.bias": "F64"}
    st_write(args[1], sd, {"format": "pt"}, dtypes)


def sparse(args):
    """sparse KEYS OUT: a safetensors file of the fixture's names and
    shapes (F32), its data a hole: the header is what --list reads."""
    header, at = {}, 0
    for line in open(args[0]):
        if line.startswith("#") or not line.strip():
            continue
        name, dims = line.split()
        shape = [int(d) for d in dims.split(",")]
        n = 4 * math.prod(shape)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [at, at + n]}
        at += n
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(args[1], "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        f.truncate(8 + len(text) + at)


def same(args):
    """same A.vt B.vt: the checkpoints' weights are bit for bit the same (A's
    optimizer moments, no weights, are not exported), and their keys but
    for B's last HISTORY line."""
    from vtread import vtread
    (ha, ra), (hb, rb) = [vtread(open(p, "rb")) for p in args[:2]]
    ra, rb = next(ra), next(rb)
    ra = {k: v for k, v in ra.items() if not k.startswith("adam.")}
    assert list(ra) == list(rb), (list(ra), list(rb))
    for name in ra:
        a, b = ra[name], rb[name]
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), name
    hist = hb.pop("HISTORY")
    assert ha.pop("HISTORY") == hist[:-1] and ha == hb, (ha, hb)
    print(f"{len(ra)} fields, {len(ha) + 1} keys the same")


def two_class(args):
    """two-class DIR OUT PREFIX: the T-shirt (0) and trouser (1) images of
    DIR's small Fashion-MNIST as PREFIX-train.npy, PREFIX-train-labels.npy
    (and test): a 2-class task for the fine-tuning test."""
    import gzip
    for part, name in (("train", "train"), ("t10k", "test")):
        img = np.frombuffer(gzip.open(f"{args[0]}/{part}-images-idx3-ubyte.gz").read()[16:],
                            np.uint8).reshape(-1, 28, 28)
        lab = np.frombuffer(gzip.open(f"{args[0]}/{part}-labels-idx1-ubyte.gz").read()[8:],
                            np.uint8)
        keep = lab < 2
        np.save(f"{args[1]}-{name}.npy", img[keep])
        np.save(f"{args[1]}-{name}-labels.npy", lab[keep].astype(np.int64))


def main():
    cmds = {"compare": compare, "images": images, "make-timm": make_timm,
            "sparse": sparse, "same": same, "two-class": two_class}
    cmds[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()
