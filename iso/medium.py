#!/usr/bin/env python3
"""iso/medium.py: a slow medium for QEMU (ls_qemu --medium; `make bench-live`).

usage: medium.py MODEL IMAGE SOCKET [LOG]
       medium.py --load MODEL FILE...

Serves IMAGE read-only over NBD (the fixed newstyle handshake, simple replies) on the
unix socket SOCKET, and answers each read only after the time the medium MODEL would
take for it. QEMU attaches it as its CD-ROM or USB stick
(-drive file=nbd:unix:SOCKET,...), so the guest's kernel sees a drive that is as slow
as the real one: its readahead, request sizes and seek pattern decide the boot time.
QEMU's own throttling (throttling.bps-read, iops-read) charges every request the same,
sequential or not; a seek is what makes a DVD slow, so the model is here.

One request at a time, in arrival order, like a single drive head. A request at
OFFSET for LEN bytes costs
    overhead + LEN / rate                    when OFFSET is where the last one ended,
    overhead + GAP / rate + LEN / rate       when it starts GAP bytes ahead, GAP <= readthrough
                                             (the drive reads through a short gap),
    overhead + seek + LEN / rate             otherwise (backwards, or further ahead).
The models (figures the issue quotes: a DVD ~10 MB/s with ~100 ms seeks, a USB 2.0 stick
~30 MB/s):
    dvd   rate 10 MB/s, seek 100 ms, readthrough 1 MiB, overhead 0.2 ms
    usb   rate 30 MB/s, seek 0 (flash), overhead 1 ms (a USB 2.0 bulk-only command)
    fast  no delay at all (for tests of this server)
MODELxN (e.g. dvdx8) makes every cost N times as long: under TCG the guest's CPU runs
several times slower than on hardware while the medium keeps real time, which
understates the medium's share of a boot; N = that slowdown restores the proportions
(boot-tests/bench/liveboot.sh measures it: BENCH_LIVE_SCALE).
The costs add up on a virtual clock that starts at the first request; a request is
answered at its virtual time or, if the host is late already, at once, so the
server's own work is not charged twice. LOG (optional) gets one line per request:
time, offset, length, cost, seek or not; and at the end the totals (reads, bytes,
seeks, the medium's clock at the last answer, and its busy time: the sum of the costs).

--load prints the seconds MODEL takes to give a boot loader the FILEs (a kernel, an
initrd): each one a seek away from the last, read front to back in requests of
LOAD_CHUNK bytes (about what GRUB asks of BIOS or UEFI disk services at a time; an
assumption of the model), each with the model's overhead. `make bench-live` boots its kernels directly and adds this time.
"""

import os
import signal
import socket
import struct
import sys
import time

MODELS = {
    # rate bytes/s, seek s, readthrough bytes, overhead s
    "dvd": (10e6, 0.100, 1 << 20, 0.0002),
    "usb": (30e6, 0.0, 0, 0.001),
    "fast": (None, 0.0, 0, 0.0),
}

LOAD_CHUNK = 64 << 10

NBDMAGIC = 0x4E42444D41474943
IHAVEOPT = 0x49484156454F5054
REPLY_MAGIC_OPT = 0x3E889045565A9
REQ_MAGIC = 0x25609513
SIMPLE_REPLY = 0x67446698
FLAG_FIXED_NEWSTYLE = 1
FLAG_NO_ZEROES = 2
OPT_EXPORT_NAME, OPT_ABORT, OPT_GO, OPT_INFO = 1, 2, 7, 6
REP_ACK, REP_INFO, REP_ERR_UNSUP = 1, 3, (1 << 31) + 1
INFO_EXPORT = 0
TFLAG_HAS_FLAGS, TFLAG_READ_ONLY = 1, 2
CMD_READ, CMD_DISC = 0, 2
EPERM, EINVAL = 1, 22


def take(rfile, n):
    """n bytes from the client (a buffered reader over the socket), or EOFError"""
    data = rfile.read(n)
    if len(data) < n:
        raise EOFError
    return data


class Medium:
    def __init__(self, model, fd, size, log, scale):
        self.rate, self.seek, self.readthrough, self.overhead = MODELS[model]
        if self.rate is not None:
            self.rate /= scale
            self.seek *= scale
            self.overhead *= scale
        self.fd, self.size, self.log = fd, size, log
        self.head = None  # where the last read ended
        self.t0 = None  # host time of the first request
        self.vclock = 0.0  # the medium's time, from t0
        self.reads = self.seeks = self.bytes = 0
        self.busy = 0.0  # the sum of the costs: the time the medium worked

    def cost(self, off, length):
        if self.rate is None:
            return 0.0, False
        c = self.overhead + length / self.rate
        seek = False
        if self.head is not None and off != self.head:
            gap = off - self.head
            if 0 < gap <= self.readthrough:
                c += gap / self.rate
            else:
                c += self.seek
                seek = self.seek > 0
        return c, seek

    def read(self, off, length):
        now = time.monotonic()
        if self.t0 is None:
            self.t0 = now
        c, seek = self.cost(off, length)
        # the medium is idle until the request comes
        self.vclock = max(self.vclock, now - self.t0) + c
        wait = self.t0 + self.vclock - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self.head = off + length
        self.busy += c
        self.reads += 1
        self.seeks += seek
        self.bytes += length
        if self.log:
            self.log.write("%.4f %d %d %.4f %s\n" % (self.vclock, off, length, c, "seek" if seek else "-"))
        return os.pread(self.fd, length, off)

    def totals(self):
        return "reads %d bytes %d seeks %d medium-seconds %.2f busy-seconds %.2f" % (
            self.reads, self.bytes, self.seeks, self.vclock, self.busy)


def load_cost(model, scale, sizes):
    """seconds the medium takes to read files of these sizes, each after a seek"""
    m = Medium(model, None, 0, None, scale)
    t = 0.0
    for size in sizes:
        m.head = size + 1  # past the file: its first request seeks back
        for off in range(0, size, LOAD_CHUNK):
            c, _ = m.cost(off, min(LOAD_CHUNK, size - off))
            m.head = off + LOAD_CHUNK
            t += c
    return t


def handshake(conn, rfile, size):
    """the fixed newstyle negotiation; True once the client has chosen the export"""
    conn.sendall(struct.pack(">QQH", NBDMAGIC, IHAVEOPT, FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES))
    (cflags,) = struct.unpack(">I", take(rfile, 4))
    tflags = TFLAG_HAS_FLAGS | TFLAG_READ_ONLY
    while True:
        magic, opt, length = struct.unpack(">QII", take(rfile, 16))
        if magic != IHAVEOPT:
            return False
        data = take(rfile, length)
        if opt == OPT_EXPORT_NAME:
            reply = struct.pack(">QH", size, tflags)
            if not cflags & FLAG_NO_ZEROES:
                reply += b"\0" * 124
            conn.sendall(reply)
            return True
        if opt in (OPT_GO, OPT_INFO):
            info = struct.pack(">HQH", INFO_EXPORT, size, tflags)
            conn.sendall(struct.pack(">QIII", REPLY_MAGIC_OPT, opt, REP_INFO, len(info)) + info)
            conn.sendall(struct.pack(">QIII", REPLY_MAGIC_OPT, opt, REP_ACK, 0))
            if opt == OPT_GO:
                return True
            continue
        if opt == OPT_ABORT:
            conn.sendall(struct.pack(">QIII", REPLY_MAGIC_OPT, opt, REP_ACK, 0))
            return False
        # structured replies, meta contexts, ...: not here (simple replies do)
        del data
        conn.sendall(struct.pack(">QIII", REPLY_MAGIC_OPT, opt, REP_ERR_UNSUP, 0))


def serve(conn, rfile, medium):
    while True:
        magic, _flags, cmd, handle, off, length = struct.unpack(">IHHQQI", take(rfile, 28))
        if magic != REQ_MAGIC:
            return
        if cmd == CMD_DISC:
            return
        if cmd != CMD_READ:
            # a read-only medium: writes (with their payload), trims... are refused
            if cmd == 1:
                take(rfile, length)
            conn.sendall(struct.pack(">IIQ", SIMPLE_REPLY, EPERM, handle))
            continue
        if off + length > medium.size:
            conn.sendall(struct.pack(">IIQ", SIMPLE_REPLY, EINVAL, handle))
            continue
        data = medium.read(off, length)
        conn.sendall(struct.pack(">IIQ", SIMPLE_REPLY, 0, handle) + data)


def main():
    usage = "usage: medium.py %s[xN] IMAGE SOCKET [LOG]\n       medium.py --load MODEL[xN] FILE..." % "|".join(MODELS)
    load = len(sys.argv) > 1 and sys.argv[1] == "--load"
    if load:
        del sys.argv[1]
    # MODEL or MODELxN: every cost N times (see the scale note above)
    model, _, scale = sys.argv[1].partition("x") if len(sys.argv) > 1 else ("", "", "")
    if model not in MODELS or (scale and not scale.replace(".", "", 1).isdigit()):
        sys.exit(usage)
    if load:
        try:
            sizes = [os.stat(f).st_size for f in sys.argv[2:]]
        except OSError as e:
            sys.exit("medium.py: %s" % e)
        print("%.2f" % load_cost(model, float(scale or 1), sizes))
        return
    if len(sys.argv) not in (4, 5):
        sys.exit(usage)
    image, path = sys.argv[2:4]
    log = open(sys.argv[4], "w", buffering=1) if len(sys.argv) == 5 else None
    fd = os.open(image, os.O_RDONLY)
    size = os.fstat(fd).st_size
    medium = Medium(model, fd, size, log, float(scale or 1))
    if os.path.exists(path):
        os.unlink(path)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(4)

    def done(*_):
        if log:
            log.write("# %s\n" % medium.totals())
            log.close()
        os._exit(0)

    signal.signal(signal.SIGTERM, done)
    signal.signal(signal.SIGINT, done)
    # QEMU connects once a drive; a reconnection goes on with the same head and clock
    while True:
        conn, _ = srv.accept()
        rfile = conn.makefile("rb")
        try:
            if handshake(conn, rfile, size):
                serve(conn, rfile, medium)
        except (EOFError, ConnectionError):
            pass
        finally:
            rfile.close()
            conn.close()


if __name__ == "__main__":
    main()
