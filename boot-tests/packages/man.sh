#!/bin/bash
# boot-tests/packages/man.sh: each tool's --help and man page agree with what the
# tool accepts, and livesquash.cmdline(7) with what the dracut module reads. TAP,
# last line "N passed, N failed"; no root, nothing built but the man pages (scdoc).
# For each tool iso/NAME (the command livesquash-NAME):
#   - the options its argument loop accepts (its case labels) are the options its
#     man page (iso/man/livesquash-NAME.1.scd) defines, no more, no fewer;
#   - --help runs (exit 0) and names every one of them (but -h/--help), and every
#     option --help defines (a line, or a [...] of the usage, that starts with it)
#     is one the tool accepts;
#   - the page renders (scdoc) and man(1) formats it without a warning.
# For the dracut module: the rd.live.* and iso-scan/ options its scripts read
# (getarg, getargbool, getargnum) are the ones livesquash.cmdline(7) defines
# (rd.live.image: documented as accepted and ignored, read by none).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=${TOP:-$(cd "$here/../.." && pwd)}
# shellcheck disable=SC1091 # lib.sh, one folder up
source "$TOP/boot-tests/lib.sh"
export LC_ALL=C
tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT

# the options a tool's argument loop accepts: its case labels that start with "-"
# ("--add) ...", "--add=*) ...", "-h | --help)"), and the "${1:-} != --help" tests
# of the tools without a loop
accepted() {
	{
		sed -nE 's/^[[:space:]]*(-[^)]*)\).*/\1/p' "$1" | tr '|' '\n'
		grep -oE '\$\{1:-\} != -[-a-z]+' "$1" | awk '{ print $3 }'
	} | sed -E 's/[[:space:]]//g; s/=\*$//' | grep -vxE -- '-\*|--|-' | sort -u
}
# the options a man page defines: its option headings ("*-f*, *--force*", at the
# start of a line)
man_defined() {
	grep -E '^\*-' "$1" | grep -oE '\*-[-a-zA-Z0-9]+\*' | tr -d '*' | sort -u
}
# the options --help defines: at the start of a line, or of a [...] in it
help_defined() {
	grep -oE '(^[[:space:]]*|\[)-[-a-zA-Z0-9]+' "$1" | sed -E 's/^[[:space:][]*//' | sort -u
}
# diff_sets WHAT-A A WHAT-B B: nothing, or the differences as lines
diff_sets() {
	comm -23 "$2" "$4" | awk -v a="$1" -v b="$3" '{ print "in " a ", not in " b ": " $0 }'
	comm -13 "$2" "$4" | awk -v a="$1" -v b="$3" '{ print "in " b ", not in " a ": " $0 }'
}
check_tool() { # NAME
	local t=$1 scd=$TOP/iso/man/livesquash-$1.1.scd d=$tmp/$1 out
	mkdir -p "$d"
	accepted "$TOP/iso/$t" >"$d/accepted"
	[[ -s $d/accepted ]] || { echo "no options found in iso/$t"; return 1; }
	[[ -f $scd ]] || { echo "no man page $scd"; return 1; }
	man_defined "$scd" >"$d/man"
	out=$(diff_sets "iso/$t" "$d/accepted" "its man page" "$d/man")
	[[ -z $out ]] || { echo "$out"; return 1; }
}
check_help() { # NAME
	local t=$1 d=$tmp/$1 o missing=()
	bash "$TOP/iso/$t" --help >"$d/help" 2>"$d/help.err" || { echo "--help exits non-zero: $(tail -n 1 "$d/help.err")"; return 1; }
	[[ -s $d/help ]] || { echo "--help prints nothing on stdout"; return 1; }
	while read -r o; do
		[[ $o == -h || $o == --help ]] && continue
		grep -qE -- "(^|[^-[:alnum:]])$o([^-[:alnum:]]|\$)" "$d/help" || missing+=("$o")
	done <"$d/accepted"
	((${#missing[@]} == 0)) || { echo "--help does not name ${missing[*]}"; return 1; }
	help_defined "$d/help" >"$d/help.defined"
	local extra
	extra=$(comm -23 "$d/help.defined" "$d/accepted")
	[[ -z $extra ]] || { echo "--help defines options iso/$t does not accept: $extra"; return 1; }
}
check_render() { # SCD-FILE
	local roff=$tmp/${1##*/}.roff warn
	scdoc <"$1" >"$roff" 2>"$roff.err" || { cat "$roff.err"; return 1; }
	warn=$(MANWIDTH=80 man --warnings -l "$roff" 2>&1 >/dev/null) || true
	[[ -z $warn ]] || { echo "$warn"; return 1; }
	grep -q '^\.SH' "$roff" || { echo "no sections in the rendered page"; return 1; }
}

if ! command -v scdoc >/dev/null; then
	tap_notok "scdoc is installed (make deps)"
fi
for t in remaster check-iso mkpersist mknetboot signiso sbkeys; do
	tap_test "[man] livesquash-$t(1) defines exactly the options iso/$t accepts" check_tool "$t"
	tap_test "[man] iso/$t --help names every option it accepts and defines no other" check_help "$t"
	! command -v scdoc >/dev/null ||
		tap_test "[man] livesquash-$t(1) renders (scdoc, man --warnings)" check_render "$TOP/iso/man/livesquash-$t.1.scd"
done

# the dracut options
cmdline=$TOP/dracut-module/livesquash.cmdline.7.scd
check_cmdline() {
	local d=$tmp/cmdline
	mkdir -p "$d"
	grep -hoE 'getarg(bool|num)?( +[^ ]+)* +(rd\.live[a-z0-9.]*|iso-scan/[a-z]+)=?' "$TOP"/dracut-module/90livesquash/*.sh |
		grep -oE '(rd\.live[a-z0-9.]*|iso-scan/[a-z]+)' | sort -u >"$d/read"
	[[ -s $d/read ]] || { echo "no getarg of an rd.live option found in dracut-module/90livesquash"; return 1; }
	grep -E '^\*(rd\.live|iso-scan/)' "$cmdline" | grep -oE '(rd\.live[a-z0-9.]*[a-z0-9]|iso-scan/[a-z]+)' |
		grep -vx rd.live.image | sort -u >"$d/man"
	local out
	out=$(diff_sets "the module's scripts" "$d/read" "livesquash.cmdline(7)" "$d/man")
	[[ -z $out ]] || { echo "$out"; return 1; }
	! grep -qE 'getarg[a-z]* +(.* )?rd\.live\.image' "$TOP"/dracut-module/90livesquash/*.sh ||
		{ echo "rd.live.image is read by the module, but the page says it is ignored"; return 1; }
}
tap_test "[man] livesquash.cmdline(7) defines exactly the rd.live.* and iso-scan/ options 90livesquash reads" check_cmdline
! command -v scdoc >/dev/null || tap_test "[man] livesquash.cmdline(7) renders (scdoc, man --warnings)" check_render "$cmdline"
tap_summary
((LS_FAIL == 0))
