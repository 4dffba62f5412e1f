"""Prepares the bench data over the API and writes one wrk Lua script per scenario."""
import argparse
import json
import urllib.request

API = "/api/v1/school"


def call(port, host, method, path, token=None, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method)
    req.add_header("Host", host)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(req) as res:
        return json.loads(res.read() or b"null")


def login(port, host, email, password):
    return call(port, host, "POST", f"{API}/auth/login/", body={"identifier": email, "password": password})["access"]


def lua_string(value):
    return json.dumps(value)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int)
    parser.add_argument("--schools", type=int)
    parser.add_argument("--password")
    parser.add_argument("--out")
    args = parser.parse_args()
    port, host = args.port, "bench1.localhost"

    admin = login(port, host, "admin@bench1.test", args.password)
    teacher = login(port, host, "teacher@bench1.test", args.password)
    hod = call(port, host, "GET", f"{API}/auth/me/", teacher)["teacher"]["id"]
    subject = call(port, host, "POST", f"{API}/subjects/", admin, {"name": "Maths", "code": "MAT"})["id"]
    for i in range(20):
        call(port, host, "POST", f"{API}/departments/", admin, {"name": f"Department {i}", "hod": hod, "subject": subject})
    session = call(port, host, "POST", f"{API}/sessions/", admin, {"name": "2026", "start_date": "2026-01-01", "end_date": "2026-12-31"})["data"]["id"]
    exam_session = call(port, host, "POST", f"{API}/sessions/{session}/exam-sessions/", admin, {"name": "Finals", "term": "T1"})["id"]
    klass = call(port, host, "POST", f"{API}/classes/", admin, {"name": "Form 1"})["id"]
    exams = f"{API}/sessions/{session}/exam-sessions/{exam_session}/exams/"
    exam = call(port, host, "POST", exams, admin, {"name": "Paper", "subject": subject, "academic_class": klass})["id"]
    for i in range(1, 501):
        call(port, host, "POST", f"{API}/students/", admin, {"admission_number": f"S-{i}", "first_name": "F", "last_name": str(i)})
    confirm = f"{exams}{exam}/marks/confirm-students/"

    targets = []
    for i in range(1, args.schools + 1):
        school = f"bench{i}.localhost"
        targets.append((school, login(port, school, f"teacher@bench{i}.test", args.password)))

    def fixed(name, method, path, token, body=None):
        lines = [f'wrk.method = "{method}"', f"wrk.path = {lua_string(path)}", f'wrk.headers["Host"] = "{host}"']
        if token:
            lines.append(f'wrk.headers["Authorization"] = "Bearer {token}"')
        if body is not None:
            lines += ['wrk.headers["Content-Type"] = "application/json"', f"wrk.body = {lua_string(json.dumps(body))}"]
        open(f"{args.out}/{name}.lua", "w").write("\n".join(lines) + "\n")

    fixed("read", "GET", f"{API}/report-settings/", teacher)
    fixed("list", "GET", f"{API}/departments/?page_size=20", teacher)
    fixed("login", "POST", f"{API}/auth/login/", None, {"identifier": "login@bench1.test", "password": args.password})
    open(f"{args.out}/write.lua", "w").write(
        f'local path = {lua_string(confirm)}\n'
        f'local headers = {{["Host"] = "{host}", ["Authorization"] = "Bearer {teacher}", ["Content-Type"] = "application/json"}}\n'
        "local n = 0\n"
        "request = function()\n"
        "  n = n % 500 + 1\n"
        '  return wrk.format("POST", path, headers, string.format(\'{"studentadmissionnumber": "S-%d", "mark": %d}\', n, n % 100))\n'
        "end\n"
    )
    rows = ",\n".join(f'  {{"{h}", "Bearer {t}"}}' for h, t in targets)
    open(f"{args.out}/mixed-1000.lua", "w").write(
        f"local targets = {{\n{rows}\n}}\n"
        "local i = 0\n"
        "request = function()\n"
        "  i = i % #targets + 1\n"
        "  local t = targets[i]\n"
        f'  return wrk.format("GET", "{API}/report-settings/", {{["Host"] = t[1], ["Authorization"] = t[2]}})\n'
        "end\n"
    )


if __name__ == "__main__":
    main()
