"""`make console-shots`: the console at laptop and phone width, as PNG files."""

import pathlib
import sys

from playwright.sync_api import expect, sync_playwright

from conftest import BASE, CHROMIUM, ROOT

out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
    for name, viewport in [("laptop", {"width": 1366, "height": 900}), ("phone", {"width": 390, "height": 844})]:
        page = browser.new_page(viewport=viewport)
        page.goto(BASE + "/admin/")
        page.screenshot(path=out / f"{name}-sign-in.png", full_page=True)
        page.get_by_label("E-mail or phone").fill(ROOT[0])
        page.get_by_label("Password").fill(ROOT[1])
        page.get_by_role("button", name="Sign in").click()
        expect(page.locator('tr[data-schema="school3"]')).to_be_visible()
        page.screenshot(path=out / f"{name}-schools.png", full_page=True)
        page.get_by_role("link", name="Users").click()
        expect(page.get_by_role("heading", name="Users")).to_be_visible()
        page.screenshot(path=out / f"{name}-users.png", full_page=True)
        page.close()
    browser.close()
print(f"screenshots in {out}/")
