#!/bin/sh
# The model's construction under clang's UndefinedBehaviorSanitizer, which
# flags what GCC's does not (pointer arithmetic on NULL): lib/vit.c built
# by clang -fsanitize=undefined, the rest of the library as built, and a
# training and an inference model made and freed.
. tests/sh/lib.sh
command -v clang >/dev/null || { nok "clang is not installed (make deps installs it)"; finish; }
PKG="libpng libjpeg libavformat libavcodec libavutil libswscale openblas zlib"
cat >"$T/make.c" <<'C'
#include <stdio.h>
#include "vit.h"
int
main(void)
{
	struct vit_config c;
	struct err e;
	vit_config_init(&c);
	c.dim = 16, c.depth = 2, c.heads = 2, c.mlp = 16;
	for (int infer = 0; infer < 2; infer++) {
		struct vit *m = infer ? vit_create_infer(&c, 2, 64, &e) :
		    vit_create(&c, 2, 64, 1, &e);
		if (m == NULL)
			return puts(e.msg), 1;
		vit_destroy(m);
	}
	return 0;
}
C
# Every folder of lib/ is an include path.  Under make test SAN=1 the
# library is GCC's ASan build, whose calls clang's ASan runtime answers:
# linked with it too.
VIT=lib/model/vit.c
INC=$(for d in lib/*/; do printf -- '-I%s ' "$d"; done)
SANS=undefined
[ "$SAN" = 1 ] && SANS=address,undefined
cp "$BUILD/libvitpipe.a" "$T/lib.a" && ar d "$T/lib.a" vit.o &&
clang -std=c11 -D_GNU_SOURCE -fopenmp=libgomp -O1 -g $INC $(pkg-config --cflags $PKG) \
    -fsanitize=$SANS -fno-sanitize-recover=all -c -o "$T/vit.o" "$VIT" &&
clang -fsanitize=$SANS $INC -o "$T/make" "$T/make.c" "$T/vit.o" "$T/lib.a" \
    $(pkg-config --libs $PKG) -ldnnl -lgomp -lm || nok "building $VIT with clang UBSan"
check "models built and freed under clang UBSan ($VIT)" "$T/make"
finish
