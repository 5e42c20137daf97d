#!/usr/bin/env python3
"""boot-tests/bench/report.py RUNDIR MODE: the benchmark's table, files, chart and checks.

Reads RUNDIR/guest.out ("@@ ..." lines from guest-init.sh), RUNDIR/params,
RUNDIR/disks.tsv and RUNDIR/console.log. Writes RUNDIR/results.json,
RUNDIR/results.tsv and RUNDIR/ratios.png (gnuplot), prints the table, then TAP
checks ending with "N passed, N failed". Exit 1 if a check failed.
"""
import json
import os
import re
import statistics
import subprocess
import sys

# workload -> (unit, better, how to compute the figure from the key=value pairs)
def mbps(kv):
    return kv["bytes"] / kv["ns"] * 1e3


def per_s(kv):
    return kv["ops"] / kv["ns"] * 1e9


METRICS = {
    "mount": ("ms", "lower", lambda kv: kv["ns"] / 1e6),
    "walk": ("entries/s", "higher", per_s),
    "stat-cold": ("stats/s", "higher", per_s),
    "stat-warm": ("stats/s", "higher", per_s),
    "cat-cold": ("MB/s", "higher", mbps),
    "tar-cold": ("s", "lower", lambda kv: kv["ns"] / 1e9),
    "seq-text-cold": ("MB/s", "higher", mbps),
    "seq-text-warm": ("MB/s", "higher", mbps),
    "seq-bin-cold": ("MB/s", "higher", mbps),
    "seq-bin-warm": ("MB/s", "higher", mbps),
    "rand-cold": ("IOPS", "higher", per_s),
    "rand-warm": ("IOPS", "higher", per_s),
    "par2-diff": ("MB/s", "higher", mbps),
    "par2-same": ("MB/s", "higher", mbps),
    "par4-diff": ("MB/s", "higher", mbps),
    "par4-same": ("MB/s", "higher", mbps),
}
MEM = ("kB", "lower")
ORDER = list(METRICS)

tap_n = 0
tap_failed = 0


def tap(ok, text):
    global tap_n, tap_failed
    tap_n += 1
    if not ok:
        tap_failed += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", tap_n, text))


def parse_kv(words):
    kv = {}
    for w in words:
        if "=" in w:
            k, v = w.split("=", 1)
            try:
                kv[k] = float(v)
            except ValueError:
                kv[k] = v
    return kv


def fmt(v):
    if v is None:
        return "-"
    a = abs(v)
    if a >= 1000:
        return "%.0f" % v
    if a >= 100:
        return "%.1f" % v
    if a >= 10:
        return "%.2f" % v
    return "%.3g" % v


def main():
    rundir, mode = sys.argv[1], sys.argv[2]
    params = {}
    with open(os.path.join(rundir, "params")) as f:
        for line in f:
            for w in line.split():
                if "=" in w:
                    k, v = w.split("=", 1)
                    params.setdefault(k, v)
    comps_line = open(os.path.join(rundir, "params")).read()
    comps_b = re.search(r"^comps=(.*)$", comps_line, re.M).group(1).split()
    comps_t = re.search(r"^tree_comps=(.*)$", comps_line, re.M).group(1).split()
    comps = comps_b + [c for c in comps_t if c not in comps_b]
    erofs = re.search(r"^erofs=(.*)$", comps_line, re.M).group(1).split()
    workloads = re.search(r"^workloads=(\S.*?) rand_n=", comps_line, re.M).group(1).split()
    rounds = int(params["rounds"])
    smp = int(params["smp"])
    disks = [line.split("\t")[0] for line in open(os.path.join(rundir, "disks.tsv"))]

    lines = open(os.path.join(rundir, "guest.out"), errors="replace").read().splitlines()
    raw = {}  # (wl, image, driver) -> [values]
    kvs = {}  # (round, driver, image, wl) -> kv
    ceil = {}  # (wl, image) -> [MB/s]
    fails, insmods, rmmods, slabtop = [], [], [], []
    done = start = None
    ndisks_seen = None
    for line in lines:
        if not line.startswith("@@ "):
            continue
        w = line[3:].split()
        if not w:
            continue
        tag = w[0]
        if tag == "START":
            start = line
        elif tag == "DISKS":
            ndisks_seen = int(w[1])
        elif tag == "DONE":
            done = True
        elif tag == "FAIL":
            fails.append(line)
        elif tag == "INSMOD":
            insmods.append(w)
        elif tag == "RMMOD":
            rmmods.append(w)
        elif tag == "SLABTOP":
            slabtop.append(line)
        elif tag == "CEIL" and len(w) >= 4:
            # the decompression ceiling of a sequential row (lsqceil, one vCPU)
            try:
                ceil.setdefault((w[3], w[2]), []).append(mbps(parse_kv(w[4:])))
            except (KeyError, ZeroDivisionError, TypeError):
                ceil.setdefault((w[3], w[2]), []).append(None)
        elif tag == "RES" and len(w) >= 5:
            r, drv, image, wl = w[1], w[2], w[3], w[4]
            kv = parse_kv(w[5:])
            kvs[(r, drv, image, wl)] = kv
            if wl in METRICS:
                try:
                    val = METRICS[wl][2](kv)
                except (KeyError, ZeroDivisionError, TypeError):
                    val = None
                raw.setdefault((wl, image, drv), []).append(val)
            elif wl.startswith("mem"):
                for key, suffix in (("kb", ""), ("slabinfokb", "-slab")):
                    val = kv.get(key)
                    raw.setdefault((wl + suffix, image, drv), []).append(val if isinstance(val, float) else None)

    # --- the table ---
    def stats(vals):
        v = [x for x in vals if x is not None]
        if not v:
            return None
        return {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v), "values": v}

    def ratio(a, b):
        # a ratio of noisy memory deltas near zero means nothing: only of positive medians
        if a and b and a["median"] > 0 and b["median"] > 0:
            return a["median"] / b["median"]
        return None

    def unit_of(wl):
        if wl in METRICS:
            return METRICS[wl][:2]
        return MEM

    wls = sorted({k[0] for k in raw}, key=lambda w: (ORDER.index(w) if w in ORDER else 100, w))
    rows = []
    for wl in wls:
        for ds in ("t", "b"):
            for c in (comps_t if ds == "t" else comps_b):
                img = "%s-sq-%s" % (ds, c.replace(":", "-"))
                st = stats(raw.get((wl, img, "stock"), []))
                ou = stats(raw.get((wl, img, "ours"), []))
                if not st and not ou:
                    continue
                er = stats(raw.get((wl, "%s-erofs-%s" % (ds, erofs[0]), "erofs"), [])) if erofs else None
                ce = stats(ceil.get((wl, img), []))
                rows.append({"workload": wl, "image": img, "unit": unit_of(wl)[0], "better": unit_of(wl)[1],
                             "stock": st, "ours": ou, "erofs": er,
                             "erofs_image": ("%s-erofs-%s" % (ds, erofs[0])) if erofs else None,
                             "ours_stock": ratio(ou, st), "ours_erofs": ratio(ou, er),
                             "ceiling": ce, "ours_ceiling": ratio(ou, ce), "stock_ceiling": ratio(st, ce)})
            for e in erofs:
                img = "%s-erofs-%s" % (ds, e)
                er = stats(raw.get((wl, img, "erofs"), []))
                if er:
                    rows.append({"workload": wl, "image": img, "unit": unit_of(wl)[0], "better": unit_of(wl)[1],
                                 "stock": None, "ours": None, "erofs": er, "erofs_image": img,
                                 "ours_stock": None, "ours_erofs": None,
                                 "ceiling": None, "ours_ceiling": None, "stock_ceiling": None})

    def cell(s):
        if not s:
            return "-"
        if s["n"] == 1:
            return fmt(s["median"])
        return "%s [%s-%s]" % (fmt(s["median"]), fmt(s["min"]), fmt(s["max"]))

    accel = params.get("accel", "?")
    print("# livesquash bench: accel=%s, %s vCPUs on %s host CPUs, %s MiB, %d round(s), kernel %s, guest clock %s"
          % (accel, smp, params.get("host_cpus"), params.get("mem"), rounds, params.get("kver"),
             params.get("clock", "tsc")))
    m = re.search(r"^ours=(\S+) sha256=(\S+) built=(\S+) fs-squashfs-commit=(\S+)", comps_line, re.M)
    if m:
        print("# ours: %s (sha256 %s, built %s, last fs-squashfs commit %s); stock: Debian's squashfs.ko"
              % m.groups())
    if mode == "aa":
        print("# A/A: our module in both columns (\"stock\" is ours too): every ratio here is noise,"
              " and a figure of the A/B run is only a difference where it lies outside this spread")
    if accel == "tcg":
        print("# TCG (emulated CPU): absolute figures mean little; read the ratios (ours/stock > 1 is"
              " better for 'higher' units, < 1 for 'lower' ones)")
    if smp > int(params.get("host_cpus", smp)):
        print("# note: %d vCPUs on %s host CPUs: parallel readers compete for host CPUs"
              % (smp, params.get("host_cpus")))
    print("# median [min-max] over rounds; t- = tree %s, b- = %s x4 files of %s MiB"
          % (params.get("tree"), "text/bin", params.get("file_mb")))
    if any(r["ceiling"] for r in rows):
        print("# ceiling: one vCPU decompressing the same blocks of the file in memory, in the same boot"
              " (lsqceil: user-space zlib, liblzma, liblzo2, liblz4, libzstd; the kernel's builds differ);"
              " ours/ceil is our cold read as a share of it, and with %d vCPUs the bound is %d times it" % (smp, smp))
    hdr = ("workload", "image", "unit", "better", "stock", "ours", "ours/stock", "erofs", "ours/erofs",
           "ceiling", "ours/ceil")
    table = [hdr]
    for r in rows:
        table.append((r["workload"], r["image"], r["unit"], r["better"], cell(r["stock"]), cell(r["ours"]),
                      "%.2f" % r["ours_stock"] if r["ours_stock"] else "-",
                      cell(r["erofs"]) + ("" if r["stock"] or r["ours"] or not r["erofs"] else ""),
                      "%.2f" % r["ours_erofs"] if r["ours_erofs"] else "-",
                      cell(r["ceiling"]), "%.2f" % r["ours_ceiling"] if r["ours_ceiling"] else "-"))
    widths = [max(len(t[i]) for t in table) for i in range(len(hdr))]
    with open(os.path.join(rundir, "table.txt"), "w") as out:
        for t in table:
            line = "  ".join(t[i].ljust(widths[i]) for i in range(len(hdr))).rstrip()
            print(line)
            out.write(line + "\n")

    # a control: warm page-cache reads run little driver code, so their ours/stock spread
    # shows how much of a difference the machine's noise alone makes
    warm = sorted(r["ours_stock"] for r in rows
                  if r["ours_stock"] and r["workload"] in ("seq-text-warm", "seq-bin-warm", "rand-warm"))
    if warm:
        print("# control: ours/stock of warm page-cache reads (seq/rand *-warm, little driver code) spans"
              " %.2f-%.2f (median %.2f) over %d rows: differences within that band are noise"
              % (warm[0], warm[-1], statistics.median(warm), len(warm)))

    # disk reads: KiB each run read from its image's disk (diskkb), medians per driver
    disk = {}
    for (r, drv, img, wl), kv in kvs.items():
        if isinstance(kv.get("diskkb"), float):
            disk.setdefault((wl, img), {}).setdefault(drv, []).append(kv["diskkb"])
    disk_rows = []
    for (wl, img), by in sorted(disk.items(), key=lambda x: (ORDER.index(x[0][0]) if x[0][0] in ORDER else 100,
                                                             x[0][1])):
        med_d = {d: statistics.median(v) for d, v in by.items()}
        disk_rows.append({"workload": wl, "image": img, **med_d})
    if disk_rows:
        print("# disk reads: KiB read from the image's disk per run (median over rounds)")
        for x in disk_rows:
            if "-sq-" not in x["image"] or x["workload"] in ("mount", "walk"):
                continue
            st, ou = x.get("stock"), x.get("ours")
            print("#   %-14s %-16s stock %9s  ours %9s%s" % (
                x["workload"], x["image"], "%d" % st if st is not None else "-",
                "%d" % ou if ou is not None else "-",
                "  ours/stock %.2f" % (ou / st) if st and ou is not None else ""))

    # scaling: N readers of N different files (parN-diff) against one reader that reads
    # the same kind of files one after the other (the harmonic mean of the text and
    # binary sequential cold rates), from the medians of each driver
    scaling = []
    med = {(r["workload"], r["image"], d): r[d]["median"] for r in rows for d in ("stock", "ours") if r[d]}
    for c in comps_b:
        img = "b-sq-%s" % c.replace(":", "-")
        for n in (2, 4):
            got = {}
            for d in ("stock", "ours"):
                t, b, p = (med.get((w, img, d)) for w in ("seq-text-cold", "seq-bin-cold", "par%d-diff" % n))
                if t and b and p:
                    got[d] = p / (2 / (1 / t + 1 / b))
            if got:
                scaling.append({"image": img, "readers": n, **got})
    if scaling:
        print("# scaling: N readers of different files (parN-diff) / one reader of the same files in turn"
              " (seq-*-cold), medians; %d vCPUs on %s host CPUs" % (smp, params.get("host_cpus")))
        for x in scaling:
            print("#   %-16s N=%d  ours %s  stock %s" % (x["image"], x["readers"],
                                                     "%.2f" % x["ours"] if "ours" in x else "-",
                                                     "%.2f" % x["stock"] if "stock" in x else "-"))

    # --- files ---
    with open(os.path.join(rundir, "results.json"), "w") as f:
        json.dump({"params": params, "comps": comps_b, "tree_comps": comps_t, "erofs": erofs, "workloads": workloads,
                   "rows": rows, "disk": disk_rows, "scaling": scaling, "slabtop": slabtop, "fails": fails}, f, indent=1)
    with open(os.path.join(rundir, "results.tsv"), "w") as f:
        f.write("workload\timage\tdriver\tunit\tbetter\tmedian\tmin\tmax\tn\tvalues\n")
        for (wl, img, drv), vals in sorted(raw.items()):
            s = stats(vals)
            if s:
                f.write("%s\t%s\t%s\t%s\t%s\t%g\t%g\t%g\t%d\t%s\n" % (
                    wl, img, drv, unit_of(wl)[0], unit_of(wl)[1], s["median"], s["min"], s["max"], s["n"],
                    ",".join("%g" % v for v in s["values"])))
    png = os.path.join(rundir, "ratios.png")
    chart_ok = chart(rundir, rows, comps, accel, png)
    print("# files: %s/results.json results.tsv table.txt ratios.png guest.out console.log" % rundir)

    # --- checks ---
    tap(start is not None and done is True, "guest started and reached DONE (%s)" % (start or "no START"))
    tap(ndisks_seen == len(disks), "guest saw every disk (%s of %d)" % (ndisks_seen, len(disks)))
    for r in range(1, rounds + 1):
        for drv in ("stock", "ours"):
            ins = [w for w in insmods if w[1] == str(r) and w[2] == drv]
            kv = parse_kv(ins[0][4:]) if ins else {}
            taint = str(kv.get("taint", ""))
            if taint.endswith(".0"):
                taint = taint[:-2]
            ok = bool(ins) and ins[0][3] == "ok"
            if drv == "ours" or mode == "aa":
                # built out of tree: taint O; and our banner in dmesg since the insmod
                ok = ok and kv.get("banner", 0) >= 1 and "O" in taint
                what = "dmesg shows 'livesquash: squashfs 4.0 driver', taint O (out of tree)"
            else:
                ok = ok and kv.get("banner", 1) == 0 and "O" not in taint
                what = "no livesquash banner, not out of tree"
            tap(ok, "round %d: %s squashfs.ko loaded: %s (%s)"
                % (r, drv, what, " ".join(ins[0][3:]) if ins else "no INSMOD line"))
            rm = [w for w in rmmods if w[1] == str(r) and w[2] == drv]
            tap(bool(rm) and rm[0][3] == "rc=0", "round %d: rmmod of %s squashfs" % (r, drv))
    if erofs:
        ins = [w for w in insmods if w[2] == "erofs"]
        tap(bool(ins) and ins[0][3] != "0", "erofs.ko (and libcrc32c, crc32c_generic) loaded")
    tap(not fails, "no workload failed (%d FAIL lines%s)" % (len(fails), (": " + fails[0][:200]) if fails else ""))

    # expected workloads per image kind
    tree_wl = ["mount", "walk"] + [w for g, ws in (("stat", ["stat-cold", "stat-warm"]), ("cat", ["cat-cold"]),
                                                   ("tar", ["tar-cold"])) if g in workloads for w in ws]
    # the file images are mounted by their workloads only (none: not at all)
    big_wl = ["mount"] if any(g in workloads for g in ("seq", "rand", "par")) else []
    if "seq" in workloads:
        big_wl += ["seq-text-cold", "seq-text-warm", "seq-bin-cold", "seq-bin-warm"]
    if "rand" in workloads:
        big_wl += ["rand-cold", "rand-warm"]
    if "par" in workloads:
        for n in (2, 4):
            if n <= smp:
                big_wl += ["par%d-diff" % n, "par%d-same" % n]
    missing, bad = [], []
    for r in range(1, rounds + 1):
        for img in disks:
            if img.startswith("m-"):
                continue
            drvs = ["erofs"] if "-erofs-" in img else ["stock", "ours"]
            for drv in drvs:
                for wl in (tree_wl if img.startswith("t-") else big_wl):
                    kv = kvs.get((str(r), drv, img, wl))
                    if kv is None:
                        missing.append("%d/%s/%s/%s" % (r, drv, img, wl))
                        continue
                    try:
                        val = METRICS[wl][2](kv)
                    except (KeyError, ZeroDivisionError, TypeError):
                        val = None
                    if val is None or not val > 0:
                        bad.append("%d/%s/%s/%s=%s" % (r, drv, img, wl, val))
                if "mem" in workloads and img.startswith("t-"):
                    for wl in ("mem1", "mem%s" % params.get("mounts")):
                        kv = kvs.get((str(r), drv, img, wl))
                        if kv is None:
                            missing.append("%d/%s/%s/%s" % (r, drv, img, wl))
                        elif not isinstance(kv.get("kb"), float) or not isinstance(kv.get("slabinfokb"), float):
                            bad.append("%d/%s/%s/%s unparsed" % (r, drv, img, wl))
    tap(not missing, "guest ran every workload on every image with every driver, every round (%d missing%s)"
        % (len(missing), (": " + " ".join(missing[:6])) if missing else ""))
    tap(not bad, "every figure parsed, every timed one positive (%d bad%s)" % (len(bad), (": " + " ".join(bad[:6])) if bad else ""))
    # same bytes read by every driver: cat of the tree, sequential reads of the files
    diffs = []
    for r in range(1, rounds + 1):
        for ds, wl in (("t", "cat-cold"), ("b", "seq-text-cold"), ("b", "seq-bin-cold")):
            got = {}
            for (rr, drv, img, w), kv in kvs.items():
                if rr == str(r) and w == wl and img.startswith(ds + "-"):
                    got["%s:%s" % (drv, img)] = kv.get("bytes")
            if len(set(got.values())) > 1:
                diffs.append("%d %s %s" % (r, wl, got))
    tap(not diffs, "every driver and image read the same number of bytes (cat of the tree, sequential files)%s"
        % ((": " + diffs[0][:300]) if diffs else ""))
    # warm runs must be page-cache hits, or they time the disk and the driver
    warm_disk = ["%s %s %s %s=%dKiB" % (r, drv, img, wl, kv["diskkb"]) for (r, drv, img, wl), kv in sorted(kvs.items())
                 if wl in ("seq-text-warm", "seq-bin-warm", "rand-warm") and kv.get("diskkb") != 0]
    tap(not warm_disk, "warm sequential and random runs read nothing from the disk, every driver, every round"
        " (%d did%s)" % (len(warm_disk), (": " + " ".join(warm_disk[:4])) if warm_disk else ""))
    console = open(os.path.join(rundir, "console.log"), errors="replace").read()
    pat = re.compile(r"BUG:|WARNING:|Oops|Call Trace|KASAN|Kernel panic|soft lockup|hung_task|blocked for more")
    hits = [l for l in console.splitlines() if pat.search(l)]
    tap(not hits, "console has no BUG:/WARNING:/Oops/Call Trace/KASAN/panic/lockup%s"
        % ((": " + hits[0][:200]) if hits else ""))
    nratio = sum(1 for r in rows if r["ours_stock"])
    tap(nratio > 0 and all(r["ours_stock"] > 0 for r in rows if r["ours_stock"]),
        "%d ours/stock ratios computed, results.json and results.tsv written" % nratio)
    if "seq" in workloads:
        seqrows = [r for r in rows if r["workload"] in ("seq-text-cold", "seq-bin-cold") and "-sq-" in r["image"]]
        noceil = [r["workload"] + " " + r["image"] for r in seqrows if not r["ceiling"]]
        bad_ceil = [x for x in ceil if any(v is None or v <= 0 for v in ceil[x])]
        tap(seqrows and not noceil and not bad_ceil,
            "the decompression ceiling measured for every sequential cold row (%d rows%s)"
            % (len(seqrows), (", none for: " + " ".join(noceil[:4])) if noceil else
               (", bad figures: %s" % bad_ceil[:3]) if bad_ceil else ""))
    tap(chart_ok, "chart %s written (PNG)" % png)
    print("%d passed, %d failed" % (tap_n - tap_failed, tap_failed))
    sys.exit(1 if tap_failed else 0)


def chart(rundir, rows, comps, accel, png):
    """Heatmaps of 'ours better by' factors: left vs stock, right vs EROFS (lz4hc)."""
    ylabels = []
    cols = [c.replace(":", "-") for c in comps]
    cells = {}
    for r in rows:
        if not r["image"].split("-")[1] == "sq":
            continue
        ds = r["image"][0]
        y = "%s (%s)" % (r["workload"], "tree" if ds == "t" else "files")
        if y not in ylabels:
            ylabels.append(y)
        x = r["image"][5:]
        for k in ("ours_stock", "ours_erofs"):
            v = r[k]
            if v:
                cells[(k, y, x)] = v if r["better"] == "higher" else 1.0 / v
    if not cells:
        return False
    dat = os.path.join(rundir, "ratios.dat")
    with open(dat, "w") as f:
        for bi, k in enumerate(("ours_stock", "ours_erofs")):
            for yi, y in enumerate(ylabels):
                for xi, x in enumerate(cols):
                    v = cells.get((k, y, x))
                    f.write("%d %d %s \"%s\"\n" % (xi, yi, ("%.4f" % v) if v else "NaN", ("%.2f" % v) if v else ""))
                f.write("\n")
            f.write("\n\n")
    xt = ", ".join('"%s" %d' % (x, i) for i, x in enumerate(cols))
    yt = ", ".join('"%s" %d' % (y, i) for i, y in enumerate(ylabels))
    h = max(500, 60 + 26 * len(ylabels))
    gp = """set terminal pngcairo size 1500,%d font "sans,9"
set output "%s"
set multiplot layout 1,2 title "livesquash bench (%s): how many times better ours is (>1 = ours better; time and memory inverted)"
set logscale cb
set cbrange [0.25:4]
set palette defined (0 "#b2182b", 0.5 "#f7f7f7", 1 "#2166ac")
set xtics (%s) rotate by 30 right
set ytics (%s)
set yrange [%f:-0.5]
set cbtics ("0.25" 0.25, "0.5" 0.5, "1" 1, "2" 2, "4" 4)
set xrange [-0.5:%f]
unset key
set title "ours vs stock squashfs.ko"
plot "%s" index 0 using 1:2:3 with image, "" index 0 using 1:2:4 with labels
set title "ours vs EROFS lz4hc (same data)"
plot "%s" index 1 using 1:2:3 with image, "" index 1 using 1:2:4 with labels
unset multiplot
""" % (h, png, accel, xt, yt, len(ylabels) - 0.5, len(cols) - 0.5, dat, dat)
    gpf = os.path.join(rundir, "ratios.gp")
    with open(gpf, "w") as f:
        f.write(gp)
    try:
        subprocess.run(["gnuplot", gpf], check=True, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        print("# gnuplot failed: %s" % e)
        return False
    with open(png, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n"


if __name__ == "__main__":
    main()
