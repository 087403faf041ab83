#!/bin/sh
# Hostile input (issue 19): each reader's cost in memory, time and disk is
# bounded by what its input carries, and no input makes a reader open
# another file.  Every command here runs under a memory and time limit
# (limited), so a regression fails its check instead of eating the machine.
. tests/sh/lib.sh
cd "$T" || exit 1
MEM=1048576	# KiB of address space a command may take (ulimit -v)

# limited SECONDS command...: run under the limits, stdout in out, stderr in err.
limited() {
	local s=$1; shift
	(ulimit -v $MEM; exec timeout "$s" "$@") >out 2>err
}
# refused "what" pattern command...: exit 1 within 20 s and the limits, with
# a "prog: " message matching pattern.
refused() {
	local d=$1 pat=$2 rc; shift 2
	limited 20 "$@"; rc=$?
	if [ "$rc" -ne 1 ]; then nok "$d (exit $rc, wanted 1: $(head -c 300 err))"
	elif ! grep -q "^$(basename "$1"): " err; then nok "$d (no 'prog: ' message: $(head -c 300 err))"
	elif ! grep -Eq -- "$pat" err; then nok "$d (message '$(head -c 300 err)' lacks '$pat')"
	else ok "$d"; fi
}

# --- streams (lib/vt.c) ---
# A stream of no bytes per record declaring 10^12 of them (77 bytes).
printf 'VITPIPE 1\nBYTEORDER little\nALIGN 1\nRECORDS 1000000000000\nFIELD e u8 0\nENDHDR\n' >empty.vt
refused "RECORDS 10^12 of no bytes is refused at once" 'RECORDS 1000000000000 of no bytes: more than 1048576' vtool cat empty.vt
printf 'VITPIPE 1\nBYTEORDER little\nALIGN 1\nRECORDS 3\nFIELD e u8 0\nENDHDR\n' >empty3.vt
limited 20 vtool info empty3.vt && grep -q '3' out && ok "3 records of no bytes still read" || nok "3 records of no bytes (exit $?: $(head -c 200 err))"
# The 4 GiB limit of vitpipe(5) is per record, not per field.
{ printf 'VITPIPE 1\nBYTEORDER little\nALIGN 64\n'
  for i in 1 2 3 4 5 6 7 8; do printf 'FIELD f%d f64 536870912\n' $i; done
  printf 'ENDHDR\n'; } >wide.vt
# (fixed fields are allocated with the header, untouched: 6 GiB of address
# space for the first, which alone is within the limit)
MEM=6291456; refused "8 fields of 4 GiB: the record is over the limit" "field 'f2': record too large \\(limit 4294967296 bytes a record\\)" vtool info wide.vt; MEM=1048576
# '*' fields of 512 MiB and 3.75 GiB, each within the limit, not together
{ printf 'VITPIPE 1\nBYTEORDER little\nALIGN 1\nFIELD a u8 *\nFIELD b u8 *\nENDHDR\n'
  printf '\000\000\000\040\000\000\000\000\000\000\000\360\000\000\000\000'
  head -c 64 /dev/zero; } >dyn.vt
refused "'*' fields over the limit together in one record" "record 1: field 'b': record too large" vtool cat dyn.vt

finish
