"""What a school's staff do in the school app, in a real browser, on the demo school."""

import re
import uuid

from playwright.sync_api import expect

from conftest import MAIN, PASSWORD, SCHOOL, http, school_token, sign_in, signed_in, watched_page


def test_the_app_is_served_safely_on_school_addresses_only():
    status, headers, _ = http("GET", "/app/")
    assert status == 200
    csp = headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp and "unsafe-inline" not in csp
    assert headers["X-Frame-Options"] == "DENY" and headers["Cache-Control"] == "no-cache"
    status, _, _ = http("GET", "/app/", headers={"If-None-Match": headers["ETag"]})
    assert status == 304
    for asset in ["app.js", "resources.js", "year.js", "marks.js", "settings.js", "shared.js", "app.css", "shared.css",
                  "registers.js", "report_cards.js", "student.js", "day.css"]:
        status, headers, _ = http("GET", f"/app/{asset}")
        assert status == 200 and headers["ETag"], asset
    # `/` leads to the app on a school's address and to the console on the main domain.
    status, headers, _ = http("GET", "/")
    assert status == 302 and headers["Location"] == "/app/"
    status, headers, _ = http("GET", "/", host="localhost")
    assert status == 302 and headers["Location"] == "/admin/"
    status, _, body = http("GET", "/app/", host="localhost")
    assert status == 404 and body["code"] == "not_found"
    status, _, _ = http("GET", "/app/", host="unknown.localhost")
    assert status == 404
    for host in ["greenwood.localhost", "localhost"]:
        status, headers, _ = http("GET", "/favicon.ico", host=host)
        assert status == 200 and headers["Content-Type"].startswith("image/svg+xml")


def a_reader_of_exams():
    """A new account whose one role reads the year's sessions, exams, subjects and classes
    and may change nothing (nor read marks): its e-mail. (A student sees their own page
    only, so the demo has no such account.)"""
    admin = school_token("admin@greenwood.test")
    name = f"exam reader {uuid.uuid4().hex[:6]}"
    perms = ["view_academicsession", "view_examsession", "view_exam", "view_subject", "view_academicclass"]
    status, _, role = http("POST", "/api/v1/school/roles/", {"name": name, "permissions": perms}, token=admin)
    assert status == 201, role
    email = f"reader-{uuid.uuid4().hex[:8]}@greenwood.test"
    status, _, user = http("POST", "/api/v1/school/users/", {"email": email, "password": PASSWORD, "first_name": "Rita",
                                                            "last_name": "Reader", "roles": [name]}, token=admin)
    assert status == 201, user
    return email


def go(page, section):
    page.locator("#nav").get_by_role("link", name=section, exact=True).click()


def exam_path(token, name, term="1"):
    """The API path of the active session's exam `name` in exam session `term`."""
    sessions = http("GET", "/api/v1/school/sessions/?page_size=200", token=token)[2]["results"]
    active = next(s for s in sessions if s["is_active"])
    base = f"/api/v1/school/sessions/{active['id']}/exam-sessions/"
    exam_session = next(e for e in http("GET", base, token=token)[2]["results"] if e["term"] == term)
    exams = f"{base}{exam_session['id']}/exams/"
    exam = next(e for e in http("GET", exams + "?page_size=200", token=token)[2]["results"] if e["name"] == name)
    return f"{exams}{exam['id']}/"


def test_a_teacher_enters_marks_with_the_keyboard(page):
    signed_in(page, "teacher@greenwood.test")
    expect(page.locator("#school-name")).to_have_text("Greenwood High")
    # Two clicks from the active session: an exam session, then one of my exams.
    page.get_by_role("link", name="Term 1 examinations").click()
    expect(page.get_by_role("heading", name="Term 1 examinations: my exams")).to_be_visible()
    page.get_by_role("link", name="Mathematics - Form 1 Green").click()
    expect(page.get_by_role("heading", name="Marks: Mathematics - Form 1 Green")).to_be_visible()
    rows = page.locator("tbody tr")
    expect(rows).to_have_count(30)
    expect(page.locator('[data-summary="missing"]')).to_have_text("30")

    # Keyboard only: the first mark cell has the focus; Enter moves down a row.
    expect(rows.nth(0).locator("input[name=mark]")).to_be_focused()
    for mark in ["71", "55", "88", "40", "93"]:
        page.keyboard.type(mark)
        page.keyboard.press("Enter")
    expect(rows.nth(5).locator("input[name=mark]")).to_be_focused()
    for i in range(5):
        expect(rows.nth(i).locator(".state")).to_have_text("saved")
    expect(page.locator('[data-summary="entered"]')).to_have_text("5")
    expect(page.locator('[data-summary="average"]')).to_have_text("69.4")
    # Each mark shows its grade on the school's current scale (71 is a B); the symbol
    # stays the teacher's own, empty until typed.
    expect(rows.nth(0).locator("td.grade")).to_have_text("B")
    expect(rows.nth(0).locator("input[name=symbol]")).to_have_value("")

    # Arrow keys: up goes back a row, right moves to the symbol at the end of the text.
    page.keyboard.press("ArrowUp")
    expect(rows.nth(4).locator("input[name=mark]")).to_be_focused()
    page.keyboard.press("End")
    page.keyboard.press("ArrowRight")
    expect(rows.nth(4).locator("input[name=symbol]")).to_be_focused()
    page.keyboard.press("ArrowDown")

    # Out of range: the error is on that cell, the row is not saved.
    sixth = rows.nth(5)
    page.keyboard.press("ArrowLeft")
    expect(sixth.locator("input[name=mark]")).to_be_focused()
    page.keyboard.type("150")
    page.keyboard.press("Enter")
    expect(sixth.locator(".cell-error").first).to_contain_text("from 0 to 100")
    expect(sixth.locator("input[name=mark]")).to_have_attribute("aria-invalid", "true")
    expect(sixth.locator(".state")).to_have_text("not saved")

    # A reload shows what was saved, and the API agrees.
    page.reload()
    expect(rows.nth(0).locator("input[name=mark]")).to_have_value("71")
    expect(rows.nth(4).locator("input[name=mark]")).to_have_value("93")
    expect(rows.nth(5).locator("input[name=mark]")).to_have_value("")
    token = school_token("teacher@greenwood.test")
    marks = http("GET", exam_path(token, "Mathematics - Form 1 Green") + "marks/?page_size=200", token=token)[2]
    by_student = {m["studentadmissionnumber"]: m["mark"] for m in marks["results"]}
    numbers = [rows.nth(i).get_attribute("data-admission") for i in range(6)]
    assert [by_student.get(n) for n in numbers] == [71, 55, 88, 40, 93, None]


def test_the_marks_sheet_takes_two_requests_from_the_exams_page(page):
    signed_in(page, "teacher@greenwood.test")
    page.get_by_role("link", name="Term 1 examinations").click()
    link = page.get_by_role("link", name="Mathematics - Form 1 Blue")
    expect(link).to_be_visible()
    requests = []
    page.on("request", lambda r: requests.append(r.url) if "/api/" in r.url else None)
    link.click()
    expect(page.locator("tbody tr")).to_have_count(40)
    expect(page.locator('[data-summary="entered"]')).to_have_text("40")
    sheet = [u for u in requests if "academic-settings" not in u]
    assert len(sheet) == 2, sheet


API_TIMINGS = """() => performance.getEntriesByType("resource").filter((e) => e.name.includes("/api/"))
  .map((e) => ({ name: e.name.split("/api/v1/school")[1].split("?")[0], start: e.startTime, end: e.responseEnd }))"""


def named(timings, pattern):
    found = [t for t in timings if re.search(pattern, t["name"])]
    assert len(found) == 1, (pattern, timings)
    return found[0]


def test_the_marks_sheet_loaded_by_its_address_needs_two_rounds_of_requests(page):
    """Loaded by its address, the sheet asks for the exam, its marks and its class's students
    together with `/auth/me/` once the token is refreshed; the school's name and the grading
    scale are asked for after it is drawn."""
    signed_in(page, "teacher@greenwood.test")
    page.get_by_role("link", name="Term 1 examinations").click()
    link = page.get_by_role("link", name="Mathematics - Form 1 Blue")
    expect(link).to_be_visible()
    href = link.get_attribute("href")
    assert re.search(r"\?class=[^&]+$", href), href
    page.goto(SCHOOL + "/app/" + href)
    page.reload()
    expect(page.locator("tbody tr")).to_have_count(40)
    expect(page.locator('[data-summary="entered"]')).to_have_text("40")
    expect(page.locator("#school-name")).to_have_text("Greenwood High")
    page.wait_for_load_state("networkidle")
    timings = page.evaluate(API_TIMINGS)
    refresh, me = named(timings, r"^/auth/refresh/$"), named(timings, r"^/auth/me/$")
    exam = named(timings, r"/exams/[^/]+/$")
    marks = named(timings, r"/exams/[^/]+/marks/$")
    students = named(timings, r"^/classes/[^/]+/students/$")
    name, scale = named(timings, r"^/general-settings/$"), named(timings, r"^/academic-settings/$")
    assert len(timings) == 7, timings
    # Round one: the refresh; round two: who is signed in and the sheet's data, together.
    # (Whether the students' request starts before the exam's answer is the browser's
    # scheduling, not the app's: on a loaded machine the exam answered 0.4 ms first.)
    for t in [me, exam, marks, students]:
        assert t["start"] >= refresh["end"] and t["start"] <= me["end"], (t, refresh, me)
    # Then what the sheet does not need to show.
    for t in [name, scale]:
        assert t["start"] >= max(marks["end"], students["end"], exam["end"], me["end"]), (t, timings)


def test_a_marks_sheet_address_naming_another_class_shows_the_exams_own(page):
    """`?class=` only lets a load ask for the students early: an exam moved to another class
    (or a wrong address) still shows the exam's own class."""
    signed_in(page, "teacher@greenwood.test")
    page.get_by_role("link", name="Term 1 examinations").click()
    link = page.get_by_role("link", name="Mathematics - Form 1 Blue")
    expect(link).to_be_visible()
    href = link.get_attribute("href")
    token = school_token("teacher@greenwood.test")
    classes = http("GET", "/api/v1/school/classes/?page_size=200", token=token)[2]["results"]
    other = next(c for c in classes if c["name"] == "Form 1 Green")
    page.goto(SCHOOL + "/app/" + re.sub(r"\?class=.*$", f"?class={other['id']}", href))
    page.reload()
    expect(page.get_by_role("heading", name="Marks: Mathematics - Form 1 Blue")).to_be_visible()
    expect(page.locator("tbody tr")).to_have_count(40)
    expect(page.locator('[data-summary="entered"]')).to_have_text("40")


def test_a_sheet_address_opened_without_marks_permission_asks_for_nothing_refused(page, browser):
    """A user who may see exams but not marks: the sheet's address says so at once, and no
    request of the load is refused (the early requests follow the tab's last permissions;
    the page fixture fails on any 403 the browser logs). A student gets their own page."""
    reader = a_reader_of_exams()
    signed_in(page, "teacher@greenwood.test")
    page.get_by_role("link", name="Term 1 examinations").click()
    link = page.get_by_role("link", name="Mathematics - Form 1 Blue")
    expect(link).to_be_visible()
    href = link.get_attribute("href")
    for who in [reader, "student@greenwood.test"]:
        context, student = watched_page(browser)
        try:
            signed_in(student, who)
            student.goto(SCHOOL + "/app/" + href)
            for _ in range(2):
                if who == reader:
                    expect(student.get_by_role("alert")).to_have_text("Your roles do not let you see this exam's marks.")
                else:
                    expect(student.get_by_role("heading", name="My marks by term")).to_be_visible()
                student.reload()
            student.wait_for_load_state("networkidle")
            asked = [t["name"] for t in student.evaluate(API_TIMINGS)]
            # The sheet's own reads (a student's page reads their own summary only).
            assert not any("/marks/" in name or re.search(r"/classes/[^/]+/students/", name) for name in asked), asked
            assert not student.watch.unexpected(), student.watch.problems
        finally:
            context.close()


def test_a_teacher_creates_their_exams_for_a_new_term(page):
    signed_in(page, "teacher@greenwood.test")
    page.get_by_role("link", name="Term 2 examinations").click()
    expect(page.get_by_text("You have no exams here yet.")).to_be_visible()
    page.get_by_role("button", name="Create my exams").click()
    expect(page.get_by_role("status").filter(has_text="Created 6 exams")).to_be_visible()
    expect(page.locator("tbody tr")).to_have_count(6)
    expect(page.locator('tr[data-name="Mathematics - Form 1 Blue"]')).to_contain_text("Grace Mensah")
    # Everyone's exams: the other teachers have none in term 2 yet.
    page.get_by_label("Only my exams").uncheck()
    expect(page.get_by_role("heading", name="Term 2 examinations: exams")).to_be_visible()
    expect(page.locator("tbody tr")).to_have_count(6)
    page.get_by_role("button", name="Create my exams").click()
    expect(page.get_by_role("status").filter(has_text="already existed")).to_be_visible()


def test_an_admin_edits_a_department_filters_students_and_creates_a_class(page):
    signed_in(page, "admin@greenwood.test")
    go(page, "Departments")
    row = page.locator('tr[data-name="Sciences"]')
    expect(row).to_contain_text("Grace Mensah")
    row.get_by_role("button", name="Edit").click()
    dialog = page.locator("dialog")
    dialog.get_by_label("Head of department").select_option(label="David Kim (GW-T02)")
    dialog.get_by_role("button", name="Save").click()
    expect(row.locator("td").nth(1)).to_have_text("David Kim (GW-T02)")
    go(page, "Students")
    page.get_by_label("Filter by class").select_option(label="Form 2 Green")
    expect(page.locator(".pager [role=status]")).to_contain_text("25 in all")
    page.get_by_label("Search students").fill("GW0120")
    expect(page.locator("tbody tr")).to_have_count(1)
    go(page, "Classes")
    page.get_by_role("button", name="New class").click()
    dialog.get_by_label("Name").fill("Form 3 Blue")
    dialog.get_by_label("Level (0-100)").fill("300")
    page.watch.expected.append("status of 400")
    dialog.get_by_role("button", name="Create").click()
    expect(dialog.locator('[data-error-for="level"]')).to_be_visible()
    dialog.get_by_label("Level (0-100)").fill("3")
    dialog.get_by_role("button", name="Create").click()
    expect(page.locator('tr[data-name="Form 3 Blue"]')).to_contain_text("3")


def test_an_admin_creates_and_activates_a_session(page):
    signed_in(page, "admin@greenwood.test")
    go(page, "Sessions")
    page.get_by_role("button", name="New session").click()
    dialog = page.locator("dialog")
    dialog.get_by_label("Name").fill("2027/2028")
    dialog.get_by_label("Starts").fill("2027-09-01")
    dialog.get_by_label("Ends").fill("2028-07-15")
    # The dialog says first that the new session becomes the active one.
    expect(dialog.get_by_role("note")).to_contain_text("becomes the school's active session")
    dialog.get_by_role("button", name="Create and make active").click()
    expect(page.get_by_role("status").filter(has_text="2027/2028")).to_be_visible()
    new, previous = page.locator('tr[data-name="2027/2028"]'), page.locator('tr[data-name="2026/2027"]')
    expect(new).to_contain_text("active")
    expect(previous.locator(".badge")).to_have_text("inactive")
    # Activating the previous one again deactivates the new one.
    previous.get_by_role("button", name="Activate").click()
    expect(dialog).to_contain_text("becomes the school's active session")
    dialog.get_by_role("button", name="Activate").click()
    expect(previous.locator(".badge")).to_have_text("active")
    expect(new.locator(".badge")).to_have_text("inactive")


def test_a_user_without_change_permissions_sees_no_edit_actions(page):
    signed_in(page, a_reader_of_exams())
    nav = page.locator("#nav")
    expect(nav.get_by_role("link", name="Sessions")).to_be_visible()
    expect(nav.get_by_role("link", name="Settings")).to_have_count(0)
    expect(nav.get_by_role("link", name="Students")).to_have_count(0)
    go(page, "Sessions")
    expect(page.locator('tr[data-name="2026/2027"]')).to_be_visible()
    expect(page.locator("main button").filter(has_text=re.compile("New|Edit|Activate|Delete"))).to_have_count(0)
    go(page, "Subjects")
    expect(page.locator('tr[data-name="Mathematics"]')).to_be_visible()
    expect(page.locator("main button").filter(has_text=re.compile("New|Edit|Delete"))).to_have_count(0)
    expect(page.locator("main input[type=checkbox]")).to_have_count(0)


def test_a_teacher_sees_no_settings_and_signs_in_by_phone(page):
    signed_in(page, "+1 555 0100 101")
    expect(page.locator("#whoami-name")).to_contain_text("Grace Mensah")
    expect(page.locator("#nav").get_by_role("link", name="Settings")).to_have_count(0)
    page.goto(SCHOOL + "/app/#/settings")
    expect(page.get_by_role("heading", name="2026/2027 (active session)")).to_be_visible()


def test_a_platform_administrator_is_refused_with_the_apis_message(page):
    status, _, problem = http("POST", "/api/v1/school/auth/login/", {"identifier": "root@platform.test", "password": PASSWORD})
    assert status == 403 and problem["code"] == "wrong_auth_layer"
    page.watch.expected.append("status of 403")
    sign_in(page, "root@platform.test")
    expect(page.get_by_role("alert").filter(has_text=problem["detail"])).to_be_visible()
    expect(page.locator("#nav")).to_be_hidden()


def test_subjects_search_create_and_bulk_soft_delete(page):
    signed_in(page, "admin@greenwood.test")
    go(page, "Subjects")
    for name, code in [("Art", "ART"), ("Music", "MUS")]:
        page.get_by_role("button", name="New subject").click()
        dialog = page.locator("dialog")
        dialog.get_by_label("Name").fill(name)
        dialog.get_by_label("Code").fill(code)
        dialog.get_by_label("Department").select_option(label="Humanities")
        dialog.get_by_role("button", name="Create").click()
        expect(page.locator(f'tr[data-name="{name}"]')).to_contain_text("Humanities")
    page.get_by_label("Search subjects").fill("MU")
    expect(page.locator("tbody tr")).to_have_count(1)
    page.get_by_label("Search subjects").fill("")
    expect(page.locator('tr[data-name="Art"]')).to_be_visible()
    page.get_by_label("Select Art").check()
    page.get_by_label("Select Music").check()
    page.get_by_role("button", name="Delete selected").click()
    page.locator("dialog").get_by_role("button", name="Delete").click()
    expect(page.get_by_role("status").filter(has_text="2 deleted")).to_be_visible()
    expect(page.locator('tr[data-name="Art"]')).to_have_count(0)
    token = school_token("admin@greenwood.test")
    subjects = http("GET", "/api/v1/school/subjects/?search=Art&include_deleted=true", token=token)[2]["results"]
    assert [s["is_deleted"] for s in subjects if s["code"] == "ART"] == [True]


def test_the_grading_scale_editor_saves_bands(page):
    signed_in(page, "principal@greenwood.test")
    go(page, "Settings")
    academic = page.get_by_role("form", name="Academic settings")
    expect(academic.locator("[data-band]")).to_have_count(6)
    academic.get_by_role("button", name="Add a band").click()
    band = academic.locator("[data-band]").last
    band.get_by_label("Symbol").fill("A*")
    band.get_by_label("From").fill("95")
    band.get_by_label("To").fill("100")
    # A* overlaps A (80-100) until A ends below it: the API names the band.
    page.watch.expected.append("status of 400")
    academic.get_by_role("button", name="Save academic settings").click()
    expect(academic.locator('[data-error-for="grading_scale"]')).to_contain_text("overlaps band A (80-100)")
    academic.locator("[data-band]").first.get_by_label("To").fill("94")
    academic.get_by_role("button", name="Save academic settings").click()
    expect(academic.get_by_role("status")).to_have_text("Saved.")
    token = school_token("principal@greenwood.test")
    settings = http("GET", "/api/v1/school/academic-settings/", token=token)[2]["results"][0]
    assert settings["grading_scale"][-1] == {"symbol": "A*", "min": 95, "max": 100}
    # The marks sheet grades on the scale as it is now (A ends at 94, A* from 95), as the
    # report card does: the grade of a saved mark is never the one of the day it was typed.
    path = exam_path(token, "Mathematics - Form 1 Blue")  # a sheet the demo filled
    sid, esid, eid = re.findall(r"[0-9a-f-]{36}", path)
    exam = http("GET", path, token=token)[2]
    marks = http("GET", path + "marks/?page_size=200", token=token)[2]["results"]
    graded = sorted((m for m in marks if m["mark"] is not None), key=lambda m: -float(m["mark"]))
    top = graded[0]
    expected = "A*" if float(top["mark"]) >= 95 else "A" if float(top["mark"]) >= 80 else None
    page.goto(f"{SCHOOL}/app/#/sessions/{sid}/exam-sessions/{esid}/exams/{eid}?class={exam['academic_class']}")
    row = page.locator(f'tbody tr[data-admission="{top["studentadmissionnumber"]}"]')
    if expected:
        expect(row.locator("td.grade")).to_have_text(expected)
    page.goto(f"{SCHOOL}/app/#/settings")
    # A gap (A from 85 while B ends at 79) is refused, naming the marks no band grades.
    first = academic.locator("[data-band]").first
    expect(first.get_by_label("From")).to_have_value("80")
    first.get_by_label("From").fill("85")
    page.watch.expected.append("status of 400")
    academic.get_by_role("button", name="Save academic settings").click()
    expect(academic.locator('[data-error-for="grading_scale"]')).to_contain_text("80 to 84")
    first.get_by_label("From").fill("80")
    # A band the API refuses shows the API's reason.
    band.get_by_label("From").fill("300")
    page.watch.expected.append("status of 400")
    academic.get_by_role("button", name="Save academic settings").click()
    expect(academic.locator('[data-error-for="grading_scale"]')).to_contain_text("min <= max")


def test_a_reload_keeps_the_session_a_phone_works_and_logout_revokes(browser):
    context, page = watched_page(browser, viewport={"width": 390, "height": 844}, is_mobile=True)
    signed_in(page, "teacher@greenwood.test")
    page.reload()
    expect(page.get_by_role("heading", name="2026/2027 (active session)")).to_be_visible()
    page.get_by_role("link", name="Term 1 examinations").click()
    page.get_by_role("link", name="Mathematics - Form 1 Blue").click()
    expect(page.locator("tbody tr")).to_have_count(40)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 400, f"the page scrolls sideways at phone width ({width}px)"
    assert page.evaluate("localStorage.length") == 0 and context.cookies() == []
    refresh = page.evaluate("sessionStorage.getItem('school-app.refresh')")
    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    assert page.evaluate("sessionStorage.length") == 0
    status, _, body = http("POST", "/api/v1/school/auth/refresh/", {"refresh": refresh})
    assert status == 401, body
    assert not page.watch.unexpected(), page.watch.problems
    context.close()


def test_an_unavailable_database_shows_a_banner_until_it_is_back(page):
    signed_in(page, "admin@greenwood.test")
    problem = '{"type":"about:blank","title":"Service Unavailable","status":503,"code":"service_unavailable","detail":"the database is unavailable"}'
    down = lambda route: route.fulfill(status=503, content_type="application/problem+json", body=problem, headers={"Retry-After": "1"})
    page.watch.expected.append("status of 503")
    page.route("**/api/v1/school/classes/**", down)
    page.route("**/readyz", down)
    go(page, "Classes")
    banner = page.locator("#banner")
    expect(banner).to_contain_text("unavailable")
    page.unroute("**/api/v1/school/classes/**")
    page.unroute("**/readyz")
    expect(banner).to_be_hidden(timeout=10_000)
    expect(page.locator('tr[data-name="Form 1 Blue"]')).to_be_visible()


def test_the_console_still_lives_on_the_main_domain(page):
    page.goto(MAIN + "/admin/")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
