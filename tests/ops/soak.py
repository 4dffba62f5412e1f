"""The soak (tests/ops/soak.sh sets up what it runs against; `make soak`, and a 20 s version
in `make test`).

Two servers share one PostgreSQL: "direct" (session mode, through tests/ops/dbproxy.py) and
"bouncer" (transaction mode, through PgBouncer, which reaches PostgreSQL through the proxy
too). One load thread per school sends a fixed mix at a steady pace, each request to either
server at random:
  - reads: report settings, a session, a department;
  - lists: departments, students, one exam's marks, sessions;
  - writes: marks through `confirm-students`, session creates, session activations
    (`PATCH {"is_active": true}`), department renames (`PATCH {"name": ...}`).
Every write goes into a ledger (tests/ops/opsload.py): a school's writes are sent one after
the other by its own thread, and every written value is unique (a mark carries the comment
`<school>#<sequence number>`, a name carries the school and the sequence number), so what
the database must hold afterwards is decidable: for each key, the value of the last write
answered 2xx, or of a later write that was not answered 2xx. Every row a school writes and
every row a read answers carries the school's name, so a row of another school is seen.

Faults, spread evenly over the run after a warm-up (each waits for the load to succeed
again before the next): see ALL_FAULTS. Afterwards, from the database directly: every acknowledged write present
with its value, no duplicate where uniqueness is promised (one live mark per exam and
student, one active session per school, one session per created name), no row of another
school; from the answers: nothing 5xx but 503, every 503 with Retry-After, no unexpected
4xx (429 and 408 are allowed); per fault the time from its end until the affected servers
answer 2xx again; latency outside the fault windows; both servers stop on SIGTERM with
status 0. Exit status 1 on any failure.
"""
import argparse
import collections
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import threading
import time

from opsload import API, CONNECTION_FAILED, TIMED_OUT, Client, ReadyPoller, Write, decide, percentile, psql

RECOVERY_WAIT = 20.0  # a fault whose servers do not answer 2xx again within this fails
STUDENTS = 12
EXAMS = 3
DEPARTMENTS = 2
# One school's cycle of operations; each school starts at its own place in it.
CYCLE = ["mark", "read", "mark", "list", "mark", "read", "mark", "list", "dept", "read",
         "mark", "list", "mark", "read", "session", "mark", "list", "activate", "read", "read"]
WRITES = {"mark", "dept", "session", "activate"}
# Tables a storm or a cut locks, so that every request of the school waits in a query.
LOCKED_TABLES = ["marks", "report_settings", "academic_sessions", "departments", "students"]


def now():
    return time.monotonic()


class Server:
    """A `school-service serve` process this script starts, kills and starts again."""

    def __init__(self, name, binary, port, env, work):
        self.name, self.binary, self.port, self.env = name, binary, port, env
        self.log_path = os.path.join(work, f"server-{name}.log")
        self.pid_path = os.path.join(work, f"server-{name}.pid")
        self.proc = None

    def start(self):
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen([self.binary, "serve"], env=self.env, stdout=log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True, cwd="/")
        with open(self.pid_path, "w") as f:
            f.write(str(self.proc.pid))

    def kill(self):
        self.proc.kill()
        self.proc.wait(10)

    def stop(self, timeout=35):
        """SIGTERM; the exit status, or None when it did not exit in time (then killed)."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.terminate()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
            return None

    def wait_for(self, path, status, timeout):
        client = Client(self.port, "127.0.0.1", timeout=3)
        deadline = now() + timeout
        while now() < deadline:
            if client.request("GET", path).status == status:
                client.close()
                return True
            time.sleep(0.05)
        client.close()
        return False


class School:
    """One school's fixtures, made through the API as its admin."""

    def __init__(self, name, port, password):
        self.name = name
        self.prefix = name + " "  # every name this school's rows carry starts with it
        c = Client(port, f"{name}.localhost")
        self.token = c.must("POST", f"{API}/auth/login/",
                            body={"identifier": f"admin@{name}.test", "password": password})["access"]
        t = self.token
        hod = c.must("GET", f"{API}/teachers/", t)["results"][0]["id"]
        subject = c.must("POST", f"{API}/subjects/", t, {"name": f"{name} maths", "code": "MAT"})["id"]
        self.departments = [
            c.must("POST", f"{API}/departments/", t, {"name": f"{name} dept{d}", "hod": hod, "subject": subject})["id"]
            for d in range(DEPARTMENTS)]
        first = c.must("POST", f"{API}/sessions/", t, {"name": f"{name} session 0", "start_date": "2026-01-01",
                                                       "end_date": "2026-12-31"})["data"]
        self.sessions = [(first["id"], first["name"])]  # acknowledged creates: (id, name)
        exam_session = c.must("POST", f"{API}/sessions/{first['id']}/exam-sessions/", t,
                              {"name": f"{name} finals", "term": "T1"})["id"]
        base = f"{API}/sessions/{first['id']}/exam-sessions/{exam_session}/exams/"
        self.exams = []  # (id, path of the exam)
        for i in range(EXAMS):
            klass = c.must("POST", f"{API}/classes/", t, {"name": f"{name} form {i}"})["id"]
            exam = c.must("POST", base, t, {"name": f"{name} paper {i}", "subject": subject,
                                            "academic_class": klass})["id"]
            self.exams.append((exam, f"{base}{exam}/"))
        self.students = [f"S-{j}" for j in range(STUDENTS)]
        for number in self.students:
            c.must("POST", f"{API}/students/", t, {"admission_number": number, "first_name": name, "last_name": name})
        c.must("PATCH", f"{API}/report-settings/", t, {"footer_text": name})
        c.close()


class Request:
    __slots__ = ("school", "op", "server", "sent", "done", "status", "retry_after", "code", "foreign")

    def __init__(self, school, op, server, sent, done, res, foreign):
        self.school, self.op, self.server, self.sent, self.done = school, op, server, sent, done
        self.status, self.retry_after, self.code = res.status, res.retry_after, res.code
        self.foreign = foreign

    @property
    def ok(self):
        return 200 <= self.status < 300


class Load(threading.Thread):
    """One school's requests, one after the other at a steady pace; `ops` is the mix."""

    def __init__(self, index, school, servers, rate, stop, ops=None, timeout=15):
        super().__init__(daemon=True)
        self.index, self.school, self.servers = index, school, servers
        self.interval, self.stop = 1.0 / rate, stop
        self.ops = ops or CYCLE
        self.rng = random.Random(index)
        self.clients = {s.name: Client(s.port, f"{school.name}.localhost", timeout=timeout) for s in servers}
        self.requests = []  # Request
        self.ledger = []  # Write
        self.seq = 0
        self.turn = {"read": 0, "list": 0}

    def run(self):
        next_send = now() + self.rng.random() * self.interval
        self.stop.wait(max(0.0, next_send - now()))
        n = 0
        while not self.stop.is_set():
            op = self.ops[(n + self.index) % len(self.ops)]
            self.one(op, self.rng.choice(self.servers))
            n += 1
            next_send = max(next_send + self.interval, now())
            self.stop.wait(max(0.0, next_send - now()))
        for c in self.clients.values():
            c.close()

    def send(self, op, server, method, path, body=None):
        sent = now()
        res = self.clients[server.name].request(method, path, self.school.token, body)
        return sent, now(), res

    def one(self, op, server):
        s = self.school
        self.seq += 1
        seq = self.seq
        foreign = False
        if op == "mark":
            exam, path = self.rng.choice(s.exams)
            number = self.rng.choice(s.students)
            value = (seq % 101, f"{s.name}#{seq}")
            sent, done, res = self.send(op, server, "POST", f"{path}marks/confirm-students/",
                                        {"studentadmissionnumber": number, "mark": value[0], "comment": value[1]})
            self.ledger.append(Write("mark", (exam, number), value, sent, done, res.status))
            if res.ok:
                foreign = (res.body or {}).get("comment") != value[1]
        elif op == "dept":
            d = self.rng.randrange(len(s.departments))
            name = f"{s.prefix}dept{d} #{seq}"
            sent, done, res = self.send(op, server, "PATCH", f"{API}/departments/{s.departments[d]}/", {"name": name})
            self.ledger.append(Write("dept", s.departments[d], name, sent, done, res.status))
            if res.ok:
                foreign = (res.body or {}).get("name") != name
        elif op == "session":
            name = f"{s.prefix}session {seq}"
            sent, done, res = self.send(op, server, "POST", f"{API}/sessions/",
                                        {"name": name, "start_date": "2026-01-01", "end_date": "2026-12-31"})
            self.ledger.append(Write("session", name, name, sent, done, res.status))
            self.ledger.append(Write("active", "active", name, sent, done, res.status))
            if res.ok:
                data = (res.body or {}).get("data") or {}
                foreign = data.get("name") != name
                if not foreign:
                    s.sessions.append((data["id"], name))
        elif op == "activate":
            sid, name = self.rng.choice(s.sessions)
            sent, done, res = self.send(op, server, "PATCH", f"{API}/sessions/{sid}/", {"is_active": True})
            self.ledger.append(Write("active", "active", name, sent, done, res.status))
            if res.ok:
                foreign = (res.body or {}).get("name") != name or (res.body or {}).get("is_active") is not True
        elif op == "read":
            kind = self.turn["read"] % 3
            self.turn["read"] += 1
            if kind == 0:
                sent, done, res = self.send(op, server, "GET", f"{API}/report-settings/")
                foreign = res.ok and (res.body or {}).get("footer_text") != s.name
            elif kind == 1:
                sid, name = self.rng.choice(s.sessions)
                sent, done, res = self.send(op, server, "GET", f"{API}/sessions/{sid}/")
                foreign = res.ok and (res.body or {}).get("name") != name
            else:
                d = self.rng.choice(s.departments)
                sent, done, res = self.send(op, server, "GET", f"{API}/departments/{d}/")
                foreign = res.ok and not str((res.body or {}).get("name", "")).startswith(s.prefix)
        else:  # list
            kind = self.turn["list"] % 4
            self.turn["list"] += 1
            if kind == 0:
                path, mine = f"{API}/departments/", lambda r: r["name"].startswith(s.prefix)
            elif kind == 1:
                path, mine = f"{API}/students/?page_size=20", lambda r: r["last_name"] == s.name
            elif kind == 2:
                path = f"{self.rng.choice(s.exams)[1]}marks/?page_size=50"
                mine = lambda r: str(r.get("comment")).startswith(s.name + "#")
            else:
                path, mine = f"{API}/sessions/?page_size=20", lambda r: r["name"].startswith(s.prefix)
            sent, done, res = self.send(op, server, "GET", path)
            if res.ok:
                rows = (res.body or {}).get("results")
                foreign = not isinstance(rows, list) or not all(mine(r) for r in rows)
        self.requests.append(Request(s.name, op, server.name, sent, done, res, foreign))

    def last_ok(self, servers, since):
        """Whether each of `servers` answered this school 2xx after `since`."""
        seen = set()
        for r in reversed(self.requests):
            if r.done < since:
                break
            if r.ok and r.server in servers:
                seen.add(r.server)
        return seen


class Fault:
    def __init__(self, name, what, start, end, servers, school=None, note="", window_start=None):
        self.name, self.what, self.start, self.end = name, what, start, end
        # Latency is "in a fault window" from here (a cut's lock is taken before the cut).
        self.window_start = start if window_start is None else window_start
        self.servers, self.school, self.note = servers, school, note
        self.recovery = None  # seconds from `end` to the last affected server's first 2xx
        self.down = None  # (from, to): PostgreSQL was stopped
        self.window_end = end


class Soak:
    def __init__(self, args):
        self.args = args
        self.pg_ctl = shlex.split(args.pg_ctl) + ["-D", args.pgdata]
        self.stop = threading.Event()
        self.loads = []
        self.extra = []  # the clients of storms and cuts
        self.faults = []
        self.pollers = {}
        self.load_average = [0.0]
        common = dict(os.environ)
        common.update({
            "JWT_SECRET": os.environ.get("JWT_SECRET", "soak-test-secret-soak-test-secret-0123456"),
            "BCRYPT_COST": "4", "RUST_LOG": "warn", "LOGIN_RATE_PER_MINUTE": "100000",
            "ACCESS_TOKEN_TTL": "3600", "DB_STATEMENT_TIMEOUT_MS": str(args.statement_timeout_ms),
            "SCHOOL_RATE_PER_SECOND": "25", "KEEP_ALIVE_SECS": "60",
        })
        for key in ("DATABASE_URL", "DATABASE_LISTEN_URL", "DB_POOL_MODE", "BIND_ADDR", "METRICS_ADDR"):
            common.pop(key, None)
        direct = dict(common, DATABASE_URL=args.proxied_db, DB_POOL_MODE="session",
                      BIND_ADDR=f"127.0.0.1:{free_port()}")
        bouncer = dict(common, DATABASE_URL=args.bouncer_db, DATABASE_LISTEN_URL=args.proxied_db,
                       DB_POOL_MODE="transaction", BIND_ADDR=f"127.0.0.1:{free_port()}")
        self.servers = [Server("direct", args.bin, int(direct["BIND_ADDR"].rsplit(":", 1)[1]), direct, args.work),
                        Server("bouncer", args.bin, int(bouncer["BIND_ADDR"].rsplit(":", 1)[1]), bouncer, args.work)]
        self.server = {s.name: s for s in self.servers}

    # --- faults ---------------------------------------------------------------------------

    def lock(self, school, seconds):
        """Holds ACCESS EXCLUSIVE locks on the school's busiest tables for `seconds` on a
        direct connection: every request of that school then waits in a query."""
        tables = ", ".join(f"{school}.{t}" for t in LOCKED_TABLES)
        sql = f"BEGIN; LOCK TABLE {tables} IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep({seconds}); COMMIT;"
        locker = subprocess.Popen(["psql", "-qAtX", self.args.db, "-c", sql], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        # Returns once the locks are held.
        held = (f"SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                f"JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '{school}' "
                f"AND l.mode = 'AccessExclusiveLock' AND l.granted")
        deadline = now() + 10
        while now() < deadline and locker.poll() is None:
            if int(psql(self.args.db, held)[0][0]) >= len(LOCKED_TABLES):
                return locker
            time.sleep(0.02)
        raise RuntimeError(f"could not lock {school}'s tables")

    def crowd(self, school, clients):
        """`clients` more clients of `school` (lists and reads, as fast as they are answered)."""
        stop = threading.Event()
        crowd = [Load(1000 + i, school, self.servers, 50.0, stop, ops=["list", "read"], timeout=30)
                 for i in range(clients)]
        for c in crowd:
            c.start()
        return stop, crowd

    def disperse(self, stop, crowd):
        stop.set()
        for c in crowd:
            c.join(40)
        self.extra.extend(crowd)
        return [r for c in crowd for r in c.requests]

    def cut(self, reset):
        school = self.loads[1 % len(self.loads)].school
        locked = now()
        locker = self.lock(school.name, 2.0)
        stop, crowd = self.crowd(school, self.args.cut_clients)
        time.sleep(1.0)
        lines = count_lines(self.args.proxy_log)
        t = now()
        os.kill(self.args.proxy_pid, signal.SIGUSR1 if reset else signal.SIGUSR2)
        cut = wait_line(self.args.proxy_log, lines, r"cut (\d+) connections")
        locker.wait(10)
        self.disperse(stop, crowd)
        in_flight = [r for load in self.loads + crowd for r in load.requests if r.sent < t < r.done]
        answers = collections.Counter((r.status, r.code) for r in in_flight)
        return Fault("cut-reset" if reset else "cut-close",
                     f"proxy {'resets' if reset else 'closes'} every connection; {school.name} "
                     f"({len(crowd)} more clients) waiting on a lock",
                     t, t, ["direct", "bouncer"],
                     note=f"{cut or '?'} connections cut; {len(in_flight)} requests in flight, answered "
                          f"{fmt_answers(answers)}", window_start=locked)

    def pg_restart(self):
        start = now()
        subprocess.run(self.pg_ctl + ["restart", "-m", "fast", "-w", "-l", f"{self.args.pgdata}/server.log"],
                       check=True, timeout=60, cwd="/", stdout=subprocess.DEVNULL)
        return Fault("pg-restart", "pg_ctl restart -m fast", start, now(), ["direct", "bouncer"])

    def pg_stop(self):
        start = now()
        subprocess.run(self.pg_ctl + ["stop", "-m", "immediate", "-w"], check=True, timeout=60, cwd="/",
                       stdout=subprocess.DEVNULL)
        down = now()
        time.sleep(self.args.down)
        back = now()
        subprocess.run(self.pg_ctl + ["start", "-w", "-l", f"{self.args.pgdata}/server.log"], check=True,
                       timeout=60, cwd="/", stdout=subprocess.DEVNULL)
        fault = Fault("pg-stop", f"pg_ctl stop -m immediate, {self.args.down:g} s down, start", start, now(),
                      ["direct", "bouncer"])
        fault.down = (down, back)
        return fault

    def pgbouncer_restart(self):
        pid_file = os.path.join(self.args.pgbouncer_dir, "pgbouncer.pid")
        pid = int(open(pid_file).read().strip())
        start = now()
        os.kill(pid, signal.SIGTERM)  # PgBouncer's immediate shutdown
        deadline = now() + 10
        while now() < deadline and os.path.exists(f"/proc/{pid}"):
            time.sleep(0.02)
        subprocess.run(shlex.split(self.args.pgbouncer) + ["-d", os.path.join(self.args.pgbouncer_dir, "pgbouncer.ini")],
                       check=True, timeout=20, cwd="/", stdout=subprocess.DEVNULL)
        return Fault("pgbouncer-restart", "PgBouncer stopped (SIGTERM) and started", start, now(), ["bouncer"])

    def kill(self, name):
        server = self.server[name]
        start = now()
        server.kill()
        server.start()
        return Fault(f"kill-{name}", f"SIGKILL the {name} server, start it again", start, now(), [name])

    def storm(self):
        load = self.loads[2 % len(self.loads)]
        school = load.school
        seconds = self.args.storm
        locker = self.lock(school.name, seconds)
        start = now()
        stop, crowd = self.crowd(school, self.args.storm_clients)
        locker.wait(seconds + 10)
        end = now()
        reqs = self.disperse(stop, crowd)
        answers = collections.Counter((r.status, r.code) for r in reqs)
        others = [r for ld in self.loads if ld is not load for r in ld.requests if start <= r.sent < end and r.ok]
        p99 = percentile([r.done - r.sent for r in others], 0.99)
        return Fault("storm", f"{school.name}'s tables locked {seconds:g} s; {len(crowd)} more clients of it "
                              f"plus its own load", start, end, ["direct", "bouncer"], school=school.name,
                     note=f"{len(reqs)} storm requests answered {fmt_answers(answers)}; "
                          f"other schools meanwhile: {len(others)} answered 2xx, p99 {ms(p99)}")

    def fault(self, name):
        if name == "cut-reset":
            return self.cut(True)
        if name == "cut-close":
            return self.cut(False)
        if name == "pg-restart":
            return self.pg_restart()
        if name == "pg-stop":
            return self.pg_stop()
        if name == "pgbouncer-restart":
            return self.pgbouncer_restart()
        if name in ("kill-direct", "kill-bouncer"):
            return self.kill(name.split("-", 1)[1])
        if name == "storm":
            return self.storm()
        raise ValueError(f"unknown fault {name}")

    def wait_recovered(self, fault):
        """Waits until every affected server answered 2xx (to the school, for a storm)
        after the fault ended."""
        deadline = fault.end + RECOVERY_WAIT
        loads = [ld for ld in self.loads if fault.school in (None, ld.school.name)]
        while now() < deadline:
            seen = set()
            for ld in loads:
                seen |= ld.last_ok(fault.servers, fault.end)
            if seen >= set(fault.servers):
                return True
            time.sleep(0.05)
        return False

    # --- the run --------------------------------------------------------------------------

    def run(self):
        a = self.args
        for s in self.servers:
            s.start()
        for s in self.servers:
            if not s.wait_for("/readyz", 200, 20):
                raise RuntimeError(f"the {s.name} server did not become ready")
        names = [f"soak{i}" for i in range(1, a.schools + 1)]
        made = {}
        errors = []

        def setup(chunk):
            for name in chunk:
                try:
                    made[name] = School(name, self.servers[len(made) % 2].port, a.password)
                except Exception as err:  # reported below
                    errors.append(f"{name}: {err}")
        threads = [threading.Thread(target=setup, args=(names[i::8],)) for i in range(8)]
        t0 = now()
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        if errors or len(made) != len(names):
            raise RuntimeError(f"fixtures: {errors[:3]}")
        print(f"fixtures: {len(names)} schools in {now() - t0:.1f} s (admin login, subject, "
              f"{DEPARTMENTS} departments, a session, {EXAMS} exams, {STUDENTS} students each)", flush=True)

        self.loads = [Load(i, made[n], self.servers, a.rate, self.stop) for i, n in enumerate(names)]
        self.pollers = {s.name: ReadyPoller(s.port, self.stop, every=0.5) for s in self.servers}
        self.began = now()
        self.load_average = [os.getloadavg()[0]]
        for ld in self.loads + list(self.pollers.values()):
            ld.start()
        faults = a.faults.split(",") if a.faults else (
            ALL_FAULTS if a.seconds >= 90 else QUICK_FAULTS)
        warmup, tail = (10.0, 15.0) if a.seconds >= 90 else (3.0, 4.0)
        slot = max(0.0, (a.seconds - warmup - tail)) / max(1, len(faults))
        try:
            for i, name in enumerate(faults):
                at = self.began + warmup + i * slot
                self.stop.wait(max(0.0, at - now()))
                fault = self.fault(name)
                self.faults.append(fault)
                recovered = self.wait_recovered(fault)
                print(f"  {fault.start - self.began:6.1f} s  {fault.name}: {fault.what}"
                      f"{'' if recovered else ' - NOT RECOVERED'}", flush=True)
            self.stop.wait(max(0.0, self.began + a.seconds - now()))
        finally:
            self.stop.set()
            for ld in self.loads + list(self.pollers.values()):
                ld.join(40)
            self.ended = now()
            self.load_average.append(os.getloadavg()[0])

    def shutdown(self):
        """SIGTERM both servers; their exit statuses."""
        return {s.name: s.stop() for s in self.servers}


# cut-reset, cut-close  one school's tables locked (its requests, and 8 more clients', wait
#                      in queries), then the proxy resets (RST) or closes (FIN) every
#                      connection between the servers, PgBouncer and PostgreSQL
# pg-restart           pg_ctl restart -m fast
# storm                one school's tables locked for --storm seconds while 32 more clients
#                      of it send lists and reads: its requests run into
#                      DB_STATEMENT_TIMEOUT_MS (2 s here) or wait for its share of the pool
# kill-direct, kill-bouncer  SIGKILL one server process and start it again at once
# pgbouncer-restart    PgBouncer stopped (SIGTERM, its immediate shutdown) and started
# pg-stop              pg_ctl stop -m immediate, --down seconds without PostgreSQL, start
ALL_FAULTS = ["cut-reset", "pg-restart", "storm", "kill-direct", "pgbouncer-restart", "pg-stop",
              "cut-close", "kill-bouncer"]
QUICK_FAULTS = ["cut-reset", "pg-restart", "kill-direct"]  # SOAK_SECONDS under 90


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def count_lines(path):
    with open(path) as f:
        return sum(1 for _ in f)


def wait_line(path, skip, pattern, timeout=5):
    deadline = now() + timeout
    while now() < deadline:
        with open(path) as f:
            lines = f.read().splitlines()[skip:]
        for line in lines:
            m = re.search(pattern, line)
            if m:
                return m.group(1)
        time.sleep(0.02)
    return None


def ms(seconds):
    return "-" if seconds is None else f"{seconds * 1000:.0f} ms"


def fmt_answers(counter):
    """{(status, code): n} as text."""
    names = {CONNECTION_FAILED: "connection failed", TIMED_OUT: "client timeout"}
    return ", ".join(f"{names.get(st, st)}{' ' + code if code else ''}: {n}"
                     for (st, code), n in sorted(counter.items(), key=lambda kv: (kv[0][0], kv[0][1] or ""))) or "none"


def fmt_statuses(counter):
    names = {CONNECTION_FAILED: "connection failed", TIMED_OUT: "client timeout"}
    return ", ".join(f"{names.get(k, k)}: {v}" for k, v in sorted(counter.items())) or "none"


def check_database(soak, db):
    """(acknowledged, lost, duplicates, foreign rows, details)."""
    loads = soak.loads
    schools = [ld.school.name for ld in loads]

    def union(select):
        return " UNION ALL ".join(select.format(s=s) for s in schools)
    marks = psql(db, union("SELECT '{s}', exam_id, studentadmissionnumber, mark, comment, "
                           "count(*) OVER (PARTITION BY exam_id, studentadmissionnumber) "
                           "FROM {s}.marks WHERE NOT is_deleted"), timeout=120)
    depts = psql(db, union("SELECT '{s}', id, name FROM {s}.departments"), timeout=120)
    sessions = psql(db, union("SELECT '{s}', name, is_active::text, is_deleted::text FROM {s}.academic_sessions"),
                    timeout=120)
    stored = {s: {} for s in schools}
    duplicates, foreign, details = 0, 0, []
    for school, exam, number, mark, comment, count in marks:
        stored[school][("mark", (exam, number))] = (int(mark) if mark else None, comment)
        if int(count) > 1:
            duplicates += 1
            details.append(f"{school}: {count} live marks for exam {exam}, student {number}")
        if not comment.startswith(school + "#"):
            foreign += 1
            details.append(f"{school}: a mark with comment {comment!r}")
    for school, dept, name in depts:
        stored[school][("dept", dept)] = name
        if not name.startswith(school + " "):
            foreign += 1
            details.append(f"{school}: a department named {name!r}")
    names = collections.Counter((school, name) for school, name, _, _ in sessions)
    for (school, name), n in names.items():
        stored[school][("session", name)] = name
        if n > 1:
            duplicates += 1
            details.append(f"{school}: {n} sessions named {name!r}")
        if not name.startswith(school + " "):
            foreign += 1
            details.append(f"{school}: a session named {name!r}")
    active = collections.defaultdict(list)
    for school, name, is_active, _ in sessions:
        if is_active == "true":
            active[school].append(name)
    for school in schools:
        if len(active[school]) > 1:
            duplicates += 1
            details.append(f"{school}: {len(active[school])} active sessions")
        if len(active[school]) == 1:
            stored[school][("active", "active")] = active[school][0]
    acked = lost = 0
    for ld in loads:
        school_acked, school_lost = decide(ld.ledger, stored[ld.school.name])
        acked += school_acked
        lost += len(school_lost)
        for w, holds in school_lost[:3]:
            details.append(f"{ld.school.name}: acknowledged {w.kind} {w.key} = {w.value!r} "
                           f"(answered {w.status} at {w.done - soak.began:.1f} s), the database holds {holds!r}")
    # A session create counts once among acknowledged writes (it is in the ledger twice).
    acked -= sum(1 for ld in loads for w in ld.ledger if w.kind == "session" and w.acked)
    return acked, lost, duplicates, foreign, details


def report(soak, exits, out):
    a = soak.args
    failures = []

    def line(text=""):
        print(text, file=out, flush=True)

    def check(ok, message):
        line(("ok    " if ok else "FAIL  ") + message)
        if not ok:
            failures.append(message)

    reqs = [r for ld in soak.loads for r in ld.requests]
    extra_reqs = [r for s in soak.extra for r in s.requests]
    every = reqs + extra_reqs
    # Recovery: from each fault's end to the first 2xx of every affected server (for the
    # storm, to that school); the fault's window lasts until then, plus a second.
    for f in soak.faults:
        firsts = []
        for server in f.servers:
            done = [r.done for r in reqs if r.ok and r.server == server and r.done >= f.end
                    and f.school in (None, r.school)]
            firsts.append(min(done) if done else None)
        f.per_server = {server: (None if t is None else t - f.end) for server, t in zip(f.servers, firsts)}
        if None not in firsts:
            f.recovery = max(firsts) - f.end
            f.window_end = max(firsts) + 1.0
        else:
            f.window_end = f.end + RECOVERY_WAIT

    def in_fault(r):
        return any(f.window_start <= r.done and r.sent <= f.window_end for f in soak.faults)

    line(f"soak: {len(soak.loads)} schools, {a.rate:g} requests/s each, {soak.ended - soak.began:.0f} s, "
         f"servers: direct (session mode, through the proxy), bouncer (transaction mode, through PgBouncer); "
         f"machine load average (1 min) {soak.load_average[0]:.1f} at the start, {soak.load_average[-1]:.1f} "
         f"at the end, on {os.cpu_count()} cores")
    line()
    line("| fault | at | took | first 2xx after its end | answers in its window |")
    line("|---|---:|---:|---:|---|")
    for f in soak.faults:
        window = [r for r in reqs if f.window_start <= r.done and r.sent <= f.window_end
                  and set([r.server]) & set(f.servers)]
        line(f"| {f.name}: {f.what} | {f.start - soak.began:.1f} s | {f.end - f.start:.2f} s | "
             f"{'never' if f.recovery is None else f'{f.recovery:.2f} s'}"
             + (" (" + ", ".join(f"{k} {'never' if v is None else f'{v:.2f}'}" for k, v in f.per_server.items()) + ")"
                if len(f.servers) > 1 else "") + " | "
             f"{fmt_statuses(collections.Counter(r.status for r in window))} |")
    line()
    for f in soak.faults:
        if f.note:
            line(f"  {f.name}: {f.note}")
    line()
    for f in soak.faults:
        check(f.recovery is not None, f"{f.name}: the affected servers answered 2xx again "
              f"{'never' if f.recovery is None else f'{f.recovery:.2f} s'} after it ended")

    outside = [r for r in reqs if not in_fault(r)]
    inside = [r for r in reqs if in_fault(r)]
    lat_out = [r.done - r.sent for r in outside if r.ok]
    lat_in = [r.done - r.sent for r in inside if r.ok]
    by_op = {op: percentile([r.done - r.sent for r in outside if r.ok and r.op == op], 0.99)
             for op in ("read", "list", "mark", "dept", "session", "activate")}
    line(f"latency of 2xx answers outside the fault windows ({len(lat_out)}): p50 {ms(percentile(lat_out, 0.5))}, "
         f"p99 {ms(percentile(lat_out, 0.99))}, max {ms(max(lat_out) if lat_out else None)}; p99 by operation: "
         + ", ".join(f"{op} {ms(v)}" for op, v in by_op.items()))
    line(f"inside them ({len(lat_in)}): p50 {ms(percentile(lat_in, 0.5))}, p99 {ms(percentile(lat_in, 0.99))}")
    line(f"answers outside the fault windows: {fmt_statuses(collections.Counter(r.status for r in outside))}")
    for r in [r for r in outside if not r.ok and r.status not in (408, 429)][:5]:
        line(f"      outside: {r.op} to {r.server} for {r.school}, sent at {r.sent - soak.began:.2f} s, "
             f"answered {r.status} {r.code or ''} after {r.done - r.sent:.2f} s")
    line(f"answers inside them: {fmt_statuses(collections.Counter(r.status for r in inside))}")
    line(f"the storm's and cuts' extra clients: {fmt_statuses(collections.Counter(r.status for r in extra_reqs))}")

    for f in soak.faults:
        if f.down is None:
            continue
        for name, poller in soak.pollers.items():
            during = [(sent, done, st) for sent, done, st in poller.probes if f.down[0] <= sent and done < f.down[1]]
            slow = max((done - sent for sent, done, _ in during), default=0.0)
            check(during and all(st == 503 for _, _, st in during) and slow <= 2.5,
                  f"{name}: /readyz while PostgreSQL was down: {len(during)} probes, answers "
                  f"{fmt_statuses(collections.Counter(st for _, _, st in during))}, slowest {slow:.2f} s")
    hung = [r for r in every if r.status == TIMED_OUT]
    check(not hung, f"requests still unanswered after the client's 15 s: {len(hung)}")
    other5xx = [r for r in every if r.status >= 500 and r.status != 503]
    no_retry_after = [r for r in every if r.status == 503 and not r.retry_after]
    unexpected = [r for r in every if 400 <= r.status < 500 and r.status not in (408, 429)]
    foreign_answers = [r for r in every if r.foreign]
    check(not other5xx, f"5xx other than 503: {len(other5xx)}"
          + (f" ({fmt_statuses(collections.Counter((r.status, r.op, r.server) for r in other5xx))})" if other5xx else ""))
    check(not no_retry_after, f"503 without Retry-After: {len(no_retry_after)} of "
          f"{sum(1 for r in every if r.status == 503)}")
    check(not unexpected, f"4xx other than 408 and 429: {len(unexpected)}"
          + (f" ({fmt_statuses(collections.Counter((r.status, r.code, r.op) for r in unexpected))})" if unexpected else ""))
    check(not foreign_answers, f"answers carrying another school's rows or another value: {len(foreign_answers)}")

    acked, lost, duplicates, foreign, details = check_database(soak, a.db)
    for d in details[:20]:
        line(f"      {d}")
    writes = [r for r in reqs if r.op in WRITES]
    check(acked > 0 and lost == 0, f"{acked} acknowledged writes of {len(writes)} sent: {lost} lost "
          "(missing, or holding another value than the last acknowledged one)")
    check(duplicates == 0, f"duplicates where uniqueness is promised: {duplicates}")
    check(foreign == 0, f"rows carrying another school's name: {foreign}")
    check(all(code == 0 for code in exits.values()),
          "both servers stopped on SIGTERM with status 0 (" + ", ".join(f"{k}: {v}" for k, v in exits.items()) + ")")
    panics = []
    for s in soak.servers:
        with open(s.log_path, errors="replace") as f:
            log = f.read()
        panics += [ln for ln in log.splitlines() if "panicked" in ln]
        errors = collections.Counter(re.sub(r"request_id=\S+|[0-9a-f-]{36}|\d+(\.\d+)?", "#", ln)[:160]
                                     for ln in log.splitlines() if " ERROR " in ln)
        for text, n in errors.most_common(5):
            line(f"      {s.name} log, {n}x: {text}")
    check(not panics, f"no panic in the server logs ({len(panics)})")
    recoveries = [f.recovery for f in soak.faults if f.recovery is not None]
    worst = max(recoveries) if recoveries else 0.0
    line()
    line(f"soak: {acked} writes acknowledged, {lost} lost, {duplicates} duplicates, "
         f"5xx other than 503: {len(other5xx)}, recovery max {worst:.1f} s")
    return failures


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True, help="directory for server logs and pid files")
    p.add_argument("--schools", type=int, required=True, help="soak1..soakN exist, each with admin@soakI.test")
    p.add_argument("--password", required=True)
    p.add_argument("--seconds", type=float, default=180)
    p.add_argument("--rate", type=float, default=4.0, help="requests per second per school")
    p.add_argument("--faults", default="", help=f"comma-separated, from {','.join(ALL_FAULTS)}")
    p.add_argument("--db", required=True, help="direct URL of the database (checks, locks)")
    p.add_argument("--proxied-db", required=True, help="the database through the proxy")
    p.add_argument("--bouncer-db", required=True, help="the database through PgBouncer")
    p.add_argument("--pg-ctl", required=True, help="pg_ctl command line (run as the cluster's owner)")
    p.add_argument("--pgdata", required=True)
    p.add_argument("--proxy-pid", type=int, required=True)
    p.add_argument("--proxy-log", required=True)
    p.add_argument("--pgbouncer", required=True, help="pgbouncer command line (run as its owner)")
    p.add_argument("--pgbouncer-dir", required=True, help="its run directory (pgbouncer.ini, pgbouncer.pid)")
    p.add_argument("--down", type=float, default=4.0, help="seconds PostgreSQL stays down in pg-stop")
    p.add_argument("--storm", type=float, default=8.0, help="seconds the storm's locks are held")
    p.add_argument("--storm-clients", type=int, default=32)
    p.add_argument("--cut-clients", type=int, default=8, help="clients of the locked school during a cut")
    p.add_argument("--statement-timeout-ms", type=int, default=2000)
    p.add_argument("--report", help="also write the report here")
    p.add_argument("--dump", help="write every request (school, operation, server, times, status) here")
    args = p.parse_args()
    # `timeout` and Ctrl-C: stop the servers on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    soak = Soak(args)
    try:
        soak.run()
        exits = soak.shutdown()
    finally:
        soak.stop.set()
        for s in soak.servers:
            if s.proc is not None and s.proc.poll() is None:
                s.proc.kill()
    outs = [sys.stdout] + ([open(args.report, "w")] if args.report else [])

    class Tee:
        def write(self, text):
            for o in outs:
                o.write(text)

        def flush(self):
            for o in outs:
                o.flush()
    failures = report(soak, exits, Tee())
    if args.dump:
        with open(args.dump, "w") as f:
            f.write("school\top\tserver\tsent\tdone\tstatus\tcode\n")
            for r in sorted((r for ld in soak.loads + soak.extra for r in ld.requests), key=lambda r: r.sent):
                f.write(f"{r.school}\t{r.op}\t{r.server}\t{r.sent - soak.began:.3f}\t{r.done - soak.began:.3f}\t"
                        f"{r.status}\t{r.code or ''}\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
