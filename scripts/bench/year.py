"""The school year's figures (issue 38), against a server scripts/bench/year.sh started:
a students file as CSV and as XLSX (openpyxl), the rollover of school `roll`, and last
year's report cards before and after it. Prints one line per figure."""

import argparse
import io
import json
import os
import time
import urllib.error
import urllib.request

import openpyxl

API = "/api/v1/school"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PASSWORD = "bench-password-1"


class School:
    def __init__(self, port, schema):
        self.base = f"http://127.0.0.1:{port}"
        self.host = f"{schema}.localhost"
        self.token = None
        body = {"identifier": f"admin@{schema}.test", "password": PASSWORD}
        self.token = self.call("POST", "/auth/login/", json.dumps(body).encode(), "application/json")["access"]

    def call(self, method, path, body=None, content_type=None):
        headers = {"Host": self.host, "Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        req = urllib.request.Request(self.base + API + path, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=600) as res:
                return json.load(res)
        except urllib.error.HTTPError as err:
            raise SystemExit(f"{method} {path}: {err.code} {err.read()[:500]!r}")

    def timed(self, *args):
        start = time.perf_counter()
        answer = self.call(*args)
        return time.perf_counter() - start, answer

    def all(self, path):
        return self.call("GET", f"{path}?page_size=200")["results"]


def students(rows):
    """The rows of a students file: accented names, a class of 60 each."""
    forms = [f"Form {level}{chr(64 + k)}" for level in range(1, 13) for k in range(1, 6)]
    names = ["Zoë", "Łukasz", "Jürgen", "René", "Ayşe", "Nuño"]
    return [
        [f"S-{n:05}", names[n % len(names)], f"Dupré-{n}", forms[n % len(forms)]]
        for n in range(1, rows + 1)
    ]


HEADER = ["admission_number", "first_name", "last_name", "academic_class"]


def as_csv(rows):
    lines = [",".join(HEADER)] + [",".join(r) for r in rows]
    return ("\r\n".join(lines) + "\r\n").encode()


def as_xlsx(rows):
    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet()
    sheet.append(HEADER)
    for r in rows:
        sheet.append(r)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def cpu_seconds(pid):
    """The server's CPU time so far (user + system)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def imports(args):
    rows = students(args.rows)
    files = {"csv": (as_csv(rows), "text/csv", "csvs"), "xlsx": (as_xlsx(rows), XLSX, "xlsxs")}
    times = {}
    for fmt, (body, content_type, schema) in files.items():
        school = School(args.port, schema)
        school.call("GET", "/classes/")  # the school's first request binds its connection
        for dry in ("true", "false"):
            cpu = cpu_seconds(args.pid)
            took, answer = school.timed("POST", f"/imports/students/?dry_run={dry}", body, content_type)
            cpu = cpu_seconds(args.pid) - cpu
            assert answer["rows"] == args.rows and answer["created"] == args.rows, answer
            times[fmt, dry] = took
            what = "dry run" if dry == "true" else "import "
            print(f"students {fmt:4} {args.rows} rows {what}  {took:6.2f} s  "
                  f"(server CPU {cpu:.2f} s; {len(body) / 1024:.0f} KiB)")
    for dry, what in (("true", "dry run"), ("false", "import ")):
        print(f"students xlsx/csv {what}          {times['xlsx', dry] / times['csv', dry]:6.2f}x")
    print(f"server peak RSS after the imports   {peak_rss_mib(args.pid):6.1f} MiB")


def report_cards(school, session, exam_session, classes):
    """Seconds to read every class's report cards (JSON), best of three passes."""
    path = f"/sessions/{session}/exam-sessions/{exam_session}/report-cards/"
    best = None
    for _ in range(3):
        start = time.perf_counter()
        for c in classes:
            school.call("GET", f"{path}?academic_class={c['id']}")
        took = time.perf_counter() - start
        best = took if best is None else min(best, took)
    return best


def rollover(args):
    school = School(args.port, "roll")
    session = next(s for s in school.all("/sessions/") if s["is_active"])["id"]
    exam_session = school.all(f"/sessions/{session}/exam-sessions/")[0]["id"]
    classes = school.all("/classes/")
    by_name = {c["name"]: c["id"] for c in classes}
    before = report_cards(school, session, exam_session, classes)
    print(f"report cards of {len(classes)} classes, before   {before:6.2f} s")
    promotions = []
    for c in classes:
        level, stream = c["level"], c["name"][-1]
        to = by_name.get(f"Form {level + 1}{stream}")
        promotions.append({"from_class": c["id"], "to_class": to})
    some = school.call("GET", "/students/?page_size=40")["results"]
    body = {
        "name": "2026/27", "start_date": "2026-09-01", "end_date": "2027-07-31",
        "promotions": promotions,
        "retain": [s["id"] for s in some[:20]], "leave": [s["id"] for s in some[20:40]],
    }
    path = f"/sessions/{session}/rollover/"
    dry_took, dry = school.timed("POST", path, json.dumps({**body, "dry_run": True}).encode(), "application/json")
    plan = dry["plan"]
    total = plan["promoted"] + plan["retained"] + plan["graduated"] + plan["left"]
    print(f"rollover dry run, {total} students    {dry_took:6.2f} s")
    took, applied = school.timed("POST", path, json.dumps(body).encode(), "application/json")
    assert applied["plan"] == plan, "the apply differs from the dry run"
    print(f"rollover apply                      {took:6.2f} s")
    after = report_cards(school, session, exam_session, classes)
    print(f"report cards of {len(classes)} classes, after    {after:6.2f} s")
    print(f"report cards after/before           {after / before:6.2f}x")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--rows", type=int, default=5000)
    args = parser.parse_args()
    print(f"== the school year: a students file of {args.rows} rows; a school's rollover")
    imports(args)
    rollover(args)


if __name__ == "__main__":
    main()
