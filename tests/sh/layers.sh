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
	# one awk over every file: a process per include would take a minute
	find "$1" -name '*.[ch]' | sort | xargs awk -v dirs="$dirs" -v hdrs="$T/headers" '
	    BEGIN { n = split(dirs, D, " "); for (i = 1; i <= n; i++) rank[D[i]] = i
		while ((getline l < hdrs) > 0) { split(l, f, " "); hr[f[1]] = f[2]; hd[f[1]] = f[3] } }
	    FNR == 1 { d = FILENAME; sub(/\/[^\/]*$/, "", d); sub(/.*\//, "", d)
		mine = (d in rank) ? rank[d] : 0
		if (!mine) print FILENAME ": not in a folder of LIBDIRS" }
	    mine && /^#include "/ { h = $0; sub(/^#include "/, "", h); sub(/".*/, "", h)
		if (!(h in hr)) print FILENAME ": " h " is no header of lib/"
		else if (hr[h] > mine) print FILENAME ": includes " hd[h] "/" h ", a layer above " d }'
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
	for d in $dirs; do
		for o in "$1/$d"/*.o; do
			[ -f "$o" ] || continue
			# with "sources": only objects of today's sources (a build
			# directory keeps those of files since moved or removed)
			[ -z "${2:-}" ] || [ -f "$TOP/lib/$d/$(basename "$o" .o).c" ] || continue
			echo "$o"
		done
	done > "$T/objs"
	[ -s "$T/objs" ] || return 0
	# nm once for all the objects (a run per object takes a minute)
	{ xargs nm -A --defined-only -g < "$T/objs" | sed 's/^/D /'
	  xargs nm -A -u < "$T/objs" | sed 's/^/U /'; } |
	awk -v dirs="$dirs" 'BEGIN { n = split(dirs, D, " "); for (i = 1; i <= n; i++) rank[D[i]] = i }
	    { o = $2; sub(/:.*/, "", o); b = o; sub(/.*\//, "", b)
	      d = o; sub(/\/[^\/]*$/, "", d); sub(/.*\//, "", d); w = d "/" b }
	    $1 == "D" && NF == 4 { r[$4] = rank[d]; where[$4] = w; next }
	    $1 == "U" { need[n2++] = $NF " " rank[d] " " w }
	    END { for (i = 0; i < n2; i++) { split(need[i], f, " ")
		if (f[1] in r && r[f[1]] > f[2])
			print f[3] ": needs " f[1] ", defined in " where[f[1]] ", a layer above" } }'
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
