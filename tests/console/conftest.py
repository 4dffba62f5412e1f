"""Browser tests of the platform console: Playwright (PyPI) driving Debian's Chromium
against a real server and database started by scripts/console-test.sh."""

import json
import os
import urllib.error
import urllib.request

import pytest
from playwright.sync_api import sync_playwright

BASE = os.environ["CONSOLE_URL"]
ROOT = ("root@console.test", os.environ["CONSOLE_PASSWORD"])
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    yield page
    context.close()
    assert not errors, f"script errors on the page: {errors}"


def sign_in(page, identifier=ROOT[0], password=ROOT[1]):
    page.goto(BASE + "/admin/")
    page.get_by_label("E-mail or phone").fill(identifier)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def http(method, path, body=None, host="localhost", token=None, key=None):
    """A plain HTTP call to the server, outside the browser: (status, JSON body)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(BASE + path, data=data, method=method)
    req.add_header("Host", host)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    if key:
        req.add_header("X-API-KEY", key)
    try:
        with urllib.request.urlopen(req) as res:
            raw = res.read()
            return res.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as err:
        raw = err.read()
        return err.code, json.loads(raw) if raw else None
