#!/bin/sh
# boot-tests/fuzz/init.sh: /init of the fuzz initramfs (busybox, POSIX sh).
# Kernel command line:
#   lsqf.prefixes=P,...   kernel functions whose coverage counts (default sqfs_)
#   lsqf.module=PATH      insmod this squashfs.ko first (Debian's kernel: the stock
#                         module or ours, for the comparison replay)
#   lsqf.memcg=SIZE       the memory.max of the agent's cgroup (default 96M)
# Runs lsqfuzz-agent on /dev/ttyS1 (vm.py on the host) until it exits, then powers off.
PATH=/bin
export PATH
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tmpfs -o size=64m tmp /tmp
# shellcheck disable=SC1091 # fuzz.sh copies boot-tests/guest-lib.sh there
. /guest-lib.sh
# the agent reads /proc/kallsyms for the driver's functions' addresses
echo 0 >/proc/sys/kernel/kptr_restrict
for m in /lib/modules/*.ko; do # loop.ko on Debian's kernel
	[ -e "$m" ] && insmod "$m"
done
module=$(gl_arg module lsqf.)
[ -z "$module" ] || insmod "$module" || echo "lsqfuzz init: insmod $module failed"
prefixes=$(gl_arg prefixes lsqf.)
# the agent runs in a memory cgroup (lsqf.memcg=, default 96M), so that the driver's
# allocations on its behalf meet a cgroup's limit and reclaim, as a user's would
cg=/sys/fs/cgroup
memcg=$(gl_arg memcg lsqf.)
if mount -t cgroup2 none $cg && echo +memory >$cg/cgroup.subtree_control && mkdir $cg/agent &&
	echo "${memcg:-96M}" >$cg/agent/memory.max && echo $$ >$cg/agent/cgroup.procs; then
	echo "lsqfuzz init: the agent runs in a memory cgroup of $(cat $cg/agent/memory.max) bytes"
else
	echo "lsqfuzz init: no memory cgroup for the agent"
fi
lsqfuzz-agent /dev/ttyS1 "${prefixes:-sqfs_}"
echo "lsqfuzz init: the agent exited ($?)"
poweroff -f
