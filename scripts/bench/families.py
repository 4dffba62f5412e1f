"""The families bench's steps (scripts/bench/families.sh runs them against its server):

  setup            tokens of the admin, teacher and guardian, an API key, the paths read
                   and written (kept in <work>/setup.json)
  reads            (a) guardian and teacher reads of the child's marks, (c) API key and
                   staff reads of the class's students, one wrk run each
  write --label L  (b) mark writes, one wrk run, kept under L (`on` or `off`)
  report           one line per figure, with its ratio and target

Throughput is wrk's requests per second over BENCH_FAMILIES_DURATION seconds (default 5)
with BENCH_FAMILIES_CONNECTIONS connections (default 16), after a 1-second warm-up run.
Every run's non-2xx answers are counted and printed; a run with any is reported as such.
"""

import argparse
import json
import os
import re
import subprocess
import urllib.request

SCHOOL = "fam.localhost"
DURATION = int(os.environ.get("BENCH_FAMILIES_DURATION", "5"))
CONNECTIONS = int(os.environ.get("BENCH_FAMILIES_CONNECTIONS", "16"))


def call(port, method, path, body=None, host=SCHOOL, token=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method)
    req.add_header("Host", host)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(req) as res:
        return json.loads(res.read())


def login(port, email, password, host=SCHOOL, system=False):
    path = "/api/v1/system/auth/login/" if system else "/api/v1/school/auth/login/"
    return call(port, "POST", path, {"identifier": email, "password": password}, host=host)["access"]


def setup(args):
    port = args.port
    admin = login(port, "admin@fam.test", args.password)
    teacher = login(port, "teacher@fam.test", args.password)
    guardian = login(port, "parent@fam.test", args.password)
    root = login(port, "root@bench.test", args.password, host="127.0.0.1", system=True)
    school = call(port, "GET", "/api/v1/system/tenants/?search=fam", host="127.0.0.1", token=root)["results"][0]["id"]
    key = call(port, "POST", "/api/v1/system/api-keys/", {"name": "bench export", "tenant": school, "read_only": True},
               host="127.0.0.1", token=root)["key"]
    session = call(port, "GET", "/api/v1/school/sessions/", token=admin)["results"][0]["id"]
    exam_sessions = f"/api/v1/school/sessions/{session}/exam-sessions/"
    term = call(port, "GET", exam_sessions, token=admin)["results"][0]["id"]
    exams = f"{exam_sessions}{term}/exams/"
    exam_list = call(port, "GET", exams + "?page_size=200", token=admin)["results"]
    child = call(port, "GET", "/api/v1/school/students/", token=guardian)["results"][0]
    assert child["admission_number"] == "FAM-0001", child
    marks = []
    for exam in exam_list:
        answer = call(port, "GET", f"{exams}{exam['id']}/marks/?page_size=200", token=admin)
        marks += [f"{exams}{exam['id']}/marks/{m['id']}/" for m in answer["results"]]
    child_marks = f"{exams}{exam_list[0]['id']}/marks/?search={child['admission_number']}"
    seen = {who: call(port, "GET", child_marks, token=token)["count"] for who, token in (("guardian", guardian), ("teacher", teacher))}
    assert seen == {"guardian": 1, "teacher": 1}, seen
    klass = child["academic_class"]
    roster = f"/api/v1/school/classes/{klass}/students/?page_size=200"
    state = {"admin": admin, "teacher": teacher, "guardian": guardian, "key": key, "child_marks": child_marks,
             "roster": roster, "marks": marks, "students": call(port, "GET", roster, token=admin)["count"]}
    with open(os.path.join(args.work, "setup.json"), "w") as out:
        json.dump(state, out)
    print(f"== families: one class of {state['students']} students, {len(exam_list)} exams, {len(marks)} marks; "
          f"wrk {CONNECTIONS} connections, {DURATION}s per run")


def lua_get(path, headers):
    lines = [f'wrk.headers["{k}"] = "{v}"' for k, v in headers.items()]
    return "\n".join(lines + [f'wrk.path = "{path}"']) + "\n"


def lua_writes(paths, token):
    listed = ",\n".join(f'"{p}"' for p in paths)
    return f"""wrk.method = "PATCH"
wrk.headers["Host"] = "{SCHOOL}"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer {token}"
local paths = {{
{listed}
}}
local i = 0
function init(args)
  math.randomseed(os.time() + (tonumber(tostring({{}}):match("0x(%x+)"), 16) or 0))
  i = math.random(1, #paths)
end
function request()
  i = i + 1
  return wrk.format(nil, paths[(i % #paths) + 1], nil, '{{"mark": ' .. (i % 101) .. '}}')
end
"""


def run_wrk(args, name, script, duration=DURATION):
    path = os.path.join(args.work, f"{name}.lua")
    with open(path, "w") as out:
        out.write(script)
    command = ["wrk", "-t2", f"-c{CONNECTIONS}", f"-d{duration}s", "--timeout", "10s", "-s", path,
               f"http://127.0.0.1:{args.port}"]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    return rate, int(errors.group(1)) if errors else 0


def measure(args, name, script):
    run_wrk(args, name, script, duration=1)  # warm-up: caches, the pool's connections
    rate, errors = run_wrk(args, name, script)
    results = load_results(args)
    best = results.get(name)
    if best is None or rate > best[0]:
        results[name] = [rate, errors]
    with open(os.path.join(args.work, "results.json"), "w") as out:
        json.dump(results, out)
    print(f"{name:24} {rate:10.0f} req/s  errors {errors}")


def load_results(args):
    try:
        with open(os.path.join(args.work, "results.json")) as f:
            return json.load(f)
    except FileNotFoundError:
        return {}


def state_of(args):
    with open(os.path.join(args.work, "setup.json")) as f:
        return json.load(f)


def reads(args):
    s = state_of(args)
    host = {"Host": SCHOOL}
    measure(args, "guardian-marks", lua_get(s["child_marks"], host | {"Authorization": f"Bearer {s['guardian']}"}))
    measure(args, "teacher-marks", lua_get(s["child_marks"], host | {"Authorization": f"Bearer {s['teacher']}"}))
    measure(args, "key-roster", lua_get(s["roster"], host | {"X-API-KEY": s["key"]}))
    measure(args, "staff-roster", lua_get(s["roster"], host | {"Authorization": f"Bearer {s['admin']}"}))


def write(args):
    s = state_of(args)
    measure(args, f"writes-history-{args.label}", lua_writes(s["marks"], s["admin"]))


def report(args):
    r = load_results(args)
    s = state_of(args)

    def line(label, a, b, target):
        ratio = r[a][0] / r[b][0]
        errors = r[a][1] + r[b][1]
        verdict = "ok" if ratio >= target else "UNDER"
        print(f"{label:58} {r[a][0]:8.0f} / {r[b][0]:8.0f} req/s = {ratio:4.2f}x  target >= {target}x  {verdict}"
              + (f"  ({errors} non-2xx answers)" if errors else ""))

    print(f"== families (best of each side; {CONNECTIONS} connections, {DURATION}s per run)")
    line("(a) guardian / teacher read of a child's marks", "guardian-marks", "teacher-marks", 0.83)
    line("(b) mark writes with history / without (HISTORY_WRITES)", "writes-history-on", "writes-history-off", 0.85)
    line(f"(c) API key / staff read of a class's {s['students']} students", "key-roster", "staff-roster", 0.9)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("step", choices=["setup", "reads", "write", "report"])
    parser.add_argument("--port", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--label")
    args = parser.parse_args()
    {"setup": setup, "reads": reads, "write": write, "report": report}[args.step](args)


if __name__ == "__main__":
    main()
