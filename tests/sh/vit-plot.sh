# vit-plot.sh - learning curves from vit-train --log files: a real PNG of
# the asked size, well-formed SVG with one curve per run (as many points as
# the log has lines of its kind) and the legend names, text with its panel
# titles and axis label; bad lines are errors naming file and line, a
# partial last line is skipped, -o is atomic; the man page's examples run.
. tests/sh/lib.sh
command -v gnuplot >/dev/null || { nok "gnuplot is not installed (make deps)"; finish; }
W="$T/plot"; mkdir -p "$W"
# Two short runs, the first with validation after each epoch.
(cd "$W" && patchify --idx "$FM/t10k-images-idx3-ubyte.gz" --patch 7 --subset 0.04 | posgen >tr.vt &&
 patchify --idx "$FM/t10k-images-idx3-ubyte.gz" --patch 7 --subset 0.01 --seed 2 | posgen >va.vt &&
 vit-train --dim 16 --depth 1 --heads 2 --mlp 16 --epochs 3 -b 40 --val va.vt --log a.jsonl -o a.vt tr.vt &&
 vit-train --dim 16 --depth 1 --heads 2 --mlp 16 --pe rope-axial --epochs 2 -b 40 --log b.jsonl -o b.vt tr.vt) \
    2>"$T/err" || nok "two vit-train runs: $(head -c 300 "$T/err")"
cd "$W"

# svg_check FILE NAME=LOG...: in FILE, panel a (loss) and b (lr) have one
# curve per LOG, panels c and d (validation top-1 and loss) one per LOG
# with val_acc lines, each
# titled NAME and with as many points as LOG has lines of that kind (read
# here with Python's json).
svg_check() {
	$PY - "$@" <<'PY'
import json, re, sys
import xml.etree.ElementTree as ET
svg, runs = sys.argv[1], [a.split("=", 1) for a in sys.argv[2:]]
root = ET.parse(svg).getroot()
ns = "{http://www.w3.org/2000/svg}"
plots = {g.get("id"): g for g in root.iter(ns + "g") if (g.get("id") or "").startswith("gnuplot_plot_")}
def points(log, key):
    n = 0
    for line in open(log):
        try:
            d = json.loads(line)
        except ValueError:
            continue        # the partial last line
        n += "step" in d and key in d
    return n
bad = []
for panel, key in (("a", "loss"), ("b", "lr"), ("c", "val_acc"), ("d", "val_loss")):
    want = [(name, points(log, key)) for name, log in runs if points(log, key) > 0]
    got = sorted(k for k in plots if k.endswith(panel))
    if len(got) != len(want):
        bad.append(f"panel {panel}: {len(got)} curves, want {len(want)}")
        continue
    for (name, n), gid in zip(want, sorted(got, key=lambda k: int(k[13:-1]))):
        g = plots[gid]
        texts = [t.text for t in g.iter(ns + "text")]
        d = " ".join(p.get("d") for p in g.iter(ns + "path"))
        npts = len(re.findall(r"-?[\d.]+,-?[\d.]+", d)) - 2   # less the key's sample
        if texts != [name]:
            bad.append(f"{gid}: legend {texts}, want [{name!r}]")
        if npts != n:
            bad.append(f"{gid} ({name}): {npts} points, want {n}")
print("; ".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}
# png_size FILE: "W H" from a PNG's signature and IHDR, and more than two
# colours in its pixels (curves drawn, not a blank page).
png_size() {
	$PY - "$1" <<'PY'
import struct, sys
from PIL import Image
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n", "no PNG signature"
assert d[12:16] == b"IHDR", "no IHDR first"
w, h = struct.unpack(">II", d[16:24])
colours = len(Image.open(sys.argv[1]).convert("RGB").getcolors(1 << 24))
assert colours > 2, f"{colours} colours"
print(w, h)
PY
}

check "PNG of two runs" vit-plot -o c.png --size 640x480 a.jsonl b.jsonl
[ "$(png_size c.png 2>&1)" = "640 480" ] && ok "a PNG of --size 640x480" || nok "PNG: $(png_size c.png 2>&1 | tail -n 1)"
check "PNG by default size" vit-plot -o d.png a.jsonl b.jsonl
[ "$(png_size d.png 2>&1)" = "800 1200" ] && ok "default PNG: 800 wide, 300 a panel, four panels" ||
    nok "default PNG: $(png_size d.png 2>&1 | tail -n 1)"
check "PNG of a run without validation" vit-plot -f png -o e.img b.jsonl
[ "$(png_size e.img 2>&1)" = "800 600" ] && ok "--format png; two panels without validation lines" ||
    nok "--format png: $(png_size e.img 2>&1 | tail -n 1)"

check "SVG with titles" vit-plot -o c.svg -t LieRE -t "it's <RoPE>" a.jsonl b.jsonl
check "the SVG: one curve per run in each panel, all its points, the legend names" \
    svg_check c.svg "LieRE=a.jsonl" "it's <RoPE>=b.jsonl"
check "SVG named by the files" vit-plot -f svg a.jsonl b.jsonl
mv "$T/out" f.svg
check "the SVG on stdout: legend names are the file names" svg_check f.svg a.jsonl=a.jsonl b.jsonl=b.jsonl

check "text plot" vit-plot --size 100x60 a.jsonl b.jsonl
cp "$T/out" dumb.txt
for t in loss "learning rate" "validation top-1 \(%\)" "validation loss" step a.jsonl b.jsonl; do
	check_grep "text plot shows '$t'" "$t" dumb.txt
done
[ "$(awk 'length > 100' dumb.txt | wc -l)" -eq 0 ] && [ "$(wc -l <dumb.txt)" -ge 50 ] &&
    ok "text plot fits --size 100x60" || nok "text plot: $(wc -l <dumb.txt) lines, longest $(awk '{ if (length > m) m = length } END { print m }' dumb.txt)"
! grep -q "$(printf '\f')" dumb.txt && ! grep -q ' $' dumb.txt && [ "$(tail -c 1 dumb.txt | od -An -c | tr -d ' ')" = '\n' ] &&
    ok "text plot: no form feeds or trailing blanks, ends in a newline" || nok "text plot is untidy"
# On a terminal the text plot takes its width; stdin is a log named so.
script -qec "stty cols 120 rows 40; $TOP/$BIN/vit-plot - <a.jsonl" /dev/null >tty.txt 2>&1
[ "$(awk '{ sub(/\r$/, ""); if (length > m) m = length } END { print m }' tty.txt)" -gt 100 ] &&
    [ "$(awk '{ sub(/\r$/, ""); if (length > m) m = length } END { print m }' tty.txt)" -le 120 ] &&
    ok "on a 120-column terminal the plot is as wide" || nok "on a 120-column terminal: $(head -c 300 tty.txt)"
check_grep "a log on stdin is named stdin" "stdin" tty.txt
check "PNG to a pipe with --format png" sh -c "vit-plot -f png a.jsonl | cat >piped.png"
[ "$(png_size piped.png 2>&1)" = "800 1200" ] && ok "the piped PNG" || nok "piped PNG: $(png_size piped.png 2>&1 | tail -n 1)"
check "PDF by its suffix" vit-plot -o c.pdf a.jsonl b.jsonl
[ "$(head -c 5 c.pdf)" = "%PDF-" ] && [ "$(wc -c <c.pdf)" -gt 5000 ] && ok "c.pdf is a PDF" ||
    nok "c.pdf: $(head -c 20 c.pdf | od -c | head -n 2)"
# Panels share the step axis: validation that stopped at step 180 of 600
# is drawn on 0 .. 600 too, so that runs with and without it line up.
awk 'BEGIN { for (i = 1; i <= 600; i++) { printf "{\"step\":%d,\"loss\":%g,\"lr\":0.001}\n", i, 2 - i / 600
    if (i % 60 == 0 && i <= 180) printf "{\"step\":%d,\"epoch\":1,\"val_acc\":0.5,\"val_loss\":1.2}\n", i } }' >early.jsonl
check "a run validated early" vit-plot --size 100x80 early.jsonl
[ "$(grep -c ' 600 *$' "$T/out")" -eq 4 ] && ok "all four panels end at step 600" ||
    nok "panels ending at 600: $(grep -c ' 600 *$' "$T/out") of 4"
check "text to a file by its suffix" vit-plot -o g.txt a.jsonl
check_grep "g.txt is the text plot" "learning rate" g.txt

# --smooth: a loss alternating 1, 3, 1, 3 drawn as the mean of the last
# two is flat after its first point, with every point still drawn; without
# it, it zigzags.  A nan starts the window again.  Ten runs: ten looks.
awk 'BEGIN { for (i = 1; i <= 40; i++) printf "{\"step\":%d,\"loss\":%d}\n", i, i % 2 ? 1 : 3 }' >zig.jsonl
loss_ys() {	# loss_ys SVG: the distinct y of the first loss curve's points after its first
	$PY - "$1" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
g = s[s.index('id="gnuplot_plot_1a"'):]
d = re.search(r"d='([^']*)'", g).group(1)
ys = [float(y) for y in re.findall(r"-?[\d.]+,(-?[\d.]+)", d)[2:]]	# less the key's sample
print(len(ys), len(set(ys[1:])))
PY
}
check "--smooth 2" vit-plot --smooth 2 -o sm.svg zig.jsonl
[ "$(loss_ys sm.svg)" = "40 1" ] && ok "--smooth 2 flattens a 1, 3 zigzag, every point drawn" || nok "--smooth 2: $(loss_ys sm.svg)"
check "no --smooth" vit-plot -o zz.svg zig.jsonl
[ "$(loss_ys zz.svg)" = "40 2" ] && ok "... which is drawn as logged without it" || nok "no --smooth: $(loss_ys zz.svg)"
check_grep "the loss panel says it is smoothed" "loss .mean of the last 2." sm.svg
{ head -n 20 zig.jsonl; echo '{"step":21,"loss":nan}'; tail -n 19 zig.jsonl; } >zign.jsonl
check "--smooth over a nan" vit-plot --smooth 2 -o smn.svg zign.jsonl
[ "$(loss_ys smn.svg)" = "39 2" ] && ok "... a nan leaves a gap and starts the mean again" || nok "--smooth, nan: $(loss_ys smn.svg)"
check_exit 2 "--smooth 0 is a usage error" vit-plot --smooth 0 zig.jsonl
check "ten runs" vit-plot -o ten.svg zig.jsonl zig.jsonl zig.jsonl zig.jsonl zig.jsonl zig.jsonl zig.jsonl zig.jsonl zig.jsonl zig.jsonl
n=$($PY - ten.svg <<'PY'
import re, sys
s = open(sys.argv[1]).read()
looks = set()
for i in range(1, 11):
    g = s[s.index('id="gnuplot_plot_%da"' % i):]
    p = re.search(r"<path([^>]*)d='", g).group(1)
    looks.add((re.search(r"stroke='([^']*)'", p).group(1), re.search(r"stroke-dasharray='([^']*)'", p) and re.search(r"stroke-dasharray='([^']*)'", p).group(1)))
print(len(looks))
PY
)
[ "$n" = 10 ] && ok "ten runs are drawn in ten colour and dash pairs" || nok "ten runs: $n looks"

# A killed run's partial last line is skipped, with a warning.
{ cat a.jsonl; printf '{"step":31,"epoch":3.1,"loss":2.1'; } >partial.jsonl
check_exit 0 "a partial last line is no error" vit-plot -o p.svg partial.jsonl
check_grep "a partial last line is warned of, by line" "^vit-plot: partial.jsonl:$(($(wc -l <a.jsonl) + 1)): .*partial" "$T/err"
check "the partial log's complete lines are all drawn" svg_check p.svg partial.jsonl=partial.jsonl
# A title or file name that starts with ' (gnuplot read '' as an empty
# string, and failed), and a point past what a plot holds, skipped and said
# (issue 39: one step of 1e308 failed the plot).
check "a title starting with '" vit-plot -o q.svg -t "'quoted" a.jsonl
check "... drawn, named so" svg_check q.svg "'quoted=a.jsonl"
cp a.jsonl "'q.jsonl"
check "a file name starting with '" vit-plot -o q2.svg "'q.jsonl"
check "... drawn, named so" svg_check q2.svg "'q.jsonl='q.jsonl"
{ cat a.jsonl; echo '{"step":1e308,"loss":2.1,"lr":1e-3}'; } >far.jsonl
check "a point at step 1e308 is no error" vit-plot -o far.svg far.jsonl
check_grep "... it is skipped, and said" "^vit-plot: far.jsonl: 2 points skipped, past what a plot holds \(line $(($(wc -l <a.jsonl) + 1)): step 1e\+308" "$T/err"
check "... the rest is drawn" svg_check far.svg far.jsonl=a.jsonl
echo '{"step":1e308,"loss":2.1}' >far1.jsonl
check_exit 1 "a log of that point alone is an error" vit-plot far1.jsonl
check_grep "... which says so" "^vit-plot: far1.jsonl: no point left to plot" "$T/err"
# A bad whole line is an error naming file and line; nan (a diverged run) is not.
{ head -n 3 a.jsonl; echo '{"step":4,"loss":2.1,}'; tail -n +4 a.jsonl; } >bad.jsonl
check_exit 1 "a bad line is an error" vit-plot bad.jsonl
check_grep "the error names the file and the line" "^vit-plot: bad.jsonl:4: " "$T/err"
for l in '{"step":4 "loss":1}' '{"step":4,"loss":1.}' '["step",4]' '{"step":4,"loss":1} x' '{"step":4,"loss":"1\q"}'; do
	printf '%s\n%s\n' '{"step":1,"loss":2}' "$l" >bad2.jsonl
	check_exit 1 "not JSON: $l" vit-plot bad2.jsonl
	check_grep "... at bad2.jsonl:2" "^vit-plot: bad2.jsonl:2: " "$T/err"
done
printf '%s\n' '{"step":1,"loss":2.3,"lr":1e-3,"note":{"a":[1,true,null]}}' '{"step":2,"loss":nan}' \
    '{"step":3,"loss":2.1,"lr":5e-4}' >nan.jsonl
check "nan and nested values are read" vit-plot -o nan.svg nan.jsonl
check "the nan point is left out" svg_check nan.svg nan.jsonl=nan.jsonl
echo '{"epoch":1,"other":2}' >none.jsonl
check_exit 1 "a log with no training or validation line is an error" vit-plot none.jsonl

# A gzip-compressed log (as experiments/ keeps them) reads as the log
# itself, in one member or several, from a file or stdin; corrupt or
# truncated data is an error, and so is a stream that expands past the
# bound (a decompression bomb), in little memory.
vit-plot -o plain.txt -t a a.jsonl 2>"$T/err" && gzip -9n <a.jsonl >a.jsonl.gz &&
    check "a gzip-compressed log is read" vit-plot -o gz.txt -t a a.jsonl.gz &&
    cmp -s plain.txt gz.txt && ok "... and drawn as the log itself" || nok "gz.txt differs from plain.txt"
{ head -n 5 a.jsonl | gzip; tail -n +6 a.jsonl | gzip; } >two.gz
check "... in two gzip members" vit-plot -o two.txt -t a two.gz
cmp -s plain.txt two.txt && ok "... drawn the same" || nok "two.txt differs"
vit-plot -o stdin.txt -t a - <a.jsonl.gz 2>"$T/err" && cmp -s plain.txt stdin.txt &&
    ok "... and from stdin" || nok "a gzip log on stdin: $(head -c 300 "$T/err")"
head -c $(($(wc -c <a.jsonl.gz) - 9)) a.jsonl.gz >cut.gz
check_exit 1 "a truncated gzip log is an error" vit-plot cut.gz
check_grep "... that says so" "^vit-plot: cut.gz: gzip: truncated" "$T/err"
{ head -c 20 a.jsonl.gz; head -c 200 /dev/urandom; } >junk.gz
check_exit 1 "corrupt gzip data is an error" vit-plot junk.gz
check_grep "... naming the file" "^vit-plot: junk.gz: " "$T/err"
head -c 50000000 /dev/zero | gzip -9 >bomb.gz
mem=$($PY - vit-plot bomb.gz 2>"$T/err" <<'PY'
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
)
check_grep "a gzip stream that expands past 64 times is refused" "^vit-plot: bomb.gz: gzip: expands more than 64 times" "$T/err"
lim=65536; [ "${SAN:-0}" = 1 ] && lim=262144	# AddressSanitizer's own memory
[ "$mem" -lt $lim ] && ok "... in little memory (${mem} KB for 50 MB of zeros in $(wc -c <bomb.gz) bytes)" ||
    nok "the bomb took ${mem} KB"

# -o is atomic: a failure leaves the old file and no temporary.
echo old >keep.png
check_exit 1 "a bad log, -o an existing file" vit-plot -o keep.png bad.jsonl
PATH="$TOP/$BIN" "$TOP/$BIN/vit-plot" -o keep.png a.jsonl 2>"$T/err" && nok "gnuplot missing: exit 0" ||
    check_grep "gnuplot missing is an error that says so" "^vit-plot: gnuplot: .*gnuplot-nox" "$T/err"
[ "$(cat keep.png)" = old ] && ok "the old file is untouched" || nok "keep.png was changed"
[ -z "$(ls | grep '\.tmp\.')" ] && ok "no temporary left" || nok "left: $(ls | grep '\.tmp\.')"

check_exit 2 "no LOG is a usage error" vit-plot
check_exit 2 "an unknown suffix is a usage error" vit-plot -o c.jpg a.jsonl
check_exit 2 "an unknown --format is a usage error" vit-plot -f gif a.jsonl
check_exit 2 "more titles than logs is a usage error" vit-plot -t a -t b a.jsonl
check_exit 2 "a bad --size is a usage error" vit-plot --size 640 a.jsonl
script -qec "$TOP/$BIN/vit-plot -f png a.jsonl; echo rc=\$?" /dev/null >tty.txt 2>&1
check_grep "a PNG is not written to a terminal" "^vit-plot: .*terminal" tty.txt
check_grep "... exit 1" "rc=1" tty.txt
script -qec "$TOP/$BIN/vit-plot -f pdf a.jsonl; echo rc=\$?" /dev/null >tty.txt 2>&1
check_grep "nor a PDF" "^vit-plot: .*terminal" tty.txt

# A full disk: the write fails, the exit says so, the old plot stays
# (a small tmpfs in a mount namespace of our own; root only).
if unshare -m true 2>/dev/null; then
	unshare -m sh -c '
	    mount -t tmpfs -o size=256k tmpfs "$1" || exit 3
	    cp d.png "$1/old.png" || exit 3
	    dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null
	    "$2/vit-plot" -o "$1/old.png" a.jsonl 2>"$3/err.full"; echo "rc=$?" >"$3/rc.full"
	    for f in png svg pdf; do "$2/vit-plot" -o "$1/new.$f" a.jsonl 2>>"$3/err.full" && echo "$f=0" >>"$3/rc.full"; done
	    cmp -s d.png "$1/old.png" && echo same >>"$3/rc.full"
	    ls "$1" >"$3/ls.full"' sh "$(mktemp -d)" "$TOP/$BIN" "$T"
	check_grep "a full disk is an error (exit 1)" "^rc=1" "$T/rc.full"
	check_grep "... that names the file and says why" "^vit-plot: .*old.png: No space left" "$T/err.full"
	grep -q '=0' "$T/rc.full" && nok "a new PNG, SVG or PDF on a full disk exited 0: $(cat "$T/rc.full")" ||
	    ok "a new PNG, SVG or PDF on a full disk is an error"
	check_grep "the old plot is as it was" "^same" "$T/rc.full"
	[ "$(grep -v '^fill$' "$T/ls.full" | tr '\n' ' ')" = "old.png " ] && ok "and nothing else is left there" ||
	    nok "left on the full disk: $(tr '\n' ' ' <"$T/ls.full")"
else
	echo "# skipped the full-disk check: no mount namespace here"
fi
# /dev/full is written in place, never replaced by a file.
[ -c /dev/full ] && [ -w /dev/full ] && {
	check_exit 1 "-o /dev/full is an error" vit-plot -o /dev/full -f png a.jsonl
	[ -c /dev/full ] && ok "/dev/full is still a device" || {
		nok "/dev/full was replaced"; rm -f /dev/full; mknod -m 666 /dev/full c 1 7; }; }
cd "$TOP"

# The man page's examples, on these logs (liere's with a partial last line).
mkdir -p "$T/ex-vit-plot"
cp "$W/partial.jsonl" "$T/ex-vit-plot/liere.jsonl"
cp "$W/b.jsonl" "$T/ex-vit-plot/rope.jsonl"
run_examples vit-plot
[ "$(png_size "$T/ex-vit-plot/curves.png" 2>&1)" = "800 1200" ] && ok "vit-plot(1)'s example wrote curves.png" ||
    nok "vit-plot(1)'s example's curves.png: $(png_size "$T/ex-vit-plot/curves.png" 2>&1 | tail -n 1)"
finish
