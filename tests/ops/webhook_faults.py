"""The webhook fault run (tests/ops/webhook-faults.sh sets up what it runs against; in
`make test`).

One `school-service serve` (relay inside) on a private PostgreSQL, SCHOOLS schools each
subscribed (`["*"]`) to a receiver in this process. One writer thread per school sends, as
fast as the server answers: subject creates, renames of its subjects (several events of one
record), class creates, and writes that must be refused (a subject without a code: 400; a
subject with a code the school already has: 409, its transaction rolled back). Every
written name is unique, so an event names the write it comes from. Meanwhile, on a
schedule: the receiver refuses everything (500) for a while and recovers, the server is
SIGKILLed and started again, PostgreSQL is restarted, the receiver answers nothing (503).

Then, once every queue is empty, the checks:
  - the feed from the start (`GET /events/`, every page) answers exactly the committed
    changes: every acknowledged write has its one event, every event is of a write that
    was acknowledged or got no answer (so may have committed), none of a refused write;
  - every event of the feed was delivered (acknowledged by the receiver) at least once;
  - duplicates share their `webhook-id` (and carry the same event);
  - per-record order: no event of a record reached the receiver before the record's
    earlier event was acknowledged.
Prints one line per check and `webhook faults: ...`; exit status 1 on any failure.
"""
import argparse
import collections
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opsload import API, Client, psql


class Receiver:
    """The subscriptions' receiver: records every delivery; `mode` says how it answers."""

    def __init__(self):
        self.mode = "ok"  # ok: 204; fail: 500; busy: 503
        self.lock = threading.Lock()
        self.deliveries = []  # (path, webhook-id, event, received at, answered)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                got = time.monotonic()
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                status = {"ok": 204, "fail": 500, "busy": 503}[receiver.mode]
                with receiver.lock:
                    receiver.deliveries.append((self.path, self.headers.get("webhook-id"),
                                                json.loads(body), got, status))
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


class Server:
    def __init__(self, binary, env, work):
        self.binary, self.env = binary, env
        self.log = os.path.join(work, "server-webhooks.log")
        self.pid_file = os.path.join(work, "server-webhooks.pid")
        self.proc = None

    def start(self):
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen([self.binary, "serve"], env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True, cwd="/")
        with open(self.pid_file, "w") as f:
            f.write(str(self.proc.pid))

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.kill()


class Writer(threading.Thread):
    """One school's writes, one after the other, each in the ledger."""

    def __init__(self, run, school):
        super().__init__(daemon=True)
        self.run_, self.school = run, school
        self.client = Client(run.port, f"{school}.localhost", timeout=15)
        self.ledger = []  # (name, type, status)
        self.subjects = []  # ids of created subjects
        self.token = None

    def login(self):
        for _ in range(100):
            res = self.client.request("POST", f"{API}/auth/login/",
                                      body={"identifier": f"admin@{self.school}.test", "password": self.run_.password})
            if res.status == 200:
                self.token = res.body["access"]
                return
            time.sleep(0.2)
        raise RuntimeError(f"{self.school}: no login")

    def send(self, method, path, body, name, kind):
        res = self.client.request(method, f"{API}{path}", self.token, body)
        if res.status == 401:
            self.login()
            res = self.client.request(method, f"{API}{path}", self.token, body)
        self.ledger.append((name, kind, res.status))
        return res

    def run(self):
        n = 0
        while not self.run_.stopping.is_set():
            n += 1
            step = n % 6
            name = f"{self.school}-{n}"
            if step in (1, 4) or not self.subjects:
                res = self.send("POST", "/subjects/", {"name": name, "code": f"C{n}"}, name, "subject.created")
                if res.ok:
                    self.subjects.append(res.body["id"])
            elif step in (2, 5):
                subject = self.subjects[(n // 6) % len(self.subjects)]
                self.send("PATCH", f"/subjects/{subject}/", {"name": name}, name, "subject.updated")
            elif step == 3:
                self.send("POST", "/classes/", {"name": name}, name, "academic_class.created")
            else:
                # Refused: no code (400), and a code the school has (409, rolled back).
                self.send("POST", "/subjects/", {"name": f"{name}-a"}, f"{name}-a", "refused")
                self.send("POST", "/subjects/", {"name": f"{name}-b", "code": "C1"}, f"{name}-b", "refused")


class Run:
    def __init__(self, args):
        self.args = args
        self.password = args.password
        self.schools = [f"whf{i}" for i in range(1, args.schools + 1)]
        self.receiver = Receiver()
        self.port = args.port
        env = dict(os.environ, DATABASE_URL=args.db, BIND_ADDR=f"127.0.0.1:{self.port}",
                   WEBHOOK_ALLOW_INSECURE="true", WEBHOOK_TIMEOUT_MS="2000",
                   WEBHOOK_RETRY_SCHEDULE=",".join(["1s"] * 60), RUST_LOG="warn")
        env.pop("DATABASE_LISTEN_URL", None)
        self.server = Server(args.bin, env, args.work)
        self.pg_ctl = shlex.split(args.pg_ctl) + ["-D", args.pgdata]
        self.stopping = threading.Event()
        self.failures = []
        self.notes = []

    def wait_ready(self, seconds=30):
        client = Client(self.port, "127.0.0.1", timeout=5)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if client.request("GET", "/readyz").status == 200:
                return
            time.sleep(0.1)
        raise RuntimeError("the server is not ready")

    def subscribe(self, writer):
        body = {"url": f"http://127.0.0.1:{self.receiver.port}/{writer.school}", "event_types": ["*"]}
        writer.client.must("POST", f"{API}/webhooks/", writer.token, body)

    def faults(self, seconds):
        """The schedule, spread over `seconds` of load."""
        plan = [
            (0.15, "receiver fails (500)", lambda: setattr(self.receiver, "mode", "fail")),
            (0.30, "receiver recovers", lambda: setattr(self.receiver, "mode", "ok")),
            (0.40, "server SIGKILLed and started", self.kill_server),
            (0.60, "PostgreSQL restarted", self.restart_pg),
            (0.75, "receiver answers 503", lambda: setattr(self.receiver, "mode", "busy")),
            (0.85, "receiver recovers", lambda: setattr(self.receiver, "mode", "ok")),
        ]
        start = time.monotonic()
        for at, what, act in plan:
            time.sleep(max(0.0, start + at * seconds - time.monotonic()))
            act()
            self.notes.append(f"+{time.monotonic() - start:.1f}s {what}")

    def kill_server(self):
        self.server.kill()
        time.sleep(0.5)
        self.server.start()
        self.wait_ready()

    def restart_pg(self):
        subprocess.run(self.pg_ctl + ["restart", "-m", "fast", "-w", "-l", f"{self.args.pgdata}/server.log"],
                       check=True, timeout=60, cwd="/", stdout=subprocess.DEVNULL)

    def drained(self, seconds):
        """Waits until every school's events are queued and delivered; answers whether."""
        checks = " UNION ALL ".join(
            f"SELECT (SELECT count(*) FROM {s}.webhook_queue) + "
            f"(SELECT count(*) FROM {s}.webhooks w WHERE w.queued_through < "
            f"(SELECT coalesce(max(seq), 0) FROM {s}.events))" for s in self.schools)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                if all(int(r[0]) == 0 for r in psql(self.args.db, checks)):
                    return True
            except subprocess.SubprocessError:
                pass
            time.sleep(0.5)
        return False

    def feed(self, writer, after=None):
        """The school's events after the cursor `after` (from the start without one), and
        the cursor after them."""
        events = []
        while True:
            query = f"/events/?limit=1000" + (f"&after={after}" if after else "")
            body = writer.client.must("GET", f"{API}{query}", writer.token)
            events += body["results"]
            after = body["next"]
            if not body["results"]:
                return events, after

    def check(self, condition, line):
        print(("ok   " if condition else "FAIL ") + line)
        if not condition:
            self.failures.append(line)

    def main(self):
        self.server.start()
        self.wait_ready()
        writers = [Writer(self, s) for s in self.schools]
        for w in writers:
            w.login()
            self.subscribe(w)
            # Events before the load (the school's set-up) are not the run's to check.
            _, w.start_cursor = self.feed(w)
        for w in writers:
            w.start()
        self.faults(self.args.seconds)
        time.sleep(max(0.0, self.args.seconds * 0.15))
        self.stopping.set()
        for w in writers:
            w.join(30)
        drained = self.drained(self.args.drain)
        self.check(drained, f"every queue drained within {self.args.drain} s")
        for w in writers:
            w.login()
        self.verify(writers)
        self.server.stop()
        for note in self.notes:
            print("  fault " + note)
        writes = sum(len(w.ledger) for w in writers)
        acked = sum(1 for w in writers for (_, k, s) in w.ledger if k != "refused" and 200 <= s < 300)
        print(f"webhook faults: {writes} writes ({acked} acknowledged), {len(self.receiver.deliveries)} deliveries, "
              f"{len(self.failures)} failures")
        return 1 if self.failures else 0

    def verify(self, writers):
        deliveries = list(self.receiver.deliveries)
        for w in writers:
            events, _ = self.feed(w, w.start_cursor)
            by_name = collections.defaultdict(list)
            for e in events:
                by_name[e["data"].get("name")].append(e)
            ledger = {name: (kind, status) for (name, kind, status) in w.ledger}
            acked = [n for n, (k, s) in ledger.items() if k != "refused" and 200 <= s < 300]
            missing = [n for n in acked if len([e for e in by_name.get(n, []) if e["type"] == ledger[n][0]]) != 1]
            self.check(not missing, f"{w.school}: each of {len(acked)} acknowledged writes has its one event "
                                    f"{missing[:3]}")
            unknown = [e for e in events if e["data"].get("name") not in ledger
                       or ledger[e["data"]["name"]][1] in range(200, 300) and ledger[e["data"]["name"]][0] != e["type"]]
            refused = [e for e in events if ledger.get(e["data"].get("name"), ("", 0))[0] == "refused"
                       or 400 <= ledger.get(e["data"].get("name"), ("", 0))[1] < 500]
            self.check(not unknown and not refused,
                       f"{w.school}: the feed's {len(events)} events are all of committed writes, none of the "
                       f"{sum(1 for (_, k, _) in w.ledger if k == 'refused')} refused ({unknown[:1]}{refused[:1]})")
            mine = [d for d in deliveries if d[0] == f"/{w.school}"]
            delivered = {d[1] for d in mine if 200 <= d[4] < 300}
            undelivered = [e["id"] for e in events if e["id"] not in delivered]
            self.check(not undelivered, f"{w.school}: every event delivered ({len(undelivered)} not)")
            strangers = [d for d in mine if d[1] != d[2]["id"] or d[2]["id"] not in {e["id"] for e in events}]
            self.check(not strangers, f"{w.school}: every delivery is an event of the school's feed, its "
                                      f"webhook-id the event's id")
            copies = collections.defaultdict(set)
            for d in mine:
                copies[d[1]].add(json.dumps(d[2], sort_keys=True))
            self.check(all(len(c) == 1 for c in copies.values()),
                       f"{w.school}: duplicates ({len(mine) - len(copies)}) share their webhook-id and event")
            self.check_order(w.school, events, mine)

    def check_order(self, school, events, mine):
        first_sent, first_acked = {}, {}
        for (_, wid, _, at, status) in mine:
            first_sent.setdefault(wid, at)
            if 200 <= status < 300:
                first_acked.setdefault(wid, at)
        by_record = collections.defaultdict(list)
        for e in events:  # commit order
            by_record[e["data"].get("id")].append(e["id"])
        early = []
        for ids in by_record.values():
            for before, later in zip(ids, ids[1:]):
                if later in first_sent and (before not in first_acked or first_sent[later] < first_acked[before]):
                    early.append((before, later))
        self.check(not early, f"{school}: per-record order over {len(by_record)} records ({len(early)} sent early)")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--db", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--schools", type=int, default=4)
    p.add_argument("--password", required=True)
    p.add_argument("--seconds", type=float, default=30)
    p.add_argument("--drain", type=float, default=60)
    p.add_argument("--pg-ctl", required=True)
    p.add_argument("--pgdata", required=True)
    sys.exit(Run(p.parse_args()).main())


if __name__ == "__main__":
    main()
