#!/bin/sh
# gen.sh - shell completion for every vitpipe command, made from the
# commands themselves: each one's --help, which its option table prints
# (cliopt.c), gives its long options, and --pe's help the registry's
# encodings.  Nothing is typed here that a command could change.
#
#   sh completion/gen.sh bash|zsh BINDIR > FILE
set -eu
shell=$1 bin=$2
cmds=$(for f in "$bin"/*; do [ -x "$f" ] && basename "$f"; done | sort | tr '\n' ' ')

# The long options of command $1, one line: those its option lines start
# with, and those of vtool's subcommands' usage lines ("[--list]").
options() {
	"$bin/$1" --help 2>/dev/null | grep -oE '^ +(-[a-zA-Z0-9], )?--[a-z][a-z0-9-]*|(\[|\| )--[a-z][a-z0-9-]*' |
	    grep -oE -- '--[a-z][a-z0-9-]*' | sort -u | tr '\n' ' '
}
# vtool's subcommands, from its usage lines.
subcommands() {
	"$bin/vtool" --help 2>/dev/null | sed -n 's/^\(usage:\)\{0,1\} *vtool \([a-z-]*\).*/\2/p' |
	    sort -u | tr '\n' ' '
}
# --pe's encodings, from vit-train's --help (liere:B -> liere:).
encodings() {
	"$bin/vit-train" --help | sed -n '/--pe SPEC/,/--share/p' | sed '1d;$d' |
	    tr ' ' '\n' | grep -E '^[a-z][a-z0-9-]*(:B)?$' | sed 's/:B$/:/' | tr '\n' ' '
}

pe=$(encodings)
case $shell in
bash)
	cat <<EOF
# vitpipe commands' completion for bash, made by completion/gen.sh from
# the commands' --help.  Options after '-', --pe's encodings, vtool's
# subcommands, else file names.
_vitpipe() {
	local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]} opts=
	case \$prev in
	--pe) COMPREPLY=(\$(compgen -W "$pe" -- "\$cur")); compopt -o nospace 2>/dev/null; return ;;
	esac
	case \${COMP_WORDS[0]##*/} in
EOF
	for c in $cmds; do
		printf '\t%s) opts="%s" ;;\n' "$c" "$(options "$c")"
	done
	cat <<EOF
	esac
	if [ "\${COMP_WORDS[0]##*/}" = vtool ] && [ "\$COMP_CWORD" = 1 ]; then
		COMPREPLY=(\$(compgen -W "$(subcommands)" -- "\$cur"))
	elif [ "\${cur#-}" != "\$cur" ]; then
		COMPREPLY=(\$(compgen -W "\$opts" -- "\$cur"))
	else
		COMPREPLY=(\$(compgen -f -- "\$cur"))
	fi
}
complete -o filenames -F _vitpipe $cmds
EOF
	;;
zsh)
	cat <<EOF
#compdef $cmds
# vitpipe commands' completion for zsh, made by completion/gen.sh from
# the commands' --help.
local -a opts
case \$service in
EOF
	for c in $cmds; do
		printf '%s) opts=(%s) ;;\n' "$c" "$(options "$c")"
	done
	cat <<EOF
esac
if [[ \$words[CURRENT-1] == --pe ]]; then
	compadd -S '' -- $pe
elif [[ \$service == vtool && \$CURRENT == 2 ]]; then
	compadd -- $(subcommands)
elif [[ \$PREFIX == -* ]]; then
	compadd -- \$opts
else
	_files
fi
EOF
	;;
*)
	echo "gen.sh: usage: sh completion/gen.sh bash|zsh BINDIR" >&2
	exit 2
	;;
esac
