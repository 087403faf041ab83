# build.sh - the Makefile rebuilds what new flags would change: an object
# made, made again under other flags (OPT), and left alone when the flags
# are the same again; the flags' checksum is in BUILD/flags.
. tests/sh/lib.sh
B="$T/build" o="$T/build/lib/base/rng.o"
check "an object in a build directory of its own" make -s BUILD="$B" BIN="$T/bin" "$o"
[ -s "$B/flags" ] && ok "the flags' checksum is kept in BUILD/flags" || nok "no $B/flags"
t1=$(stat -c %.9Y "$o")
make -s BUILD="$B" BIN="$T/bin" "$o" 2>"$T/err"
[ "$(stat -c %.9Y "$o")" = "$t1" ] && ok "the same flags: not rebuilt" || nok "rebuilt with the same flags"
make -s BUILD="$B" BIN="$T/bin" OPT=-O1 "$o" 2>"$T/err"
t2=$(stat -c %.9Y "$o")
[ "$t2" != "$t1" ] && ok "other flags (OPT=-O1): rebuilt" || nok "OPT=-O1 did not rebuild $o"
make -s BUILD="$B" BIN="$T/bin" OPT=-O1 "$o" 2>"$T/err"
[ "$(stat -c %.9Y "$o")" = "$t2" ] && ok "... and not again under the same" || nok "rebuilt twice under OPT=-O1"
finish
