#!/usr/bin/env python3
"""boot-tests/driver/check.py: expected manifests and the TAP report of run.sh.

  check.py expect RUNDIR        write RUNDIR/exp-ID.man for each image of
                                RUNDIR/good.tsv, print "ID SHA256" lines
  check.py report RUNDIR N      read the guests' results (RUNDIR/BOOT.ATTEMPT.out.txt,
                                .console; BOOT: ours-good, debian-good.stock,
                                debian-good.ours, ... -bad, -stress, -big; RUNDIR/hung:
                                "BOOT DRV ID hang-or-crash"), print TAP numbered from
                                N+1, write RUNDIR/report.counts ("LAST FAILED")
Expected manifest = the manifest of the tree that was packed, changed only where a
writer is known not to store something:
  mk -no-xattrs    no xattrs
  gen (gensquashfs --pack-dir): no hard links (nlink 1), no empty-valued xattrs, the
                   root directory's mtime is 0
  tar (GNU tar | tar2sqfs): no sockets (tar cannot hold them)
run.sh checks each expected manifest against unsquashfs's extraction of the image.
"""
import base64
import difflib
import glob
import gzip
import hashlib
import os
import re
import struct
import sys

BAD_RE = re.compile(r"BUG:|WARNING:|Oops|Call Trace|KASAN|general protection|"
                    r"Kernel panic|UBSAN|list_add corruption|soft lockup|hung_task|"
                    r"blocked for more than")


def read_tsv(path):
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.rstrip("\n")
                if line:
                    rows.append(line.split("\t"))
    return rows


def expected(lines, writer, opts):
    # fields (manifest.sh -X): path type mode uid gid nlink size mtime data linkgroup xattrs
    out = []
    for line in lines:
        f = line.split(b"\t")
        if writer == "tar" and f[1] == b"s":
            continue
        if writer == "mk" and "-no-xattrs" in opts.split():
            f[10] = b"-"
        if writer == "gen":
            if f[0] == b".":
                f[7] = b"0"
            if f[5] not in (b"-", b"1"):
                f[5] = b"1"
                f[9] = b"-"
            if f[10] != b"-":
                kept = [x for x in f[10].split(b";") if not x.endswith(b"=")]
                f[10] = b";".join(kept) if kept else b"-"
        out.append(b"\t".join(f))
    return out


def cmd_expect(rundir):
    for row in read_tsv(os.path.join(rundir, "good.tsv")):
        iid, img, writer, comp, bs, opts, tree = row
        with open(os.path.join(rundir, "tree-%s.man" % tree), "rb") as f:
            lines = f.read().split(b"\n")[:-1]
        data = b"".join(x + b"\n" for x in expected(lines, writer, opts))
        with open(os.path.join(rundir, "exp-%s.man" % iid), "wb") as f:
            f.write(data)
        print(iid, hashlib.sha256(data).hexdigest())


class Tap:
    def __init__(self, start):
        self.n = start
        self.failed = 0

    def ok(self, cond, text, detail=None):
        self.n += 1
        if cond:
            print("ok %d - %s" % (self.n, text))
        else:
            self.failed += 1
            print("not ok %d - %s" % (self.n, text))
            if detail:
                for d in detail if isinstance(detail, list) else [detail]:
                    print("#   " + d)

    @staticmethod
    def note(text):
        print("# " + text)


def parse_out(rundir, boot):
    """results[(drv, id)] = {KEY: rest of line, 'b64': bytes}; misc lines"""
    results, misc = {}, []
    files = sorted(glob.glob(os.path.join(rundir, "%s.*.out.txt" % boot)),
                   key=lambda p: int(p.rsplit(".", 3)[-3]))
    for path in files:
        cur, b64, b64name = None, None, "manifest"
        with open(path, "rb") as f:
            for raw in f:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                if b64 is not None:
                    if line.startswith("@@ B64-END"):
                        try:
                            cur[b64name] = gzip.decompress(base64.b64decode("".join(b64)))
                        except Exception as e:  # noqa: BLE001 - report, don't crash
                            cur[b64name + "-error"] = str(e)
                        b64 = None
                    else:
                        b64.append(line.strip())
                    continue
                if not line.startswith("@@ "):
                    continue
                words = line[3:].split(" ", 1)
                key, rest = words[0], words[1] if len(words) > 1 else ""
                if key == "BEGIN":
                    drv, iid = rest.split()[:2]
                    cur = results.setdefault((drv, iid), {})
                    cur.clear()
                elif key == "END":
                    if cur is not None:
                        cur["END"] = True
                    cur = None
                elif key == "B64-BEGIN":
                    b64 = []
                    b64name = rest.strip() or "manifest"
                elif cur is not None:
                    cur[key] = rest
                else:
                    misc.append(line[3:])
    return results, misc


def console_segments(rundir, boot):
    """segments[(drv, id)] = console lines; outside = lines outside any image"""
    segs, outside = {}, []
    for path in sorted(glob.glob(os.path.join(rundir, "%s.*.console" % boot))):
        cur = None
        with open(path, "rb") as f:
            for raw in f:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                m = re.search(r"lsqtest: (BEGIN|END) (\S+) (\S+)", line)
                if m:
                    cur = segs.setdefault((m.group(2), m.group(3)), []) if m.group(1) == "BEGIN" else None
                    continue
                (cur if cur is not None else outside).append(line)
    return segs, outside


def kv(rest):
    return dict(re.findall(r"(\S+?)=(\S*)", rest))


def superblock(img):
    with open(img, "rb") as f:
        d = f.read(96)
    v = struct.unpack_from("<IIIIIHHHHHHQQQQQQQQ", d)
    return {"inodes": v[1], "block_size": v[3], "block_log": v[6], "bytes_used": v[12],
            "exportable": v[18] != 0xFFFFFFFFFFFFFFFF}


def expected_counts(rundir, iid):
    """paths, directories and regular files of at most 64 MiB of the expected manifest
    (lsqx -e hashes those whole; of a larger one it compares the first and last MiB
    read by handle with those read by path)"""
    paths = dirs = files = 0
    with open(os.path.join(rundir, "exp-%s.man" % iid), "rb") as f:
        for line in f:
            w = line.split(b"\t")
            paths += 1
            dirs += w[1] == b"d"
            files += w[1] == b"f" and int(w[6]) <= 64 << 20
    return paths, dirs, files


def split_listing(blob):
    """lsqx -l output -> (lines every correct driver must agree on, SEEK lines,
    the root's ".." line: the on-disk parent of the root is inode_count + 1, which
    is no inode; a driver may show that or the root itself)"""
    core, seek, rootdd, ndirs = [], [], b"", 0
    for line in blob.split(b"\n"):
        ndirs += line.startswith(b"D\t")
        if ndirs == 1 and line.startswith(b"E\t..\t"):
            rootdd = line
        elif line.startswith(b"S\t"):
            seek.append(line)
        elif line.startswith(b"E\t") and line.count(b"\t") > 4:  # seek answers on the E line (old lsqx)
            f = line.split(b"\t")
            core.append(b"\t".join(f[:5]))
            seek.append(b"\t".join([b"S", f[1]] + f[5:]))
        elif line:
            core.append(line)
    return b"\n".join(core) + b"\n", b"\n".join(seek) + b"\n", rootdd


def first_diff(want, got, n=4):
    w = want.decode("utf-8", "replace").splitlines()
    g = got.decode("utf-8", "replace").splitlines()
    out = []
    for line in difflib.unified_diff(w, g, "a", "b", n=0, lineterm=""):
        if line.startswith(("---", "+++", "@@")):
            continue
        out.append(line[:220].replace("\t", " | "))
        if len(out) >= n:
            break
    return out


def bad_console(lines):
    return [x for x in lines if BAD_RE.search(x)]


def cmd_report(rundir, start):
    tap = Tap(start)
    good = {r[0]: r for r in read_tsv(os.path.join(rundir, "good.tsv"))}
    bad = {r[0]: r for r in read_tsv(os.path.join(rundir, "bad.tsv"))}
    expsha = dict(x.split() for x in open(os.path.join(rundir, "expected")).read().split("\n") if x)
    hung = [x.split() for x in open(os.path.join(rundir, "hung")).read().split("\n") if x]
    sfile = os.path.join(rundir, "stress")
    stress = set(open(sfile).read().split()[0].split(",")) if os.path.exists(sfile) else set()
    # the boots (run.sh's jobs): our kernel once per image set, Debian's kernel once per
    # module (debian-good.stock, debian-good.ours); NAME.ATTEMPT.out.txt / .console
    boots = []
    for kind, gmode, treekind in (("good", "good", "small"), ("big", "good", "big"), ("bad", "bad", None),
                                  ("stress", "stress", None)):
        boots.append(("ours-" + kind, ["builtin"], gmode, treekind))
        boots += [("debian-%s.%s" % (kind, drv), [drv], gmode, treekind) for drv in ("stock", "ours")]
    only = os.environ.get("DRIVER_ONLY", "").split()
    label = {"builtin": "our driver built in", "stock": "stock module", "ours": "our module"}
    allres = {}
    for boot, drvs, gmode, treekind in boots:
        if gmode == "good":
            ids = [i for i, r in good.items() if (r[6] == "big") == (treekind == "big")]
        elif gmode == "stress":
            ids = sorted(i for i in good if i in stress)
        else:
            ids = sorted(bad)
        if not ids:
            continue
        res, misc = parse_out(rundir, boot)
        segs, outside = console_segments(rundir, boot)
        # the boot's name without the module: the per-driver checks' texts
        bname = boot.split(".")[0]
        if not glob.glob(os.path.join(rundir, "%s.*.out.txt" % boot)):
            if only and boot not in only and bname not in only:
                continue
            tap.ok(False, "%s: booted" % boot, "no output file")
            continue
        tap.ok(any(m == "DONE" for m in misc) or any(h[0] == boot for h in hung),
               "%s: guest ran to the end (or was restarted past a hang)" % boot,
               [m for m in misc][:5])
        disks = [m for m in misc if m.startswith("DISKS")]
        tap.ok(disks and all(int(d.split()[1]) == len(ids) for d in disks),
               "%s: guest sees all %d disks (%s)" % (boot, len(ids), disks[:1]))
        badout = bad_console(outside)
        tap.ok(not badout, "%s: console clean outside the images (no BUG/WARNING/Oops/Call Trace)" % boot,
               badout[:5])
        # run.sh boots with tsc=unstable, so that a jump of the host's TSC (a restored
        # snapshot) cannot reach the guest's clocks
        cs = [x.split("clocksource ")[-1] for x in outside if "Switched to clocksource" in x]
        tap.ok(any("Marking TSC unstable due to boot parameter" in x for x in outside) and cs and cs[-1] != "tsc",
               "%s: the guest's clocks do not follow the host's TSC (tsc=unstable, clocksource %s)"
               % (boot, cs[-1] if cs else "?"), cs)
        for leak in (m for m in misc if m.startswith("KMEMLEAK ")):
            # only the debug kernel has kmemleak (LS_KERNEL=build/kobj-debug/...)
            tap.ok(kv(leak).get("ours") == "0", "%s %s: kmemleak finds no unreferenced object allocated "
                   "in the driver (%s objects in all)" % (bname, leak.split()[1], kv(leak).get("objects")), leak)
        for drv in drvs:
            if drv in ("stock", "ours"):
                ins = [m for m in misc if m.startswith("INSMOD %s" % drv)]
                tap.ok(ins and all(" ok" in m for m in ins), "%s: insmod %s squashfs.ko" % (bname, label[drv]), ins)
                rm = [m for m in misc if m.startswith("RMMOD %s" % drv)]
                tap.ok(rm and all("rc=0" in m for m in rm), "%s: rmmod %s squashfs.ko" % (bname, label[drv]), rm)
            dl = [m for m in misc if m.startswith("DRIVER %s " % drv)]
            banner = [int(kv(m).get("banner", "0")) for m in dl]
            if drv == "stock":
                cond = dl and all(b == 0 for b in banner)
                what = "no livesquash banner while the stock driver is loaded"
            else:
                cond = dl and all(b >= 1 for b in banner)
                what = "dmesg has 'livesquash: squashfs 4.0 driver' (ours is the one in use)"
            tap.ok(cond, "%s %s: %s" % (bname, label[drv], what), dl)
            for iid in ids:
                r = res.get((drv, iid))
                seg = segs.get((drv, iid), [])
                allres[(boot.split("-")[0], gmode, drv, iid)] = (r, seg)
                name = "%s, %s: %s" % ({"ours": "our kernel", "debian": "debian kernel"}[boot.split("-")[0]],
                                        label[drv], iid)
                hangs = [h for h in hung if h[0] == boot and h[1] == drv and h[2] == iid]
                if gmode == "good":
                    check_good(tap, name, r, seg, good[iid], expsha.get(iid), rundir, hangs, drv)
                elif gmode == "stress":
                    check_stress(tap, name, r, seg, good[iid], hangs)
                else:
                    check_bad(tap, name, r, seg, bad[iid], drv, hangs)
    compare(tap, allres, good, bad)
    with open(os.path.join(rundir, "report.counts"), "w") as f:
        f.write("%d %d\n" % (tap.n, tap.failed))
    return 0


def desc(row):
    iid, img, w, c, bs, opts, tree = row
    return "%s %s %s%s%s" % (w, c, bs, " " + opts if opts else "", " big tree" if tree == "big" else "")


def stock_cannot(row):
    """images Linux's own driver fails to mount (EIO, seen in make check-full) though
    unsquashfs reads them: xz with 4 KiB blocks and an options block (any -X option),
    which holds a dictionary size of 4096"""
    iid, img, w, c, bs, opts, tree = row
    return w == "mk" and c == "xz" and bs == "4K" and "-X" in opts


def check_good(tap, name, r, seg, row, want, rundir, hangs, drv):
    d = "%s (%s)" % (name, desc(row))
    if drv == "stock" and stock_cannot(row) and r is not None and "END" in r:
        tap.ok(not r.get("MOUNT", "").startswith("ok"),
               "%s: the stock driver refuses it, as seen before (if it mounts now, drop stock_cannot)" % d,
               r.get("MOUNT"))
        return
    if r is None or "END" not in r:
        tap.ok(False, "%s: has a result" % d,
               "guest hung or crashed here: see console" if hangs or r else "no result")
        badc = bad_console(seg)
        if badc:
            for x in badc[:8]:
                tap.note("  console: " + x)
        return
    mount = r.get("MOUNT", "")
    if not mount.startswith("ok"):
        tap.ok(False, "%s: mounts" % d, mount)
        return
    if "ABORT" in r:
        tap.ok(False, "%s: no kernel error (the guest stopped this image after one)" % d,
               [r["ABORT"]] + bad_console(seg)[:8])
        return
    m = kv(r.get("MANIFEST", ""))
    got = m.get("sha")
    detail = ["manifest.sh rc=%s stderr lines=%s: %s" % (m.get("rc"), m.get("stderr"), r.get("MANIFEST", "")[-200:])]
    if got != want:
        exp = open(os.path.join(rundir, "exp-%s.man" % row[0]), "rb").read()
        if "manifest" in r:
            detail += ["first differences (- host, + guest):"] + first_diff(exp, r["manifest"])
            with open(os.path.join(rundir, "guest-%s.man" % re.sub(r"[^A-Za-z0-9]+", "_", name)), "wb") as f:
                f.write(r["manifest"])
        else:
            detail.append("guest manifest not received: %s" % r.get("manifest-error", "not sent"))
    tap.ok(got == want and m.get("rc") == "0" and m.get("stderr") == "0",
           "%s: mounts, manifest equals the host's (%s lines)" % (d, m.get("lines")), detail)
    if "REREAD" in r or not os.path.exists(os.path.join(rundir, "no-reread")):
        rr = kv(r.get("REREAD", ""))
        tap.ok(rr.get("sha") == got and rr.get("rc") == "0",
               "%s: re-read after drop_caches gives the same manifest" % d, r.get("REREAD"))
    # the directory index: on a fresh mount with cold caches, a lookup of the last name
    # of bigdir reads from the disk at most one metadata block (12 KiB of pages) more
    # than a lookup of its first name, and at most 4 blocks in all
    lk = kv(r.get("LOOKUP", ""))
    first, last = (int(lk[k]) if lk.get(k, "").isdigit() else None for k in ("first", "last"))
    tap.ok(first is not None and last is not None and last <= first + 12288 and last <= 4 * 12288,
           "%s: directory index: a cold lookup of the last of %s names reads at most one metadata block more "
           "than of the first (%s bytes, first %s, a readdir %s)"
           % (d, "100,000" if row[6] == "big" else "5,000", last, first, lk.get("scan")),
           r.get("LOOKUP"))
    # fragment blocks ahead (ours): in a 4K-block image with fragments, after the files
    # in the fragment blocks k and k + 1 were read in that order, k + 2 is in memory
    # (a file there reads nothing from the disk); after k + 3 and k, it is not
    if drv in ("builtin", "ours") and row[4] == "4K" and row[2] == "mk" and "-no-fragments" not in row[5]:
        fa = kv(r.get("FRAGAHEAD", ""))
        ctl, seq = (int(fa[k]) if fa.get(k, "").isdigit() else None for k in ("ctl", "seq"))
        tap.ok(ctl is not None and seq is not None and ctl > 0 and seq == 0,
               "%s: fragment read-ahead: after the fragment blocks k and k + 1 in order, k + 2 is read "
               "ahead (a file in it then reads %s bytes from the disk; after k + 3 and k: %s)" % (d, seq, ctl),
               r.get("FRAGAHEAD"))
    rd = r.get("READDIR", "")
    rdk = kv(rd)
    tap.ok(rdk.get("rc") == "0" and rdk.get("fail") == "0" and int(rdk.get("dirs", "0")) > 0,
           "%s: getdents64 with a 300-byte buffer = with 1 MiB, d_ino/d_type = lstat (%s dirs)"
           % (d, rdk.get("dirs")), rd)
    sb = superblock(row[1])
    bs = sb["block_size"]
    exp_statfs = "73717368 %d %d %d 0 0 %d 0 256" % (bs, bs, ((sb["bytes_used"] - 1) >> sb["block_log"]) + 1,
                                                    sb["inodes"])
    tap.ok(r.get("STATFS") == exp_statfs, "%s: statfs (type bsize frsize blocks bfree bavail files ffree namelen) = %s"
           % (d, exp_statfs), "got %s" % r.get("STATFS"))
    rw = r.get("REMOUNT-RW", "")
    rwk = kv(rw)
    opts = rwk.get("opts", "")
    tap.ok(rwk.get("touch") not in (None, "0") and opts.split(",")[:1] == ["ro"],
           "%s: after mount -o remount,rw the fs stays read-only (remount rc=%s, opts %s, touch fails)"
           % (d, rwk.get("rc"), opts), rw)
    ec = r.get("ERRORS-CONTINUE", "")
    bo = kv(r.get("BADOPTION", ""))
    tap.ok(ec.startswith("rc=0") and "errors=continue" in ec and bo.get("rc") not in (None, "0"),
           "%s: -o errors=continue shows in /proc/mounts, an unknown option is refused" % d,
           ["errors=continue: " + ec, "bad option: " + r.get("BADOPTION", "")])
    nr = r.get("MOUNT-NO-RO", "")
    tap.ok(re.match(r"rc=0 squashfs ro[, ]", nr) is not None or (not nr.startswith("rc=0") and nr != ""),
           "%s: a mount without -o ro is read-only or refused" % d, nr)
    check_listing_export(tap, d, r, row, rundir)
    badc = bad_console(seg) + driver_msgs(seg)
    tap.ok(not badc, "%s: console clean (no BUG/WARNING/Oops/Call Trace, no driver error)" % d, badc[:8])


def check_listing_export(tap, d, r, row, rundir):
    paths, dirs, files = expected_counts(rundir, row[0])
    exportable = superblock(row[1])["exportable"]
    li = r.get("LISTING", "")
    lk = kv(li)
    # every path once, plus "." and ".." of each directory; a handle for each
    # path (not "." / "..") on an image with an export table, none without one
    want_handles = paths - 1 if exportable else 0
    tap.ok(lk.get("rc") == "0" and lk.get("fail") == "0" and lk.get("entries") == str(paths - 1 + 2 * dirs)
           and lk.get("dirs") == str(dirs) and lk.get("handles") == str(want_handles) and "listing" in r,
           "%s: listing in readdir order (inode numbers, d_type, %s, lseek SEEK_DATA/SEEK_HOLE "
           "consistent: %s of %s files generic) received" % (
               d, "file handles" if exportable else "no export table: no handles", lk.get("seek-generic"),
               lk.get("seek")),
           ["want entries=%d dirs=%d handles=%d" % (paths - 1 + 2 * dirs, dirs, want_handles), li[:400],
            r.get("listing-error", "")])
    ex = r.get("EXPORT", "")
    ek = kv(ex)
    fg = kv(r.get("FORGED", ""))
    if exportable:
        cond = (ek.get("rc") == "0" and ek.get("fail") == "0" and ek.get("inodes") == str(paths)
                and ek.get("handles") == str(paths) and ek.get("opened") == str(paths)
                and ek.get("files-hashed") == str(files) and ek.get("dirs-reconnected") == str(dirs)
                and fg.get("as-is") == "ok")
        what = ("export: name_to_handle_at for all %d inodes, drop_caches, open_by_handle_at gives the same "
                "inode, %d files their sha256, %d directories reconnected (get_parent) to the right path"
                % (paths, files, dirs))
    else:
        cond = (ek.get("rc") == "0" and ek.get("fail") == "0" and ek.get("handles") == "0"
                and ek.get("handle-errors", "").startswith("%d(EOPNOTSUPP)" % paths)
                and fg.get("as-is") == "ESTALE")
        what = "no export table: name_to_handle_at says EOPNOTSUPP for all %d paths, a handle gives ESTALE" % paths
    tap.ok(cond, "%s: %s" % (d, what), [ex[:400], r.get("FORGED", "")])


def check_stress(tap, name, r, seg, row, hangs):
    d = "%s (%s), stress, 2 vCPUs" % (name, desc(row))
    if r is None or "END" not in r:
        tap.ok(False, "%s: has a result" % d,
               ["guest hung or crashed here: see console" if hangs or r else "no result"] + bad_console(seg)[:8])
        return
    st = r.get("STRESS", "")
    sk = kv(st)
    tap.ok(r.get("MOUNT", "").startswith("ok") and "ABORT" not in r and sk.get("rc") == "0"
           and sk.get("fail") == "0" and int(sk.get("files", "0")) > 0
           and sk.get("sendfile-ok") == sk.get("files") and sk.get("splice-ok") == sk.get("files")
           and sk.get("workers-ok") == sk.get("procs") == "4" and int(sk.get("drops", "0")) > 0,
           "%s: sendfile and splice of %s files, then 4 processes (pread, mmap, read, splice) for %s s "
           "with %s drop_caches, every byte right" % (d, sk.get("files"), sk.get("secs"), sk.get("drops")),
           [st[:400], r.get("ABORT", ""), r.get("MOUNT", "")[:200]])
    mc = r.get("MEMCG", "")
    mk = kv(mc)
    tap.ok(mk.get("rc") == "0" and mk.get("fail") == "0" and mk.get("workers-ok") == mk.get("procs") == "4"
           and int(mk.get("files", "0")) > 0 and mk.get("max", "0").isdigit() and int(mk.get("max", "0")) > 0
           and mk.get("oom_kill") == "0",
           "%s: the same 4 processes in a memory cgroup of %s bytes (peak %s): the limit was hit "
           "(memory.events max %s), no OOM kill, every byte right" % (d, mk.get("limit"), mk.get("peak"),
                                                                      mk.get("max")),
           [mc[:400]])
    badc = bad_console(seg) + driver_msgs(seg)
    tap.ok(not badc and kv(r.get("UMOUNT", "rc=?")).get("rc") == "0",
           "%s: console clean (no BUG/WARNING/Oops/Call Trace, no driver error), umount" % d, badc[:8])


def outcome(r, seg=None):
    if r is None or "END" not in r:
        return "HANG/CRASH"
    if not r.get("MOUNT", "").startswith("ok"):
        return "mount-fails"
    w = kv(r.get("WALK", ""))
    if any(w.get(k, "0") != "0" for k in ("ls", "cat", "xattr", "readdir")) or w.get("errors", "0") != "0":
        return "walk-errors"
    if seg is not None and driver_msgs(seg):
        return "clean-walk-but-kernel-logged-error"
    return "clean"


def driver_msgs(seg):
    keep = [x for x in seg if re.search(r"squashfs|SQUASHFS|livesquash|I/O error|error", x)
            and "nosuchoption" not in x and "drop_caches" not in x]
    return [re.sub(r"^\[\s*[\d.]+\]\s*", "", x) for x in keep]


def check_bad(tap, name, r, seg, row, drv, hangs):
    iid, path, vname, expect, what = row
    d = "%s %s (%s)" % (name, vname, what)
    badc = bad_console(seg)
    clean = not badc and not hangs and r is not None and "END" in r
    why = (["hung or crashed (boot restarted past it)"] if hangs or r is None or "END" not in r else []) + badc[:10]
    if drv == "stock":
        # the stock driver is an oracle, not under test: its crashes are reported
        if not clean:
            tap.note("STOCK CRASH %s: %s" % (d, " | ".join(why)[:600]))
    else:
        tap.ok(clean, "%s: no BUG/Oops/WARNING/hang" % d, why)
    oc = outcome(r, seg)
    if r is not None and "END" in r and r.get("MOUNT", "").startswith("ok"):
        inv = r.get("INVALID", "0")
        if drv == "stock":
            if inv.split()[:1] != ["0"]:
                tap.note("  stock driver returned an invalid value to userspace: %s" % inv)
        else:
            tap.ok(inv.split()[:1] == ["0"], "%s: errors reach userspace as -1 + errno (no invalid return values)" % d,
                   inv)
    if r is not None:
        msgs = driver_msgs(seg)
        tap.note("  %s: %s; %s%s" % (vname, oc, r.get("MOUNT", "")[:150] if oc == "mount-fails" else r.get("WALK", "")[:200],
                                     ("; kernel: " + msgs[0][:160]) if msgs else ""))
    if drv in ("builtin", "ours") and expect == "error":
        tap.ok(oc in ("mount-fails", "walk-errors"),
               "%s: the mount or the walk reports an error" % d, "outcome: %s" % oc)
    if drv in ("builtin", "ours") and vname.startswith("io-") and r is not None and "END" in r:
        # a read error: the log names the device, and a mounted image still unmounts
        named = [m for m in driver_msgs(seg) if re.search(r"livesquash \(vd[a-z]+\)", m)]
        tap.ok(named, "%s: the kernel log names the device" % d, driver_msgs(seg)[:3])
        if r.get("MOUNT", "").startswith("ok"):
            tap.ok(r.get("UMOUNT", "").startswith("rc=0"), "%s: unmounts after the errors" % d,
                   r.get("UMOUNT", "no UMOUNT line"))


def compare(tap, allres, good, bad):
    """ours (built-in, module) against the stock driver, image by image"""
    tap.note("--- ours against the stock driver ---")
    gdiffs = {}
    seekdiffs = []
    for iid in sorted(good):
        stock = allres.get(("debian", "good", "stock", iid))
        if not stock or not stock[0] or "END" not in stock[0]:
            continue
        if stock_cannot(good[iid]):
            tap.note("DIFF %s (%s): the stock driver cannot mount it (%s); ours reads it" % (
                iid, desc(good[iid]), stock[0].get("MOUNT", "")[:80]))
            continue
        s = stock[0]
        for kern, drv in (("ours", "builtin"), ("debian", "ours")):
            o = allres.get((kern, "good", drv, iid))
            if not o or not o[0] or "END" not in o[0]:
                continue
            o = o[0]
            sm, om = kv(s.get("MANIFEST", "")).get("sha"), kv(o.get("MANIFEST", "")).get("sha")
            tap.ok(sm == om and sm is not None, "%s: %s manifest equals the stock driver's" % (iid, drv),
                   "stock %s, ours %s" % (sm, om))
            tap.ok(s.get("STATFS") == o.get("STATFS"), "%s: %s statfs equals the stock driver's" % (iid, drv),
                   "stock %s, ours %s" % (s.get("STATFS"), o.get("STATFS")))
            sl, ol = s.get("listing"), o.get("listing")
            detail = []
            if sl is None or ol is None:
                detail.append("listing not received: stock %s, ours %s" % (
                    s.get("listing-error", "ok" if sl else "none"), o.get("listing-error", "ok" if ol else "none")))
                same = False
            else:
                (sc, ss, sdd), (oc, os_, odd) = split_listing(sl), split_listing(ol)
                same = sc == oc
                tap.ok(sdd == odd and sdd != b"", "%s: %s d_ino of the root's '..' equals the stock driver's"
                       % (iid, drv), "stock '%s', ours '%s' (the image has %d inodes)" % (
                           sdd.decode(errors="replace").replace("\t", " "),
                           odd.decode(errors="replace").replace("\t", " "), superblock(good[iid][1])["inodes"]))
                if not same:
                    detail += ["first differences (- stock, + ours):"] + first_diff(sc, oc, 6)
                if ss != os_:
                    d = [x for x in first_diff(ss, os_, 40) if x.startswith("+")]
                    seekdiffs.append("%s(%s): %d files, e.g. %s" % (
                        iid, drv, len(first_diff(ss, os_, 100000)) // 2, "; ".join(
                            x[1:].replace(" | ", " ") for x in d[:2])))
            tap.ok(same, "%s: %s listing (readdir order, inode numbers, d_type, file handles; all but the "
                   "root's '..') equals the stock driver's, line by line" % (iid, drv), detail)
            sf, of = kv(s.get("FORGED", "")), kv(o.get("FORGED", ""))
            bad = ["%s: stock %s, ours %s" % (k, sf.get(k), v) for k, v in sorted(of.items())
                   if k not in ("as-is", "empty") and v != "ESTALE" and v != sf.get(k)]
            tap.ok(of and not bad and of.get("empty") == sf.get("empty"),
                   "%s: %s forged handles (inode 0, past inode_count, 2^32-1, other generation, unknown "
                   "type, type 0, 4 bytes, 0 bytes) give ESTALE or the stock driver's errno" % (iid, drv),
                   bad + ["stock: " + s.get("FORGED", ""), "ours:  " + o.get("FORGED", "")])
            for k in sorted(set(sf) | set(of)):
                if sf.get(k) != of.get(k):
                    gdiffs.setdefault(("FORGED " + k, str(sf.get(k)), str(of.get(k))), []).append(
                        "%s(%s)" % (iid, drv))
            for key in () if "ABORT" in o else ("XATTR-ROOT", "REMOUNT-RW", "MOUNT-NO-RO", "ERRORS-CONTINUE", "BADOPTION", "DF"):
                a, b = s.get(key, ""), o.get(key, "")
                a, b = re.sub(r"/dev/vd[a-z]+", "/dev/vdX", a), re.sub(r"/dev/vd[a-z]+", "/dev/vdX", b)
                if a != b:
                    gdiffs.setdefault((key, a, b), []).append("%s(%s)" % (iid, drv))
    if seekdiffs:
        examples, seen = [], set()
        for x in seekdiffs:  # one example per distinct answer (they differ by block size)
            e = x.split(": ", 1)[1]
            if e not in seen:
                seen.add(e)
                examples.append(x[:300])
        tap.note("DIFF SEEK_DATA/SEEK_HOLE answers differ from the stock driver's on %d image runs (each "
                 "consistent with the content; S path: DATA/HOLE at 0, at size/2, at EOF): %s" % (
                     len(seekdiffs), " || ".join(examples[:4])))
    for (key, a, b), where in sorted(gdiffs.items()):
        tap.note("DIFF %s: stock '%s' / ours '%s' on %d image runs: %s" % (key, a, b, len(where),
                                                                          " ".join(where[:6]) + (" ..." if len(where) > 6 else "")))
    diffs = 0
    for iid in sorted(bad):
        vname, expect = bad[iid][2], bad[iid][3]
        st = allres.get(("debian", "bad", "stock", iid))
        ob = allres.get(("ours", "bad", "builtin", iid))
        om = allres.get(("debian", "bad", "ours", iid))
        if not st:
            continue
        so = outcome(st[0], st[1])
        oo = [outcome(x[0], x[1]) if x else "?" for x in (ob, om)]
        if so != oo[0] or so != oo[1]:
            diffs += 1
            sk = driver_msgs(st[1])
            ok_ = driver_msgs(ob[1]) if ob else []
            tap.note("DIFF %s %s (expect %s): stock %s%s | ours built-in %s%s | ours module %s" % (
                iid, vname, expect, so, (" [" + sk[0][:100] + "]") if sk else "",
                oo[0], (" [" + ok_[0][:100] + "]") if ok_ else "", oo[1]))
    tap.note("%d corrupted images behave differently in stock and ours (mount-fails / walk-errors / clean)" % diffs)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "expect":
        cmd_expect(sys.argv[2])
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "report":
        return cmd_report(sys.argv[2], int(sys.argv[3]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
