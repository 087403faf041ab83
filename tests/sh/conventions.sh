# conventions.sh - what every command promises (vitpipe(7)): --help, --version,
# usage errors with exit 2, a man page, no binary to a terminal, and a quiet
# end on a closed pipe.
. tests/sh/lib.sh
# help_opts CMD: the long options on the option lines of CMD --help, and of
# CMD SUB --help for each subcommand SUB (a usage line's word after CMD),
# one a line.
help_opts() {
	{ "$BIN/$1" --help
	  for s in $("$BIN/$1" --help | sed -n "s/^\(usage:\)\{0,1\} *$1 \([a-z][a-z-]*\).*/\2/p"); do
		"$BIN/$1" "$s" --help 2>/dev/null
	  done; } | grep -E '^  (-[A-Za-z0-9], |    )?--[a-z0-9]' |
	    grep -oE -- '--[a-z0-9][a-z0-9-]*' | sort -u
}
# page_opts PAGE: the long options of the entries (.It) of PAGE's OPTIONS.
page_opts() {
	sed -n '/^\.Sh OPTIONS/,/^\.Sh /p' "$1" | grep '^\.It' |
	    grep -oE 'Fl -[a-z0-9][a-z0-9-]*' | sed 's/^Fl /-/' | sort -u
}
# opt_gaps CMD PAGE: the options CMD --help and PAGE's OPTIONS do not share.
opt_gaps() {
	help_opts "$1" >"$T/help.opts"; page_opts "$2" >"$T/page.opts"
	comm -23 "$T/help.opts" "$T/page.opts" | sed 's/^/no OPTIONS entry for /'
	comm -13 "$T/help.opts" "$T/page.opts" | sed 's/^/not in --help: /'
}
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
	gaps=$(opt_gaps "$c" "man/man1/$c.1" 2>&1)
	[ -z "$gaps" ] && ok "$c: --help's options are exactly the OPTIONS entries of $c(1)" ||
	    nok "$c --help and $c(1): $(echo "$gaps" | tr '\n' ';')"
	grep -q "$c" README.md && ok "README mentions $c" || nok "README never mentions $c"
	grep -q "^\.It Xr $c 1\$" man/man7/vitpipe.7 && ok "vitpipe(7) lists $c" || nok "vitpipe(7)'s list of commands lacks $c"
	# --help through a closed pipe: no message, no hang.
	"$p" --help 2>"$T/err" | head -c 0
	[ ! -s "$T/err" ] && ok "$c: quiet on a closed pipe" || nok "$c: wrote on a closed pipe: $(head -c 200 "$T/err")"
done
# Every cmd/*.c was built and checked above.
[ "$ncmd" -eq "$(ls cmd/*.c | wc -l)" ] && ok "all $ncmd commands checked" || nok "$ncmd of $(ls cmd/*.c | wc -l) commands built"
# ... and the option check can fail, both ways: a page without an entry,
# and a page with an entry for an option --help does not print.
sed '/^\.It Fl -pairs Ar n$/d' man/man1/rotgen.1 >"$T/less.1"
gaps=$(opt_gaps rotgen "$T/less.1")
[ "$gaps" = "no OPTIONS entry for --pairs" ] && ok "... a page without --pairs fails it" || nok "the option check missed a lost entry: '$gaps'"
sed '/^\.It Fl -pairs Ar n$/i\
.It Fl -no-such-option' man/man1/rotgen.1 >"$T/more.1"
gaps=$(opt_gaps rotgen "$T/more.1")
[ "$gaps" = "not in --help: --no-such-option" ] && ok "... and a page with --no-such-option" || nok "the option check missed an extra entry: '$gaps'"
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
# The kernel's name for a running command (ps, top, pgrep -x,
# /proc/PID/comm) is the command's, also after cli_init's re-exec, which
# runs when OMP_WAIT_POLICY is unset (as here).  proc_name NAME DEPTH
# CMD...: start CMD DEPTH directories of 200-character names below $T/deep
# (24 make a path longer than PATH_MAX) reading a fifo that stays open;
# once the re-exec is done (its environment has OMP_WAIT_POLICY) check its
# name.
godeep() { cd -P "$T/deep" && for i in $(seq "$1"); do cd -P "$(printf '%0200d' "$i")" || return 1; done; }
proc_name() {
	local name=$1 depth=$2 pid i comm; shift 2
	rm -f "$T/fifo"; mkfifo "$T/fifo"
	(godeep "$depth" && exec env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT PROC_NAME_TEST=1 "$@" <"$T/fifo" >/dev/null 2>&1) &
	pid=$!
	exec 3<>"$T/fifo"
	i=0
	# The forked subshell shows this script's environment, which has
	# OMP_WAIT_POLICY (tests/run.sh exports it): only the re-exec has both.
	until tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -c -e '^OMP_WAIT_POLICY=passive$' -e '^PROC_NAME_TEST=1$' | grep -qx 2; do
		i=$((i + 1)); [ "$i" -lt 100 ] || break; sleep 0.05
	done
	i=0
	until comm=$(cat "/proc/$pid/comm" 2>/dev/null) && [ "$comm" = "$name" ]; do
		i=$((i + 1)); [ "$i" -lt 20 ] || break; sleep 0.05
	done
	[ "$comm" = "$name" ] && ok "$name is '$name' in /proc/PID/comm after its re-exec (depth $depth)" ||
	    nok "$name is '$comm' in /proc/PID/comm (depth $depth)"
	[ "$(ps -o comm= -p "$pid")" = "$name" ] && ok "ps shows $name (depth $depth)" ||
	    nok "ps shows $name as '$(ps -o comm= -p "$pid")' (depth $depth)"
	pgrep -x "$name" | grep -qx "$pid" && ok "pgrep -x $name finds it (depth $depth)" ||
	    nok "pgrep -x $name misses it (depth $depth)"
	exec 3>&-
	wait "$pid"
}
mkdir -p "$T/deep"
proc_name posgen 0 "$TOP/$BIN/posgen"
proc_name vit-train 0 "$TOP/$BIN/vit-train" -o "$T/m.vt"
# From a path readlink cannot give, the re-exec goes through /proc/self/exe.
(godeep 0 && for i in $(seq 24); do mkdir "$(printf '%0200d' "$i")" && cd -P "$(printf '%0200d' "$i")" || exit 1; done &&
    cp "$TOP/$BIN/posgen" .) || nok "a directory deeper than PATH_MAX"
proc_name posgen 24 ./posgen
finish
