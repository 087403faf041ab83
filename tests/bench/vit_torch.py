"""vit_torch.py - PyTorch baseline for bench_vit: the same ViT (tests/ref/
vit_ref.py), the same reference config and a torch.optim.AdamW step,
on 2 threads; with --autocast, under torch.autocast('cpu', bfloat16) (the
forward and loss; backward follows it); with --eval, forward passes alone
under torch.no_grad (as vit-eval); --model vitb: ViT-B/16 at 224 x 224,
batches of 32.  Prints one line like bench_vit's, ending with the
environment variables that set PyTorch's threading and BLAS kernels
(bench_vit runs it with PyTorch's defaults and with vitpipe's).

usage: /usr/bin/python3 tests/bench/vit_torch.py [--pe SPEC] [--steps N]
           [--threads N] [--autocast] [--eval] [--model r|vitb]
"""
import argparse
import os
import resource
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "ref"))
from vit_ref import ViT  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pe", default="abs")
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--autocast", action="store_true")
    ap.add_argument("--eval", action="store_true")
    ap.add_argument("--model", choices=("r", "vitb"), default="r")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    if a.model == "r":
        B, P, n, size, C = 128, 48, 8, (192, 6, 3, 768), 100
    else:
        B, P, n, size, C = 32, 768, 14, (768, 12, 12, 3072), 1000
    T = n * n
    m = ViT(*size, C, P, 2, [n, n], pe=a.pe)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4, weight_decay=0.05)
    x = torch.randn(B, T, P)
    ys, xs = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
    pos = torch.stack([ys, xs], -1).view(T, 2).float() / n
    target = torch.nn.functional.one_hot(torch.randint(0, C, (B,)),
                                         C).float()

    def forward():
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16,
                                             enabled=a.autocast):
            m(x, pos, target)

    def train():
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.autocast):
            _, loss = m(x, pos, target)
        loss.backward()
        opt.step()

    def cpu():
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    step = forward if a.eval else train
    if a.eval:
        m.eval()
    step()
    t0, c0 = time.perf_counter(), cpu()
    best = float("inf")   # the least disturbed step on a shared CPU
    for _ in range(a.steps):
        ts = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - ts)
    dt = (time.perf_counter() - t0) / a.steps
    dc = (cpu() - c0) / a.steps / a.threads
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"torch {a.pe:14s} {B / dt:8.1f} img/s  {dt * 1000:7.0f} ms/step"
          f"  best {B / best:.1f} img/s  peak RSS {rss:.0f} MB  cpu-time {B / dc:.1f} img/s"
          f"  (PyTorch {torch.__version__}, {'bf16 autocast' if a.autocast else 'fp32'},"
          f" {'eval, ' if a.eval else ''}{a.model},"
          f" {a.threads} threads, {env()})")


def env():
    """The variables libgomp and OpenBLAS read when they load."""
    v = [f"{k}={os.environ[k]}" for k in
         ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OPENBLAS_CORETYPE")
         if k in os.environ]
    return " ".join(v) if v else "PyTorch's default environment"


if __name__ == "__main__":
    main()
