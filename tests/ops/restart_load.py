"""PostgreSQL restarted under mark writes, behind PgBouncer (run by tests/ops/pgbouncer-restart.sh).

One writer thread per school posts `confirm-students` at a steady pace, each write to an
(exam, student) pair of its own with a mark of its own, and keeps a ledger: every write
answered 2xx must be in the database afterwards, with its mark. A poller asks /readyz
meanwhile. PostgreSQL goes through
  1. `pg_ctl restart -m fast`,
  2. `pg_ctl stop -m immediate`, DOWN seconds without a server, `pg_ctl start`;
after each the first acknowledged write must come within 3 s of PostgreSQL being back.
While PostgreSQL is down /readyz must answer 503 (never 200) and answer promptly; after it,
200. Then the change listener: once its LISTEN connection is back, a school created by the
CLI (another process) must be served, which only its NOTIFY can tell the server.
Python standard library only; every wait is bounded. Exit status 1 on any failure.
"""
import argparse
import shlex
import subprocess
import sys
import threading
import time

from opsload import API, Client, ReadyPoller, Write, decide, longest_gap, psql, run

RECOVERY_LIMIT = 3.0  # seconds from PostgreSQL back to the first acknowledged write
READY_LATENCY_LIMIT = 2.5  # /readyz answers within this even while PostgreSQL is down


def fixtures(port, school, password, exams, students):
    """Logs in as the school's admin and creates exams x students (exam, admission number) keys."""
    c = Client(port, f"{school}.localhost")
    token = c.must("POST", f"{API}/auth/login/", body={"identifier": f"admin@{school}.test", "password": password})["access"]
    subject = c.must("POST", f"{API}/subjects/", token, {"name": "Maths", "code": "MAT"})["id"]
    session = c.must("POST", f"{API}/sessions/", token, {"name": "2026", "start_date": "2026-01-01", "end_date": "2026-12-31"})["data"]["id"]
    exam_session = c.must("POST", f"{API}/sessions/{session}/exam-sessions/", token, {"name": "Finals", "term": "T1"})["id"]
    base = f"{API}/sessions/{session}/exam-sessions/{exam_session}/exams/"
    exam_ids = []
    for i in range(exams):
        klass = c.must("POST", f"{API}/classes/", token, {"name": f"Form {i}"})["id"]
        exam_ids.append(c.must("POST", base, token, {"name": f"Paper {i}", "subject": subject, "academic_class": klass})["id"])
    for j in range(students):
        c.must("POST", f"{API}/students/", token, {"admission_number": f"S-{j}", "first_name": "F", "last_name": str(j)})
    keys = [(exam, f"S-{j}") for j in range(students) for exam in exam_ids]
    return token, [(f"{base}{exam}/marks/confirm-students/", exam, number) for exam, number in keys]


class Writer(threading.Thread):
    """Steady confirm-students writes for one school; one write per key, never retried."""

    def __init__(self, port, school, token, keys, rate, stop):
        super().__init__(daemon=True)
        self.client = Client(port, f"{school}.localhost")
        self.school, self.token, self.keys = school, token, keys
        self.interval, self.stop = 1.0 / rate, stop
        self.ledger = []  # Write

    def run(self):
        next_send = time.monotonic()
        for n, (path, exam, number) in enumerate(self.keys):
            if self.stop.is_set():
                return
            mark = n % 101
            sent = time.monotonic()
            status = self.client.request("POST", path, self.token, {"studentadmissionnumber": number, "mark": mark}).status
            self.ledger.append(Write("mark", (exam, number), mark, sent, time.monotonic(), status))
            next_send = max(next_send + self.interval, time.monotonic())
            self.stop.wait(max(0.0, next_send - time.monotonic()))
        print(f"writer {self.school}: ran out of keys", file=sys.stderr)


def acks(writers):
    return sorted(w.done for writer in writers for w in writer.ledger if w.acked)


def first_ack_after(writers, moment, deadline):
    """Waits (until `deadline`) for a write acknowledged after `moment`; returns its time."""
    while time.monotonic() < deadline:
        later = [t for t in acks(writers) if t >= moment]
        if later:
            return later[0]
        time.sleep(0.05)
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--schools", required=True, help="comma-separated schema names")
    p.add_argument("--password", required=True)
    p.add_argument("--db-url", required=True, help="direct URL of the database, for checking")
    p.add_argument("--pg-ctl", required=True, help="pg_ctl command line (run as the cluster's owner)")
    p.add_argument("--pgdata", required=True)
    p.add_argument("--cli", required=True, help="the school-service binary, for `tenant create`")
    p.add_argument("--down", type=float, default=3.0)
    p.add_argument("--rate", type=float, default=20.0, help="writes per second per school")
    p.add_argument("--exams", type=int, default=10)
    p.add_argument("--students", type=int, default=50)
    p.add_argument("--wait", type=float, default=10.0, help="how long to wait for a write after each")
    args = p.parse_args()
    schools = args.schools.split(",")
    pg_ctl = shlex.split(args.pg_ctl) + ["-D", args.pgdata]
    failures = []

    def check(ok, message):
        print(("ok    " if ok else "FAIL  ") + message)
        if not ok:
            failures.append(message)

    prepared = {}
    threads = [threading.Thread(target=lambda s=s: prepared.__setitem__(
        s, fixtures(args.port, s, args.password, args.exams, args.students))) for s in schools]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    if len(prepared) != len(schools):
        print("FAIL  fixtures could not be created", file=sys.stderr)
        return 1

    stop = threading.Event()
    writers = [Writer(args.port, s, *prepared[s], args.rate, stop) for s in schools]
    poller = ReadyPoller(args.port, stop)
    for w in writers + [poller]:
        w.start()
    began = time.monotonic()
    try:
        time.sleep(1.5)
        # 1. A fast restart (sessions terminated, shutdown checkpoint, start).
        restart_began, back = run(pg_ctl + ["restart", "-m", "fast", "-w", "-l", f"{args.pgdata}/server.log"])
        first = first_ack_after(writers, back, back + args.wait)
        recovery1 = None if first is None else first - back
        check(recovery1 is not None and recovery1 <= RECOVERY_LIMIT,
              f"pg_ctl restart -m fast ({back - restart_began:.2f} s): first acknowledged write "
              f"{'never' if recovery1 is None else f'{recovery1:.2f} s'} after PostgreSQL was back "
              f"(longest stretch without one: {longest_gap(acks(writers), restart_began, (first or back) + 0.01):.2f} s)")
        time.sleep(1.5)
        # 2. An immediate stop (a crash, as far as PostgreSQL knows), DOWN seconds, a start.
        _, down = run(pg_ctl + ["stop", "-m", "immediate", "-w"])
        time.sleep(args.down)
        start_began, back2 = run(pg_ctl + ["start", "-w", "-l", f"{args.pgdata}/server.log"])
        first2 = first_ack_after(writers, back2, back2 + args.wait)
        recovery2 = None if first2 is None else first2 - back2
        check(recovery2 is not None and recovery2 <= RECOVERY_LIMIT,
              f"pg_ctl stop -m immediate, {args.down:.1f} s down, start ({back2 - start_began:.2f} s): "
              f"first acknowledged write {'never' if recovery2 is None else f'{recovery2:.2f} s'} "
              f"after PostgreSQL was back")
        ready_after = None
        deadline = back2 + RECOVERY_LIMIT + 2
        while time.monotonic() < deadline and ready_after is None:
            ok = [d for (s, d, st) in poller.probes if st == 200 and s >= back2]
            ready_after = min(ok) - back2 if ok else None
            time.sleep(0.05)
        time.sleep(1.0)

        # 3. The change listener is back on its own: wait for its LISTEN connection, then a
        # school created by another process must reach the server (only NOTIFY tells it).
        listening = False
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline and not listening:
            listening = bool(psql(args.db_url, "SELECT 1 FROM pg_stat_activity WHERE query LIKE 'LISTEN %'"))
            time.sleep(0.1)
        check(listening, "the change listener reconnected (a LISTEN connection is open again)")
        late = Client(args.port, "late.localhost")
        before, _ = late.request("GET", f"{API}/classes/")
        subprocess.run(shlex.split(args.cli) + ["tenant", "create", "--schema", "late", "--name", "Late School",
                                                "--domain", "late.localhost"],
                       check=True, timeout=30, stdout=subprocess.DEVNULL)
        created = time.monotonic()
        served = None
        while time.monotonic() < created + 5 and served is None:
            status, _ = late.request("GET", f"{API}/classes/")
            if status == 401:
                served = time.monotonic() - created
            time.sleep(0.05)
        check(before == 404 and served is not None,
              f"a school created by the CLI after the restarts: {before} before, "
              f"{'served' if served is not None else 'not served'} after"
              f"{f' ({served:.2f} s)' if served is not None else ''} (NOTIFY through the reconnected listener)")
    finally:
        stop.set()
        for w in writers + [poller]:
            w.join(30)
    ended = time.monotonic()

    # /readyz: 503 (never 200) while PostgreSQL was down, always answered promptly; 200 after.
    during = [(s, d, st) for (s, d, st) in poller.probes if down <= s < start_began]
    slow = [round(d - s, 2) for (s, d, st) in during if d - s > READY_LATENCY_LIMIT]
    wrong = [st for (s, d, st) in during if st not in (200, 503) or (st == 200 and d < start_began)]
    not_ready = [1 for (s, d, st) in during if st == 503]
    check(not_ready and not slow and not wrong,
          f"/readyz while PostgreSQL was down: {len(not_ready)} of {len(during)} probes 503, "
          f"slower than {READY_LATENCY_LIMIT} s: {slow or 'none'}, other answers: {wrong or 'none'}")
    check(ready_after is not None and ready_after <= RECOVERY_LIMIT,
          f"/readyz 200 again {'never' if ready_after is None else f'{ready_after:.2f} s'} after PostgreSQL was back")
    before = [st for (s, d, st) in poller.probes if d < restart_began]
    check(200 in before, "/readyz 200 before the restarts")

    # The ledger against the database.
    statuses = {}
    for w in writers:
        for write in w.ledger:
            statuses[write.status] = statuses.get(write.status, 0) + 1
    check(not [s for s in statuses if s >= 500 and s != 503],
          f"writes answered: {dict(sorted(statuses.items()))} (0: connection failed) over {ended - began:.1f} s; "
          "no 5xx but 503")
    acked = lost = 0
    for w in writers:
        rows = psql(args.db_url, f"SELECT exam_id, studentadmissionnumber, mark FROM {w.school}.marks WHERE NOT is_deleted")
        stored = {("mark", (exam, number)): int(mark) for exam, number, mark in rows}
        school_acked, school_lost = decide(w.ledger, stored)
        acked += school_acked
        lost += len(school_lost)
    check(acked > 0 and lost == 0,
          f"{acked} acknowledged writes: {lost} missing from the database or with another mark")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
