"""The school's own accounts in the school app (API.md 12): the office adds a teacher in
one form, the teacher signs in; an admin sees and edits the school's users."""

from playwright.sync_api import expect

from conftest import PASSWORD, sign_in, signed_in


def go(page, section):
    page.locator("#nav").get_by_role("link", name=section, exact=True).click()


def test_the_office_creates_a_teacher_who_then_signs_in(page, browser):
    signed_in(page, "office@greenwood.test")
    go(page, "Teachers")
    page.get_by_role("button", name="New teacher").click()
    dialog = page.locator("dialog")
    expect(dialog.get_by_label("User id")).to_have_count(0)
    dialog.get_by_label("First name").fill("Nadia")
    dialog.get_by_label("Last name").fill("Petrov")
    dialog.get_by_label("E-mail").fill("nadia.petrov@greenwood.test")
    dialog.get_by_label("Password", exact=False).fill("short")
    page.watch.expected.append("status of 400")
    dialog.get_by_role("button", name="Create").click()
    expect(dialog.locator('[data-error-for="password"]')).to_contain_text("at least 8")
    dialog.get_by_label("Password", exact=False).fill(PASSWORD)
    dialog.get_by_label("Staff number").fill("GW-T99")
    dialog.get_by_role("button", name="Create").click()
    expect(page.locator('tr[data-name="Nadia Petrov"]')).to_contain_text("GW-T99")
    # The office sees the account among the school's users, as a teacher.
    go(page, "Users")
    page.get_by_label("Search users").fill("Petrov")
    row = page.locator('tr[data-name="Nadia Petrov"]')
    expect(row).to_contain_text("teacher")
    expect(row).to_contain_text("never")
    expect(row.get_by_role("button", name="Edit")).to_have_count(0)

    context = browser.new_context(viewport={"width": 1366, "height": 900})
    teacher = context.new_page()
    sign_in(teacher, "nadia.petrov@greenwood.test")
    expect(teacher.locator("#whoami-name")).to_contain_text("Nadia Petrov (teacher)")
    context.close()


def test_an_admin_deactivates_and_reactivates_a_user(page):
    signed_in(page, "admin@greenwood.test")
    go(page, "Users")
    page.get_by_label("Search users").fill("student@greenwood.test")
    row = page.locator("tbody tr").first
    expect(row).to_contain_text("student")
    row.get_by_role("button", name="Edit").click()
    dialog = page.locator("dialog")
    dialog.get_by_label("Active (may sign in)").uncheck()
    dialog.get_by_role("button", name="Save").click()
    expect(row).to_contain_text("deactivated")
    row.get_by_role("button", name="Edit").click()
    dialog.get_by_label("Active (may sign in)").check()
    dialog.get_by_role("button", name="Save").click()
    expect(row).to_contain_text("active")
