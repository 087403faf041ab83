#!/bin/sh
# clang's warnings, as errors, over lib/ and cmd/ under the project's
# flags (make syntax CC=clang, nothing built, seconds): make fuzz builds
# with clang, and GCC alone let an uninitialized-use warning through
# (issue 39: fail() in lib/nn/bf16.c was not known to exit).
. tests/sh/lib.sh
command -v clang >/dev/null || { nok "clang is not installed (make deps installs it)"; finish; }
d="clang -fsyntax-only over lib/ and cmd/ with the project's warnings: silent"
if make -s --no-print-directory CC=clang syntax >"$T/out" 2>"$T/err" && [ ! -s "$T/err" ]; then
	ok "$d"
else
	nok "$d: $(head -c 400 "$T/err")"
fi
finish
