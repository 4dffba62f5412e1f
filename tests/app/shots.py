"""`make app-shots`: the school app at laptop and phone width, as PNG files, and the marks
sheet measured: time from navigation to a class of 40 on screen, and its requests."""

import pathlib
import statistics
import sys

from playwright.sync_api import expect, sync_playwright

from conftest import CHROMIUM, PASSWORD, SCHOOL

out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
LAST_ROW = "tbody tr:nth-child(40) input[name=mark]"


def sign_in(page, who):
    page.goto(SCHOOL + "/app/")
    page.get_by_label("E-mail or phone").fill(who)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name="Log out")).to_be_visible()


def measure(browser):
    """Median of 7 openings of a 40-student sheet: from the exams page (a click) and by
    loading its address (a reload)."""
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    sign_in(page, "teacher@greenwood.test")
    page.get_by_role("link", name="Term 1 examinations").click()
    link = page.get_by_role("link", name="Mathematics - Form 1 Blue")
    expect(link).to_be_visible()
    sheet_url = SCHOOL + "/app/" + link.get_attribute("href")
    requests = []
    page.on("request", lambda r: requests.append(r.url) if "/api/" in r.url else None)
    clicked, loaded = [], []
    for _ in range(7):
        page.go_back() if "exams/" in page.url else None
        expect(link).to_be_visible()
        requests.clear()
        page.evaluate("window.measureStart = performance.now()")
        link.click()
        page.wait_for_selector(LAST_ROW)
        clicked.append(page.evaluate("performance.now() - window.measureStart"))
    click_requests = len(requests)
    for _ in range(7):
        requests.clear()
        page.goto(sheet_url)
        page.reload()
        page.wait_for_selector(LAST_ROW)
        loaded.append(page.evaluate("performance.now()"))
    load_requests = len(requests)
    page.close()
    print(f"marks sheet, 40 students, opened from the exams page: median {statistics.median(clicked):.0f} ms "
          f"(min {min(clicked):.0f}, max {max(clicked):.0f}), {click_requests} API requests")
    print(f"marks sheet, 40 students, loaded by its address: median {statistics.median(loaded):.0f} ms from navigation "
          f"(min {min(loaded):.0f}, max {max(loaded):.0f}), {load_requests} API requests (refresh, me, school name, exam, students, marks, grading scale)")


with sync_playwright() as p:
    browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
    for name, viewport in [("laptop", {"width": 1366, "height": 900}), ("phone", {"width": 390, "height": 844})]:
        page = browser.new_page(viewport=viewport)
        page.goto(SCHOOL + "/app/")
        page.screenshot(path=out / f"{name}-sign-in.png", full_page=True)
        sign_in(page, "teacher@greenwood.test")
        expect(page.get_by_role("heading", name="2026/2027 (active session)")).to_be_visible()
        page.screenshot(path=out / f"{name}-home.png", full_page=True)
        page.get_by_role("link", name="Term 1 examinations").click()
        expect(page.get_by_role("link", name="Mathematics - Form 1 Green")).to_be_visible()
        page.screenshot(path=out / f"{name}-my-exams.png", full_page=True)
        page.get_by_role("link", name="Mathematics - Form 1 Green").click()
        rows = page.locator("tbody tr")
        expect(rows).to_have_count(30)
        for mark in ["72", "64", "150"]:
            page.keyboard.type(mark)
            page.keyboard.press("Enter")
        expect(rows.nth(2).locator(".cell-error").first).to_be_visible()
        page.keyboard.type("58")
        page.screenshot(path=out / f"{name}-marks-sheet.png")
        page.close()
        page = browser.new_page(viewport=viewport)
        sign_in(page, "admin@greenwood.test")
        for section, ready in [("Sessions", "2026/2027"), ("Subjects", "Mathematics"), ("Settings", None)]:
            page.locator("#nav").get_by_role("link", name=section, exact=True).click()
            if ready:
                expect(page.locator(f'tr[data-name="{ready}"]')).to_be_visible()
            else:
                expect(page.locator("[data-band]").first).to_be_visible()
            page.screenshot(path=out / f"{name}-{section.lower()}.png", full_page=True)
        page.close()
    measure(browser)
    browser.close()
print(f"screenshots in {out}/")
