#!/bin/bash
# Make a hybrid BIOS+UEFI live ISO with grub-mkrescue: kernel and initrd in
# /boot, the root image in /LiveOS, a GRUB menu on serial and screen.
# usage: mkiso.sh OUT.iso ISO_TREE KERNEL INITRD CDLABEL NAME
set -euo pipefail

usage="usage: mkiso.sh OUT.iso ISO_TREE KERNEL INITRD CDLABEL NAME"
out=${1:?$usage}
tree=${2:?$usage}
kernel=${3:?$usage}
initrd=${4:?$usage}
label=${5:?$usage}
name=${6:?$usage}
here=$(cd "$(dirname "$0")" && pwd)

die() { echo "iso: $*" >&2; exit 1; }
for t in grub-mkrescue xorriso mformat implantisomd5; do
    command -v "$t" > /dev/null || die "$t missing: run 'make deps'"
done
[[ -d /usr/lib/grub/i386-pc ]] || die "GRUB BIOS files missing: run 'make deps' (grub-pc-bin)"
[[ -d /usr/lib/grub/x86_64-efi ]] || die "GRUB UEFI files missing: run 'make deps' (grub-efi-amd64-bin)"
[[ -f $kernel ]] || die "kernel $kernel missing: run 'make kernel' (or set KERNEL=)"
[[ -f $initrd ]] || die "initrd $initrd missing: run 'make initramfs'"
[[ -f $tree/LiveOS/squashfs.img ]] || die "$tree/LiveOS/squashfs.img missing: run 'make image'"
[[ $label =~ ^[A-Z0-9_]{1,32}$ ]] || die "CDLABEL '$label' must be 1-32 characters of A-Z 0-9 _ (ISO 9660 volume id)"

cmdline="root=live:CDLABEL=$label rd.live.image console=tty0 console=ttyS0,115200"
sde=${SOURCE_DATE_EPOCH:?SOURCE_DATE_EPOCH must be set (make sets it)}
params="$label|$name|$cmdline|$(readlink -f "$kernel")|$sde|$(sha256sum < "$here/mkiso.sh" | cut -c1-16)"
if [[ -f $out && $(cat "$out.params" 2> /dev/null) == "$params" ]] \
    && [[ $out -nt $kernel && $out -nt $initrd && $out -nt $tree/LiveOS/squashfs.img ]]; then
    echo "iso: $out is up to date"
    exit 0
fi

echo "iso: kernel $kernel and initrd into $tree/boot"
mkdir -p "$tree/boot/grub"
cp "$kernel" "$tree/boot/vmlinuz"
cp "$initrd" "$tree/boot/initrd.img"
chmod 0644 "$tree/boot/vmlinuz" "$tree/boot/initrd.img"

# the menu entries: title suffix and the options they add to $cmdline
entries=(
    "|"
    " (copy to RAM)|rd.live.ram"
    " (persistent: partition LSPERSIST, see iso/mkpersist)|rd.live.overlay=LABEL=LSPERSIST"
    " (check the medium first)|rd.live.check"
    " (debug shell)|rd.shell rd.debug"
)
# menu_entries EXTRA: the entries, each with EXTRA appended to its command line
menu_entries() {
    local e title opts
    for e in "${entries[@]}"; do
        title=${e%%|*}
        opts=${e#*|}
        printf '\nmenuentry "livesquash (%s)%s" {\n' "$name" "$title"
        printf '\techo "Loading kernel and initrd ..."\n'
        printf '\tlinux /boot/vmlinuz %s\n' "$cmdline${opts:+ $opts}$1"
        printf '\tinitrd /boot/initrd.img\n}\n'
    done
}

echo "iso: GRUB menu (serial + screen, timeout 3 s, root=live:CDLABEL=$label; ${#entries[@]} entries) and loopback.cfg"
{
    cat <<EOT
# livesquash live ISO ($name)
serial --unit=0 --speed=115200
terminal_input serial console
terminal_output serial console
set timeout=3
set default=0
EOT
    menu_entries ""
} > "$tree/boot/grub/grub.cfg"
# GRUB's loopback.cfg convention (multiboot sticks, a GRUB `loopback` of the
# ISO file): the caller sets root to the looped ISO and iso_path to the file's
# path on its disk; the initramfs finds the file again with iso-scan/filename=
{
    echo "# livesquash live ISO ($name), booted from an ISO file: GRUB's loopback.cfg"
    # shellcheck disable=SC2016 # ${iso_path} is GRUB's
    menu_entries ' iso-scan/filename=${iso_path}'
} > "$tree/boot/grub/loopback.cfg"

echo "iso: grub-mkrescue (BIOS + UEFI hybrid, volume $label) -> $out"
start=$SECONDS
mkdir -p "$(dirname "$out")"
rm -f "$out.params"
# -hfsplus off: grub-mkrescue would add an HFS+ tree for Intel Macs, whose GPT
# partition carries the same label; on a USB stick udev's by-label link then
# names that partition and the live medium is not found (seen: "cannot mount
# /dev/sda3: unknown filesystem type 'hfsplus'")
# Reproducible: every date of the ISO (volume dates, the UUID GRUB's EFI image
# searches for, each file's) is SOURCE_DATE_EPOCH; the FAT of the EFI image gets a
# serial number made from it (grub-mkrescue runs mformat without -N, which takes
# one from the clock) through an mformat first in PATH
wrap=$(mktemp -d)
trap 'rm -rf -- "$wrap"' EXIT
printf '#!/bin/sh\nexec %q -N %08x "$@"\n' "$(command -v mformat)" $((sde & 0xffffffff)) > "$wrap/mformat"
chmod +x "$wrap/mformat"
isodate=$(date -u -d "@$sde" +%Y%m%d%H%M%S00)
if ! SOURCE_DATE_EPOCH=$sde PATH=$wrap:$PATH grub-mkrescue -o "$out.tmp" "$tree" -- -volid "$label" -hfsplus off \
    -volume_date uuid "$isodate" -volume_date all_file_dates "=$sde" \
    -volume_date c "=$sde" -volume_date m "=$sde" > "$out.log" 2>&1; then
    rm -f "$out.tmp"
    tail -n 20 "$out.log" >&2
    die "grub-mkrescue failed, full log in $out.log"
fi
# the ISO's MD5 in its header, as Fedora's media have it: checkisomd5 (dracut's
# rd.live.check, a user's own check of a written stick) verifies the whole medium
implantisomd5 --force "$out.tmp" >> "$out.log" 2>&1 || die "implantisomd5 failed, log in $out.log"
mv "$out.tmp" "$out"
echo "$params" > "$out.params"
echo "iso: $out: $(du -h "$out" | cut -f1), label $(blkid -o value -s LABEL "$out"), in $((SECONDS - start)) s"
