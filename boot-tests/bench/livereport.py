#!/usr/bin/env python3
"""boot-tests/bench/livereport.py RUNDIR ACCEL: the table of `make bench-live`.

Reads RUNDIR/live.tsv (liveboot.sh: one line a boot), writes RUNDIR/live.json and
prints, for each medium, each variant's time to a login prompt and to the first
`systemctl is-system-running` answer (median [min-max] over the rounds; the boot's time:
QEMU's, the kernel being booted directly, plus the medium's time to load the kernel and
initrd, the "load" column), the ratios the
issue asks for (ours and plain against peer (b) `debian` and peer (a) `dracut`,
plain against ours: the speed-up of the boot order; on a network medium, stream
against ours (download) and dmsquash-live's livenet), the targets beside them, and the
A/A band: how far apart two boots of the same variant on the same medium were (the
largest max/min over the variants with two rounds or more).
"""

import json
import statistics
import sys

TARGETS = {  # medium: the most ours may take, as a share of peer (b)'s login time
    "dvd": 0.5,
    "usb": 0.7,
}
ORDER_TARGET = 1.3  # unordered / ordered login time on the DVD
STREAM_TARGET = {"net100": 0.5}  # the most stream may take, as a share of download's login


def main():
    rundir, accel = sys.argv[1], sys.argv[2]
    host_cpu = float(sys.argv[3]) if len(sys.argv) > 3 else None
    scale = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else "1"
    lines = [line.rstrip("\n").split("\t") for line in open(rundir + "/live.tsv")]
    rows = [dict(zip(lines[0], r)) for r in lines[1:]]
    res = {"accel": accel, "media": {}}
    media = []
    for r in rows:
        if r["medium"] not in media:
            media.append(r["medium"])
    band = 1.0
    for m in media:
        out = res["media"][m] = {}
        variants = []
        for r in rows:
            if r["medium"] == m and r["variant"] not in variants:
                variants.append(r["variant"])
        for v in variants:
            rs = [r for r in rows if r["medium"] == m and r["variant"] == v]
            load = [float(r.get("load", 0)) for r in rs]
            qlogin = [float(r["login"]) for r in rs if r["login"] != "-"]
            login = [float(r["login"]) + float(r.get("load", 0)) for r in rs if r["login"] != "-"]
            ready = [float(r["ready"]) + float(r.get("load", 0)) for r in rs]
            out[v] = {
                "load": load, "login": login, "ready": ready, "qemu_login": qlogin,
                "login_median": statistics.median(login) if login else None,
                "ready_median": statistics.median(ready) if ready else None,
                "qemu_login_median": statistics.median(qlogin) if qlogin else None,
                "state": sorted({r["state"] for r in rs}),
                "seeks": [r["seeks"] for r in rs], "reads": [r["reads"] for r in rs],
                "medium_s": [r["medium_s"] for r in rs],
                "root": sorted({r["root"] for r in rs}),
            }
            for xs in (login, ready):
                if len(xs) >= 2 and min(xs) > 0:
                    band = max(band, max(xs) / min(xs))
    res["aa_band"] = band
    cpus = [float(r["cpu_s"]) for r in rows if r.get("cpu_s", "-") not in ("-", "")]
    res["host_cpu_s"], res["scale"] = host_cpu, float(scale)
    res["slowdown"] = statistics.median(cpus) / host_cpu if cpus and host_cpu else None

    def cell(x, key):
        xs = x[key]
        if not xs:
            return "-"
        return "%.1f [%.1f-%.1f]" % (statistics.median(xs), min(xs), max(xs))

    def ratio(out, a, b, key="login_median"):
        if a in out and b in out and out[a][key] and out[b][key]:
            return out[a][key] / out[b][key]
        return None

    print("# live boot, seconds (median [min-max] over the rounds); accel %s" % accel)
    print("# load: the medium's time to give the boot loader the kernel and initrd (modelled);"
          " login, ready: QEMU's time (the kernel booted directly) plus load; qemu login: without it")
    print("%-6s %-8s %-6s %-20s %-20s %-20s %-8s %-7s %s" % (
        "medium", "variant", "load", "login", "ready", "qemu login", "seeks", "busy s", "state"))
    for m in media:
        out = res["media"][m]
        for v, x in out.items():
            print("%-6s %-8s %-6.1f %-20s %-20s %-20s %-8s %-7s %s" % (
                m, v, statistics.median(x["load"]), cell(x, "login"), cell(x, "ready"),
                cell(x, "qemu_login"), "/".join(x["seeks"]), "/".join(x["medium_s"]),
                ",".join(x["state"])))
    print("# ratios of the login medians (lower is better for ours; the target beside it;"
          " in parentheses, of QEMU's times alone)")
    for m in media:
        out = res["media"][m]
        rat = res["media"][m]["ratios"] = {}
        for a, b in (("ours", "debian"), ("plain", "debian"), ("ours", "dracut"),
                     ("plain", "dracut"), ("ours", "plain"), ("stream", "ours"),
                     ("stream", "dracut")):
            q = ratio(out, a, b)
            if q is None:
                continue
            rat["%s/%s" % (a, b)] = q
            target = ""
            if b == "debian" and m in TARGETS:
                target = "target <= %.2f: %s" % (TARGETS[m], "met" if q <= TARGETS[m] else "missed")
            if (a, b) == ("stream", "ours") and m in STREAM_TARGET:
                target = "stream/download, target <= %.2f: %s" % (
                    STREAM_TARGET[m], "met" if q <= STREAM_TARGET[m] else "missed")
            if (a, b) == ("ours", "plain") and m == "dvd":
                target = "boot order speed-up %.2fx, target >= %.1fx: %s" % (
                    1 / q, ORDER_TARGET, "met" if 1 / q >= ORDER_TARGET else "missed")
            rat["%s/%s qemu" % (a, b)] = q0 = ratio(out, a, b, "qemu_login_median")
            print("%-6s %-16s %.2f (%.2f)  %s" % (m, "%s/%s" % (a, b), q, q0, target))
        for v in ("ram", "ram-bg", "persist"):
            q = ratio(out, v, "ours", "ready_median")
            if q is not None:
                rat["%s/ours" % v] = q
                print("%-6s %-16s %.2f  (ready, against ours from the same medium)" % (m, v + "/ours", q))
    print("# A/A band: boots of one variant on one medium were up to %.2fx apart" % band)
    if res["slowdown"]:
        print("# the guests' CPU ran %.1fx slower than the host's (seq | gzip -6: %.2f s here, median %.2f s in the guests);"
              " the medium's costs were x%s (BENCH_LIVE_SCALE)" % (res["slowdown"], host_cpu, statistics.median(cpus), scale))
    json.dump(res, open(rundir + "/live.json", "w"), indent=1)


if __name__ == "__main__":
    main()
