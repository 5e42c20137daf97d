#!/bin/bash
# shellcheck disable=SC2154,SC2034,SC2016 # here, TOP, LS_* ... come from run.sh; LB_* go to its live_boot; awk programs in single quotes
# boot-tests/netboot.sh: sourced by run.sh; suite_netboot (in make check).
#
# The network boot bundle (iso/mknetboot, as make netboot makes it) of the busybox
# test ISO, booted over QEMU's user network: its DHCP and TFTP (the bundle is the
# TFTP root) and boot-tests/netserver.py, an HTTP server on 127.0.0.1 the suite
# starts and stops (the guest reaches it as 10.0.2.2). Through the firmware's
# PXE:
#   bios-pxe      SeaBIOS + iPXE, TFTP boot/grub/i386-pc/core.0, GRUB entry 0
#                 (download), the server closing every connection after 300 KB:
#                 the download resumes
#   uefi-pxe      OVMF, TFTP boot/grub/x86_64-efi/core.efi, GRUB entry 1 (stream),
#                 the server closing connections the same way: nbdkit asks again
#   uefi-pxe-download  the same, GRUB entry 0 (download)
#   bios-ipxe     iPXE chaining http://.../boot-stream.ipxe (kernel and initrd
#                 over HTTP), stream mode, the server limited to 200 KB/s
# each running the guest checks (guest.sh, LS_NET: the root image came over the
# network, its files equal the host's manifest, and in stream mode the loop device
# switches to the checked RAM copy and the NBD device is let go). Then the bad
# inputs, each a direct boot of the bundle's kernel and initramfs that must end
# with its one message and nothing mounted: no network, server down, 404,
# truncated image, wrong hash (download: nothing mounted; stream: the copy is
# refused, the loop stays on the network), rd.live.check without a .sha256.


# nb_log_has LOG TAG AWK-CONDITION WHAT: the server's log lines of one boot (those
# after the line count in LOG.TAG.start) have a line with AWK-CONDITION
nb_log_has() {
	local log=$1 tag=$2 cond=$3
	awk -v from="$(cat "$log.$tag.start")" "NR > from && ($cond) { found = 1; print; exit } END { exit !found }" "$log" || {
		echo "no request in the server's log ($log, since line $(cat "$log.$tag.start")) with: $4"
		tail -n 5 "$log"
		return 1
	}
}

# nb_boot_mark LOG TAG MODE...: the server's mode for the next boot, and where its
# log stands
nb_boot_mark() {
	local log=$1 tag=$2
	shift 2
	echo "$*" >"$NB_CONTROL"
	wc -l <"$log" >"$log.$tag.start"
}

# nb_bad TAG WANT-REGEX APPEND [QEMU-NET-ARGS...]: a direct boot of the bundle's
# kernel and initramfs that must end with the console line WANT-REGEX; it is
# stopped (a failure) at a switch_root, unless NB_STOP names another regex
NB_STOP='Switching root'
nb_bad() {
	local tag=$1 want=$2 append=$3 dir=$LS_LOGDIR/netboot-$1 tmo=150
	shift 3
	local -a net=("$@")
	((${#net[@]})) || net=(-netdev "user,id=n0" -device "virtio-net-pci,netdev=n0")
	ls_qemu "netboot-$tag" "$tmo" --kernel "$NB_DIR/vmlinuz" --initrd "$NB_DIR/initrd.img" \
		--append "$append console=ttyS0,115200 rd.shell=0 rd.emergency=poweroff" \
		--wait-for "$want" --stop-on "Kernel panic - not syncing|$NB_STOP" -- "${net[@]}"
	tap_diag "boot netboot-$tag: $LS_QEMU_SECONDS s, QEMU exit $LS_QEMU_RC"
	local line
	line=$(grep -m1 -oE "$want" "$dir/console.txt" || :)
	tap_waited "netboot-$tag" "[netboot-$tag] the console says '${line:0:220}' ($LS_QEMU_SECONDS s)" \
		"[netboot-$tag] the console says /$want/ within $tmo s"
	console_test "netboot-$tag"
}

# nb_nothing_mounted TAG: the boot never mounted the root image
nb_nothing_mounted() {
	! grep -E 'livesquash: mounting .* on /run/rootfsbase|Switching root' "$LS_LOGDIR/netboot-$1/console.txt"
}

# nb_happy TAG FIRMWARE MODE LOG: live_boot of the bundle over the network (LB_ARGS
# set by the caller), then the host-side checks of its console and the server's log
nb_happy() {
	local tag=$1 firmware=$2 mode=$3 log=$4 conf
	conf="LS_NET=$mode"$'\n'"LS_IMG=/run/initramfs/ram/squashfs.img"
	[[ $mode == stream ]] && conf+=$'\n'"LS_SWITCH_WAIT=120"
	LB_CONF=$conf
	live_boot "netboot-$tag" "" "$firmware" "$BOOT_TIMEOUT" "$TEST_MANIFEST" "" none
	local t=netboot-$tag
	if [[ $mode == download ]]; then
		tap_test "[$t] the initramfs downloaded the image and checked its sha256 (kernel log)" \
			media_kmsg "$t" "livesquash: http://10\.0\.2\.2:$NB_PORT/LiveOS/squashfs\.img: sha256 OK"
		tap_test "[$t] curl showed its progress on the console" \
			media_console_has "$t" '% Total +% Received'
	else
		tap_test "[$t] the initramfs streamed the image through /dev/nbd0, checked by dm-verity with the menu's root hash (kernel log)" \
			media_kmsg "$t" "livesquash: streaming http://10\.0\.2\.2:$NB_PORT/LiveOS/squashfs\.img through /dev/nbd0 .*checked by dm-verity \(root hash from rd\.live\.roothash\)"
		tap_test "[$t] the background copy was checked (sha256 OK) and the loop switched to it (console)" \
			media_console_has "$t" 'livesquash: background copy to RAM done: /dev/mapper/livesquash-net \(.*, sha256 OK\)'
		tap_test "[$t] nbdkit read the image with HTTP range requests (server log: 206 answers)" \
			nb_log_has "$log" "$t" '$2 == "GET" && $3 ~ /squashfs\.img$/ && $5 ~ /^206/' "a 206 answer to a GET of the image"
	fi
}

suite_netboot() {
	local p=netboot dir=$LS_LOGDIR/netboot iso
	make_target iso-busybox iso ROOTFS=busybox || true
	make_target initramfs-net initramfs-net || true
	iso=$(iso_of busybox)
	host_checks busybox "$iso" "$p" || return 0
	test_iso busybox "$p" || return 0
	mkdir -p "$dir"
	NB_CONTROL=$dir/server.control
	local log=$dir/server.log
	: >"$log"
	echo normal >"$NB_CONTROL"
	if ! ls_netserver_start "$dir/bundle" "$log" --control "$NB_CONTROL"; then
		tap_notok "[$p] the test HTTP server (netserver.py) starts on 127.0.0.1"
		ls_netserver_stop
		return 0
	fi
	NB_PORT=$LS_NETSERVER_PORT
	local url=http://10.0.2.2:$NB_PORT
	NB_DIR=$dir/bundle
	# the bundle is made after the server is up: its URL has the server's port
	local before
	before=$(sha256sum <"$TEST_ISO")
	tap_test "[$p] iso/mknetboot --url $url makes the bundle of the test ISO" \
		bash "$TOP/iso/mknetboot" --force --url "$url" "$TEST_ISO" "$BUILD/initramfs-net/initrd.img" "$NB_DIR" || {
		ls_netserver_stop
		return 0
	}
	tap_test "[$p] the bundle has the kernel, initramfs, image + sha256 + hash tree + root hash, GRUB's PXE images and both iPXE scripts" \
		nb_bundle_files "$NB_DIR"
	tap_test "[$p] the image's sha256 in the bundle is right (sha256sum -c)" \
		bash -c 'cd "$1/LiveOS" && sha256sum -c squashfs.img.sha256' _ "$NB_DIR"
	tap_test "[$p] the image's hash tree and root hash in the bundle are right (veritysetup verify)" \
		bash -c 'cd "$1/LiveOS" && veritysetup verify squashfs.img squashfs.img.verity "$(cat squashfs.img.roothash)"' _ "$NB_DIR"
	tap_test "[$p] mknetboot left its input ISO as it was (sha256 before and after)" \
		test "$before" = "$(sha256sum <"$TEST_ISO")"

	# BIOS PXE through GRUB, download, connections cut after 300 KB
	nb_boot_mark "$log" netboot-bios-pxe drop:300000
	LB_ARGS=(-- -netdev "user,id=n0,tftp=$NB_DIR,bootfile=boot/grub/i386-pc/core.0"
		-device "virtio-net-pci,netdev=n0,bootindex=0")
	nb_happy bios-pxe bios download "$log"
	tap_test "[netboot-bios-pxe] GRUB came over TFTP and the kernel line has root=live:$url/LiveOS/squashfs.img" \
		media_console_has netboot-bios-pxe "Command line: .*root=live:$url/LiveOS/squashfs\.img"
	tap_test "[netboot-bios-pxe] the server cut the download and curl resumed it (a 206 answer from the cut on, 'trying again' on the console)" \
		nb_resumed "$log" netboot-bios-pxe

	# UEFI PXE through GRUB, its second entry: stream
	sed -i 's/^set default=0$/set default=1/' "$NB_DIR/boot/grub/grub.cfg"
	nb_boot_mark "$log" netboot-uefi-pxe drop:300000
	LB_ARGS=(-- -netdev "user,id=n0,tftp=$NB_DIR,bootfile=boot/grub/x86_64-efi/core.efi"
		-device "virtio-net-pci,netdev=n0,bootindex=0")
	nb_happy uefi-pxe uefi stream "$log"
	sed -i 's/^set default=1$/set default=0/' "$NB_DIR/boot/grub/grub.cfg"
	# UEFI PXE through GRUB, its first entry: download
	nb_boot_mark "$log" netboot-uefi-pxe-download normal
	LB_ARGS=(-- -netdev "user,id=n0,tftp=$NB_DIR,bootfile=boot/grub/x86_64-efi/core.efi"
		-device "virtio-net-pci,netdev=n0,bootindex=0")
	nb_happy uefi-pxe-download uefi download "$log"

	# iPXE chaining the stream script over HTTP, a slow server
	nb_boot_mark "$log" netboot-bios-ipxe normal 200000
	LB_ARGS=(-- -netdev "user,id=n0,bootfile=$url/boot-stream.ipxe"
		-device "virtio-net-pci,netdev=n0,bootindex=0")
	nb_happy bios-ipxe bios stream "$log"
	tap_test "[netboot-bios-ipxe] iPXE fetched boot-stream.ipxe, the kernel and the initramfs over HTTP" \
		nb_log_has "$log" netboot-bios-ipxe '$3 == "/initrd.img" && $5 == "200"' "GET /initrd.img"

	# bad inputs: one line each, nothing mounted
	local img=$url/LiveOS/squashfs.img re=http://10\\.0\\.2\\.2:$NB_PORT/LiveOS/squashfs\\.img
	nb_boot_mark "$log" netboot-no-network normal
	nb_bad no-network "livesquash: no network for $re: no interface got an address \(DHCP\) within 20 s" \
		"root=live:$img rd.live.timeout=20" -nic none
	nb_boot_mark "$log" netboot-server-down normal
	nb_bad server-down "livesquash: cannot fetch the root image: http://10\.0\.2\.2:1/LiveOS/squashfs\.img: .*\(no progress for 20 s, rd\.live\.timeout\)" \
		"root=live:http://10.0.2.2:1/LiveOS/squashfs.img rd.live.timeout=20"
	nb_boot_mark "$log" netboot-404 404
	nb_bad 404 "livesquash: cannot fetch the root image: $re: the server answers HTTP 404" "root=live:$img"
	nb_boot_mark "$log" netboot-truncated truncated
	nb_bad truncated "livesquash: root image $re is corrupt: its sha256 is [0-9a-f]{64}, $re\.sha256 says [0-9a-f]{64}; nothing is mounted" \
		"root=live:$img"
	nb_boot_mark "$log" netboot-badhash badhash
	nb_bad badhash "livesquash: root image $re is corrupt: its sha256 is [0-9a-f]{64}, $re\.sha256 says 0{64}; nothing is mounted" \
		"root=live:$img"
	nb_boot_mark "$log" netboot-nosha-check nosha
	nb_bad nosha-check "livesquash: cannot fetch the root image: rd\.live\.check: no $re\.sha256 on the server to check the image with" \
		"root=live:$img rd.live.check"
	local t
	for t in no-network server-down 404 truncated badhash nosha-check; do
		tap_test "[netboot-$t] nothing was mounted from the image, no switch_root" nb_nothing_mounted "$t"
	done
	# stream mode with a wrong hash: the root is up before the image is whole; the
	# copy is refused and the loop device stays on the network
	nb_boot_mark "$log" netboot-stream-badhash badhash
	NB_STOP='livesquash: background copy to RAM done'
	nb_bad stream-badhash "livesquash: the copy of /dev/mapper/livesquash-net is corrupt: its sha256 is [0-9a-f]{64}, not 0{64}; the root stays on /dev/mapper/livesquash-net" \
		"root=live:$img rd.live.net=stream"
	NB_STOP='Switching root'
	# stream mode, its reads checked by dm-verity (the root hash from the server):
	# an image with one byte changed in its first block, a hash tree with one byte
	# changed: refused before anything is mounted
	nb_boot_mark "$log" netboot-stream-flipped flipped
	nb_bad stream-flipped "livesquash: cannot stream $re: dm-verity finds its first block wrong .*; nothing is mounted" \
		"root=live:$img rd.live.net=stream"
	nb_boot_mark "$log" netboot-stream-badtree badtree
	nb_bad stream-badtree "livesquash: cannot stream $re: (dm-verity finds its first block wrong|veritysetup refuses its hash tree).*; nothing is mounted" \
		"root=live:$img rd.live.net=stream"
	for t in stream-flipped stream-badtree; do
		tap_test "[netboot-$t] nothing was mounted from the image, no switch_root" nb_nothing_mounted "$t"
		tap_test "[netboot-$t] the kernel's dm-verity names the bad block" \
			grep -m1 'device-mapper: verity: .*is corrupted' "$LS_LOGDIR/netboot-$t/console.txt"
	done
	ls_netserver_stop
}

# nb_resumed LOG TAG: the server's log has a GET of the image from a later offset
# (curl -C -), and the console the initramfs's "trying again"
nb_resumed() {
	nb_log_has "$1" "$2" '$2 == "GET" && $3 ~ /squashfs\.img$/ && $4 ~ /^bytes=[1-9]/ && $5 == "206"' "a resumed GET" &&
		grep -m1 'livesquash: .*trying again' "$LS_LOGDIR/$2/console.txt"
}

# nb_bundle_files DIR: what mknetboot promises is in DIR
nb_bundle_files() {
	local f rc=0
	for f in vmlinuz initrd.img LiveOS/squashfs.img LiveOS/squashfs.img.sha256 LiveOS/squashfs.img.verity \
		LiveOS/squashfs.img.roothash boot/grub/grub.cfg \
		boot/grub/i386-pc/core.0 boot/grub/x86_64-efi/core.efi boot.ipxe boot-stream.ipxe; do
		[[ -s $1/$f ]] || { echo "missing: $f"; rc=1; }
	done
	grep -q "rd.live.net=stream rd.live.roothash=$(cat "$1/LiveOS/squashfs.img.roothash")" "$1/boot-stream.ipxe" ||
		{ echo "boot-stream.ipxe has no rd.live.net=stream with the image's root hash"; rc=1; }
	return "$rc"
}
