#!/bin/bash
# shellcheck disable=SC2154 # dracut provides $moddir and $initdir
# livesquash dracut module: boot a live medium whose root filesystem is
# LiveOS/squashfs.img, mounted read-only under a tmpfs-backed overlayfs.
# See ../README.md for the kernel command line and the mount points.

# called by dracut
check() {
    # Only when asked for (dracut -m/--add livesquash); never host-only guessed.
    return 255
}

# called by dracut
depends() {
    # overlayfs: dracut's own module mounts the overlay on $NEWROOT, as for
    # dmsquash-live (its mount hook 01 runs between our two)
    echo base udev-rules overlayfs
    return 0
}

# called by dracut (not with --no-kernel)
installkernel() {
    # Filesystems, loop and overlay, plus the drivers a CD/USB/virtual disk
    # needs.  With our own kernel these are built in and nothing is copied.
    hostonly='' instmods squashfs loop overlay isofs udf \
        sr_mod cdrom sd_mod ata_piix ata_generic pata_acpi ahci \
        virtio_blk virtio_scsi virtio_pci \
        usb_storage uas xhci_pci xhci_hcd ehci_pci ehci_hcd ohci_pci uhci_hcd
    return 0
}

# root=live:http(s)://, with dracut's network module in the image (dracut -m
# "... livesquash network", as make netboot builds it): its netroot handler,
# curl for the download, nbdkit's curl plugin, nbd-client and veritysetup
# (dm-verity) for rd.live.net=stream, the CA certificates for https
livesquash_install_net() {
    dracut_module_included "network" || dracut_module_included "network-legacy" || return 0
    inst_script "$moddir/livesquash-netroot.sh" /sbin/livesquashroot
    chmod 0755 "${initdir}/sbin/livesquashroot"
    inst_multiple curl nbdkit nbd-client veritysetup
    # (dracut-install follows the libraries of executables only, not of a
    # plugin: ldd lists them, all of them)
    local _conf _so
    _conf=$(nbdkit --dump-config 2> /dev/null)
    for _so in "$(echo "$_conf" | sed -n 's/^plugindir=//p')/nbdkit-curl-plugin.so" \
        "$(echo "$_conf" | sed -n 's/^filterdir=//p')/nbdkit-retry-request-filter.so"; do
        # shellcheck disable=SC2046 # one path per word
        inst_multiple "$_so" $(ldd "$_so" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p')
    done
    inst_multiple -o /etc/ssl/certs/ca-certificates.crt
}

# called by dracut
install() {
    if dracut_module_included "systemd"; then
        dwarn "livesquash: a systemd initramfs is not supported; build with -o \"systemd systemd-initrd dracut-systemd\""
    fi

    # what the hooks call besides dracut's base (mount umount mkdir readlink
    # rm sed tr ...): checkisomd5 (isomd5sum) is optional, for rd.live.check
    inst_multiple blkid losetup stat dd sha256sum timeout
    inst_multiple -o checkisomd5
    inst_simple "$moddir/livesquash-lib.sh" "/lib/livesquash-lib.sh"
    # rd.live.ram=background: livesquash-loopswap.c, compiled into this
    # folder by iso/mkinitramfs.sh (cc -O2 livesquash-loopswap.c)
    if [[ -x $moddir/livesquash-loopswap ]]; then
        inst_binary "$moddir/livesquash-loopswap" /usr/lib/livesquash/loopswap
    else
        dwarn "livesquash: no $moddir/livesquash-loopswap (compile livesquash-loopswap.c): rd.live.ram=background will boot from the medium"
    fi
    livesquash_install_net
    inst_hook cmdline 25 "$moddir/parse-livesquash.sh"
    inst_hook mount 00 "$moddir/mount-livesquash.sh"
    inst_hook mount 99 "$moddir/mount-livesquash-overlay.sh"

    # The non-systemd emergency path calls halt/poweroff/reboot (rd.shell=0,
    # rd.emergency=...).  A host with systemd provides them only as links to
    # systemctl, which cannot work without systemd as PID 1: install
    # forcing wrappers around busybox instead.
    local _busybox _cmd
    _busybox=$(command -v busybox 2> /dev/null || :)
    if [[ -n $_busybox ]] && ! dracut_module_included "systemd"; then
        inst_binary "$_busybox" /usr/lib/livesquash/busybox
        for _cmd in halt poweroff reboot; do
            inst_simple "$moddir/livesquash-$_cmd.sh" "/usr/sbin/$_cmd"
            chmod 0755 "${initdir}/usr/sbin/$_cmd"
        done
    fi

    dracut_need_initqueue
}
