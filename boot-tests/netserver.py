#!/usr/bin/env python3
"""boot-tests/netserver.py: the test HTTP server of the network boot tests.

usage: netserver.py DIR PORTFILE LOG [--mode MODE] [--rate BYTES_PER_S] [--link BYTES_PER_S]
                     [--control FILE]

Serves DIR (a netboot bundle) on 127.0.0.1 only, on a free port it writes to
PORTFILE (QEMU's user network reaches it as 10.0.2.2:PORT). HTTP/1.1 with
keep-alive, GET and HEAD, one byte range per request (Range: bytes=A-B), as
the curl in the initramfs and nbdkit's curl plugin ask. MODE changes what it
serves for LiveOS/*.img (the root image) and its .sha256, to test the bad cases:
  normal      as the files are
  404         the image: 404 Not Found
  truncated   the image without its second half (the .sha256 is the whole's)
  badhash     the .sha256 names another sha256
  nosha       the .sha256: 404
  flipped     the image with one byte changed (at 2000, in its first 4 KiB block)
  badtree     its dm-verity hash tree (.verity) with one byte of a hash changed
  drop:N      every connection is closed after N bytes of image data
              (mid-response; a client resumes or asks again)
--rate caps the root image's data at BYTES_PER_S per connection (a slow server).
--link: every connection shares one link of BYTES_PER_S for all the data it
sends (the benchmark's 100 Mbit/s and 1 Gbit/s networks): first come, first
served, in 64 KiB pieces.
--control FILE: "MODE [RATE]" read from FILE at each request when it exists
(one server for a suite of boots; the test writes it before each).
Each request is a line in LOG: time, method, path, range, status, bytes sent.
Stops on SIGTERM.
"""

import argparse
import os
import re
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHUNK = 64 * 1024


def is_image(path):
    """the root image (not the initramfs, initrd.img)"""
    return path.startswith("/LiveOS/") and path.endswith(".img")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "livesquash-netserver"

    def log_message(self, fmt, *args):  # the LOG file instead of stderr
        pass

    def setup(self):
        super().setup()
        self.mode, self.rate = self.server.settings()
        self.budget = None  # drop:N, bytes of image data left on this connection
        if self.mode.startswith("drop:"):
            self.budget = int(self.mode[5:])

    def record(self, status, sent, rng=""):
        with self.server.loglock:
            self.server.log.write(f"{time.time():.3f} {self.command} {self.path} "
                                  f"{rng or '-'} {status} {sent}\n")
            self.server.log.flush()

    def fail(self, status, text):
        body = (text + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.record(status, 0)

    def content(self, path):
        """the bytes (or None) the mode serves for path"""
        full = os.path.realpath(os.path.join(self.server.root, path.lstrip("/")))
        if not full.startswith(self.server.root + os.sep) or not os.path.isfile(full):
            return None
        mode = self.mode
        with self.server.loglock:
            data = self.server.cache.get(full)
            if data is None:
                with open(full, "rb") as f:
                    data = self.server.cache[full] = f.read()
        if is_image(path):
            if mode == "404":
                return None
            if mode == "truncated":
                return data[: len(data) // 2]
            if mode == "flipped":
                return data[:2000] + bytes([data[2000] ^ 0xFF]) + data[2001:]
        if is_image(path[:-7]) and path.endswith(".verity") and mode == "badtree":
            return data[:4100] + bytes([data[4100] ^ 0xFF]) + data[4101:]
        if is_image(path[:-7]) and path.endswith(".sha256"):
            if mode == "nosha":
                return None
            if mode == "badhash":
                return b"0" * 64 + b"  " + os.path.basename(path[:-7]).encode() + b"\n"
        return data

    def do_HEAD(self):
        self.serve()

    def do_GET(self):
        self.serve()

    def serve(self):
        path = self.path.split("?", 1)[0]
        data = self.content(path)
        if data is None:
            self.fail(404, "not found")
            return
        size = len(data)
        start, end, status = 0, size - 1, 200
        rng = self.headers.get("Range", "")
        if rng:
            m = re.fullmatch(r"bytes=(\d*)-(\d*)", rng.strip())
            if not m or (m.group(1) == "" and m.group(2) == ""):
                self.fail(416, "bad range")
                return
            if m.group(1) == "":
                start = max(0, size - int(m.group(2)))
            else:
                start = int(m.group(1))
                if m.group(2) != "":
                    end = min(end, int(m.group(2)))
            if start >= size or start > end:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                self.record(416, 0, rng)
                return
            status = 206
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(end - start + 1))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.end_headers()
        if self.command == "HEAD":
            self.record(status, 0, rng)
            return
        image = is_image(path)
        sent, pos, t0 = 0, start, time.monotonic()
        while pos <= end:
            n = min(CHUNK, end + 1 - pos)
            self.server.link_wait(n)
            if image and self.budget is not None:
                if self.budget <= 0:
                    self.record(f"{status}-dropped", sent, rng)
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                n = min(n, self.budget)
                self.budget -= n
            if image and self.rate:
                ahead = (sent + n) / self.rate - (time.monotonic() - t0)
                if ahead > 0:
                    time.sleep(ahead)
            try:
                self.wfile.write(data[pos:pos + n])
            except (BrokenPipeError, ConnectionResetError):
                self.record(f"{status}-client-gone", sent, rng)
                self.close_connection = True
                return
            pos += n
            sent += n
        self.record(status, sent, rng)


MODES = r"normal|404|truncated|badhash|nosha|flipped|badtree|drop:\d+"


class Server(ThreadingHTTPServer):
    daemon_threads = True
    link = 0
    link_free = 0.0
    link_lock = threading.Lock()

    def link_wait(self, n):
        """with --link: wait for the link's time for n bytes"""
        if not self.link:
            return
        with self.link_lock:
            start = max(time.monotonic(), self.link_free)
            self.link_free = start + n / self.link
            until = self.link_free
        delay = until - time.monotonic()
        if delay > 0:
            time.sleep(delay)

    def settings(self):
        """(mode, rate): the control file's, else the command line's"""
        try:
            with open(self.control, encoding="utf-8") as f:
                words = f.read().split()
        except (OSError, TypeError):
            return self.mode, self.rate
        mode = words[0] if words and re.fullmatch(MODES, words[0]) else self.mode
        rate = int(words[1]) if len(words) > 1 and words[1].isdigit() else 0
        return mode, rate


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("portfile")
    ap.add_argument("log")
    ap.add_argument("--mode", default="normal")
    ap.add_argument("--rate", type=int, default=0)
    ap.add_argument("--link", type=int, default=0)
    ap.add_argument("--control")
    a = ap.parse_args()
    if not re.fullmatch(MODES, a.mode):
        sys.exit(f"netserver: unknown --mode {a.mode}")
    srv = Server(("127.0.0.1", 0), Handler)
    srv.control = a.control
    srv.link = a.link
    srv.root = os.path.realpath(a.dir)
    srv.mode = a.mode
    srv.rate = a.rate
    srv.loglock = threading.Lock()
    srv.cache = {}
    srv.log = open(a.log, "a", encoding="utf-8")
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=srv.shutdown).start())
    with open(a.portfile + ".tmp", "w", encoding="utf-8") as f:
        f.write(f"{srv.server_address[1]}\n")
    os.replace(a.portfile + ".tmp", a.portfile)
    srv.serve_forever()
    srv.log.close()


if __name__ == "__main__":
    main()
