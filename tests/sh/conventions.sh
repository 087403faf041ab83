# conventions.sh - what every command promises (vitpipe(7)): --help, --version,
# usage errors with exit 2, a man page, no binary to a terminal, and a quiet
# end on a closed pipe.
. tests/sh/lib.sh
n=0
for p in "$BIN"/*; do
	[ -x "$p" ] || continue
	c=$(basename "$p"); n=$((n + 1))
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
[ "$n" -gt 0 ] || ok "no commands built yet"
# Binary output to a terminal is refused (script gives us a pseudo-terminal).
if command -v script >/dev/null && [ -x "$BIN/posgen" ]; then
	script -qec "$BIN/posgen --grid 2x2" /dev/null >"$T/tty" 2>&1
	check_grep "posgen refuses to write binary to a terminal" "terminal" "$T/tty"
fi
finish
