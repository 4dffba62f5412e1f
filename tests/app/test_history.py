"""History in the school app (API.md 11): "History" on a mark in the marks sheet and on a
student on the students page lists who changed what and when, newest first; only for
users holding view_history (a teacher sees no such button)."""

import re

from playwright.sync_api import expect

from conftest import SCHOOL, http, school_token, signed_in, watched_page


def exam_path(token, name):
    """The API path of the active session's term 1 exam `name`."""
    sessions = http("GET", "/api/v1/school/sessions/?page_size=200", token=token)[2]["results"]
    active = next(s for s in sessions if s["is_active"])
    base = f"/api/v1/school/sessions/{active['id']}/exam-sessions/"
    term = next(e for e in http("GET", base, token=token)[2]["results"] if e["term"] == "1")
    exams = f"{base}{term['id']}/exams/"
    exam = next(e for e in http("GET", exams + "?page_size=200", token=token)[2]["results"] if e["name"] == name)
    return f"{exams}{exam['id']}/", exam


def sheet_address(path, exam):
    """The app's address of the marks sheet of the exam at API path `path`."""
    return SCHOOL + "/app/#" + path.removeprefix("/api/v1/school").rstrip("/") + f"?class={exam['academic_class']}"


def test_history_of_a_mark_and_of_a_student(page, browser):
    admin = school_token("admin@greenwood.test")
    path, exam = exam_path(admin, "Mathematics - Form 1 Blue")
    mark = http("GET", path + "marks/?page_size=1", token=admin)[2]["results"][0]
    old = mark["mark"]
    new = 12 if old != 12 else 13
    status, _, changed = http("PATCH", f"{path}marks/{mark['id']}/", {"mark": new}, token=admin)
    assert status == 200, changed
    entries = http("GET", f"/api/v1/school/history/?record={mark['id']}", token=admin)[2]
    actor = entries["results"][0]["actor"]["name"]
    assert actor, entries
    number = mark["studentadmissionnumber"]
    student = http("GET", f"/api/v1/school/students/?search={number}", token=admin)[2]["results"][0]
    name = f"{student['first_name']} {student['last_name']}"

    # The marks sheet: the mark's History lists its change, newest first.
    signed_in(page, "admin@greenwood.test")
    page.goto(sheet_address(path, exam))
    row = page.locator(f'tr[data-admission="{number}"]')
    expect(row.locator("input[name=mark]")).to_have_value(str(new))
    row.get_by_role("button", name=f"History of {name}'s mark").click()
    dialog = page.locator("dialog")
    expect(dialog.get_by_role("heading", name=f"History of {name}'s mark")).to_be_visible()
    listed = dialog.locator(".history-entry")
    expect(listed).to_have_count(min(entries["count"], 50))
    newest = listed.first
    expect(newest).to_contain_text("mark updated")
    expect(newest).to_contain_text(actor)
    expect(newest).to_contain_text("(user)")
    expect(newest.locator('[data-field="mark"]')).to_have_text(f"mark: {old} → {new}")
    expect(dialog).not_to_contain_text("null")
    expect(dialog.get_by_role("button", name="Cancel")).to_be_hidden()
    page.screenshot(path="target/history-mark.png")
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()

    # A mark saved on the sheet gets its History at once.
    row.locator("input[name=mark]").fill(str(old))
    row.locator("input[name=mark]").press("Enter")
    expect(row.locator(".state")).to_have_text(re.compile(r"^saved"))  # a typed-over mark also offers Undo
    row.get_by_role("button", name=f"History of {name}'s mark").click()
    expect(dialog.locator('.history-entry [data-field="mark"]').first).to_have_text(f"mark: {new} → {old}")
    dialog.get_by_role("button", name="Close").click()

    # The students page: everything about the student, their marks' changes among it.
    page.locator("#nav").get_by_role("link", name="Students", exact=True).click()
    page.get_by_label("Search students").fill(number)
    expect(page.locator("tbody tr")).to_have_count(1)
    page.get_by_role("button", name=f"History of {name}").click()
    expect(dialog.get_by_role("heading", name=f"History of {name}")).to_be_visible()
    expect(dialog.locator('.history-entry[data-resource="mark"]')).to_have_count(2)
    expect(dialog.locator(".history-entry").first).to_contain_text(f"mark: {new} → {old}")
    page.screenshot(path="target/history-student.png")
    dialog.get_by_role("button", name="Close").click()
    # The next dialog (an edit) has its Cancel again.
    page.get_by_role("button", name="Edit").click()
    expect(dialog.get_by_role("button", name="Cancel")).to_be_visible()
    dialog.get_by_role("button", name="Cancel").click()

    # A teacher (no view_history) sees the same sheet without any History button.
    context, teacher = watched_page(browser)
    signed_in(teacher, "teacher@greenwood.test")
    teacher.goto(sheet_address(path, exam))
    expect(teacher.locator(f'tr[data-admission="{number}"] input[name=mark]')).to_have_value(str(old))
    expect(teacher.get_by_role("button", name=re.compile("^History"))).to_have_count(0)
    assert not teacher.watch.unexpected(), teacher.watch.problems
    context.close()
