#!/usr/bin/env python3
"""boot-tests/fuzz/vm.py: one fuzzing guest, kept running, for AFL++ on the host.

usage: vm.py serve --sock PATH [common options]
       vm.py replay [common options] IMAGE...

Boots a kernel with the fuzz initramfs through ls_qemu (iso/qemu-lib.sh), its second
serial port a unix socket to the guest's lsqfuzz-agent (agent.c), and an ivshmem-plain
device on a file in /dev/shm that carries the images and the answers (the serial port
only the frames: it moves ~140 KB/s under TCG). Each image goes to the guest, which
loop-mounts and walks it and answers with its KCOV edges.

serve:  listens on --sock for boot-tests/fuzz/harness (one connection an image, from
        afl-fuzz through the harness's fork server); answers 'R' + the guest's answer,
        or 'C' (the kernel reported a problem: its console showed one of the crash
        patterns, or the guest died) or 'H' (no answer in --exec-timeout seconds).
        After a C or H the guest is booted again.
replay: sends each IMAGE in turn and prints one line per image:
        "IMAGE ok mount_errno=N entries=N errors=N edges=N" or "IMAGE crash|hang";
        exits 1 if any crashed or hung.

Every finding (C or H) is kept in --findings DIR as NNNN-KIND/ with image, the
console lines of that image (console.txt) and repro.sh, a one-command reproducer
(vm.py replay of that image on the same kernel). --stats FILE gets a JSON line of
running totals every 30 s and at the end.
"""
import argparse
import hashlib
import json
import mmap
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.environ.get("TOP", os.path.dirname(os.path.dirname(HERE)))
# what a console must never show (LS_CRASH_REGEX of iso/qemu-lib.sh, plus the
# reports that do not say BUG/WARNING: UBSAN, lockdep, hung tasks, soft lockups)
CRASH_RE = re.compile(rb"BUG:|WARNING:|Oops|Call Trace|KASAN|UBSAN|Kernel panic|"
                      rb"possible recursive locking|possible circular locking|"
                      rb"blocked for more than|soft lockup|general protection|suspected memory leak")


# the shared memory (agent.c): the image at 0, the answer at SHM_ANSWER
SHM_SIZE = 16 << 20
SHM_ANSWER = 8 << 20


class GuestDied(Exception):
    pass


class Guest:
    def __init__(self, args, tag):
        self.a = args
        self.tag = tag
        self.proc = None
        self.sock = None
        self.boots = 0
        self.console_off = 0
        self.shm = None
        self.shm_path = "/dev/shm/lsqfuzz-%d-%s" % (os.getpid(), tag)

    def prefix(self):
        return os.path.join(self.a.logdir, "%s.%d" % (self.tag, self.boots))

    def boot(self):
        self.stop()
        self.boots += 1
        pre = self.prefix()
        sockpath = pre + ".sock"
        if len(sockpath) > 100:
            sockpath = "/tmp/lsqfuzz-%d-%s.sock" % (os.getpid(), self.tag)
        if os.path.exists(sockpath):
            os.unlink(sockpath)
        with open(self.shm_path, "wb") as f:
            f.truncate(SHM_SIZE)
        with open(self.shm_path, "r+b") as f:
            self.shm = mmap.mmap(f.fileno(), SHM_SIZE)
        # nokaslr: KCOV reports addresses without the KASLR offset that /proc/kallsyms
        # has, and the same edges get the same numbers in every boot
        append = ("console=ttyS0,115200 panic=-1 oops=panic panic_on_warn=1 "
                  "hung_task_panic=1 softlockup_panic=1 tsc=unstable loglevel=5 nokaslr "
                  "kasan.fault=panic lsqf.prefixes=%s %s" % (self.a.prefixes, self.a.append)).strip()
        cmd = ["bash", "-c", 'source "$1/iso/qemu-lib.sh"; shift; ls_qemu "$@"', "_", TOP,
               self.tag, str(self.a.vm_timeout), "--files", pre, "--nodefaults",
               "--mem", str(self.a.mem), "--smp", str(self.a.smp), "--kernel", self.a.kernel,
               "--initrd", self.a.initrd, "--append", append, "--results-socket", sockpath,
               "--", "-object", "memory-backend-file,id=lsqshm,share=on,size=%d,mem-path=%s"
               % (SHM_SIZE, self.shm_path), "-device", "ivshmem-plain,memdev=lsqshm"]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     start_new_session=True)
        self.console = pre + ".console"
        self.console_off = 0
        deadline = time.time() + 60
        while True:
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(sockpath)
                break
            except OSError:
                s.close()
                if time.time() > deadline or self.proc.poll() is not None:
                    raise GuestDied("QEMU did not open %s" % sockpath)
                time.sleep(0.2)
        self.sock = s
        line = self.read_line(self.a.boot_timeout)
        if not line.startswith(b"LSQFUZZ READY"):
            raise GuestDied("agent said %r" % line[:200])
        self.ready = line.decode().strip()
        # the boot's own console (a clean boot must not show a crash pattern either)
        hit = self.new_console_problems()
        if hit:
            raise GuestDied("boot console: %s" % hit)

    def stop(self):
        if self.sock:
            self.sock.close()
            self.sock = None
        if self.proc and self.proc.poll() is None:
            # ls_qemu's `timeout` is in a process group of its own: stop the whole
            # session (bash, timeout, QEMU)
            subprocess.run(["pkill", "-TERM", "-s", str(self.proc.pid)])
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                subprocess.run(["pkill", "-KILL", "-s", str(self.proc.pid)])
                self.proc.wait()
        self.proc = None
        if self.shm:
            self.shm.close()
            self.shm = None
        if os.path.exists(self.shm_path):
            os.unlink(self.shm_path)

    def read_exact(self, n, deadline):
        buf = b""
        while len(buf) < n:
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(n - len(buf))
            except socket.timeout:
                raise TimeoutError
            if not chunk:
                raise GuestDied("the guest's port closed")
            buf += chunk
        return buf

    def read_line(self, timeout):
        deadline = time.time() + timeout
        buf = b""
        while not buf.endswith(b"\n"):
            try:
                buf += self.read_exact(1, deadline)
            except TimeoutError:
                raise GuestDied("no hello from the agent in %d s (console %s)" % (timeout, self.console))
        return buf

    def console_text(self):
        try:
            with open(self.console, "rb") as f:
                f.seek(self.console_off)
                data = f.read()
        except OSError:
            return b""
        self.console_off += len(data)
        return data

    def new_console_problems(self):
        data = self.console_text()
        self.last_console = data
        m = CRASH_RE.search(data)
        if not m:
            return None
        start = data.rfind(b"\n", 0, m.start()) + 1
        end = data.find(b"\n", m.end())
        return data[start:end if end >= 0 else None].decode("utf-8", "replace").strip()

    def run(self, image):
        """('R', answer bytes) | ('C', console line) | ('H', None)"""
        deadline = time.time() + self.a.exec_timeout
        if len(image) > SHM_ANSWER:
            image = image[:SHM_ANSWER]  # (the agent's MAX_IMAGE; AFL's are far smaller)
        try:
            self.shm[:len(image)] = image
            self.sock.settimeout(self.a.exec_timeout)
            try:
                self.sock.sendall(b"I" + struct.pack("<I", len(image)))
            except socket.timeout:
                raise TimeoutError
            frame = self.read_exact(5, deadline)
            alen = struct.unpack("<I", frame[1:5])[0]
            if frame[:1] != b"R" or not 17 <= alen <= 17 + 3 * 65536:
                raise GuestDied("bad answer %r" % frame)
            answer = bytes(self.shm[SHM_ANSWER:SHM_ANSWER + alen])
            if answer[:1] != b"R" or alen != 17 + 3 * struct.unpack("<I", answer[13:17])[0]:
                raise GuestDied("bad answer in shared memory %r" % answer[:17])
        except TimeoutError:
            time.sleep(2)  # let a report that is being printed reach the console
            return ("H", self.new_console_problems())
        except (GuestDied, OSError) as e:
            time.sleep(1)
            return ("C", self.new_console_problems() or str(e))
        hit = self.new_console_problems()
        if hit:
            return ("C", hit)
        return ("R", answer)


class Totals:
    def __init__(self, args):
        self.a = args
        self.t0 = time.time()
        self.execs = self.crashes = self.hangs = self.mounted = 0
        self.edges = bytearray(1 << 16)
        self.last_write = 0

    def add(self, kind, answer):
        self.execs += 1
        if kind == "C":
            self.crashes += 1
        elif kind == "H":
            self.hangs += 1
        else:
            if struct.unpack("<i", answer[1:5])[0] == 0:
                self.mounted += 1
            body = answer[17:]
            for i in range(0, len(body), 3):
                self.edges[body[i] | body[i + 1] << 8] = 1
        if time.time() - self.last_write > 30:
            self.write()

    def write(self):
        self.last_write = time.time()
        if not self.a.stats:
            return
        secs = time.time() - self.t0
        rec = {"time": int(time.time()), "secs": round(secs, 1), "execs": self.execs,
               "mounted": self.mounted, "crashes": self.crashes, "hangs": self.hangs,
               "edges": sum(self.edges), "per_sec": round(self.execs / secs, 2) if secs else 0}
        with open(self.a.stats, "a") as f:
            f.write(json.dumps(rec) + "\n")


def keep_finding(args, guest, kind, image, line):
    os.makedirs(args.findings, exist_ok=True)
    digest = hashlib.sha256(image).hexdigest()[:16]
    d = os.path.join(args.findings, "%s-%s" % ("crash" if kind == "C" else "hang", digest))
    if os.path.isdir(d):
        return d
    os.makedirs(d)
    with open(os.path.join(d, "image"), "wb") as f:
        f.write(image)
    with open(os.path.join(d, "console.txt"), "wb") as f:
        f.write(guest.last_console)
    with open(os.path.join(d, "what"), "w") as f:
        f.write("%s\n" % (line or kind))
    with open(os.path.join(d, "repro.sh"), "w") as f:
        f.write("#!/bin/sh\n# boots %s and sends this image to the agent; prints the result, "
                "keeps the console in %s/repro.*\nexec python3 %s replay --kernel %s --initrd %s "
                "--logdir %s \"$(dirname \"$0\")/image\"\n"
                % (os.path.basename(args.kernel), d, os.path.abspath(__file__),
                   os.path.abspath(args.kernel), os.path.abspath(args.initrd), d))
    os.chmod(os.path.join(d, "repro.sh"), 0o755)
    return d


def recv_exact(conn, n):
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            raise ConnectionError
        buf += chunk
    return buf


def serve(args):
    guest = Guest(args, args.name)
    totals = Totals(args)
    if os.path.exists(args.sock):
        os.unlink(args.sock)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(args.sock)
    srv.listen(4)
    try:
        guest.boot()
        print("vm.py %s: %s" % (args.name, guest.ready), flush=True)
        serve_loop(args, guest, totals, srv)
    finally:
        totals.write()
        guest.stop()


def serve_loop(args, guest, totals, srv):
    end = time.time() + args.duration if args.duration else None
    while end is None or time.time() < end:
        srv.settimeout(5)
        try:
            conn, _ = srv.accept()
        except socket.timeout:
            continue
        srv.settimeout(None)
        with conn:
            try:
                hdr = recv_exact(conn, 5)
                image = recv_exact(conn, struct.unpack("<I", hdr[1:5])[0])
            except ConnectionError:
                continue
            kind, data = guest.run(image)
            totals.add(kind, data)
            try:
                conn.sendall(data if kind == "R" else kind.encode())
            except OSError:
                pass
        if kind != "R":
            d = keep_finding(args, guest, kind, image, data)
            print("vm.py %s: %s after %d images: %s (%s)" % (
                args.name, "crash" if kind == "C" else "hang", totals.execs, data, d), flush=True)
            boot_again(guest, args)


def boot_again(guest, args):
    for attempt in range(3):
        try:
            guest.boot()
            return
        except GuestDied as e:
            print("vm.py %s: boot failed (%s), again" % (args.name, e), flush=True)
    raise SystemExit("vm.py %s: the guest does not boot" % args.name)


def replay(args):
    guest = Guest(args, args.name)
    totals = Totals(args)
    try:
        guest.boot()
        print("vm.py %s: %s" % (args.name, guest.ready), file=sys.stderr, flush=True)
        return replay_all(args, guest, totals)
    finally:
        totals.write()
        guest.stop()


def replay_all(args, guest, totals):
    bad = 0
    for path in args.images:
        with open(path, "rb") as f:
            image = f.read()
        kind, data = guest.run(image)
        totals.add(kind, data)
        if kind == "R":
            rc, entries, errors, edges = struct.unpack("<iIII", data[1:17])
            print("%s ok mount_errno=%d entries=%d errors=%d edges=%d" % (path, rc, entries, errors, edges))
        else:
            bad += 1
            print("%s %s %s" % (path, "crash" if kind == "C" else "hang", data or ""))
            if args.findings:
                keep_finding(args, guest, kind, image, data)
            boot_again(guest, args)
        sys.stdout.flush()
    return 1 if bad else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=["serve", "replay"])
    p.add_argument("images", nargs="*")
    p.add_argument("--kernel", required=True)
    p.add_argument("--initrd", required=True)
    p.add_argument("--logdir", required=True)
    p.add_argument("--name", default="fuzz")
    p.add_argument("--sock")
    p.add_argument("--findings")
    p.add_argument("--stats")
    p.add_argument("--append", default="")
    p.add_argument("--prefixes", default="sqfs_")
    p.add_argument("--mem", type=int, default=1024)
    p.add_argument("--smp", type=int, default=2,
                   help="vCPUs (2: a readahead is decompressed on both, struct sqfs_job)")
    p.add_argument("--duration", type=int, default=0, help="serve: seconds, 0 = until killed")
    p.add_argument("--exec-timeout", type=int, default=60)
    p.add_argument("--boot-timeout", type=int, default=300)
    p.add_argument("--vm-timeout", type=int, default=7 * 86400)
    a = p.parse_intermixed_args()
    os.makedirs(a.logdir, exist_ok=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    if a.mode == "serve":
        if not a.sock or not a.findings:
            p.error("serve needs --sock and --findings")
        serve(a)
        return 0
    if not a.images:
        p.error("replay needs images")
    return replay(a)


if __name__ == "__main__":
    sys.exit(main())
