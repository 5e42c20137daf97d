#!/bin/bash
# iso/sb-files.sh DEST: the Secure Boot parts livesquash does not build, from the
# host's own Debian release through apt (apt-get download into DEST/debs,
# dpkg-deb -x into DEST/root; nothing is installed):
#   shim-signed                 shimx64.efi.signed: shim, signed by Microsoft's UEFI CA
#   shim-helpers-amd64-signed   mmx64.efi.signed: MokManager, to enroll a MOK
#   grub-efi-amd64-signed       of the host's GRUB version: its SBAT metadata, which
#                               our own GRUB image (the same GRUB) carries too
# Kept while the versions stay the same. A package apt cannot fetch gets one line
# naming it and leaves DEST/root as it was.
set -euo pipefail

dest=$(realpath -m "${1:?usage: sb-files.sh DEST}")
die() { echo "sb-files: $*" >&2; exit 1; }
release=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release)
gv=$(dpkg-query -W -f='${Version}' grub-efi-amd64-bin 2>/dev/null) ||
	die "grub-efi-amd64-bin is not installed: install it (a checkout: make deps)"
# Debian's signed GRUB of GRUB 2.06-13+deb12u2 is 1+2.06+13+deb12u2
pkgs=(shim-signed shim-helpers-amd64-signed "grub-efi-amd64-signed=1+${gv//-/+}")
stamp="$release ${pkgs[*]}"
if [[ -f $dest/root/.stamp && $(cat "$dest/root/.stamp") == "$stamp" ]]; then
	exit 0
fi
mkdir -p "$dest/debs"
rm -f "$dest"/debs/*.deb
for p in "${pkgs[@]}"; do
	if ! apt-cache show "$p" >/dev/null 2>&1; then
		echo "sb-files: apt does not know $p: running apt-get update" >&2
		apt-get update -q >"$dest/update.log" 2>&1 || die "apt-get update failed (see $dest/update.log)"
		break
	fi
done
for p in "${pkgs[@]}"; do
	(cd "$dest/debs" && apt-get download -q "$p" >"$dest/download.log" 2>&1) ||
		die "cannot download $p from Debian $release ($(grep -m1 -E '^(E:|W:)' "$dest/download.log" || tail -n 1 "$dest/download.log"))"
done
tmp=$(mktemp -d "$dest/.root.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT
for d in "$dest"/debs/*.deb; do
	dpkg-deb -x "$d" "$tmp" || die "cannot unpack $d"
done
for f in usr/lib/shim/shimx64.efi.signed usr/lib/shim/mmx64.efi.signed \
	usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed; do
	[[ -s $tmp/$f ]] || die "the packages ${pkgs[*]} have no $f"
done
echo "$stamp" >"$tmp/.stamp"
rm -rf "$dest/root"
mv "$tmp" "$dest/root"
echo "sb-files: ${pkgs[*]} (Debian $release) in $dest/root"
