"""A guardian in the school app, on a phone: their children, a term's report card and its
PDF. The guardian and their link to a demo student are made through the API first."""

import uuid

from playwright.sync_api import expect

from conftest import PASSWORD, http, school_token, signed_in, watched_page


def guardian_of_a_demo_student():
    """A new guardian user of Greenwood linked to the first student of the active session's
    first exam session's report cards; answers (e-mail, student)."""
    status, _, login = http("POST", "/api/v1/system/auth/login/", {"identifier": "root@platform.test", "password": PASSWORD}, host="127.0.0.1")
    assert status == 200, login
    root = login["access"]
    _, _, tenants = http("GET", "/api/v1/system/tenants/?search=greenwood", host="127.0.0.1", token=root)
    school = tenants["results"][0]["id"]
    email = f"parent-{uuid.uuid4().hex[:8]}@greenwood.test"
    status, _, user = http("POST", "/api/v1/system/users/", {"email": email, "password": PASSWORD, "client": school, "roles": ["guardian"], "first_name": "Pat", "last_name": "Parent"}, host="127.0.0.1", token=root)
    assert status == 201, user
    admin = school_token("admin@greenwood.test")
    _, _, students = http("GET", "/api/v1/school/students/?page_size=1&search=a", token=admin)
    student = students["results"][0]
    status, _, guardian = http("POST", "/api/v1/school/guardians/", {"first_name": "Pat", "last_name": "Parent", "relationship": "father", "user": user["id"], "students": [student["id"]]}, token=admin)
    assert status == 201, guardian
    return email, student


def test_a_guardian_on_a_phone_opens_a_childs_report_card(browser):
    email, student = guardian_of_a_demo_student()
    context, page = watched_page(browser, viewport={"width": 390, "height": 844}, is_mobile=True, accept_downloads=True)
    signed_in(page, email)
    expect(page.get_by_role("heading", name="My children")).to_be_visible()
    child = page.locator("article.child")
    expect(child).to_have_count(1)
    expect(child.get_by_role("heading", name=f"{student['first_name']} {student['last_name']}")).to_be_visible()
    expect(child.locator(".attendance")).to_contain_text("Attendance:")
    expect(child.locator(".attendance")).not_to_contain_text("loading")
    # Only their page in the navigation: no staff sections.
    expect(page.locator("#nav a")).to_have_count(1)  # their children, which is their home
    child.locator("a.term").first.click()
    expect(page.get_by_role("heading", name="Report card")).to_be_visible()
    expect(page.get_by_role("heading", name=f"{student['first_name']} {student['last_name']}")).to_be_visible()
    expect(page.locator(".card-table tbody tr").first).to_be_visible()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 400, f"the page scrolls sideways at phone width ({width}px)"
    with page.expect_download() as download:
        page.get_by_role("button", name="Download PDF").click()
    path = download.value.path()
    with open(path, "rb") as pdf:
        assert pdf.read(5) == b"%PDF-"
    expect(page.get_by_role("status")).to_have_text("Downloaded")
    assert not page.watch.unexpected(), page.watch.problems
    context.close()
