"""vit_ref.py - the ViT of lib/model/vit.h written independently in PyTorch.

Used only to make test fixtures (make_fixtures.py) and as the benchmark
baseline (tests/bench/vit_torch.py); never at run time.  Same layout and
names as the C engine's tensor table, so weights map one to one:

  patch.w [D][P]  patch.b  cls [D]  pos_embed [1+G][D] (abs)
  pos_table [G][D] (ape: read at the positions by grid_sample)
  blocks.L.{ln1.w, ln1.b, attn.qkv.w [3D][D], attn.qkv.b, attn.proj.w,
            attn.proj.b, attn.log_sigma [H] (locality), ln2.w, ln2.b,
            mlp.fc1.w [M][D], mlp.fc1.b, mlp.fc2.w [D][M], mlp.fc2.b}
  norm.w norm.b head.w [C][D] head.b    pe.params (rotary, lib/pe/pe.h layout)

Pre-LayerNorm blocks (eps 1e-6), exact erf GELU, CLS token first, pool cls
or mean over all tokens, soft-target cross-entropy.  Rotary encodings per
lib/pe/pe.h: R(p) = exp(sum_i p_i A_i) block-diagonal with b x b blocks; a
block's generator is U - U^T with U the upper triangle, row-major over
i < j; q' = R q, k' = R k per head; one generator set per (layer, head),
set index layer * heads + head (share none).

timm_state_dict() gives the parameters under the names and in the layouts
of timm's VisionTransformer (Eva's RotaryEmbeddingMixed for rope-mixed),
derived here from timm's modules, for make_safetensors_fixtures.py.
"""
import math

import torch
import torch.nn.functional as F


def pe_parse(spec, head_dim, axes):
    """(kind, block, set_params) of a rotary spec, or (kind, 0, 0)."""
    name, _, arg = spec.partition(":")
    if name in ("none", "abs", "sincos", "ape", "ape,official"):
        return name, 0, 0
    if name == "rope-mixed":
        return name, 2, axes * (head_dim // 2)
    b = int(arg)
    nb, k = head_dim // b, b * (b - 1) // 2
    if name == "liere":
        return name, b, axes * nb * k
    if name == "comrope-ap":
        return name, b, nb * k
    if name == "comrope-ld":
        return name, b, nb * k + axes * nb
    raise ValueError("unsupported pe " + spec)


def skew(u, b):
    """[..., k] upper triangles -> [..., b, b] skew blocks U - U^T."""
    iu = torch.triu_indices(b, b, 1)
    m = u.new_zeros(u.shape[:-1] + (b, b))
    m[..., iu[0], iu[1]] = u
    return m - m.transpose(-1, -2)


def generators(kind, b, axes, head_dim, p):
    """One set's parameters p -> generators A [axes][nb][b][b]."""
    nb, k = head_dim // b, b * (b - 1) // 2
    if kind in ("liere", "rope-mixed"):
        return skew(p.view(axes, nb, k), b)
    if kind == "comrope-ap":
        blocks = skew(p.view(nb, k), b)
        mask = torch.zeros(axes, nb, 1, 1, dtype=p.dtype)
        for j in range(nb):
            mask[j % axes, j] = 1
        return blocks.unsqueeze(0) * mask
    if kind == "comrope-ld":
        blocks = skew(p[:nb * k].view(nb, k), b)
        scale = p[nb * k:].view(axes, nb, 1, 1)
        return scale * blocks.unsqueeze(0)
    raise ValueError(kind)


class ViT(torch.nn.Module):
    def __init__(self, dim, depth, heads, mlp, classes, P, axes, grid,
                 pe="none", pool="cls", locality=False, sigma=1.0,
                 cls_rotate=False, cls_pos=None):
        super().__init__()
        self.dim, self.depth, self.heads, self.mlp = dim, depth, heads, mlp
        self.axes, self.grid, self.pool, self.pe = axes, grid, pool, pe
        self.locality, self.cls_rotate = locality, cls_rotate
        self.cls_pos = cls_pos if cls_pos is not None else [0.0] * axes
        hd = dim // heads
        self.kind, self.block, self.set_params = pe_parse(pe, hd, axes)
        prm = {}

        def lin(name, o, i):
            prm[name + ".w"] = torch.randn(o, i) * 0.02
            prm[name + ".b"] = torch.zeros(o)

        def ln(name):
            prm[name + ".w"] = torch.ones(dim)
            prm[name + ".b"] = torch.zeros(dim)

        lin("patch", dim, P)
        prm["cls"] = torch.randn(dim) * 0.02
        if pe == "abs":
            prm["pos_embed"] = torch.randn(1 + math.prod(grid), dim) * 0.02
        if pe.startswith("ape"):
            prm["pos_table"] = torch.randn(math.prod(grid), dim)
        for l in range(depth):
            ln(f"blocks.{l}.ln1")
            lin(f"blocks.{l}.attn.qkv", 3 * dim, dim)
            lin(f"blocks.{l}.attn.proj", dim, dim)
            if locality:
                prm[f"blocks.{l}.attn.log_sigma"] = torch.full(
                    (heads,), math.log(sigma))
            ln(f"blocks.{l}.ln2")
            lin(f"blocks.{l}.mlp.fc1", mlp, dim)
            lin(f"blocks.{l}.mlp.fc2", dim, mlp)
        ln("norm")
        lin("head", classes, dim)
        if self.set_params:
            prm["pe.params"] = torch.rand(depth * heads * self.set_params) \
                * 2 * math.pi
        self.names = list(prm)
        self.params = torch.nn.ParameterList(
            [torch.nn.Parameter(v) for v in prm.values()])

    def p(self, name):
        return self.params[self.names.index(name)]

    def timm_state_dict(self, chans, patch):
        """{timm name: tensor}, in the order of timm's state_dict(): the
        model's weights as timm's modules hold them.  chans, patch (ph, pw):
        the image's channels and patch sides, which patch.w's rows [D][P]
        (values dy, dx, c, channels fastest: vitpipe(5)) do not say."""
        D, L, H = self.dim, self.depth, self.heads
        p = lambda n: self.p(n).detach()  # noqa: E731
        sd = {"cls_token": p("cls").view(1, 1, D)}
        if self.pe == "abs":
            sd["pos_embed"] = p("pos_embed").unsqueeze(0)
        # PatchEmbed: a Conv2d(chans, D, patch, stride patch), [D, C, ph, pw]
        sd["patch_embed.proj.weight"] = p("patch.w").view(
            D, patch[0], patch[1], chans).permute(0, 3, 1, 2).contiguous()
        sd["patch_embed.proj.bias"] = p("patch.b")
        if self.kind == "rope-mixed":
            # RotaryEmbeddingMixed.freqs [2 (x, y)][L][H][hd / 2]: timm turns
            # pair (x0, x1) to x cos(a) + rot(x) sin(a), rot(x) = (-x1, x0),
            # a = t_x f_x + t_y f_y; exp(a' A) with A = [[0, u], [-u, 0]]
            # turns it by a' = -a: f = -u.  Positions here are (y, x).
            u = p("pe.params").view(L, H, 2, D // H // 2)
            sd["rope.freqs"] = -u.permute(2, 0, 1, 3).flip(0).contiguous()
        if self.locality:
            raise ValueError("locality: no timm counterpart made here")
        for l in range(L):
            b = f"blocks.{l}."
            for ours, timm in (("ln1", "norm1"), ("attn.qkv", "attn.qkv"),
                               ("attn.proj", "attn.proj"), ("ln2", "norm2"),
                               ("mlp.fc1", "mlp.fc1"), ("mlp.fc2", "mlp.fc2")):
                sd[b + timm + ".weight"] = p(b + ours + ".w")
                sd[b + timm + ".bias"] = p(b + ours + ".b")
        sd["norm.weight"], sd["norm.bias"] = p("norm.w"), p("norm.b")
        sd["head.weight"], sd["head.bias"] = p("head.w"), p("head.b")
        if self.set_params and self.kind != "rope-mixed":
            # no timm counterpart: vitpipe's own, one row per generator set
            sd["pe.params"] = p("pe.params").view(L * H, self.set_params)
        return sd

    def rotations(self, pos):
        """pos [Tr][axes] -> R [depth*heads][Tr][nb][b][b]."""
        hd, b = self.dim // self.heads, self.block
        sets = self.p("pe.params").view(self.depth * self.heads, -1)
        A = torch.stack([generators(self.kind, b, self.axes, hd, sets[s])
                         for s in range(sets.shape[0])])
        return torch.matrix_exp(torch.einsum("ta,sanij->stnij", pos, A)
                                .contiguous())

    def sample_table(self, pos):
        """ape: pos_table [prod G][D] read at pos [T][A] ((t,) y, x) by
        grid_sample of 2 p - 1, align_corners, border; ape,official exactly
        as ComRoPE's model.py reads its APE (its positions in their order,
        after a zero in 2D: the middle column); the CLS at cls_pos when it
        has a position, else nothing -> [1+T][D]."""
        D, A = self.dim, len(self.grid)
        full = torch.cat([torch.tensor([self.cls_pos], dtype=pos.dtype), pos])
        g = full * 2 - 1
        if self.pe == "ape,official":
            # model.py's CustomCLIPVisionEmbeddings: a table (1, D, frames,
            # n, n), one frame in 2D, read at the positions as they are
            grid = ([1] if A == 2 else []) + list(self.grid)
            if A == 2:
                g = torch.cat([torch.zeros_like(g[:, :1]), g], -1)
        else:
            grid, g = list(self.grid), g.flip(-1)  # grid_sample: (x, y, t)
        tab = self.p("pos_table").t().reshape(1, D, *grid)
        e = F.grid_sample(tab, g.view(1, *[1] * (len(grid) - 1), -1, len(grid)),
                          align_corners=True, padding_mode="border")
        e = e.reshape(D, -1).t()
        if not self.cls_rotate:
            e = torch.cat([torch.zeros_like(e[:1]), e[1:]])
        return e

    @staticmethod
    def rotate(x, R):
        """x [B][Tr][hd], R [Tr][nb][b][b] -> R x per token and block."""
        B, T, hd = x.shape
        nb, b = R.shape[1], R.shape[2]
        return torch.einsum("tnij,btnj->btni", R,
                            x.view(B, T, nb, b)).reshape(B, T, hd)

    def forward(self, x, pos, target):
        """x [B][T][P], pos [T][A] (shared by the batch), target [B][C]."""
        B, T, _ = x.shape
        D, H, hd = self.dim, self.heads, self.dim // self.heads
        h = F.linear(x, self.p("patch.w"), self.p("patch.b"))
        h = torch.cat([self.p("cls").expand(B, 1, D), h], 1)
        if self.pe == "abs":
            h = h + self.p("pos_embed")
        if self.pe.startswith("ape"):
            h = h + self.sample_table(pos)
        R = None
        if self.set_params:
            if self.cls_rotate:
                cp = torch.tensor([self.cls_pos], dtype=pos.dtype)
                R = self.rotations(torch.cat([cp, pos], 0))
            else:
                R = self.rotations(pos)
        if self.locality:
            full = torch.cat([torch.tensor([self.cls_pos], dtype=pos.dtype),
                              pos], 0)
            d2 = ((full[:, None, :] - full[None, :, :]) ** 2).sum(-1)
            if not self.cls_rotate:
                d2[0, :] = 0
                d2[:, 0] = 0
        for l in range(self.depth):
            pre = f"blocks.{l}."
            a = F.layer_norm(h, (D,), self.p(pre + "ln1.w"),
                             self.p(pre + "ln1.b"), 1e-6)
            qkv = F.linear(a, self.p(pre + "attn.qkv.w"),
                           self.p(pre + "attn.qkv.b"))
            q, k, v = qkv.split(D, -1)
            qs, ks = [], []
            for hh in range(H):
                qh = q[..., hh * hd:(hh + 1) * hd]
                kh = k[..., hh * hd:(hh + 1) * hd]
                if R is not None:
                    Rs = R[l * H + hh]
                    if self.cls_rotate:
                        qh, kh = self.rotate(qh, Rs), self.rotate(kh, Rs)
                    else:
                        qh = torch.cat([qh[:, :1], self.rotate(qh[:, 1:], Rs)], 1)
                        kh = torch.cat([kh[:, :1], self.rotate(kh[:, 1:], Rs)], 1)
                qs.append(qh)
                ks.append(kh)
            q = torch.stack(qs, 1)                      # [B][H][T1][hd]
            k = torch.stack(ks, 1)
            v = v.view(B, T + 1, H, hd).transpose(1, 2)
            w = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(hd), -1)
            if self.locality:
                sg = torch.exp(self.p(pre + "attn.log_sigma"))
                w = w * torch.exp(-d2 / (2 * sg[:, None, None] ** 2))
            o = (w @ v).transpose(1, 2).reshape(B, T + 1, D)
            h = h + F.linear(o, self.p(pre + "attn.proj.w"),
                             self.p(pre + "attn.proj.b"))
            a = F.layer_norm(h, (D,), self.p(pre + "ln2.w"),
                             self.p(pre + "ln2.b"), 1e-6)
            a = F.gelu(F.linear(a, self.p(pre + "mlp.fc1.w"),
                                self.p(pre + "mlp.fc1.b")))
            h = h + F.linear(a, self.p(pre + "mlp.fc2.w"),
                             self.p(pre + "mlp.fc2.b"))
        h = F.layer_norm(h, (D,), self.p("norm.w"), self.p("norm.b"), 1e-6)
        z = h[:, 0] if self.pool == "cls" else h.mean(1)
        logits = F.linear(z, self.p("head.w"), self.p("head.b"))
        loss = -(target * F.log_softmax(logits, -1)).sum(-1).mean()
        return logits, loss
