"""`make app-shots`: the school app at laptop and phone width, as PNG files, and the marks
sheet measured: time from navigation to a class of 40 on screen, and its requests."""

import os
import pathlib
import re
import statistics
import sys

from playwright.sync_api import expect, sync_playwright

from conftest import CHROMIUM, PASSWORD, SCHOOL
from day_shots import day_shots

out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
LAST_ROW = "tbody tr:nth-child(40) input[name=mark]"


def sign_in(page, who):
    page.goto(SCHOOL + "/app/")
    page.get_by_label("E-mail or phone").fill(who)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("button", name="Log out")).to_be_visible()


def name_of(url):
    """A request's path without the API's base, its ids and its query."""
    path = url.split("/api/v1/school", 1)[-1].split("?", 1)[0]
    return re.sub(r"/[0-9a-f-]{36}|/\d+(?=/)", "/…", path)


# In the page, before its scripts: when the 40th row of a marks sheet is in the document,
# the start of the next frame (the sheet on screen) as `window.sheetShown`; the time of
# the last click as `window.clickedAt`.
WATCH = """
window.watchSheet = () => new Promise((resolve) => {
  const seen = () => document.querySelector(%r);
  const done = () => (window.sheetInDom = performance.now(), requestAnimationFrame(() => resolve(window.sheetShown = performance.now())));
  if (seen()) return done();
  const observer = new MutationObserver(() => { if (seen()) { observer.disconnect(); done(); } });
  observer.observe(document, { childList: true, subtree: true });
});
window.sheet = window.watchSheet();
document.addEventListener("click", (event) => { window.clickedAt = event.timeStamp; }, true);
""" % LAST_ROW

TIMINGS = """(since) => performance.getEntriesByType("resource")
  .map((e) => ({ url: e.name, start: e.startTime - since, end: e.responseEnd - since }))"""


def opening(page, since):
    """One opening: when the sheet showed (ms after `since`, a JavaScript expression) and its
    requests (API or not) relative to it; API requests started after it showed were not
    needed to draw it."""
    page.evaluate("window.sheet")
    since = page.evaluate(since)
    shown = page.evaluate("window.sheetShown") - since
    drawn = page.evaluate("window.sheetInDom") - since
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(100)
    requests = page.evaluate(TIMINGS, since)
    api = [r for r in requests if "/api/" in r["url"]]
    before = [r for r in api if r["start"] < drawn]
    after = [r for r in api if r["start"] >= drawn]
    files = [r for r in requests if "/api/" not in r["url"]]
    return shown, before, after, files


def report(label, openings):
    times = [shown for shown, _, _, _ in openings]
    _, before, after, files = sorted(openings, key=lambda o: o[0])[len(openings) // 2]
    print(f"marks sheet, 40 students, {label}: median {statistics.median(times):.0f} ms "
          f"(min {min(times):.0f}, max {max(times):.0f}, {len(times)} openings); "
          f"{len(before)} API requests before its rows were drawn, {len(after)} after")
    counts = {(len(b), len(a)) for _, b, a, _ in openings}
    if len(counts) > 1:
        print(f"  request counts varied between openings (before, after): {sorted(counts)}")
    if files:
        print(f"  files  {min(f['start'] for f in files):6.0f} → {max(f['end'] for f in files):6.0f} ms  "
              f"{len(files)} (the page, its scripts and styles)")
    for when, requests in [("before", before), ("after", after)]:
        for r in sorted(requests, key=lambda r: r["start"]):
            print(f"  {when:6} {r['start']:6.0f} → {r['end']:6.0f} ms  {name_of(r['url'])}")


def measure(browser, runs):
    """`runs` openings of a 40-student sheet: from the exams page (times from the click
    event) and by loading its address (a reload; times from the start of navigation), each
    to the first frame that holds its 40th row, measured in the page."""
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    page.add_init_script(WATCH)
    sign_in(page, "teacher@greenwood.test")
    page.get_by_role("link", name="Term 1 examinations").click()
    link = page.get_by_role("link", name="Mathematics - Form 1 Blue")
    expect(link).to_be_visible()
    sheet_url = SCHOOL + "/app/" + link.get_attribute("href")
    clicked, loaded = [], []
    for _ in range(runs):
        page.go_back() if "exams/" in page.url else None
        expect(link).to_be_visible()
        page.wait_for_load_state("networkidle")
        page.evaluate("performance.clearResourceTimings(); window.sheetShown = undefined; window.sheet = window.watchSheet(); 0")
        link.click()
        clicked.append(opening(page, "window.clickedAt"))
    page.goto(sheet_url)
    for _ in range(runs):
        page.reload()
        loaded.append(opening(page, "0"))
    page.close()
    report("opened from the exams page (from the click)", clicked)
    report("loaded by its address (from navigation)", loaded)


def report_card_picture(out):
    """The first student's printed report card of term 1, page 1 as a PNG (pdftoppm)."""
    import json
    import subprocess
    import urllib.request

    from conftest import MAIN

    def call(path, token=None, body=None, accept="application/json"):
        req = urllib.request.Request(MAIN + path, data=json.dumps(body).encode() if body else None,
                                     method="POST" if body else "GET")
        req.add_header("Host", "greenwood.localhost")
        req.add_header("Accept", accept)
        if body:
            req.add_header("Content-Type", "application/json")
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        with urllib.request.urlopen(req) as res:
            raw = res.read()
            return json.loads(raw) if accept == "application/json" else raw

    token = call("/api/v1/school/auth/login/", body={"identifier": "admin@greenwood.test", "password": PASSWORD})["access"]
    session = next(s for s in call("/api/v1/school/sessions/", token)["results"] if s["is_active"])
    base = f"/api/v1/school/sessions/{session['id']}/exam-sessions/"
    term = next(e for e in call(base, token)["results"] if e["term"] == "1")
    classes = call("/api/v1/school/classes/", token)["results"]
    cards = f"{base}{term['id']}/report-cards/?academic_class={classes[0]['id']}"
    pdf = call(cards, token, accept="application/pdf")
    (out / "report-cards.pdf").write_bytes(pdf)
    subprocess.run(["pdftoppm", "-png", "-r", "80", "-f", "1", "-l", "1", "-singlefile",
                    str(out / "report-cards.pdf"), str(out / "report-card")], check=True)


with sync_playwright() as p:
    browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
    widths = [("laptop", {"width": 1366, "height": 900}), ("phone", {"width": 390, "height": 844})]
    for name, viewport in [] if os.environ.get("MEASURE_ONLY") else widths:
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
        # The class teacher's remarks of a class, from the exam session's page (leaving the
        # sheet's unsaved marks behind: the sheet asks, and is answered yes).
        page.once("dialog", lambda dialog: dialog.accept())
        page.get_by_role("link", name="Exam session").click()
        page.locator(".remark-links").get_by_role("link", name="Form 1 Blue").click()
        expect(page.locator("textarea[name=remark]").first).to_be_visible()
        page.screenshot(path=out / f"{name}-remarks.png")
        page.close()
        page = browser.new_page(viewport=viewport)
        sign_in(page, "admin@greenwood.test")
        page.screenshot(path=out / f"{name}-admin-menu.png")
        # What each page shows when it is ready: a row by name, or a selector.
        for section, ready in [("Sessions", 'tr[data-name="2026/2027"]'), ("Subjects", 'tr[data-name="Mathematics"]'),
                               ("Settings", "[data-band]"), ("Assignments", "tbody tr"), ("Users", "tbody tr"),
                               ("Import", "#view form, #view h1, #view h2"), ("New school year", "#view form, #view h1, #view h2")]:
            page.locator("#nav").get_by_role("link", name=section, exact=True).click()
            expect(page.locator(ready).first).to_be_visible()
            page.screenshot(path=out / f"{name}-{section.lower().replace(' ', '-')}.png", full_page=True)
        # A class opened to its students.
        page.locator("#nav").get_by_role("link", name="Classes", exact=True).click()
        page.get_by_role("link", name="Form 1 Green", exact=True).click()
        expect(page.locator("tbody tr").first).to_be_visible()
        page.screenshot(path=out / f"{name}-class-students.png", full_page=True)
        # A new exam session: the term is picked from the school's terms.
        page.locator("#nav").get_by_role("link", name="Sessions", exact=True).click()
        page.locator('tr[data-name="2026/2027"]').get_by_role("link").first.click()
        page.get_by_role("button", name="New exam session").click()
        expect(page.locator("dialog").get_by_label("Term")).to_be_visible()
        page.screenshot(path=out / f"{name}-new-exam-session.png")
        page.close()
        # A guardian's page ("My children"), for a guardian made as tests/app/test_family.py does.
        from test_family import guardian_of_a_demo_student

        page = browser.new_page(viewport=viewport)
        sign_in(page, guardian_of_a_demo_student()[0])
        expect(page.get_by_role("heading", name="My children")).to_be_visible()
        expect(page.locator("article.child .attendance")).not_to_contain_text("loading")
        page.screenshot(path=out / f"{name}-my-children.png", full_page=True)
        page.close()
    if not os.environ.get("MEASURE_ONLY"):
        report_card_picture(out)
        day_shots(browser, out)
    measure(browser, int(os.environ.get("MEASURE_RUNS", "7")))
    browser.close()
print(f"screenshots in {out}/")
