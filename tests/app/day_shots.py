"""`make app-shots` (shots.py): a school's day at laptop (1280x800) and phone (390x844)
width: registers (a teacher's classes, a register, the week; the office's overview), report
cards (the picker, a class, one card) and a student's own page and card."""

from playwright.sync_api import expect

from conftest import PASSWORD, SCHOOL

WIDTHS = [("laptop", {"width": 1280, "height": 800}), ("phone", {"width": 390, "height": 844})]


def sign_in(page, who):
    page.goto(SCHOOL + "/app/")
    page.get_by_label("E-mail or phone").fill(who)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name="Log out")).to_be_visible()


def day_shots(browser, out):
    for width, viewport in WIDTHS:
        shot = lambda page, name: page.screenshot(path=out / f"{width}-{name}.png", full_page=True)  # noqa: E731
        page = browser.new_page(viewport=viewport)
        sign_in(page, "teacher@greenwood.test")
        page.locator("#nav").get_by_role("link", name="Registers").click()
        tile = page.locator("article.register-class").first
        expect(tile).to_be_visible()
        shot(page, "registers")
        tile.get_by_role("link", name="register").click()
        expect(page.locator(".register-table tbody tr").first).to_be_visible()
        shot(page, "register")
        page.get_by_role("link", name="The week").click()
        expect(page.locator(".week-grid tbody tr").first).to_be_visible()
        shot(page, "register-week")
        page.close()

        page = browser.new_page(viewport=viewport)
        sign_in(page, "office@greenwood.test")
        page.locator("#nav").get_by_role("link", name="Registers").click()
        expect(page.locator(".notice")).to_be_visible()
        shot(page, "registers-office")
        page.locator("#nav").get_by_role("link", name="Report cards").click()
        expect(page.locator("a.class-cards").first).to_be_visible()
        shot(page, "report-cards")
        page.locator("a.class-cards").first.click()
        expect(page.locator(".cards-table tbody tr").first).to_be_visible()
        shot(page, "report-cards-class")
        page.locator(".cards-table tbody tr a").first.click()
        expect(page.locator(".card-table tbody tr").first).to_be_visible()
        shot(page, "report-card")
        page.close()

        page = browser.new_page(viewport=viewport)
        sign_in(page, "student@greenwood.test")
        expect(page.locator(".term-block").first).to_be_visible()
        shot(page, "student-page")
        page.get_by_role("link", name="My report card").first.click()
        expect(page.locator(".card-table tbody tr").first).to_be_visible()
        shot(page, "student-card")
        page.close()
