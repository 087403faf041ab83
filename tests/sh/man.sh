# man.sh - every page in man/ reads right once rendered, not only lints
# clean: mandoc -T utf8's text has no stray special characters (a \(tm
# where \(mu was meant), its quotes pair up and do not nest (an enclosure
# macro called inside another of its kind), no run of words has been glued
# to a leading hyphen (Fl given the rest of a sentence), and no macro name
# shows as a word (a macro on a line that does not start with a dot).  And
# vitpipe(5)'s example header is what the command in its HISTORY line writes.
. tests/sh/lib.sh
command -v mandoc >/dev/null || { nok "mandoc is not installed (make deps)"; finish; }
# faults TEXT: one "rule: where: what" line per fault in rendered text.
faults() {
	$PY - "$1" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
lines = text.split("\n")
where = lambda pos: f"line {text.count(chr(10), 0, pos) + 1}: {lines[text.count(chr(10), 0, pos)].strip()!r}"
# Typography a page may use: quotes, dashes, maths, list bullets, a no-break space, Greek.
allowed = set("‘’“”–—−×±≤≥≈→·…•\u00a0") | {chr(c) for c in range(0x391, 0x3ca)}
for m in re.finditer(r"[^\t\n -~]", text):
    if m.group() not in allowed:
        print(f"special: {where(m.start())}: U+{ord(m.group()):04X} {m.group()}")
# Quotes: each kind must close before it opens again, and close what opened last.
pairs, stack = {"’": "‘", "”": "“"}, []
for m in re.finditer("[‘’“”]", text):
    q = m.group()
    if q in pairs.values():
        if any(o == q for o, _ in stack):
            print(f"quotes: {where(m.start())}: {q} nested in {q}")
        stack.append((q, m.start()))
    elif not stack or stack[-1][0] != pairs[q]:
        print(f"quotes: {where(m.start())}: {q} closes nothing open")
    else:
        stack.pop()
for q, pos in stack:
    print(f"quotes: {where(pos)}: {q} never closed")
# Three words in a row with one leading hyphen each, lower-case letters
# only, or one after a long option: prose that Fl took as flags.  Options
# of other programs in examples alternate with their values (-f rawvideo
# -s 32x32), and ours have two hyphens.
toks = list(re.finditer(r"\S+", text))
run = 0
for i, t in enumerate(toks):
    run = run + 1 if re.fullmatch(r"-[a-z]{2,}[,.;:)]*", t.group()) else 0
    if run == 3:
        print(f"hyphen: {where(toks[i - 2].start())}: {' '.join(x.group() for x in toks[i - 2:i + 1])}")
    # Or one, right after a long option: "--val -lines", "--n0, -default".
    if run == 1 and i > 0 and re.fullmatch(r"--[a-z0-9][a-z0-9-]*[,.;:)]*", toks[i - 1].group()):
        print(f"hyphen: {where(toks[i - 1].start())}: {toks[i - 1].group()} {t.group()}")
# A macro's name as a word: its line did not start with a dot.
for m in re.finditer(r"(?<![\w.-])(Ap|Ar|Bq|Brq|Cm|Dq|Dv|Em|Er|Ev|Fa|Fl|Fn|Ic|Li|Nm|Ns|Op|Pa|Pq|Ql|Qq|Sq|Sx|Sy|Va|Xr)(?![\w.-])", text):
    print(f"macro: {where(m.start())}: {m.group()}")
PY
}
# The checker itself: a page with one fault of each kind has each found.
cat >"$T/bad.1" <<'PAGE'
.Dd November 25, 2026
.Dt BAD 1
.Os vitpipe
.Sh NAME
.Nm bad
.Nd a page with every fault
.Sh DESCRIPTION
Patches of 4\(tm4 pixels
.Pq Ql 28x28 , Ql 16x112x112 ,
a grid
.Pq Fl -n0 , default the grid itself ,
and a macro in running text: Ql x.
PAGE
mandoc -T utf8 "$T/bad.1" 2>/dev/null | col -bx >"$T/txt"
faults "$T/txt" >"$T/faults"
for r in special quotes hyphen macro; do
	grep -q "^$r:" "$T/faults" && ok "the checker finds a '$r' fault" ||
	    nok "the checker misses a '$r' fault: $(cat "$T/faults")"
done
[ "$(grep -c '^special:.*U+2122' "$T/faults")" -eq 1 ] && ok "the checker finds the one trade-mark sign" ||
    nok "the checker's special-character faults: $(grep '^special:' "$T/faults")"

for m in man/man*/*.[1-9]; do
	[ -f "$m" ] || continue
	mandoc -T lint -W warning "$m" >"$T/lint" 2>&1 && ok "$m: no mandoc warnings" ||
	    nok "$m: mandoc warns: $(head -c 300 "$T/lint")"
	mandoc -T utf8 "$m" 2>/dev/null | col -bx >"$T/txt"
	[ -s "$T/txt" ] || { nok "$m renders to nothing"; continue; }
	faults "$T/txt" >"$T/faults" || nok "$m: the checker failed"
	for r in "special:no stray special characters" "quotes:quotes pair up and do not nest" \
	    "hyphen:no words glued to a leading hyphen" "macro:no macro names as words"; do
		grep "^${r%%:*}:" "$T/faults" >"$T/f" && nok "$m: ${r#*:}: $(head -n 3 "$T/f" | tr '\n' ' ')" ||
		    ok "$m: ${r#*:}"
	done
done

# vitpipe(5)'s example header, written again by the HISTORY line's command
# from Fashion-MNIST's training set, fashion.txt holding the CLASS names.
sed -n '/^\.Sh EXAMPLES/,/^\.Ed/p' man/man5/vitpipe.5 | sed -n '/^VITPIPE 1$/,/^ENDHDR$/p' >"$T/hdr.page"
cmd=$(sed -n 's/^HISTORY //p' "$T/hdr.page")
if [ -z "$cmd" ]; then
	nok "vitpipe(5) EXAMPLES: no header with a HISTORY line"
else
	mkdir -p "$T/hdr"
	ln -s "$FM"/train-*-ubyte.gz "$T/hdr"
	sed -n 's/^CLASS [0-9]* //p' "$T/hdr.page" >"$T/hdr/fashion.txt"
	(cd "$T/hdr" && eval "$cmd") 2>"$T/err" | sed '/^ENDHDR$/q' >"$T/hdr.made"
	diff "$T/hdr.page" "$T/hdr.made" >"$T/diff" &&
	    ok "vitpipe(5): the example header is what '$cmd' writes" ||
	    nok "vitpipe(5): '$cmd' writes another header: $(head -n 6 "$T/diff" | tr '\n' ' ') $(head -c 200 "$T/err")"
fi
finish
