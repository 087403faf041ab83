# pe_names.sh - the man pages name exactly the registered position
# encodings (lib/pe/all.c), which the commands' messages list: each page's
# list between the comments "pe-list begin" and "pe-list end".
. tests/sh/lib.sh

# names LIST: the encoding names of a usage list, one a line, sorted
names() { echo "$1" | sed 's/\[[^]]*\]//g' | tr ', ' '\n\n' | sed 's/:B$//' | grep . | sort -u; }
vit-train --pe '?' --no-out 2>"$T/err"
all=$(names "$(sed -n "s/.*unknown position encoding '?' (\(.*\))/\1/p" "$T/err")")
[ "$(echo "$all" | wc -l)" -ge 10 ] && ok "vit-train's message lists the encodings ($(echo $all))" ||
    nok "no list of encodings in vit-train's message: $(cat "$T/err")"
rotary=$(names "$(skewgen --help | sed -n '/-p, --pe SPEC/,/--head-dim/p' | sed '$d; s/.*--pe SPEC//')")
check "skewgen --help lists the rotary ones" test "$(echo "$rotary" | wc -l)" -ge 8

# page_names PAGE: the names in PAGE's list: its tag items (.It Li) when
# it is a tag list, else its .Li lines (without the arguments, Ar B)
page_names() {
	sed -n '/pe-list begin/,/pe-list end/p' "$1" > "$T/list"
	if grep -q '^\.It' "$T/list"; then pat='^\.It Li'; else pat='^\.Li'; fi
	grep "$pat" "$T/list" | sed 's/Ar [^ ]*//g' | tr ' ' '\n' | grep -E '^[a-z][a-z0-9-]*:?$' | sed 's/:$//' | sort -u
}
for page in man/man1/vit-train.1:all man/man1/flops.1:all man/man1/skewgen.1:rotary man/man7/vitpipe.7:all; do
	f=${page%:*}
	eval want=\$${page#*:}
	got=$(page_names "$f")
	[ "$got" = "$want" ] && ok "$(basename "$f") names exactly the ${page#*:} encodings" ||
	    nok "$(basename "$f"): $(echo $got) is not $(echo $want)"
done
# ... and the check can fail: a page without one of them
sed '/^\.Li comrope-ld: Ns Ar B ,$/d' man/man1/vit-train.1 > "$T/short.1"
[ "$(page_names "$T/short.1")" != "$all" ] && ok "... and a page that leaves one out fails" ||
    nok "the check is blind to a missing encoding"
finish
