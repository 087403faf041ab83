# layers.sh - lib/ is in layers, its folders in the Makefile's LIBDIRS
# order, lowest first: a file includes only headers of its own folder and
# of the folders before it, every source file lies in one of them, and no
# header name is in two; and what the objects link to agrees: no symbol an
# object of a layer needs (nm's undefined ones) is defined in a layer
# above it, so no declaration written by hand climbs where an include
# may not.
. tests/sh/lib.sh

dirs=$(sed -n 's/^LIBDIRS[[:space:]]*=[[:space:]]*//p' Makefile)
# layers ROOT: one line per include that breaks the rule, per stray file
layers() {
	rank=0
	for d in $dirs; do
		rank=$((rank + 1))
		for f in "$1/$d"/*.h; do
			echo "$(basename "$f") $rank $d"
		done
	done > "$T/headers"
	cut -d' ' -f1 "$T/headers" | sort | uniq -d | sed 's/^/in two folders: /'
	find "$1" -name '*.[ch]' | while read -r f; do
		d=$(basename "$(dirname "$f")")
		mine=$(echo "$dirs" | tr ' ' '\n' | grep -nx "$d" | cut -d: -f1)
		[ -n "$mine" ] || { echo "$f: not in a folder of LIBDIRS"; continue; }
		sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | while read -r h; do
			set -- $(grep "^$h " "$T/headers")
			[ $# = 3 ] || { echo "$f: $h is no header of lib/"; continue; }
			[ "$2" -le "$mine" ] || echo "$f: includes $3/$h, a layer above $d"
		done
	done
}
check "LIBDIRS names the folders of lib/ ($dirs)" test "$(echo $dirs | tr ' ' '\n' | sort)" = "$(ls lib | sort)"
layers lib > "$T/broken"
check "every include of lib/ goes to its own layer or one below ($(find lib -name '*.[ch]' | wc -l) files)" test ! -s "$T/broken"
head -5 "$T/broken"
# ... and the check can fail: the stream format reaching up to the model
cp -r lib "$T/lib"
sed -i '1i #include "vit.h"' "$T/lib/io/vt.c"
layers "$T/lib" > "$T/broken2"
check_grep "... and an include of a layer above fails" "io/vt.c: includes model/vit.h" "$T/broken2"

# symbols OBJ [sources]: one line per undefined symbol of a layer's objects
# that a higher layer defines (OBJ: the objects' root, one folder per layer)
symbols() {
	rank=0
	for d in $dirs; do
		rank=$((rank + 1))
		for o in "$1/$d"/*.o; do
			[ -f "$o" ] || continue
			# with "sources": only objects of today's sources (a build
			# directory keeps those of files since moved or removed)
			[ -z "${2:-}" ] || [ -f "$TOP/lib/$d/$(basename "$o" .o).c" ] || continue
			w=$d/$(basename "$o")
			nm --defined-only -g "$o" | awk -v r=$rank -v w="$w" 'NF == 3 { print "D", $3, r, w }'
			nm -u "$o" | awk -v r=$rank -v w="$w" '{ print "U", $NF, r, w }'
		done
	done | awk '$1 == "D" { rank[$2] = $3; where[$2] = $4; next }
	    { need[n++] = $0 }
	    END { for (i = 0; i < n; i++) { split(need[i], f, " ")
		if (f[2] in rank && rank[f[2]] > f[3])
			print f[4] ": needs " f[2] ", defined in " where[f[2]] ", a layer above" } }'
}
OBJ=$TOP/${BUILD:-build/rel}/lib
nobj=$(find "$OBJ" -name '*.o' 2>/dev/null | wc -l)
symbols "$OBJ" sources > "$T/climbs"
check "no object of lib/ needs a symbol of a layer above its own ($nobj objects)" \
    test "$nobj" -gt 0 -a ! -s "$T/climbs"
head -5 "$T/climbs"
# ... and that check can fail: an object of io calling the model
mkdir -p "$T/obj"
for d in $dirs; do
	mkdir -p "$T/obj/$d"
	cp "$OBJ/$d"/*.o "$T/obj/$d/" 2>/dev/null
done
printf 'float vit_forward(void);\nfloat io_climbs(void) { return vit_forward(); }\n' |
    cc -c -x c -o "$T/obj/io/climbs.o" -
symbols "$T/obj" > "$T/climbs2"
check_grep "... and an object of a layer below calling one above fails" \
    "io/climbs.o: needs vit_forward, defined in model/vit.o" "$T/climbs2"
finish
