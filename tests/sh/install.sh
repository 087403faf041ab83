# install.sh - make install puts every command and man page in place, make
# uninstall takes them away again, and man finds the pages.
. tests/sh/lib.sh
check "make install DESTDIR" make -s install DESTDIR="$T/root" PREFIX=/usr
for c in cmd/*.c; do
	[ -e "$c" ] || continue
	n=$(basename "$c" .c)
	[ -x "$T/root/usr/bin/$n" ] && ok "installed bin/$n" || nok "bin/$n not installed"
	[ -f "$T/root/usr/share/man/man1/$n.1" ] && ok "installed man1/$n.1" || nok "man1/$n.1 not installed"
done
[ -f "$T/root/usr/share/man/man5/vitpipe.5" ] && ok "installed man5/vitpipe.5" || nok "man5/vitpipe.5 not installed"
[ -f "$T/root/usr/share/man/man7/vitpipe.7" ] && ok "installed man7/vitpipe.7" || nok "man7/vitpipe.7 not installed"
# Completion: bash-completion finds a command's by its name; zsh's _vitpipe.
C="$T/root/usr/share/bash-completion/completions"
[ -f "$C/vitpipe" ] && [ -f "$C/vit-train" ] && [ -f "$C/vtool" ] && ok "bash completion installed for each command" ||
	nok "bash completion: $(ls "$C" 2>&1 | tr '\n' ' ')"
bash -c ". '$C/vit-train'; COMP_WORDS=(vit-train --pati); COMP_CWORD=1; _vitpipe; echo \"\${COMPREPLY[*]}\"" >"$T/comp" 2>&1
check_grep "... and it completes vit-train's options" "^--patience$" "$T/comp"
[ -f "$T/root/usr/share/zsh/site-functions/_vitpipe" ] && ok "zsh completion installed" || nok "zsh's _vitpipe not installed"
if command -v man >/dev/null; then
	MANPATH="$T/root/usr/share/man" man -P cat 5 vitpipe >"$T/man" 2>&1
	check_grep "man 5 vitpipe finds the installed page" "tensor stream format" "$T/man"
fi
# Every page's rendering is checked by man.sh.
check "make uninstall" make -s uninstall DESTDIR="$T/root" PREFIX=/usr
left=$(find "$T/root" -type f | wc -l)
[ "$left" -eq 0 ] && ok "uninstall removes every file" || nok "uninstall left $left files"
finish
