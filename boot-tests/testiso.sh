#!/bin/bash
# boot-tests/testiso.sh PRODUCT.iso TEST.iso: the ISO the live tests boot = the
# product ISO (what `make iso` builds and a user gets) with the test hook added to
# its root image by our own iso/remaster:
#   iso/remaster --add HOOK --run 'sh /usr/lib/livesquash-test/install' PRODUCT TEST
# where HOOK is boot-tests/hook/mkhook.sh's tree. Nothing else differs (run.sh
# checks it: hook.exclude lists what may). Rebuilt only when the product ISO, the
# hook or the remaster changed (a key in TEST.iso.key).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
product=${1:?usage: testiso.sh PRODUCT.iso TEST.iso}
test=${2:?usage: testiso.sh PRODUCT.iso TEST.iso}
[[ -f $product ]] || {
	echo "testiso: $product missing: run 'make iso'" >&2
	exit 1
}
key=$( {
	sha256sum <"$product"
	cat "$here"/hook/* "$top/iso/remaster" "$0"
} | sha256sum | cut -c1-32)
if [[ -f $test && $(cat "$test.key" 2>/dev/null) == "$key" ]]; then
	echo "testiso: $test is up to date"
	exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/livesquash-testiso.XXXXXX")
trap 'rm -rf -- "$work"' EXIT
bash "$here/hook/mkhook.sh" "$work/hook"
rm -f "$test" "$test.key"
mkdir -p "$(dirname "$test")"
bash "$top/iso/remaster" --add "$work/hook" --run 'sh /usr/lib/livesquash-test/install' "$product" "$test"
echo "$key" >"$test.key"
