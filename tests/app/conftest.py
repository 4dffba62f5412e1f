"""Browser tests of the school app: Playwright (PyPI) driving Debian's Chromium against a
real server holding the demo schools, started by scripts/app-test.sh."""

import json
import os
import urllib.error
import urllib.request

import pytest
from playwright.sync_api import expect, sync_playwright

PORT = os.environ["APP_PORT"]
SCHOOL = f"http://greenwood.localhost:{PORT}"
MAIN = f"http://127.0.0.1:{PORT}"
PASSWORD = "demo-password-123"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


class Watched:
    """Script errors and console errors (CSP violations and failed loads among them) of a
    page. A test that provokes an error response on purpose names it in `expected`."""

    def __init__(self, page):
        self.problems = []
        self.expected = []
        page.on("pageerror", lambda err: self.problems.append(f"script error: {err}"))
        page.on("console", self.console)

    def console(self, msg):
        if msg.type == "error" or "Content Security Policy" in msg.text:
            self.problems.append(msg.text)

    def unexpected(self):
        return [p for p in self.problems if not any(e in p for e in self.expected)]


def watched_page(browser, **options):
    context = browser.new_context(**({"viewport": {"width": 1366, "height": 900}} | options))
    page = context.new_page()
    page.watch = Watched(page)
    return context, page


@pytest.fixture
def page(browser):
    context, page = watched_page(browser)
    yield page
    problems = page.watch.unexpected()
    context.close()
    assert not problems, f"errors in the browser console: {problems}"


def sign_in(page, identifier, password=PASSWORD, base=SCHOOL):
    page.goto(base + "/")
    page.get_by_label("E-mail or phone").fill(identifier)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def signed_in(page, identifier):
    sign_in(page, identifier)
    expect(page.get_by_role("button", name="Log out")).to_be_visible()


def http(method, path, body=None, host="greenwood.localhost", token=None, headers=None):
    """A plain HTTP call to the server, outside the browser: (status, headers, JSON body)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(MAIN + path, data=data, method=method)
    req.add_header("Host", host)
    for name, value in (headers or {}).items():
        req.add_header(name, value)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(req) as res:
            raw = res.read()
            return res.status, res.headers, parse(raw, res.headers)
    except urllib.error.HTTPError as err:
        raw = err.read()
        return err.code, err.headers, parse(raw, err.headers)


def parse(raw, headers):
    kind = headers.get("Content-Type", "")
    return json.loads(raw) if raw and "json" in kind else raw


def school_token(identifier, host="greenwood.localhost"):
    status, _, body = http("POST", "/api/v1/school/auth/login/", {"identifier": identifier, "password": PASSWORD}, host=host)
    assert status == 200, body
    return body["access"]
