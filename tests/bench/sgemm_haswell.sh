#!/bin/sh
# bench_sgemm with the kernels OpenBLAS 0.3.21 picks by itself on this
# AVX-512 CPU (Haswell), beside bench_sgemm's run with cli_init's SkylakeX.
OPENBLAS_CORETYPE=Haswell "$BUILD/bench/bench_sgemm"
