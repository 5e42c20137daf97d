#!/usr/bin/env python3
"""boot-tests/bench/gendata.py: deterministic benchmark data (same bytes on every run).

usage: gendata.py big OUT MIB     text0 text1 bin0 bin1, MIB MiB each
       gendata.py tree OUT NFILES  a small tree (smoke mode): dirs, text and binary
                                  files of 0 B to 256 KiB, symlinks

Text-like: lines of words drawn from a made-up vocabulary with a Zipf-like
distribution (compresses about 3x, like prose or logs). Binary-like: a mix of random
bytes, little-endian tables of small integers, zero runs and repeats of earlier
pieces (compresses about 1.5-2x, like executables).
"""
import os
import random
import sys

CHUNK = 1 << 20


def vocabulary(rng, n=6000):
    syll = [a + b for a in "bcdfghjklmnprstvwz" for b in "aeiouy"] + ["th", "st", "qu", "er", "an"]
    words = set()
    while len(words) < n:
        words.add("".join(rng.choice(syll) for _ in range(rng.choice((1, 2, 2, 3, 3, 4)))))
    words = sorted(words)
    rng.shuffle(words)
    weights = [1.0 / (i + 1) for i in range(n)]
    cum, acc = [], 0.0
    for w in weights:
        acc += w
        cum.append(acc)
    return words, cum


def text_bytes(rng, size):
    words, cum = vocabulary(rng)
    out = bytearray()
    while len(out) < size:
        ws = rng.choices(words, cum_weights=cum, k=20000)
        lines, line = [], []
        for i, w in enumerate(ws):
            line.append(w)
            if i % 11 == 10:
                lines.append(" ".join(line).capitalize() + ".")
                line = []
        out += ("\n".join(lines) + "\n").encode()
    return bytes(out[:size])


def binary_bytes(rng, size):
    out = bytearray()
    while len(out) < size:
        kind = rng.random()
        n = rng.randrange(512, 16384)
        if kind < 0.35:  # compressed-looking data
            out += rng.randbytes(n)
        elif kind < 0.65:  # tables of small little-endian integers
            out += b"".join(rng.randrange(0, 4096).to_bytes(4, "little") for _ in range(n // 4))
        elif kind < 0.75:  # padding
            out += bytes(n)
        elif len(out) > 65536:  # a repeat of an earlier piece
            start = rng.randrange(0, len(out) - n)
            out += out[start:start + n]
        else:
            out += rng.randbytes(n)
    return bytes(out[:size])


def big(outdir, mib):
    os.makedirs(outdir, exist_ok=True)
    size = mib * CHUNK
    for name, seed, gen in (("text0", 1, text_bytes), ("text1", 2, text_bytes),
                            ("bin0", 3, binary_bytes), ("bin1", 4, binary_bytes)):
        path = os.path.join(outdir, name)
        if os.path.exists(path) and os.path.getsize(path) == size:
            continue
        rng = random.Random(seed)
        with open(path + ".tmp", "wb") as f:
            f.write(gen(rng, size))
        os.replace(path + ".tmp", path)


def tree(outdir, nfiles):
    rng = random.Random(42)
    os.makedirs(outdir, exist_ok=True)
    dirs = [outdir]
    for i in range(max(1, nfiles // 20)):
        d = os.path.join(rng.choice(dirs), "d%03d" % i)
        os.makedirs(d, exist_ok=True)
        dirs.append(d)
    for i in range(nfiles):
        d = rng.choice(dirs)
        size = int(rng.choice((0, 100, 2000, 5000, 20000, 70000, 150000, 262144)) * rng.random())
        data = text_bytes(rng, size) if rng.random() < 0.6 else binary_bytes(rng, size)
        with open(os.path.join(d, "f%04d" % i), "wb") as f:
            f.write(data)
        if i % 25 == 0:
            os.symlink("f%04d" % i, os.path.join(d, "l%04d" % i))
    for root, subdirs, files in os.walk(outdir):
        for n in subdirs + files:
            os.utime(os.path.join(root, n), (1700000000, 1700000000), follow_symlinks=False)
    os.utime(outdir, (1700000000, 1700000000))


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("big", "tree"):
        sys.exit(__doc__)
    if sys.argv[1] == "big":
        big(sys.argv[2], int(sys.argv[3]))
    else:
        tree(sys.argv[2], int(sys.argv[3]))


if __name__ == "__main__":
    main()
