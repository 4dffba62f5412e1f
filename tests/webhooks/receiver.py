#!/usr/bin/env python3
"""A webhook receiver for the tests: records every delivery (headers and body, as JSON
lines) and answers 500 to the first FAIL_FIRST ones, then 204. Prints its port first.

    receiver.py LOG_FILE [FAIL_FIRST]
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG = sys.argv[1]
FAIL_FIRST = int(sys.argv[2]) if len(sys.argv) > 2 else 0
seen = 0


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        global seen
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        seen += 1
        with open(LOG, "a", encoding="utf-8") as log:
            log.write(json.dumps({
                "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body.decode("utf-8"),
                "answered": 500 if seen <= FAIL_FIRST else 204,
            }) + "\n")
        self.send_response(500 if seen <= FAIL_FIRST else 204)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
