#!/usr/bin/env python3
"""One table from the three runs of `make bench-table` (boot-tests/bench/table.sh).

usage: table.py DIR
  DIR/612     bench.sh full on Debian 13's kernel: stock 6.12 squashfs.ko, ours
              (module-6.12) and 6.12's EROFS, interleaved in one boot
  DIR/612-aa  bench.sh aa on the same kernel: our module in both columns, the
              noise band of ours/stock
  DIR/61      bench.sh full on Debian 12's kernel: stock 6.1 squashfs.ko and ours
              (make module), in one boot of their own

Columns: each driver's median; ours/stock-6.12 and its A/A band (the lowest and
highest A/A ratio among that workload's images); ours/EROFS (6.12, EROFS image
of the same family: lz4hc for lz4, else the first); ours/stock-6.1 (their own
boot); stock-6.12/stock-6.1 (two boots, two kernels: a rough figure). A "gain"
is a ratio turned so that above 1 is better for us whatever the unit.
Then the issue's targets, each met or missed, with the figures.
Writes DIR/table.txt and DIR/table.json.
"""
import json
import os
import sys


def load(d):
    p = os.path.join(d, "results.json")
    if not os.path.exists(p):
        return None
    with open(p) as f:
        return json.load(f)


def med(cell):
    return cell["median"] if cell else None


def gain(ratio, better):
    if not ratio:
        return None
    return ratio if better == "higher" else 1.0 / ratio


def main():
    top = sys.argv[1]
    a, aa, c = (load(os.path.join(top, x)) for x in ("612", "612-aa", "61"))
    if not a:
        sys.exit("table.py: no %s/612/results.json (the 6.12 run)" % top)
    rows_aa = {(r["workload"], r["image"]): r for r in (aa["rows"] if aa else [])}
    rows_61 = {(r["workload"], r["image"]): r for r in (c["rows"] if c else [])}
    # the A/A band of each workload: lowest and highest ours/stock gain of its images
    band = {}
    for (wl, _), r in rows_aa.items():
        g = gain(r["ours_stock"], r["better"])
        if g:
            lo, hi = band.get(wl, (g, g))
            band[wl] = (min(lo, g), max(hi, g))
    erofs_rows = {(r["workload"], r["image"]): r for r in a["rows"] if "-erofs-" in r["image"]}

    def erofs_for(r):
        # the same compressor family where there is one: lz4 squashfs vs lz4hc EROFS
        ds = r["image"][0]
        if "-lz4-" in r["image"] and (r["workload"], ds + "-erofs-lz4hc") in erofs_rows:
            return erofs_rows[(r["workload"], ds + "-erofs-lz4hc")]
        return erofs_rows.get((r["workload"], r["erofs_image"])) if r["erofs_image"] else None

    out = []
    for r in a["rows"]:
        if "-erofs-" in r["image"] or not r["ours"]:
            continue
        key = (r["workload"], r["image"])
        r61 = rows_61.get(key)
        er = erofs_for(r)
        er_med = med(er["erofs"]) if er else None
        row = {
            "workload": r["workload"], "image": r["image"], "unit": r["unit"], "better": r["better"],
            "stock61": med(r61["stock"]) if r61 else None,
            "ours61": med(r61["ours"]) if r61 else None,
            "stock612": med(r["stock"]), "ours612": med(r["ours"]),
            "erofs612": er_med, "erofs_image": er["image"] if er else None,
            "gain_stock612": gain(r["ours_stock"], r["better"]),
            "aa_band": band.get(r["workload"]),
            "gain_erofs": gain(med(r["ours"]) / er_med, r["better"]) if er_med and med(r["ours"]) else None,
            "gain_stock61": gain(r61["ours_stock"], r["better"]) if r61 else None,
            "stock612_vs_61": gain(med(r["stock"]) / med(r61["stock"]), r["better"])
            if r61 and med(r61["stock"]) and med(r["stock"]) else None,
        }
        out.append(row)

    def f(x, p="%.2f"):
        return p % x if x is not None else "-"

    def v(x):
        if x is None:
            return "-"
        return "%.0f" % x if abs(x) >= 100 else "%.3g" % x

    p = a["params"]
    lines = ["# livesquash bench table: accel=%s, %s vCPUs, %s MiB, %s rounds; 6.12: %s; 6.1: %s"
             % (p.get("accel"), p.get("smp"), p.get("mem"), p.get("rounds"), p.get("kver"),
                c["params"].get("kver") if c else "(no run)"),
             "# gain = ours/other turned so that > 1 is better for us; band = ours/stock-6.12 of the A/A run"
             " (our module in both columns) over that workload's images%s" % ("" if aa else " (no A/A run)"),
             "# stock 6.12/6.1 compares two boots of two kernels: rough; every other ratio is of one boot"]
    hdr = ("workload", "image", "unit", "better", "stock-6.1", "stock-6.12", "erofs-6.12", "ours-6.12",
           "gain/stock-6.12", "A/A band", "gain/erofs", "gain/stock-6.1", "stock 6.12/6.1")
    table = [hdr]
    for r in out:
        table.append((r["workload"], r["image"], r["unit"], r["better"], v(r["stock61"]), v(r["stock612"]),
                      v(r["erofs612"]) + (" (%s)" % r["erofs_image"] if r["erofs_image"] else ""),
                      v(r["ours612"]), f(r["gain_stock612"]),
                      "%.2f-%.2f" % r["aa_band"] if r["aa_band"] else "-",
                      f(r["gain_erofs"]), f(r["gain_stock61"]), f(r["stock612_vs_61"])))
    w = [max(len(t[i]) for t in table) for i in range(len(hdr))]
    lines += ["  ".join(t[i].ljust(w[i]) for i in range(len(hdr))).rstrip() for t in table]

    # the targets of issue 24
    verdicts = []
    for wl in ("seq-text-cold", "seq-bin-cold"):
        for img in ("b-sq-xz-128K", "b-sq-gzip-128K", "b-sq-zstd-1M"):
            r = next((x for x in out if x["workload"] == wl and x["image"] == img), None)
            g = r["gain_stock612"] if r else None
            verdicts.append((g is not None and g >= 1.3,
                             "one sequential reader, %s %s: ours >= 1.3x stock 6.12: %s" % (wl, img, f(g))))
    for wl in ("walk", "stat-cold", "stat-warm", "cat-cold", "tar-cold"):
        rs = [x for x in out if x["workload"] == wl and x["image"].startswith("t-sq-lz4")]
        if not rs:
            verdicts.append((False, "%s vs EROFS with the same compressor family: not measured (no lz4 tree"
                             " image: BENCH_TREE_COMPS lacks lz4)" % wl))
        for r in rs:
            g = r["gain_erofs"]
            verdicts.append((g is not None and g >= 1.0, "%s %s vs EROFS %s: ours >= 1.0x: %s"
                             % (wl, r["image"], r["erofs_image"], f(g))))
    low = [r for r in out if r["gain_stock612"] is not None and r["gain_stock612"] < 0.95
           and not (r["aa_band"] and r["gain_stock612"] >= r["aa_band"][0])]
    verdicts.append((not low, "no row below 0.95x stock 6.12 outside its A/A band%s"
                     % ("" if not low else ": " + ", ".join("%s %s %.2f" % (r["workload"], r["image"],
                                                                            r["gain_stock612"]) for r in low))))
    lines.append("# targets (issue 24):")
    lines += ["#   %s %s" % ("met   " if ok else "MISSED", text) for ok, text in verdicts]
    lines.append("# %d of %d targets met" % (sum(ok for ok, _ in verdicts), len(verdicts)))
    with open(os.path.join(top, "table.txt"), "w") as fo:
        fo.write("\n".join(lines) + "\n")
    with open(os.path.join(top, "table.json"), "w") as fo:
        json.dump({"rows": out, "targets": [{"met": ok, "what": t} for ok, t in verdicts]}, fo, indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
