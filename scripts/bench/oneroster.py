"""The OneRoster figures of scripts/bench/oneroster.sh against a running server holding the
`ors` school: one line per figure, the school's own API beside the OneRoster call where
there is one. Requests run one at a time over one keep-alive connection (loopback)."""

import argparse
import base64
import datetime
import http.client
import json
import statistics
import subprocess
import time

HOST = "ors.localhost"
OR = "/ims/oneroster"


class Server:
    def __init__(self, port):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def call(self, method, path, body=None, token=None, headers=None, form=None):
        """(seconds, status, body bytes)."""
        h = {"Host": HOST, **(headers or {})}
        data = None
        if form is not None:
            data = form.encode()
            h["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None:
            data = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        if token:
            h["Authorization"] = f"Bearer {token}"
        start = time.perf_counter()
        self.conn.request(method, path, body=data, headers=h)
        res = self.conn.getresponse()
        raw = res.read()
        return time.perf_counter() - start, res.status, raw

    def json(self, method, path, body=None, token=None, expect=200, **kw):
        _, status, raw = self.call(method, path, body, token, **kw)
        assert status == expect, (method, path, status, raw[:300])
        return json.loads(raw) if raw else None

    def p50(self, runs, method, path, body=None, token=None, expect=200, each=None):
        times = []
        for i in range(runs):
            payload = each(i) if each else body
            seconds, status, raw = self.call(method, path, payload, token)
            assert status in (expect if isinstance(expect, tuple) else (expect,)), (path, status, raw[:300])
            times.append(seconds)
        return statistics.median(times) * 1000, raw


def peak_rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmHWM")) / 1024


def sql(database, query):
    return subprocess.run(["psql", "-qAt", database, "-c", query], check=True, capture_output=True, text=True).stdout.split()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--client", required=True, help="the CLI's JSON answer")
    ap.add_argument("--database", required=True)
    ap.add_argument("--runs", type=int, default=30)
    a = ap.parse_args()
    s, runs = Server(a.port), a.runs
    client = json.loads(a.client)
    basic = base64.b64encode(f"{client['client_id']}:{client['client_secret']}".encode()).decode()
    tok = s.json("POST", "/api/v1/school/oauth/token/", form="grant_type=client_credentials",
                 headers={"Authorization": f"Basic {basic}"})["access_token"]
    admin = s.json("POST", "/api/v1/school/auth/login/", {"identifier": "admin@ors.test", "password": "bench-password-1"})["access"]
    users = s.json("GET", f"{OR}/rostering/v1p2/users?limit=10000", token=tok)["users"]
    classes = s.json("GET", f"{OR}/rostering/v1p2/classes?limit=10000", token=tok)["classes"]
    items = s.json("GET", f"{OR}/gradebook/v1p2/lineItems?limit=10000", token=tok)["lineItems"]
    marks = int(sql(a.database, "SELECT count(*) FROM ors.marks")[0])
    print(f"== OneRoster: one school, {sum(u['roles'][0]['role'] == 'student' for u in users)} students, "
          f"{sum(u['roles'][0]['role'] == 'teacher' for u in users)} teachers, {len(classes)} classes, "
          f"{len(items)} line items, {marks} results; {runs} requests per figure")

    # A full roster pull.
    ms, raw = s.p50(runs, "GET", f"{OR}/rostering/v1p2/users?limit=10000", token=tok)
    print(f"roster pull users?limit=10000   p50 {ms:8.1f} ms  ({len(raw) / 2**20:.1f} MiB)  target <= 150 ms")
    print(f"server peak RSS                 {peak_rss_mib(a.pid):8.1f} MiB  target < 64 MiB")

    # A delta sync: 10 students renamed through the school API, then asked for.
    since = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(milliseconds=5))
    time.sleep(0.02)
    page = s.json("GET", "/api/v1/school/students/?page_size=10", token=admin)["results"]
    for st in page:
        s.json("PATCH", f"/api/v1/school/students/{st['id']}/", {"first_name": st["first_name"] + "x"}, token=admin)
    delta = f"{OR}/rostering/v1p2/users?filter=" + \
        f"dateLastModified%3E'{since.strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z'"
    ms, raw = s.p50(runs, "GET", delta, token=tok)
    print(f"delta sync, 10 changed users    p50 {ms:8.1f} ms  ({len(json.loads(raw)['users'])} records)  target <= 10 ms")

    # One class's results for one line item, beside the school API's marks of that exam.
    item = items[0]
    path = f"{OR}/gradebook/v1p2/classes/{item['class']['sourcedId']}/lineItems/{item['sourcedId']}/results"
    ms, raw = s.p50(runs, "GET", path, token=tok)
    session, term = sql(a.database, "SELECT academic_session_id, id FROM ors.exam_sessions WHERE id = "
                        f"(SELECT exam_session_id FROM ors.exams WHERE id = '{item['sourcedId']}')")[0].split("|")
    exam = f"/api/v1/school/sessions/{session}/exam-sessions/{term}/exams/{item['sourcedId']}/marks/"
    own, _ = s.p50(runs, "GET", exam + "?page_size=200", token=admin)
    print(f"class results for a line item   p50 {ms:8.1f} ms  ({len(json.loads(raw)['results'])} results)  "
          f"school API marks/ {own:.1f} ms  target <= 5 ms")

    # A PUT result against the school API's confirm-students, on the same exam.
    result = json.loads(raw)["results"][0]
    student = result["student"]["sourcedId"]
    number = next(u["identifier"] for u in users if u["sourcedId"] == student)
    body = lambda i: {"result": {"lineItem": {"sourcedId": item["sourcedId"]},  # noqa: E731
                                 "student": {"sourcedId": student}, "scoreStatus": "fully graded",
                                 "score": 50 + i % 40 + 0.5}}
    put, _ = s.p50(runs, "PUT", f"{OR}/gradebook/v1p2/results/{result['sourcedId']}", token=tok,
                   expect=(200, 201), each=body)
    confirm, _ = s.p50(runs, "POST", exam + "confirm-students/", token=admin,
                       each=lambda i: {"studentadmissionnumber": number, "mark": 50 + i % 40})
    print(f"PUT result                      p50 {put:8.1f} ms  confirm-students {confirm:.1f} ms  "
          f"ratio {put / confirm:.2f}  target <= 1.5")

    # The CSV zip, best of three.
    times = []
    for _ in range(3):
        seconds, status, raw = s.call("GET", "/api/v1/school/oneroster/export/", token=admin)
        assert status == 200, status
        times.append(seconds)
    print(f"CSV zip                         best {min(times):7.2f} s   ({len(raw) / 2**20:.1f} MiB)  target <= 2 s")
    print(f"server peak RSS after all       {peak_rss_mib(a.pid):8.1f} MiB")


if __name__ == "__main__":
    main()
