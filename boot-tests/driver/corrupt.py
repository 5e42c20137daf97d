#!/usr/bin/env python3
"""boot-tests/driver/corrupt.py: corrupted variants of small squashfs images.

usage: corrupt.py BASE BASE2 OUTDIR > list.tsv
       corrupt.py faults OUTDIR NAME=IMAGE... >> list.tsv
       corrupt.py crafted BASE OUT   (the hazard tests' image, see crafted())
  BASE   gzip image with uncompressed metadata (mksquashfs -noI -noF -noX): every
         inode, directory entry and table field can be patched in place
  BASE2  the same tree with everything compressed (mksquashfs defaults): corruption
         inside compressed metadata
Finds each field by parsing the image (/work/shared/squashfs-format.md; the image
wins), writes OUTDIR/bNN.img and prints one line per variant:
  ID <tab> PATH <tab> NAME <tab> EXPECT <tab> WHAT
EXPECT is "error" when the corrupted bytes are used by a mount + full walk (ls -lR,
cat, listxattr), so a careful driver must report an error, or "any" when a driver may
legitimately ignore them.

faults: read errors instead of bytes: for each IMAGE, QEMU blkdebug configurations
(OUTDIR/NAME-REGION.cfg) that fail every read of one sector with EIO: the superblock,
the first block of the inode and directory tables, the first metadata block of the
id, fragment, export and xattr id tables, and two data sectors (one in the middle of
the data, and the last one before the inode table: the tail-end fragment block of a
small tree). The PATH printed is QEMU's "blkdebug:CFG:IMAGE"; EXPECT is "error".
"""
import os
import struct
import sys
import zlib

SB = struct.Struct("<IIIIIHHHHHHQQQQQQQQ")
SB_FIELDS = ("magic inodes mkfs_time block_size fragments compression block_log flags "
             "no_ids s_major s_minor root_inode bytes_used id_table_start "
             "xattr_id_table_start inode_table_start directory_table_start "
             "fragment_table_start lookup_table_start").split()
SB_OFF = {}
_o = 0
for _name, _fmt in zip(SB_FIELDS, "IIIIIHHHHHHQQQQQQQQ"):
    SB_OFF[_name] = (_o, _fmt)
    _o += struct.calcsize("<" + _fmt)


class Image:
    def __init__(self, path):
        self.data = open(path, "rb").read()
        self.sb = dict(zip(SB_FIELDS, SB.unpack_from(self.data, 0)))
        assert self.sb["magic"] == 0x73717368, "not squashfs"

    def table(self, start, end):
        """Read the metadata blocks in [start, end): returns (stream, blocks) where
        blocks maps a table-relative block offset to (stream pos, abs data offset or
        None when compressed, header offset)."""
        stream = bytearray()
        blocks = {}
        off = start
        while off < end:
            hdr = struct.unpack_from("<H", self.data, off)[0]
            length = hdr & 0x7FFF
            raw = self.data[off + 2:off + 2 + length]
            if hdr & 0x8000:
                blocks[off - start] = (len(stream), off + 2, off)
                stream += raw
            else:
                blocks[off - start] = (len(stream), None, off)
                stream += zlib.decompress(raw)
            off += 2 + length
        return bytes(stream), blocks

    def abs_of(self, blocks, spos):
        """absolute file offset of stream position spos (uncompressed blocks only)"""
        best = None
        for rel, (sp, ab, _h) in blocks.items():
            if sp <= spos and (best is None or sp > best[0]):
                best = (sp, ab)
        assert best and best[1] is not None, "position in a compressed block"
        return best[1] + spos - best[0]


def parse(img):
    """Parse inodes and directories of an image with uncompressed metadata."""
    sb = img.sb
    bs = sb["block_size"]
    istream, iblocks = img.table(sb["inode_table_start"], sb["directory_table_start"])
    dend = min(x for x in (sb["fragment_table_start"], sb["lookup_table_start"],
                           sb["id_table_start"], sb["xattr_id_table_start"])
               if x != 0xFFFFFFFFFFFFFFFF and x > sb["directory_table_start"])
    dstream, dblocks = img.table(sb["directory_table_start"], dend)
    inodes = []
    p = 0
    while p < len(istream):
        t, mode, uid, gid, mtime, ino = struct.unpack_from("<HHHHII", istream, p)
        rec = {"pos": p, "type": t, "ino": ino}
        q = p + 16
        if t == 1:
            sblk, nlink, fsize, offset, parent = struct.unpack_from("<IIHHI", istream, q)
            rec.update(start=sblk, size=fsize, offset=offset, size_pos=q + 8, size_fmt="H")
            q += 16
        elif t == 8:
            nlink, fsize, sblk, parent, icount, offset, xat = struct.unpack_from(
                "<IIIIHHI", istream, q)
            rec.update(start=sblk, size=fsize, offset=offset, xattr_pos=q + 20, xattr=xat,
                       size_pos=q + 4, size_fmt="I")
            q += 24
            for _ in range(icount):
                nsize = struct.unpack_from("<I", istream, q + 8)[0]
                q += 12 + nsize + 1
        elif t in (2, 9):
            if t == 2:
                sblk, frag, foff, fsize = struct.unpack_from("<IIII", istream, q)
                rec.update(frag_pos=q + 4, foff_pos=q + 8, size_pos=q + 12, size_fmt="I")
                q += 16
            else:
                sblk, fsize, sparse, nlink, frag, foff, xat = struct.unpack_from(
                    "<QQQIIII", istream, q)
                rec.update(frag_pos=q + 28, foff_pos=q + 32, xattr_pos=q + 36, xattr=xat,
                           size_pos=q + 8, size_fmt="Q")
                q += 40
            nblocks = fsize // bs if frag != 0xFFFFFFFF else (fsize + bs - 1) // bs
            rec.update(size=fsize, frag=frag, nblocks=nblocks, blist_pos=q, start=sblk)
            q += 4 * nblocks
        elif t in (3, 10):
            nlink, tsize = struct.unpack_from("<II", istream, q)
            rec.update(tsize_pos=q + 4, tsize=tsize)
            q += 8 + tsize
            if t == 10:
                rec.update(xattr_pos=q, xattr=struct.unpack_from("<I", istream, q)[0])
                q += 4
        elif t in (4, 5):
            q += 8
        elif t in (11, 12):
            rec.update(xattr_pos=q + 8)
            q += 12
        elif t in (6, 7):
            q += 4
        elif t in (13, 14):
            rec.update(xattr_pos=q + 4)
            q += 8
        else:
            raise SystemExit("corrupt.py: unknown inode type %d at %d" % (t, p))
        rec["end"] = q
        inodes.append(rec)
        p = q
    # directory listings
    dirs = []
    for rec in inodes:
        if rec["type"] not in (1, 8) or rec["size"] <= 3:
            continue
        sp = dblocks[rec["start"]][0] + rec["offset"]
        end = sp + rec["size"] - 3
        runs = []
        while sp < end:
            count, iblk, base = struct.unpack_from("<III", dstream, sp)
            run = {"pos": sp, "count": count + 1, "entries": []}
            sp += 12
            for _ in range(count + 1):
                eoff, delta, etype, nsize = struct.unpack_from("<HhHH", dstream, sp)
                name = dstream[sp + 8:sp + 8 + nsize + 1]
                run["entries"].append({"pos": sp, "delta": delta, "base": base,
                                       "type": etype, "name": name, "iblk": iblk,
                                       "ioff": eoff})
                sp += 8 + nsize + 1
            runs.append(run)
        dirs.append({"inode": rec, "runs": runs})
    return {"inodes": inodes, "iblocks": iblocks, "istream": istream, "dirs": dirs,
            "dblocks": dblocks, "dstream": dstream}


def main():
    base, base2, outdir = sys.argv[1:4]
    img = Image(base)
    img2 = Image(base2)
    sb = img.sb
    P = parse(img)
    bs = sb["block_size"]
    variants = []

    def add(name, expect, what, data):
        variants.append((name, expect, what, data))

    def patched(patches, src=None):
        d = bytearray((src or img).data)
        for off, fmt, val in patches:
            struct.pack_into("<" + fmt, d, off, val)
        return bytes(d)

    def sbset(field, val, src=None):
        off, fmt = SB_OFF[field]
        return patched([(off, fmt, val)], src)

    ia = lambda spos: img.abs_of(P["iblocks"], spos)
    da = lambda spos: img.abs_of(P["dblocks"], spos)
    used = sb["bytes_used"]

    # truncations (QEMU rounds a disk up to 512 bytes and reads zeros there)
    for name, at in (("trunc-96", 96), ("trunc-4096", 4096),
                     ("trunc-inode-table", sb["inode_table_start"]),
                     ("trunc-dir-table", sb["directory_table_start"]),
                     ("trunc-half", used // 2),
                     ("trunc-id-table", sb["id_table_start"])):
        add(name, "error", "image cut at byte %d of %d" % (at, used), img.data[:at])

    # superblock fields
    add("sb-magic", "error", "magic 0x73717369", sbset("magic", 0x73717369))
    add("sb-inodes-0", "any", "inode count 0", sbset("inodes", 0))
    add("sb-inodes-max", "any", "inode count 0xffffffff", sbset("inodes", 0xFFFFFFFF))
    add("sb-block-2M", "error", "block size 2 MiB, log 21",
        patched([(SB_OFF["block_size"][0], "I", 1 << 21), (SB_OFF["block_log"][0], "H", 21)]))
    add("sb-block-log", "error", "block log 17 with block size 4096", sbset("block_log", 17))
    add("sb-block-size", "error", "block size 4097", sbset("block_size", 4097))
    add("sb-frags-max", "error", "fragment count 0xffffffff", sbset("fragments", 0xFFFFFFFF))
    add("sb-comp-7", "error", "compressor id 7", sbset("compression", 7))
    add("sb-comp-lzma", "error", "compressor id 2 (lzma, not in 4.0 kernels)", sbset("compression", 2))
    add("sb-major-3", "error", "major version 3", sbset("s_major", 3))
    add("sb-ids-0", "error", "id count 0", sbset("no_ids", 0))
    add("sb-ids-max", "error", "id count 65535", sbset("no_ids", 65535))
    add("sb-root-ref", "error", "root inode reference offset 0x1fff",
        sbset("root_inode", (sb["root_inode"] & ~0xFFFF) | 0x1FFF))
    add("sb-root-blk", "error", "root inode reference block beyond the inode table",
        sbset("root_inode", (sb["root_inode"] & 0xFFFF) | (0x7FFFFF << 16)))
    add("sb-bytes-small", "error", "bytes_used 4096", sbset("bytes_used", 4096))
    add("sb-bytes-huge", "error", "bytes_used 2^40", sbset("bytes_used", 1 << 40))
    for f in ("inode_table_start", "directory_table_start", "fragment_table_start",
              "id_table_start", "xattr_id_table_start", "lookup_table_start"):
        add("sb-%s-beyond" % f.split("_")[0], "error", "%s = bytes_used + 4096" % f,
            sbset(f, used + 4096))
    add("sb-dir-before-inode", "error", "directory table start = inode table start + 2",
        sbset("directory_table_start", sb["inode_table_start"] + 2))
    add("sb-id-inside", "error", "id table start = inode table start (points at metadata)",
        sbset("id_table_start", sb["inode_table_start"]))

    # metadata block headers (inode table, first block)
    h = sb["inode_table_start"]
    hv = struct.unpack_from("<H", img.data, h)[0]
    add("md-len-8193", "error", "first inode block header: uncompressed, 8193 bytes",
        patched([(h, "H", 0x8000 | 8193)]))
    add("md-compressed", "error", "first inode block header: compressed bit set on raw data",
        patched([(h, "H", hv & 0x7FFF)]))
    add("md-len-0", "error", "first inode block header: 0 bytes", patched([(h, "H", 0x8000)]))

    files = [r for r in P["inodes"] if r["type"] in (2, 9)]
    blocked = [r for r in files if r["nblocks"] > 0]
    fragged = [r for r in files if r["frag"] != 0xFFFFFFFF]
    r = blocked[0]
    bw = ia(r["blist_pos"])
    word = struct.unpack_from("<I", img.data, bw)[0]
    add("blk-size-huge", "error", "data block size word 0x00ffffff (inode %d)" % r["ino"],
        patched([(bw, "I", 0x00FFFFFF)]))
    add("blk-size-short", "error", "data block size word %d -> %d (compressed stream cut)"
        % (word & 0xFFFFFF, (word & 0xFFFFFF) // 2),
        patched([(bw, "I", (word & 0xFFFFFF) // 2)]))
    if not word & (1 << 24):
        d = bytearray(img.data)
        start = r["start"]
        mid = start + (word & 0xFFFFFF) // 2
        for i in range(8):
            d[mid + i] ^= 0x5A
        add("blk-garbage", "error", "8 bytes flipped inside compressed data block at %d" % start,
            bytes(d))
    add("file-start-beyond", "error", "file start block beyond the image (inode %d)" % r["ino"],
        patched([(ia(r["pos"] + 16), "I" if r["type"] == 2 else "Q", used + 65536)]))
    fr = fragged[0]
    add("frag-index", "error", "fragment index 0xfffffff0 (inode %d)" % fr["ino"],
        patched([(ia(fr["frag_pos"]), "I", 0xFFFFFFF0)]))
    add("frag-offset", "error", "offset in fragment 0xfff0 (past the block, inode %d)" % fr["ino"],
        patched([(ia(fr["foff_pos"]), "I", 0xFFF0)]))
    # fragment table: one u64 pointer, then the entries in a metadata block
    fptr = struct.unpack_from("<Q", img.data, sb["fragment_table_start"])[0]
    fhdr = struct.unpack_from("<H", img.data, fptr)[0]
    if fhdr & 0x8000:
        add("frag-entry-size", "error", "fragment table entry 0: size word 0x00ffffff",
            patched([(fptr + 2 + 8, "I", 0x00FFFFFF)]))
        add("frag-entry-start", "error", "fragment table entry 0: start beyond the image",
            patched([(fptr + 2, "Q", used + 8192)]))
    add("frag-table-ptr", "error", "fragment index table pointer beyond the image",
        patched([(sb["fragment_table_start"], "Q", used + 8192)]))
    add("id-table-ptr", "error", "id index table pointer beyond the image",
        patched([(sb["id_table_start"], "Q", used + 8192)]))
    add("file-size-huge", "error", "file size %s (inode %d)"
        % ("2^62" if r["size_fmt"] == "Q" else "0xffffffff", r["ino"]),
        patched([(ia(r["size_pos"]), r["size_fmt"], (1 << 62) if r["size_fmt"] == "Q" else 0xFFFFFFFF)]))
    any_inode = files[-1]
    add("inode-uid-idx", "error", "uid index 0xfff0 (inode %d)" % any_inode["ino"],
        patched([(ia(any_inode["pos"] + 4), "H", 0xFFF0)]))
    add("inode-type-0", "error", "inode type 0 (inode %d)" % any_inode["ino"],
        patched([(ia(any_inode["pos"]), "H", 0)]))
    add("inode-type-15", "error", "inode type 15 (inode %d)" % any_inode["ino"],
        patched([(ia(any_inode["pos"]), "H", 15)]))
    add("inode-number-0", "any", "inode number 0 in an inode header (inode %d)" % any_inode["ino"],
        patched([(ia(any_inode["pos"] + 12), "I", 0)]))
    xin = [x for x in P["inodes"] if x.get("xattr_pos") is not None and x.get("xattr", 0) != 0xFFFFFFFF]
    if xin:
        add("inode-xattr-idx", "error", "xattr index 0x7ffffff0 (inode %d)" % xin[0]["ino"],
            patched([(ia(xin[0]["xattr_pos"]), "I", 0x7FFFFFF0)]))
    sl = [x for x in P["inodes"] if x["type"] in (3, 10)]
    add("symlink-size-huge", "error", "symlink size 0x00ffffff (inode %d)" % sl[0]["ino"],
        patched([(ia(sl[0]["tsize_pos"]), "I", 0x00FFFFFF)]))
    add("symlink-size-0", "any", "symlink size 0 (inode %d)" % sl[0]["ino"],
        patched([(ia(sl[0]["tsize_pos"]), "I", 0)]))
    dirin = [x for x in P["inodes"] if x["type"] in (1, 8) and x["size"] > 3]
    dbig = max(dirin, key=lambda x: x["size"])
    add("dir-size-huge", "error", "directory file size 0xffff (inode %d)" % dbig["ino"],
        patched([(ia(dbig["size_pos"]), dbig["size_fmt"], 0xFFFF)]))
    add("dir-start-beyond", "error", "directory start block beyond the table (inode %d)" % dbig["ino"],
        patched([(ia(dbig["pos"] + 16 + (0 if dbig["type"] == 1 else 8)), "I", 0x00FFFF00)]))

    # directory entries: the root's listing
    root = next(d for d in P["dirs"] if d["inode"]["ino"] == sb["inodes"])
    run = root["runs"][0]
    add("dir-count-256", "error", "root directory header count 255 (256 entries)",
        patched([(da(run["pos"]), "I", 255)]))
    e0 = run["entries"][0]
    add("dir-name-len-300", "error", "root entry %r name length 300" % e0["name"].decode(),
        patched([(da(e0["pos"] + 6), "H", 299)]))
    add("dir-name-slash", "error", "root entry %r renamed with a '/'" % e0["name"].decode(),
        patched([(da(e0["pos"] + 8), "B", ord("/"))]))
    add("dir-inode-0", "error", "root entry %r inode number 0" % e0["name"].decode(),
        patched([(da(e0["pos"] + 2), "h", -e0["base"])]))
    add("dir-entry-type-9", "any", "root entry %r type 9 (extended type in a dirent)" % e0["name"].decode(),
        patched([(da(e0["pos"] + 4), "H", 9)]))
    add("dir-entry-type-0", "error", "root entry %r type 0" % e0["name"].decode(),
        patched([(da(e0["pos"] + 4), "H", 0)]))
    add("dir-entry-offset", "error", "root entry %r inode offset 0x1ff0 (past the block)" % e0["name"].decode(),
        patched([(da(e0["pos"]), "H", 0x1FF0)]))
    # a directory that contains itself: make the first subdirectory entry of the
    # root point at the root inode
    sub = next(e for e in run["entries"] if e["type"] == 1)
    rref = sb["root_inode"]
    add("dir-loop", "error", "root entry %r points at the root directory itself" % sub["name"].decode(),
        patched([(da(run["pos"] + 4), "I", rref >> 16), (da(sub["pos"]), "H", rref & 0xFFFF),
                 (da(sub["pos"] + 2), "h", sb["inodes"] - run["entries"][0]["base"])]))

    # xattr tables
    if sb["xattr_id_table_start"] != 0xFFFFFFFFFFFFFFFF:
        xs = sb["xattr_id_table_start"]
        kv, xcount = struct.unpack_from("<QI", img.data, xs)
        add("xattr-count-max", "error", "xattr id count 0xffffffff",
            patched([(xs + 8, "I", 0xFFFFFFFF)]))
        add("xattr-kv-beyond", "error", "xattr key/value table start beyond the image",
            patched([(xs, "Q", used + 8192)]))
        # the key/value pairs of xattr id 0 (mksquashfs writes out-of-line values
        # first, so the table does not start with a key)
        iptr = struct.unpack_from("<Q", img.data, xs + 16)[0]
        ref0, npairs = struct.unpack_from("<QI", img.data, iptr + 2)
        khdr = struct.unpack_from("<H", img.data, kv + (ref0 >> 16))[0]
        if khdr & 0x8000 and struct.unpack_from("<H", img.data, iptr)[0] & 0x8000:
            k = kv + (ref0 >> 16) + 2 + (ref0 & 0xFFFF)
            pairs = []
            for _ in range(npairs):
                ktype, klen = struct.unpack_from("<HH", img.data, k)
                vpos = k + 4 + klen
                vsize = struct.unpack_from("<I", img.data, vpos)[0]
                pairs.append((k, ktype, klen, vpos, vsize))
                k = vpos + 4 + vsize
            k0, ktype, klen, vpos, vsize = pairs[0]
            add("xattr-name-len", "error", "xattr id 0, first key: name length 0xffff",
                patched([(k0 + 2, "H", 0xFFFF)]))
            add("xattr-type-7", "any", "xattr id 0, first key: prefix type 7",
                patched([(k0, "H", 7 | (ktype & 0x100))]))
            add("xattr-value-size", "error", "xattr id 0, first value: size 0x7fffffff",
                patched([(vpos, "I", 0x7FFFFFFF)]))
            ool = [x for x in pairs if x[1] & 0x100]
            if ool:
                add("xattr-ool-ref", "error", "xattr id 0: out-of-line value reference beyond the table",
                    patched([(ool[0][3] + 4, "Q", 0x7FFF0000 << 16)]))
            # an out-of-line value's own size word, at the start of the table here
            oref = [x for x in pairs if x[1] & 0x100]
            if oref:
                vref = struct.unpack_from("<Q", img.data, oref[0][3] + 4)[0]
                vp = kv + (vref >> 16) + 2 + (vref & 0xFFFF)
                add("xattr-ool-size", "error", "the out-of-line value's size 0xffff0258-like (high bytes set)",
                    patched([(vp, "I", struct.unpack_from("<I", img.data, vp)[0] | 0xFFFF0000)]))
        ihdr = struct.unpack_from("<H", img.data, iptr)[0]
        if ihdr & 0x8000:
            add("xattr-id-ref", "error", "xattr id entry 0: reference beyond the table",
                patched([(iptr + 2, "Q", 0x7FFF0000 << 16)]))
            add("xattr-id-count", "error", "xattr id entry 0: 5000 pairs",
                patched([(iptr + 2 + 8, "I", 5000)]))

    # compressed metadata (BASE2)
    s2 = img2.sb
    for table, start in (("inode", s2["inode_table_start"]), ("dir", s2["directory_table_start"])):
        hv = struct.unpack_from("<H", img2.data, start)[0]
        if hv & 0x8000:
            continue
        d = bytearray(img2.data)
        mid = start + 2 + (hv & 0x7FFF) // 2
        for i in range(8):
            d[mid + i] ^= 0xA5
        add("z-%s-garbage" % table, "error", "8 bytes flipped inside the compressed first %s block" % table,
            bytes(d))
        add("z-%s-short" % table, "error", "compressed first %s block length %d -> %d"
            % (table, hv, hv - 16), patched([(start, "H", hv - 16)], img2))

    os.makedirs(outdir, exist_ok=True)
    for i, (name, expect, what, data) in enumerate(variants, 1):
        path = os.path.join(outdir, "b%02d.img" % i)
        with open(path, "wb") as f:
            f.write(data)
        print("b%02d\t%s\t%s\t%s\t%s" % (i, os.path.abspath(path), name, expect, what))


NO_TABLE = 0xFFFFFFFFFFFFFFFF


def faults(outdir, specs):
    os.makedirs(outdir, exist_ok=True)
    n = 0
    for spec in specs:
        name, path = spec.split("=", 1)
        img = Image(path)
        sb, d = img.sb, img.data
        ptr = lambda at: struct.unpack_from("<Q", d, at)[0]
        regions = [("superblock", 0),
                   ("inode-table", sb["inode_table_start"]),
                   ("dir-table", sb["directory_table_start"]),
                   ("id-table", ptr(sb["id_table_start"]))]
        for table, field, skip in (("fragment-table", "fragment_table_start", 0),
                                   ("export-table", "lookup_table_start", 0),
                                   ("xattr-id-table", "xattr_id_table_start", 16)):
            if sb[field] != NO_TABLE:
                regions.append((table, ptr(sb[field] + skip)))
        data_end = sb["inode_table_start"]
        regions += [("data-middle", 96 + (data_end - 96) // 2), ("data-last", data_end - 1)]
        # one disk a sector (regions that share one are named together)
        sectors = {}
        for region, at in regions:
            sectors.setdefault(at // 512, []).append((region, at))
        for sector in sorted(sectors):
            what = "+".join(r for r, _ in sectors[sector])
            n += 1
            cfg = os.path.abspath(os.path.join(outdir, "%s-%s.cfg" % (name, what)))
            with open(cfg, "w") as f:
                f.write('[inject-error]\nevent = "read_aio"\nerrno = "5"\nsector = "%d"\n' % sector)
            print("e%02d\tblkdebug:%s:%s\tio-%s-%s\terror\tEIO on every read of sector %d (%s)"
                  % (n, cfg, os.path.abspath(path), name, what, sector,
                     ", ".join("%s at byte %d" % x for x in sectors[sector])))


def inode_named(P, name):
    """the inode record that a directory entry called NAME points at"""
    for d in P["dirs"]:
        for run in d["runs"]:
            for e in run["entries"]:
                if e["name"] == name:
                    pos = P["iblocks"][e["iblk"]][0] + e["ioff"]
                    return next(r for r in P["inodes"] if r["pos"] == pos)
    raise SystemExit("corrupt.py: no entry %r" % name)


def crafted(base, out):
    """The review's crafted image (hazard tests): in an image with uncompressed
    metadata, the symlink s0 gets link count 0 (a lookup fails after reading its
    target) and the sparse file huge the size 2^46 (its block list stays 8 MiB)."""
    img = Image(base)
    P = parse(img)
    ia = lambda spos: img.abs_of(P["iblocks"], spos)
    d = bytearray(img.data)
    s0 = inode_named(P, b"s0")
    assert s0["type"] in (3, 10), "s0 is not a symlink"
    struct.pack_into("<I", d, ia(s0["tsize_pos"] - 4), 0)
    huge = inode_named(P, b"huge")
    assert huge["type"] == 9 and huge["frag"] == 0xFFFFFFFF, "huge is not a sparse LREG file"
    struct.pack_into("<Q", d, ia(huge["size_pos"]), 1 << 46)
    with open(out, "wb") as f:
        f.write(d)
    print("s0: inode %d nlink 0; huge: inode %d size 2^46 (%d real blocks)"
          % (s0["ino"], huge["ino"], huge["nblocks"]))


if __name__ == "__main__":
    if sys.argv[1:2] == ["faults"]:
        faults(sys.argv[2], sys.argv[3:])
    elif sys.argv[1:2] == ["crafted"]:
        crafted(sys.argv[2], sys.argv[3])
    else:
        main()
