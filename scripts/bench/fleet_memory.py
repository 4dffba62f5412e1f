"""`make bench-fleet-memory`'s helpers: teacher logins and the wrk script of one pass,
the backends' anonymous memory, and the summary.

  fleet_memory.py prepare --port P --schools N --password PW --threads T --out DIR
  fleet_memory.py memory --db NAME --admin-url URL      (one line: n median_mib max_mib)
  fleet_memory.py pool < METRICS        (one line: schools per connection median max, % borrowed,
                                        connections recycled)
  fleet_memory.py summary FILE...                      (the runs' rows, medians per variant)
"""
import argparse
import concurrent.futures
import json
import statistics
import subprocess
import sys
import urllib.request

API = "/api/v1/school"
# The fixed ids the bench seeds in every school (fleet_memory.sh).
SESSION = "00000000-0000-4000-8000-000000000001"
EXAM_SESSION = "00000000-0000-4000-8000-000000000002"
EXAM = "00000000-0000-4000-8000-000000000005"
EXAMS = f"{API}/sessions/{SESSION}/exam-sessions/{EXAM_SESSION}/exams/"
# Five things a teacher's app reads: report settings, a student search, the exams, an
# exam's marks, attendance.
PATHS = [
    f"{API}/report-settings/",
    f"{API}/students/?search=S-1",
    EXAMS,
    f"{EXAMS}{EXAM}/marks/",
    f"{API}/attendance/",
]


def login(port, school, password):
    body = json.dumps({"identifier": f"teacher@{school}.test", "password": password}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{API}/auth/login/", data=body, method="POST")
    req.add_header("Host", f"{school}.localhost")
    req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req) as res:
        return json.loads(res.read())["access"]


def check(port, school, token):
    """Every path answers 200 for the teacher: the scenario reads, it does not fail."""
    for path in PATHS:
        req = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
        req.add_header("Host", f"{school}.localhost")
        req.add_header("Authorization", f"Bearer {token}")
        with urllib.request.urlopen(req) as res:
            assert res.status == 200, (path, res.status)


def prepare(args):
    schools = [f"fleet{i}" for i in range(1, args.schools + 1)]
    with concurrent.futures.ThreadPoolExecutor(8) as logins:
        tokens = list(logins.map(lambda school: login(args.port, school, args.password), schools))
    check(args.port, schools[0], tokens[0])
    rows = ",\n".join(f'  {{"{s}.localhost", "Bearer {t}"}}' for s, t in zip(schools, tokens))
    paths = ", ".join(json.dumps(p) for p in PATHS)
    per_pass = len(schools) * len(PATHS)
    # Request n of a pass goes to school n mod N, endpoint (n div N): consecutive requests
    # are different schools, and a pass reads every school's five things once. The
    # threads share n (thread t takes t, t+T, ...); the shell ends the pass.
    lua = f"""local targets = {{
{rows}
}}
local paths = {{ {paths} }}
local threads = {args.threads}
local per_pass = {per_pass}
local counter = 0
function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
end
function init(args)
  k = 0
end
function request()
  local n = (k * threads + id) % per_pass
  k = k + 1
  local t = targets[n % #targets + 1]
  local path = paths[math.floor(n / #targets) % #paths + 1]
  return wrk.format("GET", path, {{["Host"] = t[1], ["Authorization"] = t[2]}})
end
"""
    open(f"{args.out}/pass.lua", "w").write(lua)


def pss_anon_kib(pid):
    try:
        for line in open(f"/proc/{pid}/smaps_rollup"):
            if line.startswith("Pss_Anon:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def memory(args):
    # The server's pooled connections: client backends on the bench database, not this
    # query's own and not the server's LISTEN connection.
    query = (
        "SELECT pid FROM pg_stat_activity WHERE datname = '%s' AND backend_type = 'client backend' "
        "AND pid <> pg_backend_pid() AND query NOT ILIKE 'listen%%'" % args.db
    )
    out = subprocess.run(["psql", "-Atc", query, args.admin_url], check=True, capture_output=True, text=True)
    sizes = [kib for kib in (pss_anon_kib(int(pid)) for pid in out.stdout.split()) if kib is not None]
    if not sizes:
        print("0 0 0")
        return
    mib = [kib / 1024 for kib in sizes]
    print(f"{len(mib)} {statistics.median(mib):.1f} {max(mib):.1f}")


def pool(_args):
    """From the server's /metrics: distinct schools per pooled connection (median, max),
    the share of placements that borrowed, the connections recycled so far, and how many
    connections the schools are spread over."""
    schools, placements, recycled, spread = [], {}, 0, 0
    for line in sys.stdin:
        if line.startswith("db_pool_spread_connections "):
            spread = float(line.split()[-1])
        if line.startswith("db_pool_connection_schools{"):
            schools.append(float(line.split()[-1]))
        elif line.startswith("db_pool_placements_total{"):
            kind = "home" if 'connection="home"' in line else "borrowed"
            placements[kind] = float(line.split()[-1])
        elif line.startswith("db_pool_connections_recycled_total{"):
            recycled += float(line.split()[-1])
    total = sum(placements.values()) or 1
    median = statistics.median(schools) if schools else 0
    print(f"{median:.0f} {max(schools, default=0):.0f} {100 * placements.get('borrowed', 0) / total:.1f} {recycled:.0f} {spread:.0f}")


def summary(args):
    """Rows `variant run pass backends median_mib max_mib req_s p99_ms errors`: per variant,
    the median over runs of each pass's figures."""
    rows = [line.split() for path in args.files for line in open(path) if line.strip()]
    variants = sorted({r[0] for r in rows}, key=lambda v: (v != "before", v))
    print(f"{'variant':8} {'pass':>4} {'median MiB':>10} {'max MiB':>8} {'req/s':>7} {'p99 ms':>7} {'errors':>6} {'schools/conn':>12} {'borrowed %':>10} {'recycled':>8} {'spread':>6}  (medians of {len({r[1] for r in rows})} runs)")
    for variant in variants:
        passes = sorted({int(r[2]) for r in rows if r[0] == variant})
        for p in passes:
            mine = [r for r in rows if r[0] == variant and int(r[2]) == p]
            med = lambda i: statistics.median(float(r[i]) for r in mine)
            pool = f"{med(9):>5.0f} / {med(10):<4.0f} {med(11):>10.1f} {med(12):>8.0f}" if all(len(r) > 12 for r in mine) else ""
            if pool and all(len(r) > 13 for r in mine):
                pool += f" {med(13):>6.0f}"
            print(f"{variant:8} {p:>4} {med(4):>10.1f} {med(5):>8.1f} {med(6):>7.0f} {med(7):>7.1f} {int(max(float(r[8]) for r in mine)):>6} {pool}")


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--schools", type=int, required=True)
    p.add_argument("--password", required=True)
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--out", required=True)
    m = sub.add_parser("memory")
    m.add_argument("--db", required=True)
    m.add_argument("--admin-url", required=True)
    sub.add_parser("pool")
    s = sub.add_parser("summary")
    s.add_argument("files", nargs="+")
    args = parser.parse_args()
    {"prepare": prepare, "memory": memory, "pool": pool, "summary": summary}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
