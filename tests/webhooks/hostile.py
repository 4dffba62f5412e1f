#!/usr/bin/env python3
"""Hostile webhook receivers for the tests, one per path; every connection is logged (a
JSON line when it ends: path, seconds from accept to end, bytes sent). Prints its port.

    /never  reads the request, never answers (waits for the client to hang up)
    /huge   answers 200 with a 10 MB body (64 KiB every 5 ms: all of it within a second to
            a client that reads it all)
    /slow   answers one byte a second (the status line itself)
    /ok     answers 204 at once

    hostile.py LOG_FILE
"""
import json
import socket
import sys
import threading
import time
from socketserver import StreamRequestHandler, ThreadingTCPServer

LOG = sys.argv[1]
HUGE = 10 * 1024 * 1024
lock = threading.Lock()


class Handler(StreamRequestHandler):
    def handle(self):
        started = time.monotonic()
        request_line = self.rfile.readline().decode("latin-1")
        path = request_line.split(" ")[1] if " " in request_line else "?"
        length = 0
        while True:
            line = self.rfile.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        self.rfile.read(length)
        sent = 0
        try:
            if path.startswith("/never"):
                self.connection.settimeout(120)
                while self.connection.recv(1024):
                    pass
            elif path.startswith("/huge"):
                head = f"HTTP/1.1 200 OK\r\ncontent-length: {HUGE}\r\n\r\n".encode()
                self.connection.sendall(head)
                chunk = b"x" * 65536
                while sent < HUGE:
                    self.connection.sendall(chunk)
                    sent += len(chunk)
                    time.sleep(0.005)
            elif path.startswith("/slow"):
                for byte in b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n":
                    self.connection.sendall(bytes([byte]))
                    sent += 1
                    time.sleep(1)
            else:
                self.connection.sendall(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n")
        except OSError:
            pass
        with lock, open(LOG, "a", encoding="utf-8") as log:
            log.write(json.dumps({"path": path, "seconds": time.monotonic() - started,
                                  "sent": sent}) + "\n")


ThreadingTCPServer.daemon_threads = True
ThreadingTCPServer.allow_reuse_address = True
server = ThreadingTCPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
