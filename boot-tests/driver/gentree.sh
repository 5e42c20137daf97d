#!/bin/bash
# boot-tests/driver/gentree.sh: generate a deterministic test tree for the driver tests.
#
# usage: gentree.sh OUT [std|big|small]
#   std    every inode type, odd names, ids, times, xattrs, a 5000-entry directory,
#          a few MiB of data and a 3 MiB sparse file (the image matrix packs this)
#   big    std plus a 64 MiB and a 5 GiB sparse file and a 100,000-entry directory
#          (full mode only)
#   small  a small tree with one of each kind, the base of the corrupted images
# The same arguments give the same tree (bytes, names, modes, ids, times, xattrs)
# every run: all content comes from a seeded generator. OUT is removed first.
# Needs root (mknod, chown, trusted.* and security.* xattrs).
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
	echo "usage: gentree.sh OUT [std|big|small]" >&2
	exit 2
fi
out=$1
kind=${2:-std}
case $kind in std | big | small) ;; *)
	echo "gentree.sh: kind must be std, big or small" >&2
	exit 2
	;;
esac
rm -rf "$out"
mkdir -p "$out"

exec python3 - "$out" "$kind" <<'EOF'
import os, random, socket, stat, sys

out, kind = sys.argv[1], sys.argv[2]
rng = random.Random(0x5eed + {"std": 0, "big": 1, "small": 2}[kind])
os.umask(0)
T0 = 1_600_000_000
times = {}          # path -> mtime, applied at the end (dirs deepest first)
ntime = [0]

def mt(p, t=None):
    if t is None:
        ntime[0] += 1
        t = T0 + ntime[0] * 3607
    times[p] = t

def P(rel):
    return os.path.join(out, rel)

def mkdir(rel, mode=0o755, uid=0, gid=0, t=None):
    os.mkdir(P(rel))
    os.chown(P(rel), uid, gid)
    os.chmod(P(rel), mode)
    mt(rel, t)

WORDS = ("squashfs inode block fragment table directory xattr compressor kernel "
         "page cache metadata superblock lookup export live medium overlay the a of "
         "and to in is that for it with as was on be by this are").split()

def text(n):
    parts, size = [], 0
    while size < n:
        line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 14))) + "\n"
        parts.append(line)
        size += len(line)
    return "".join(parts).encode()[:n]

def mkfile(rel, data=b"", mode=0o644, uid=0, gid=0, t=None):
    with open(P(rel), "wb") as f:
        f.write(data)
    os.chown(P(rel), uid, gid)
    os.chmod(P(rel), mode)
    mt(rel, t)

def sparse(rel, size, pieces):
    with open(P(rel), "wb") as f:
        f.truncate(size)
        for off, data in pieces:
            f.seek(off)
            f.write(data)
    os.chmod(P(rel), 0o644)
    mt(rel)

def xattr(rel, name, value):
    os.setxattr(P(rel), name, value, follow_symlinks=False)

def special(rel, kind_, dev=0, mode=0o644, uid=0, gid=0):
    fmt = {"c": stat.S_IFCHR, "b": stat.S_IFBLK, "p": stat.S_IFIFO}[kind_]
    os.mknod(P(rel), fmt | mode, dev)
    os.chown(P(rel), uid, gid)
    os.chmod(P(rel), mode)
    mt(rel)

def sock(rel, mode=0o755):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(P(rel))
    s.close()
    os.chmod(P(rel), mode)
    mt(rel)

def symlink(rel, target, uid=0, gid=0):
    os.symlink(target, P(rel))
    os.lchown(P(rel), uid, gid)
    mt(rel)

CAP = bytes.fromhex("0100000200200000000000000000000000000000")  # cap_net_bind_service

if kind == "small":
    mkdir("d", 0o755, 1000, 1000)
    mkfile("d/empty")
    mkfile("d/one", b"1")
    mkfile("d/blocks", bytes(rng.randbytes(4096 * 3 + 777)), 0o640, 1000, 100)
    mkfile("d/text", text(9000))
    mkfile("d/tail", text(1500), 0o600, 100000, 100000)
    symlink("d/link", "blocks")
    symlink("longlink", "t" * 300)
    special("cdev", "c", os.makedev(300, 70000))
    special("fifo", "p")
    mkfile("h1", b"hard link\n")
    os.link(P("h1"), P("d/h2"))
    xattr("d/blocks", "user.small", b"v")
    xattr("d/blocks", "user.big", bytes(rng.randbytes(600)))
    xattr("d/text", "user.big", b"shared " * 80)
    xattr("d/tail", "user.big", b"shared " * 80)
    xattr("d/tail", "trusted.t", b"x")
    mkdir("many")
    for i in range(300):
        mkfile("many/entry-%04d" % i, text(i % 7))
    mkdir("deep")
    rel = "deep"
    for i in range(6):
        rel += "/l%d" % i
        mkdir(rel)
    mkfile(rel + "/leaf", b"leaf\n")
else:
    # every inode type
    mkdir("types")
    mkfile("types/file", b"regular\n")
    symlink("types/symlink", "file")
    symlink("types/dangling", "../no/such/target")
    symlink("types/abs", "/etc/passwd")
    symlink("types/long-target", "/".join("seg%03d" % i for i in range(400))[:4000])
    special("types/char-1-3", "c", os.makedev(1, 3), 0o666)
    special("types/char-300-70000", "c", os.makedev(300, 70000), 0o600, 1000, 1000)
    special("types/block-8-1", "b", os.makedev(8, 1), 0o660, 0, 6)
    special("types/block-4095-1048575", "b", os.makedev(4095, 1048575))
    special("types/fifo", "p", mode=0o620)
    sock("types/socket")
    mkdir("types/emptydir", 0o700)
    # hard links: a group of 3 and a group of 2
    mkdir("links")
    mkfile("links/h1", text(5000), 0o644, 1000, 1000)
    os.link(P("links/h1"), P("links/h2"))
    os.link(P("links/h1"), P("types/h3"))
    mkfile("links/g1", b"")
    os.link(P("links/g1"), P("links/g2"))
    # sizes around the block and page boundaries
    mkdir("sizes")
    for n in (0, 1, 4095, 4096, 4097, 65536, 131071, 131072, 131073, 1048577):
        mkfile("sizes/%d" % n, bytes(rng.randbytes(n)))
    mkfile("sizes/text-1.5M", text(1536 * 1024 + 17))
    mkfile("sizes/random-1M", bytes(rng.randbytes(1024 * 1024 + 5)))
    mkfile("sizes/random-1M-dup", open(P("sizes/random-1M"), "rb").read())
    mkfile("sizes/zeros-300K", bytes(300 * 1024 + 3))
    mkfile("sizes/ones-200K", b"\xff" * (200 * 1024))
    # a hole of at least one whole block at every block size (4K ... 1M)
    sparse("sizes/sparse-3M", 3 << 20,
           [(0, b"head"), (300 * 1024 + 123, text(7000)), ((3 << 20) - 100, b"tail" * 25)])
    # names
    mkdir("names")
    mkfile("names/x", b"1")
    mkfile("names/with spaces and 'quotes' \"double\"", b"2")
    mkfile("names/ctl-\x01-\x02-\x7f", b"3")
    mkfile("names/-leading-dash", b"4")
    mkfile("names/*?[glob]$dollar;semi&amp|pipe", b"5")
    mkfile(b"names/latin1-\xe9\xff".decode("utf-8", "surrogateescape"), b"6")
    mkfile("names/utf8-äöü-日本語-🙂", b"7")
    long = ("ü" * 100 + "日" * 18)            # 200 + 54 = 254 bytes
    long = (long + "z")[:255 - 0]
    assert len(long.encode()) == 255, len(long.encode())
    mkfile("names/" + long, b"255")
    long2 = "L" * 255
    mkfile("names/" + long2, b"255b")
    # a deep path: 30 levels
    rel = "deep"
    mkdir(rel)
    for i in range(1, 31):
        rel += "/level-%02d" % i
        mkdir(rel)
    mkfile(rel + "/bottom", b"bottom of 30 levels\n")
    # ids, modes, times
    mkdir("ids")
    for uid, gid in ((0, 0), (1000, 1000), (65535, 65535), (65536, 65536),
                     (100000, 100001), (4294967294, 4294967294), (123456789, 0)):
        mkfile("ids/u%d-g%d" % (uid, gid), b"%d\n" % uid, 0o644, uid, gid)
    mkdir("modes")
    for m in (0o0, 0o4755, 0o2755, 0o6711, 0o1777, 0o777, 0o400, 0o111):
        mkfile("modes/f%04o" % m, b"m", m)
    mkdir("modes/sticky-dir", 0o1777)
    mkdir("modes/setgid-dir", 0o2775, 0, 100)
    mkdir("times")
    for t in (0, 1, 1000000000, 2147483647, 2147483648, 4294967295):
        mkfile("times/t%d" % t, b"t", t=t)
    # xattrs
    mkdir("xattr")
    mkfile("xattr/small", b"a")
    xattr("xattr/small", "user.a", b"1")
    xattr("xattr/small", "user.empty", b"")
    mkfile("xattr/large", b"b")
    xattr("xattr/large", "user.large", bytes(rng.randbytes(3000)))
    xattr("xattr/large", "user.z" + "n" * 200, b"long name")
    mkfile("xattr/many", b"c")
    for i in range(40):
        xattr("xattr/many", "user.k%02d" % i, b"value-%d" % (i * i))
    mkfile("xattr/trusted", b"d")
    xattr("xattr/trusted", "trusted.overlay-like", b"y")
    mkfile("xattr/cap", b"#!/bin/sh\n", 0o755)
    xattr("xattr/cap", "security.capability", CAP)
    shared_set = [("user.set1", b"one"), ("user.set2", b"two" * 50), ("trusted.set3", b"3")]
    for n in ("same-set-a", "same-set-b", "same-set-c"):
        mkfile("xattr/" + n, n.encode())
        for k, v in shared_set:
            xattr("xattr/" + n, k, v)
    shared_value = bytes(rng.randbytes(1500))
    mkfile("xattr/shared-value-1", b"s1")
    xattr("xattr/shared-value-1", "user.shared", shared_value)
    xattr("xattr/shared-value-1", "user.only1", b"1")
    mkfile("xattr/shared-value-2", b"s2")
    xattr("xattr/shared-value-2", "user.shared", shared_value)
    xattr("xattr/shared-value-2", "user.only2", b"2")
    symlink("xattr/symlink", "small")
    xattr("xattr/symlink", "trusted.on-symlink", b"sym")
    special("xattr/chardev", "c", os.makedev(10, 200))
    xattr("xattr/chardev", "trusted.on-dev", b"dev")
    special("xattr/fifo", "p")
    xattr("xattr/fifo", "trusted.on-fifo", b"fifo")
    xattr("xattr", "user.on-dir", b"dir")
    # a directory with many entries
    nbig = 100000 if kind == "big" else 5000
    mkdir("bigdir")
    for i in range(nbig):
        name = "entry-%06d-%s" % (i, "x" * (i % 23))
        mkfile("bigdir/" + name, text(i % 41))
    # four files of 3000 random bytes: in a 4K-block image each is in a fragment
    # block of its own (two do not fit in one), in this order (guest-init.sh
    # frag_ahead)
    mkdir("fragahead")
    for i in range(4):
        mkfile("fragahead/f%d" % i, bytes(rng.randbytes(3000)))
    if kind == "big":
        mkdir("huge")
        sparse("huge/sparse-64M", 64 << 20, [((64 << 20) - 4096, text(4096))])
        sparse("huge/sparse-5G", 5 << 30,
               [(1 << 30, b"one GiB"), ((4 << 30) + 7, text(10000)), ((5 << 30) - 3, b"end")])

mt(".", T0)
os.chmod(out, 0o755)
os.chown(out, 0, 0)
for rel in sorted(times, key=lambda r: -r.count("/") - (0 if r != "." else -1000)):
    t = times[rel]
    os.utime(P(rel), (t, t), follow_symlinks=False)
EOF
