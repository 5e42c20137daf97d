#!/bin/bash
# boot-tests/testiso.sh PRODUCT.iso TEST.iso [SORT]: the ISO the live tests boot =
# the product ISO (what `make iso` builds and a user gets) with the test hook added
# to its root image by our own iso/remaster:
#   iso/remaster --add HOOK --run 'sh /usr/lib/livesquash-test/install' PRODUCT TEST
# where HOOK is boot-tests/hook/mkhook.sh's tree. Nothing else differs (run.sh
# checks it: hook.exclude lists what may). The remaster repacks the image, so a
# product packed in boot order (make iso with a profile: its image has a nonzero
# LiveOS/squashfs.img.prefetch) is packed again with --sort SORT, the profile it
# was made with (iso/boot-order/ROOTFS.sort), and boots as the product does.
# Rebuilt only when the product ISO, the hook, SORT or the remaster changed (a key
# in TEST.iso.key).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
product=${1:?usage: testiso.sh PRODUCT.iso TEST.iso}
test=${2:?usage: testiso.sh PRODUCT.iso TEST.iso [SORT]}
sort=${3:-}
[[ -f $product ]] || {
	echo "testiso: $product missing: run 'make iso'" >&2
	exit 1
}
key=$( {
	sha256sum <"$product"
	cat "$here"/hook/* "$top/iso/remaster" "$top/iso/boot-sort.sh" "$0"
	[[ -z $sort || ! -f $sort ]] || cat "$sort"
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
sortopt=()
if [[ -n $sort ]]; then
	xorriso -osirrox on -indev "$product" -extract /LiveOS/squashfs.img.prefetch "$work/prefetch" >/dev/null 2>&1 || true
	if [[ $(cat "$work/prefetch" 2>/dev/null) =~ ^[1-9][0-9]*$ ]]; then
		[[ -s $sort ]] || {
			echo "testiso: $product is packed in boot order, and its profile $sort is missing" >&2
			exit 1
		}
		sortopt=(--sort "$sort")
		echo "testiso: keeping the product's boot order ($sort)"
	fi
fi
bash "$top/iso/remaster" --add "$work/hook" --run 'sh /usr/lib/livesquash-test/install' "${sortopt[@]}" "$product" "$test"
echo "$key" >"$test.key"
