#!/bin/sh
# The torch.matrix_exp side of bench_expm (see expm_torch.py).
exec /usr/bin/python3 "$(dirname "$0")/expm_torch.py"
