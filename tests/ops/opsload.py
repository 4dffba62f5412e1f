"""What the load tests of tests/ops/ share: an HTTP client, a /readyz poller, a ledger of
writes and its check against the database, psql and pg_ctl helpers.

Used by restart_load.py (PostgreSQL restarted behind PgBouncer) and soak.py (`make soak`).
Python standard library only.

The ledger: every write a client sends is a `Write` with the key it writes (say, an exam and
a student) and the value it writes there, and when it was sent and answered. A key is
written by one client thread at a time, one write after the other, so what the database
must hold for a key is decidable: the value of the last write answered 2xx, unless a later
write (sent after it) was not acknowledged, since one of those may have been applied. A key
holding anything else (or nothing) lost an acknowledged write. `decide` says which.
"""
import http.client
import json
import select
import socket
import subprocess
import threading
import time

API = "/api/v1/school"
CONNECTION_FAILED = 0  # status of a request whose connection failed (refused, reset, closed)
TIMED_OUT = -1  # status of a request the client gave up waiting for


class Response:
    __slots__ = ("status", "body", "retry_after", "code")

    def __init__(self, status, body=None, retry_after=None):
        self.status, self.body, self.retry_after = status, body, retry_after
        self.code = body.get("code") if isinstance(body, dict) else None

    def __iter__(self):  # status, body = client.request(...)
        return iter((self.status, self.body))

    @property
    def ok(self):
        return 200 <= self.status < 300


class Client:
    """One keep-alive HTTP connection to the server, reopened after any failure."""

    def __init__(self, port, host, timeout=20):
        self.port, self.host, self.timeout = port, host, timeout
        self.conn = None

    def request(self, method, path, token=None, body=None):
        """A `Response`; status CONNECTION_FAILED or TIMED_OUT when there was no answer."""
        headers = {"Host": self.host}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if self.conn is not None and dropped(self.conn.sock):
            # The server closed this keep-alive connection while it was idle (it exited,
            # say): open another before sending, as HTTP clients with a pool do.
            self.close()
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
            self.conn.request(method, path, body=data, headers=headers)
            res = self.conn.getresponse()
            raw = res.read()
            try:
                parsed = json.loads(raw) if raw else None
            except ValueError:
                parsed = None
            return Response(res.status, parsed, res.getheader("Retry-After"))
        except (OSError, http.client.HTTPException) as err:
            self.close()
            return Response(TIMED_OUT if isinstance(err, socket.timeout) else CONNECTION_FAILED)

    def must(self, method, path, token=None, body=None):
        """The body of a 200 or 201; a 429 (nothing was done) is retried after Retry-After."""
        for _ in range(20):
            res = self.request(method, path, token, body)
            if res.status != 429:
                break
            time.sleep(float(res.retry_after or 1))
        if res.status not in (200, 201):
            raise RuntimeError(f"{method} {path} on {self.host}: {res.status} {res.body}")
        return res.body

    def close(self):
        if self.conn is not None:
            self.conn.close()
        self.conn = None


def dropped(sock):
    """Whether an idle connection was closed by its peer (it reads as ended or failed)."""
    if sock is None:
        return False
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class ReadyPoller(threading.Thread):
    """Probes /readyz on a schedule, as an orchestrator does: each probe on a connection
    and thread of its own, whatever the previous one is still waiting for."""

    def __init__(self, port, stop, every=0.25):
        super().__init__(daemon=True)
        self.port, self.stop, self.every = port, stop, every
        self.probes = []  # (sent, done, status)
        self.running = []

    def probe(self):
        sent = time.monotonic()
        client = Client(self.port, "127.0.0.1", timeout=10)
        status = client.request("GET", "/readyz").status
        client.close()
        self.probes.append((sent, time.monotonic(), status))

    def run(self):
        while not self.stop.is_set():
            t = threading.Thread(target=self.probe, daemon=True)
            t.start()
            self.running.append(t)
            self.stop.wait(self.every)
        for t in self.running:
            t.join(15)


class Write:
    """One write sent: `key` is what it writes to, `value` what it writes there."""

    __slots__ = ("kind", "key", "value", "sent", "done", "status")

    def __init__(self, kind, key, value, sent, done, status):
        self.kind, self.key, self.value = kind, key, value
        self.sent, self.done, self.status = sent, done, status

    @property
    def acked(self):
        return 200 <= self.status < 300


def decide(writes, stored):
    """Checks writes (of one database, any kinds) against `stored` ({(kind, key): value}
    as read back; a key missing from it holds nothing). Returns (acknowledged, lost), lost
    being [(the last acknowledged write, what the key holds)]."""
    by_key = {}
    for w in writes:
        by_key.setdefault((w.kind, w.key), []).append(w)
    acked, lost = 0, []
    for key, ws in by_key.items():
        ws.sort(key=lambda w: w.sent)
        last = max((i for i, w in enumerate(ws) if w.acked), default=None)
        if last is None:
            continue
        acked += sum(1 for w in ws if w.acked)
        allowed = [ws[last].value] + [w.value for w in ws[last + 1:] if not w.acked]
        holds = stored.get(key)
        if holds not in allowed:
            lost.append((ws[last], holds))
    return acked, lost


def run(cmd, timeout=30):
    """Runs a command (from /, where any user may be); returns when it started and ended."""
    started = time.monotonic()
    subprocess.run(cmd, check=True, timeout=timeout, cwd="/", stdout=subprocess.DEVNULL)
    return started, time.monotonic()


def psql(url, sql, timeout=20):
    """Rows of tab-separated fields."""
    out = subprocess.run(["psql", "-qAtX", "-F", "\t", url, "-c", sql], check=True, timeout=timeout,
                         capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines() if line]


def first_after(times, moment):
    later = [t for t in times if t >= moment]
    return min(later) if later else None


def longest_gap(times, start, end):
    times = sorted(t for t in times if start <= t <= end)
    points = [start] + times + [end]
    return max(b - a for a, b in zip(points, points[1:]))


def percentile(values, q):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]
