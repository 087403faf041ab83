# layers.sh - lib/ is in layers, its folders in the Makefile's LIBDIRS
# order, lowest first: a file includes only headers of its own folder and
# of the folders before it, every source file lies in one of them, and no
# header name is in two.
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
finish
