"""The Integrations page (issue 37): an admin connects an LMS by OneRoster 1.2: a client
created with its secret shown once, the addresses to paste, the CSV zip, a revocation.
And one gradebook: a result the LMS PUTs shows in the marks sheet, a mark typed in the
sheet reads as a result."""

import base64
import io
import json
import re
import urllib.error
import urllib.parse
import urllib.request
import zipfile

from playwright.sync_api import expect

from conftest import MAIN, SCHOOL, http, school_token, signed_in

GRADEBOOK = "/ims/oneroster/gradebook/v1p2"
ROSTER = "/ims/oneroster/rostering/v1p2"


def go(page, section):
    page.locator("#nav").get_by_role("link", name=section, exact=True).click()


def oneroster_token(client_id, secret):
    """(status, body) of the client-credentials grant with HTTP Basic."""
    basic = base64.b64encode(f"{client_id}:{secret}".encode()).decode()
    req = urllib.request.Request(MAIN + "/api/v1/school/oauth/token/", method="POST",
                                 data=urllib.parse.urlencode({"grant_type": "client_credentials"}).encode())
    req.add_header("Host", "greenwood.localhost")
    req.add_header("Authorization", f"Basic {basic}")
    req.add_header("Content-Type", "application/x-www-form-urlencoded")
    try:
        with urllib.request.urlopen(req) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def admin_client(scopes=None):
    """A client made through the API by the admin, and its bearer token."""
    admin = school_token("admin@greenwood.test")
    body = {"name": "Test LMS"} | ({"scopes": scopes} if scopes else {})
    status, _, client = http("POST", "/api/v1/school/oauth-clients/", body, token=admin)
    assert status == 201, client
    status, token = oneroster_token(client["client_id"], client["client_secret"])
    assert status == 200, token
    return token["access_token"]


def test_an_admin_connects_an_lms_on_the_integrations_page(page):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=SCHOOL)
    signed_in(page, "admin@greenwood.test")
    go(page, "Integrations")
    expect(page.get_by_role("heading", name="Integrations")).to_be_visible()
    # The addresses to paste into Google Classroom, each with a copy button.
    expect(page.get_by_label("OneRoster base URL", exact=True)).to_have_value(f"{SCHOOL}/ims/oneroster")
    expect(page.get_by_label("Token URL", exact=True)).to_have_value(f"{SCHOOL}/api/v1/school/oauth/token/")
    page.get_by_role("button", name="Copy oneroster base url").click()
    assert page.evaluate("navigator.clipboard.readText()") == f"{SCHOOL}/ims/oneroster"

    # A client with five of the six scopes; its secret is shown once.
    page.get_by_role("button", name="New integration client").click()
    dialog = page.locator("dialog")
    dialog.get_by_label("Name (e.g. Google Classroom)").fill("Google Classroom")
    dialog.get_by_label("Gradebook: delete", exact=False).uncheck()
    dialog.get_by_role("button", name="Create").click()
    secret_card = page.locator("section.once")
    expect(secret_card).to_contain_text('Client "Google Classroom" created')
    client_id = secret_card.get_by_label("Client ID", exact=True).input_value()
    secret = secret_card.get_by_label("Client secret", exact=True).input_value()
    assert client_id and len(secret) >= 32
    secret_card.get_by_role("button", name="Copy client secret").click()
    expect(secret_card.locator('[data-copy="client_secret"] [role=status]')).to_have_text("Copied.")
    assert page.evaluate("navigator.clipboard.readText()") == secret
    row = page.locator('tr[data-name="Google Classroom"]')
    expect(row).to_contain_text(client_id)
    expect(row).to_contain_text("gradebook.createput")
    expect(row).not_to_contain_text("gradebook.delete")
    expect(row).to_contain_text("never")
    expect(row).to_contain_text("active")

    # The LMS uses it; the page shows when it was last used, never the secret again.
    status, token = oneroster_token(client_id, secret)
    assert status == 200, token
    status, _, orgs = http("GET", f"{ROSTER}/orgs", token=token["access_token"])
    assert status == 200 and orgs["orgs"][0]["name"] == "Greenwood High", orgs
    page.reload()
    expect(row).not_to_contain_text("never")
    expect(page.locator("section.once")).to_have_count(0)
    expect(page.locator("body")).not_to_contain_text(secret)

    # Revoked after a confirmation: its token stops working at once.
    row.get_by_role("button", name="Revoke Google Classroom").click()
    expect(dialog).to_contain_text("Its tokens stop working at once")
    dialog.get_by_role("button", name="Revoke").click()
    expect(row).to_contain_text("revoked")
    expect(row.get_by_role("button", name="Revoke Google Classroom")).to_have_count(0)
    status, _, body = http("GET", f"{ROSTER}/orgs", token=token["access_token"])
    assert status == 401 and body["imsx_codeMajor"] == "failure", body


def test_the_integrations_page_downloads_the_oneroster_csv_zip(page):
    signed_in(page, "admin@greenwood.test")
    go(page, "Integrations")
    with page.expect_download() as info:
        page.get_by_role("button", name="Download OneRoster CSV (zip)").click()
    download = info.value
    assert download.suggested_filename == "oneroster.zip"
    with open(download.path(), "rb") as f:
        archive = zipfile.ZipFile(io.BytesIO(f.read()))
    names = set(archive.namelist())
    assert {"manifest.csv", "users.csv", "classes.csv", "results.csv"} <= names, names
    users = archive.read("users.csv").decode().splitlines()
    assert users[0].startswith("sourcedId,status,dateLastModified,enabledUser")
    assert len(users) > 100
    expect(page.locator(".connect .sheet-actions [role=status]")).to_contain_text("Downloaded oneroster.zip")


def test_a_teacher_sees_no_integrations(page):
    signed_in(page, "teacher@greenwood.test")
    expect(page.locator("#nav").get_by_role("link", name="Integrations")).to_have_count(0)


def test_a_result_put_by_the_lms_shows_in_the_marks_sheet_and_a_typed_mark_reads_back(page):
    token = admin_client()
    flt = urllib.parse.quote("title~'Form 2 Green'")
    items = http("GET", f"{GRADEBOOK}/lineItems?limit=1000&filter={flt}", token=token)[2]["lineItems"]
    item = next(i for i in items if i["title"].startswith("History"))
    term = item["gradingPeriod"]["sourcedId"].removesuffix(".gp")
    session = http("GET", f"{ROSTER}/academicSessions/{term}", token=token)[2]["academicSession"]["parent"]["sourcedId"]
    cls = item["class"]["sourcedId"]
    students = http("GET", f"{ROSTER}/classes/{cls}/students", token=token)[2]["users"]
    first, second, third = sorted(students, key=lambda s: s["identifier"])[:3]

    def put(sid, student, body):
        result = {"lineItem": {"sourcedId": item["sourcedId"]}, "student": {"sourcedId": student["sourcedId"]}} | body
        status, _, answer = http("PUT", f"{GRADEBOOK}/results/{sid}", {"result": result}, token=token)
        assert status in (200, 201), answer

    put("lms-sheet-1", first, {"scoreStatus": "fully graded", "score": 67.5, "comment": "From the LMS"})
    put("lms-sheet-2", second, {"scoreStatus": "exempt", "score": None})

    signed_in(page, "admin@greenwood.test")
    page.goto(f"{SCHOOL}/app/#/sessions/{session}/exam-sessions/{term}/exams/{item['sourcedId']}?class={cls.split('.')[0]}")
    expect(page.get_by_role("heading", name=f"Marks: {item['title']}")).to_be_visible()
    row = lambda s: page.locator(f'tbody tr[data-admission="{s["identifier"]}"]')  # noqa: E731
    # 67.5 is the mark 68 (half away from zero); exempt without a score is an empty mark.
    expect(row(first).locator("input[name=mark]")).to_have_value("68")
    expect(row(second).locator("input[name=mark]")).to_have_value("")

    # A mark typed in the sheet reads as the result.
    cell = row(third).locator("input[name=mark]")
    cell.fill("73")
    cell.press("Enter")
    expect(row(third).locator(".state")).to_have_text(re.compile(r"^saved"))  # a typed-over mark also offers Undo
    flt = urllib.parse.quote(f"student.sourcedId='{third['sourcedId']}' AND lineItem.sourcedId='{item['sourcedId']}'")
    results = http("GET", f"{GRADEBOOK}/results?filter={flt}", token=token)[2]["results"]
    assert [(r["score"], r["scoreStatus"]) for r in results] == [(73, "fully graded")], results
    # And the LMS's own result reads back exactly as it sent it.
    mine = http("GET", f"{GRADEBOOK}/results/lms-sheet-1", token=token)[2]["result"]
    assert (mine["score"], mine["comment"]) == (67.5, "From the LMS"), mine
