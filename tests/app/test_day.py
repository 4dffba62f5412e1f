"""A school's day in the app (issue 39): a teacher takes today's register with one absentee
and corrects it, the office sees which classes have not taken theirs, an office user
downloads a class's report cards (one PDF page per student), and a student opens their own
page and card and nothing else. Screenshots of each new page at laptop (1280x800) and phone
(390x844) width go to target/app-shots/day/ (DAY_SHOTS names another folder)."""

import datetime
import os
import pathlib
import re
import subprocess

from playwright.sync_api import expect

from conftest import http, school_token, signed_in, watched_page

SHOTS = pathlib.Path(os.environ.get("DAY_SHOTS", "target/app-shots/day"))
LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
API = "/api/v1/school"


def shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    width = page.viewport_size["width"]
    page.screenshot(path=SHOTS / f"{'phone' if width < 600 else 'laptop'}-{name}.png", full_page=True)
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width + 1, f"{name} scrolls sideways at {width}px ({scroll}px)"


def every(path, token):
    """Every record of a list (all pages)."""
    results, page = [], 1
    while True:
        join = "&" if "?" in path else "?"
        status, _, body = http("GET", f"{path}{join}page_size=200&page={page}", token=token)
        assert status == 200, body
        results += body["results"]
        if not body["next"]:
            return results
        page += 1


def today():
    return datetime.date.today().isoformat()


def teachers_first_class():
    """The demo teacher's first class (by name) and its students; its records of today are
    deleted first, so its register is not taken yet whatever the demo holds."""
    admin = school_token("admin@greenwood.test")
    teacher = school_token("teacher@greenwood.test")
    _, _, me = http("GET", f"{API}/auth/me/", token=teacher)
    mine = {a["academic_class"] for a in every(f"{API}/teacher-assignments/", admin) if a["teacher"] == me["teacher"]["id"]}
    classes = sorted((c for c in every(f"{API}/classes/", admin) if c["id"] in mine), key=lambda c: c["name"])
    klass = classes[0]
    for record in every(f"{API}/classes/{klass['id']}/attendance/?date={today()}", admin):
        status, _, body = http("DELETE", f"{API}/attendance/{record['id']}/", token=admin)
        assert status == 204, body
    students = every(f"{API}/classes/{klass['id']}/students/", admin)
    return klass, students, admin


def test_a_teacher_takes_todays_register_with_one_absentee_and_corrects_it(browser):
    klass, students, admin = teachers_first_class()
    absentee = students[1]
    name = f"{absentee['first_name']} {absentee['last_name']}"
    for viewport in (PHONE, LAPTOP):
        # At phone width the register is taken; at laptop width it is seen again.
        context, page = watched_page(browser, viewport=viewport)
        signed_in(page, "teacher@greenwood.test")
        page.locator("#nav").get_by_role("link", name="Registers").click()
        tile = page.locator(f'article.register-class[data-class="{klass["id"]}"]')
        if viewport is PHONE:
            expect(tile.locator(".badge")).to_have_text("Not taken")
            shot(page, "registers-teacher")
            # Two taps: the section, then the class's register.
            tile.get_by_role("link", name="Take today's register").click()
            rows = page.locator(".register-table tbody tr")
            expect(rows).to_have_count(len(students))
            expect(page.locator('.register-table button[data-status="present"][aria-pressed="true"]')).to_have_count(len(students))
            # One key on the absentee's row: down from the first row, then A.
            rows.first.locator('button[data-status="present"]').focus()
            page.keyboard.press("ArrowDown")
            page.keyboard.press("a")
            row = page.locator(f'.register-table tr[data-student="{absentee["id"]}"]')
            expect(row.locator('button[data-status="absent"]')).to_have_attribute("aria-pressed", "true")
            row.get_by_label(f"Note for {name}").fill("Ill, mother phoned")
            shot(page, "register-draft")
            page.get_by_role("button", name="Save register").click()
            expect(page.get_by_role("status").filter(has_text="Register saved")).to_have_text(
                f"Register saved: {len(students)} students, 1 not present.")
            records = every(f"{API}/classes/{klass['id']}/attendance/?date={today()}", admin)
            assert len(records) == len(students)
            assert {r["student"]: r["status"] for r in records if r["status"] != "present"} == {absentee["id"]: "absent"}
            noted = next(r for r in records if r["student"] == absentee["id"])
            assert noted["note"] == "Ill, mother phoned"
            # Later: the student arrives; one tap corrects that one record.
            page.reload()
            row = page.locator(f'.register-table tr[data-student="{absentee["id"]}"]')
            expect(row.locator('button[data-status="absent"]')).to_have_attribute("aria-pressed", "true")
            expect(page.get_by_role("button", name="Save register")).to_be_hidden()
            row.get_by_role("button", name="Late").click()
            expect(row.locator(".state")).to_have_text("Corrected")
            status, _, corrected = http("GET", f"{API}/attendance/{noted['id']}/", token=admin)
            assert status == 200 and corrected["status"] == "late", corrected
            assert len(every(f"{API}/classes/{klass['id']}/attendance/?date={today()}", admin)) == len(students)
            shot(page, "register-taken")
            # A student with no record of the day (here: deleted) shows as not recorded,
            # not as present; one tap records them.
            late_comer = students[2]
            record = next(r for r in records if r["student"] == late_comer["id"])
            assert http("DELETE", f"{API}/attendance/{record['id']}/", token=admin)[0] == 204
            page.reload()
            row = page.locator(f'.register-table tr[data-student="{late_comer["id"]}"]')
            expect(row.locator(".state")).to_have_text("Not recorded")
            expect(row.locator('button[aria-pressed="true"]')).to_have_count(0)
            row.get_by_role("button", name="Present").click()
            expect(row.locator(".state")).to_have_text("Corrected")
            again = every(f"{API}/classes/{klass['id']}/attendance/?date={today()}&student={late_comer['id']}", admin)
            assert [r["status"] for r in again] == ["present"], again
        else:
            expect(tile.locator(".badge")).to_have_text("Taken")
            expect(tile.locator(".state-line")).to_contain_text("1 late")
            shot(page, "registers-teacher")
            tile.get_by_role("link", name="Open today's register").click()
            expect(page.locator(f'.register-table tr[data-student="{absentee["id"]}"] button[data-status="late"]')).to_have_attribute("aria-pressed", "true")
            shot(page, "register-taken")
        # The week: the class by the last 7 days, today's column showing the correction.
        page.goto(page.url.split("#")[0] + f"#/registers/{klass['id']}/week")
        grid = page.locator(".week-grid")
        expect(grid.locator(f'tr[data-student="{absentee["id"]}"] td').last).to_have_text("L")
        expect(grid.locator("thead th")).to_have_count(8)
        expect(grid.locator(".taken-row td").last).to_have_text("✓")
        shot(page, "register-week")
        assert not page.watch.unexpected(), page.watch.problems
        context.close()


def test_the_office_sees_which_classes_have_not_taken_todays_register(browser):
    office = school_token("office@greenwood.test")
    classes = every(f"{API}/classes/", office)
    taken = {r["academic_class"] for r in every(f"{API}/attendance/?date={today()}", office)}
    missing = [c for c in classes if c["id"] not in taken]
    for viewport in (LAPTOP, PHONE):
        context, page = watched_page(browser, viewport=viewport)
        signed_in(page, "office@greenwood.test")
        page.locator("#nav").get_by_role("link", name="Registers").click()
        expect(page.locator("article.register-class")).to_have_count(len(classes))
        for klass in classes:
            badge = page.locator(f'article.register-class[data-class="{klass["id"]}"] .badge')
            expect(badge).to_have_text("Taken" if klass["id"] in taken else "Not taken")
        notice = page.locator(".notice")
        if missing:
            expect(notice).to_contain_text(f"{len(missing)} of {len(classes)} classes have not taken today's register")
            for klass in missing:
                expect(notice).to_contain_text(klass["name"])
        else:
            expect(notice).to_contain_text("Every class")
        shot(page, "registers-office")
        assert not page.watch.unexpected(), page.watch.problems
        context.close()


def pdf_pages(path):
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))


def test_an_office_user_downloads_a_classs_report_cards(browser):
    office = school_token("office@greenwood.test")
    classes = sorted(every(f"{API}/classes/", office), key=lambda c: c["name"])
    klass = classes[0]
    students = every(f"{API}/classes/{klass['id']}/students/", office)
    active = next(s for s in every(f"{API}/sessions/", office) if s["is_active"])
    term = every(f"{API}/sessions/{active['id']}/exam-sessions/", office)[0]
    for viewport in (PHONE, LAPTOP):
        context, page = watched_page(browser, viewport=viewport, accept_downloads=True)
        signed_in(page, "office@greenwood.test")
        page.locator("#nav").get_by_role("link", name="Report cards").click()
        expect(page.get_by_label("Exam session")).to_be_visible()
        shot(page, "report-cards-picker")
        page.get_by_label("Exam session").select_option(label=f"{active['name']}: {term['name']}")
        page.get_by_role("link", name=klass["name"]).click()
        rows = page.locator(".cards-table tbody tr")
        expect(rows).to_have_count(len(students))
        expect(page.get_by_role("heading", name=f"Report cards: {klass['name']}")).to_be_visible()
        shot(page, "report-cards-class")
        with page.expect_download() as download:
            page.get_by_role("button", name=re.compile("Download the class's PDF")).click()
        path = download.value.path()
        with open(path, "rb") as pdf:
            assert pdf.read(5) == b"%PDF-"
        assert pdf_pages(path) == len(students)
        text = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout
        for student in students:
            assert student["last_name"] in text, student
        expect(page.get_by_role("status")).to_contain_text("Downloaded")
        # One student's card on screen, with its own PDF.
        rows.first.get_by_role("link").click()
        expect(page.get_by_role("heading", name="Report card", exact=True)).to_be_visible()
        expect(page.locator(".card-table tbody tr").first).to_be_visible()
        shot(page, "report-card")
        with page.expect_download() as one:
            page.get_by_role("button", name="Download PDF").click()
        assert pdf_pages(one.value.path()) == 1
        assert not page.watch.unexpected(), page.watch.problems
        context.close()


def test_a_student_opens_their_own_page_and_card_and_nothing_else(browser):
    pupil = school_token("student@greenwood.test")
    _, _, me = http("GET", f"{API}/auth/me/", token=pupil)
    own = me["student"]
    assert own, "the demo student account is linked to a student record"
    admin = school_token("admin@greenwood.test")
    classmates = [s for s in every(f"{API}/classes/{own['academic_class']}/students/", admin) if s["id"] != own["id"]]
    other = classmates[0]
    _, _, sessions = http("GET", f"{API}/sessions/", token=pupil)
    active = next(s for s in sessions["results"] if s["is_active"])
    _, _, terms = http("GET", f"{API}/sessions/{active['id']}/exam-sessions/", token=pupil)
    term = terms["results"][0]
    cards = f"{API}/sessions/{active['id']}/exam-sessions/{term['id']}/report-cards/"
    # The API: their own card and summary; nobody else's, nor the class's.
    assert http("GET", f"{cards}{own['id']}/", token=pupil)[0] == 200
    assert http("GET", f"{cards}{other['id']}/", token=pupil)[0] in (403, 404)
    assert http("GET", f"{cards}?academic_class={own['academic_class']}", token=pupil)[0] in (403, 404)
    assert http("GET", f"{API}/students/{other['id']}/attendance-summary/", token=pupil)[0] in (403, 404)
    assert http("GET", f"{API}/students/{own['id']}/attendance-summary/", token=pupil)[0] == 200
    assert http("GET", f"{API}/students/", token=pupil)[0] == 403
    assert http("GET", f"{API}/students/{other['id']}/", token=pupil)[0] in (403, 404)

    for viewport in (PHONE, LAPTOP):
        context, page = watched_page(browser, viewport=viewport, accept_downloads=True)
        signed_in(page, "student@greenwood.test")
        expect(page.get_by_role("heading", name=f"{own['first_name']} {own['last_name']}")).to_be_visible()
        expect(page.locator("#nav a")).to_have_count(1)  # their page, which is their home
        expect(page.locator("#nav")).not_to_contain_text("Registers")
        expect(page.locator(".attendance")).not_to_contain_text("loading")
        block = page.locator(f'.term-block[data-exam-session="{term["id"]}"]')
        expect(block.locator("tbody tr").first).to_be_visible()
        expect(block.locator("td.grade").first).not_to_have_text("")
        shot(page, "student-page")
        block.get_by_role("link", name="My report card").click()
        expect(page.get_by_role("heading", name="My report card")).to_be_visible()
        expect(page.locator(".card-student")).to_have_text(f"{own['first_name']} {own['last_name']}")
        shot(page, "student-card")
        with page.expect_download() as download:
            page.get_by_role("button", name="Download PDF").click()
        assert pdf_pages(download.value.path()) == 1
        # Another student's card or the staff pages by address: their own page instead.
        page.goto(page.url.split("#")[0] + f"#/report-cards/{active['id']}/{term['id']}/{own['academic_class']}/{other['id']}")
        expect(page.get_by_role("heading", name=f"{own['first_name']} {own['last_name']}")).to_be_visible()
        page.goto(page.url.split("#")[0] + "#/students")
        expect(page.get_by_role("heading", name=f"{own['first_name']} {own['last_name']}")).to_be_visible()
        page.wait_for_load_state("networkidle")
        body = page.locator("main").inner_text()
        mine = f"{own['first_name']} {own['last_name']}"
        for mate in classmates:
            if f"{mate['first_name']} {mate['last_name']}" != mine:
                assert f"{mate['first_name']} {mate['last_name']}" not in body, mate
        assert not page.watch.unexpected(), page.watch.problems
        context.close()
