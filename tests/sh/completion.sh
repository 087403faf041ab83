# completion.sh - bash and zsh completion made from the commands' --help
# (completion/gen.sh): every command's long options, --pe's encodings from
# the registry, vtool's subcommands, else file names.
. tests/sh/lib.sh
sh completion/gen.sh bash "$BIN" > "$T/vitpipe.bash" || nok "gen.sh bash"
sh completion/gen.sh zsh "$BIN" > "$T/_vitpipe" || nok "gen.sh zsh"
# comp WORD...: bash's completions of the last word of the command line.
comp() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _vitpipe; echo "${COMPREPLY[*]}"' \
	    sh "$T/vitpipe.bash" "$@"
}
[ "$(comp vit-train --shuffle-b)" = "--shuffle-buffer" ] && ok "vit-train --shuffle-b: --shuffle-buffer" ||
	nok "vit-train --shuffle-b: $(comp vit-train --shuffle-b)"
[ "$(comp patchify --cla)" = "--classes" ] && ok "patchify --cla: --classes" || nok "patchify --cla: $(comp patchify --cla)"
[ "$(comp vit-plot --f)" = "--format" ] && ok "vit-plot --f: --format" || nok "vit-plot --f: $(comp vit-plot --f)"
[ "$(comp vit-train --pe lie)" = "liere:" ] && ok "--pe lie: liere:" || nok "--pe lie: $(comp vit-train --pe lie)"
# every encoding of the registry, as vit-train's --help names them
n=$(comp skewgen --pe "" | wc -w)
[ "$n" -ge 12 ] && [ -n "$(comp flops --pe comrope-l)" ] && ok "--pe: the registry's $n encodings" || nok "--pe: $n encodings"
[ "$(comp vtool from)" = "from-npy from-safetensors" ] && ok "vtool from: its subcommands" || nok "vtool from: $(comp vtool from)"
[ "$(comp vtool from-safetensors --li)" = "--list" ] && ok "vtool's subcommands' options" ||
	nok "vtool from-safetensors --li: $(comp vtool from-safetensors --li)"
touch "$T/model-x.vt"
[ "$(comp vit-eval "$T/model-")" = "$T/model-x.vt" ] && ok "an operand: file names" || nok "file names: $(comp vit-eval "$T/model-")"
for c in "$BIN"/*; do
	n=$(basename "$c")
	grep -q "^	$n) opts=\".*--help" "$T/vitpipe.bash" || nok "bash: no options for $n"
done && ok "bash: every command has its options"
grep -q "^#compdef .*vit-train" "$T/_vitpipe" && ok "zsh: a #compdef for the commands" || nok "zsh: no #compdef"
# zsh (make deps installs it): the file parses, and as a completion
# function, with compadd recording what it is given, it offers vit-train's
# options and --pe's encodings.
check "zsh parses _vitpipe" zsh -n "$T/_vitpipe"
zc() {
	zsh -fc 'compadd() { while [ "$1" != -- ]; do shift; done; shift; print -r -- "$@"; }
	    _files() { print FILES; }
	    service=$1; shift; words=("$service" "$@"); CURRENT=${#words}; PREFIX=${words[CURRENT]}
	    . "$0"' "$T/_vitpipe" "$@"
}
zc vit-train --pat | grep -q -- '--patience' && ok "zsh: vit-train's options" || nok "zsh: $(zc vit-train --pat | head -c 200)"
zc vit-train --pe "" | grep -q 'liere:' && ok "zsh: --pe's encodings" || nok "zsh --pe: $(zc vit-train --pe '' | head -c 200)"
sh completion/gen.sh fish "$BIN" >/dev/null 2>"$T/err"
[ $? = 2 ] && grep -q "^gen.sh: usage" "$T/err" && ok "gen.sh: an unknown shell is a usage error" || nok "gen.sh fish: $(cat "$T/err")"
finish
