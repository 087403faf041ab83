# conventions.sh - what every command promises (vitpipe(7)): --help, --version,
# usage errors with exit 2, a man page, no binary to a terminal, and a quiet
# end on a closed pipe.
. tests/sh/lib.sh
ncmd=0
for p in "$BIN"/*; do
	[ -x "$p" ] || continue
	c=$(basename "$p"); ncmd=$((ncmd + 1))
	check "$c --help exits 0" "$p" --help
	check_grep "$c --help prints usage to stdout" "^(Usage|usage): $c" "$T/out"
	check "$c --version exits 0" "$p" --version
	check_grep "$c --version names the toolkit" "^$c \(vitpipe\) [0-9]" "$T/out"
	check_exit 2 "$c: unknown option is a usage error" "$p" --no-such-option
	check_grep "$c: usage error points to --help" "--help" "$T/err"
	if [ -f "man/man1/$c.1" ]; then ok "$c has man/man1/$c.1"; else nok "$c has no man page"; fi
	grep -q "$c" README.md && ok "README mentions $c" || nok "README never mentions $c"
	# --help through a closed pipe: no message, no hang.
	"$p" --help 2>"$T/err" | head -c 0
	[ ! -s "$T/err" ] && ok "$c: quiet on a closed pipe" || nok "$c: wrote on a closed pipe: $(head -c 200 "$T/err")"
done
# Every cmd/*.c was built and checked above.
[ "$ncmd" -eq "$(ls cmd/*.c | wc -l)" ] && ok "all $ncmd commands checked" || nok "$ncmd of $(ls cmd/*.c | wc -l) commands built"
# Binary output to a terminal is refused, with exit 1 (script gives us a
# pseudo-terminal), and a reader that goes away early ends a long stream
# quietly: no message, no hang, not a success.
posgen --grid 64x64 -n 100 > "$T/big.vt"
for c in "posgen --grid 2x2" "patchify --raw 4x4x1 --patch 2 </dev/zero" "vtool cat $T/big.vt"; do
	p=${c%% *}
	script -qec "$BIN/$c; echo rc=\$?" /dev/null >"$T/tty" 2>&1
	check_grep "$p refuses to write binary to a terminal" "^$p: .*terminal" "$T/tty"
	check_grep "$p: exit 1 on the terminal refusal" "rc=1" "$T/tty"
done
for c in "posgen --grid 64x64 -n 100000" "vtool cat $T/big.vt $T/big.vt" "patchify --raw 4x4x1 --patch 2 </dev/zero"; do
	p=${c%% *}
	sh -c "$BIN/$c 2>'$T/err'; echo \$? >'$T/rc'" | head -c 100 >/dev/null
	[ ! -s "$T/err" ] && [ "$(cat "$T/rc")" -ne 0 ] && ok "$p: a closed pipe ends it quietly (exit $(cat "$T/rc"))" ||
	    nok "$p on a closed pipe: exit $(cat "$T/rc"), said: $(head -c 200 "$T/err")"
done
finish
