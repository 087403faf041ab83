# expm_torch.py - torch.matrix_exp on the batch of bench_expm.c: liere:2,
# liere:8 and liere:64 rotations for 65 tokens (8 x 8 grid on linspace(0, 1)
# plus a CLS token at the centre) x 12 heads x 12 layers, head dim 64,
# LieRE's init (upper entries uniform in [0, 2 pi)), float32 as in the LieRE
# reference code; the backward pass through autograd.  Prints rotations/s
# and the error against torch.matrix_exp in float64.  Only the benchmark
# uses torch; vitpipe never does.
import math
import os
import sys
import time

try:
    import torch
except ImportError:
    print("expm_torch.py: no torch (apt-get install python3-torch); skipped")
    sys.exit(0)

threads = int(os.environ.get("OMP_NUM_THREADS", os.cpu_count()))
torch.set_num_threads(threads)
torch.manual_seed(1)
T, H, L, D = 65, 12, 12, 64
g = torch.linspace(0, 1, 8)
pos = torch.stack(torch.meshgrid(g, g, indexing="ij"), -1).reshape(-1, 2)
pos = torch.cat([torch.full((1, 2), 0.5), pos])
print(f"torch.matrix_exp {torch.__version__}: {T} tokens x {H} heads x {L} layers, "
      f"head dim {D}, 2 axes, {threads} threads")


def timeit(f):
    reps, t0 = 0, time.perf_counter()
    while True:
        f()
        reps += 1
        t = time.perf_counter() - t0
        if t >= 1.0 and reps >= 2:
            return t / reps


for b in (2, 8, 64):
    nb = D // b
    raw = torch.rand(H * L, 2, nb, b, b) * 2 * math.pi
    upper = torch.triu(raw, diagonal=1)
    A = upper - upper.transpose(-1, -2)
    X = torch.einsum("ta,sajkl->stjkl", pos, A).reshape(-1, b, b).contiguous()
    tf = timeit(lambda: torch.matrix_exp(X))
    # torch's backward at b = 64 takes minutes on the whole batch: time it
    # on the first layer's 12 heads (the rate per rotation is the same)
    sub = X.shape[0] if b < 64 else X.shape[0] // L
    Xg = X[:sub].clone().requires_grad_(True)
    G = torch.randn_like(Xg)
    tfs = timeit(lambda: torch.matrix_exp(X[:sub]))

    def back():
        R = torch.matrix_exp(Xg)
        R.backward(G)
        Xg.grad = None
    tfb = timeit(back) - tfs
    nb_rot = T * H * L * sub // X.shape[0]
    R = torch.matrix_exp(X)
    ref = torch.matrix_exp(X.double())
    err = (R.double() - ref).abs().max().item()
    eye = torch.eye(b, dtype=torch.float64)
    orth = (R.double().transpose(-1, -2) @ R.double() - eye).abs().max().item()
    n = H * L * T
    print(f"liere b={b:<2d}  forward {n / tf:10.0f} rotations/s ({tf:.4f} s)  backward {nb_rot / tfb:10.0f} "
          f"rotations/s ({tfb:.4f} s for {nb_rot})  max err vs float64 {err:.1e}  |R^T R - I| {orth:.1e}")
