"""What a new console user ran into (issue 23): no confirmation after creating on a later
page, school pickers limited to the first 200 schools, the API keys search, a favicon
404. Runs after test_console.py: it adds 201 schools."""

import os
import re
import subprocess

from playwright.sync_api import expect

from conftest import BASE, ROOT, http, sign_in


def console_errors(page):
    errors = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" or "Content Security Policy" in msg.text else None)
    return errors


def test_no_favicon_404_or_other_console_error(page):
    errors = console_errors(page)
    sign_in(page)
    expect(page.get_by_role("heading", name="Schools")).to_be_visible()
    page.get_by_role("link", name="Users").click()
    expect(page.get_by_role("heading", name="Users")).to_be_visible()
    icon = page.request.get(BASE + "/favicon.ico")
    assert icon.status == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    assert not errors, errors


def test_beyond_200_schools_pickers_search_and_creations_are_confirmed(page):
    subprocess.run([os.environ["CONSOLE_BIN"], "tenant", "create-many", "--prefix", "bulk", "--count", "201", "--jobs", "2"],
                   check=True, capture_output=True)
    errors = console_errors(page)
    sign_in(page)

    # A new school lands on the last page: the console says so and shows that page.
    form = page.locator("form", has=page.get_by_role("heading", name="Create a school"))
    form.get_by_label("Schema name").fill("zeta")
    form.get_by_label("Name", exact=True).fill("Zeta Academy")
    form.get_by_role("button", name="Create school").click()
    expect(page.get_by_role("status").filter(has_text='School "Zeta Academy" (zeta) created.')).to_be_visible()
    expect(page.locator('tr[data-schema="zeta"]')).to_be_visible()
    expect(page.locator(".pager [role=status]")).to_have_text(re.compile(r"Page (\d+) of \1 "))

    # The 201st school is found by typing, for a new user and for the users filter.
    page.get_by_role("link", name="Users").click()
    users = page.locator("form", has=page.get_by_role("heading", name="Create a user"))
    users.get_by_label("Find a school (None (platform user))").fill("bulk201")
    expect(users.locator("select[name=client]")).to_have_value(http_school_id("bulk201"))
    users.get_by_label("E-mail", exact=True).fill("late@bulk201.test")
    users.get_by_label("Password", exact=True).fill("bulk-pass-123")
    users.get_by_label("teacher", exact=True).check()
    users.get_by_role("button", name="Create user").click()
    expect(page.get_by_role("status").filter(has_text="User late@bulk201.test created.")).to_be_visible()
    expect(page.locator('tr[data-user="late@bulk201.test"]')).to_contain_text("School bulk201")
    page.get_by_label("Find a school (All users)").fill("bulk201")
    expect(page.locator("select[name=client]").last).to_have_value(http_school_id("bulk201"))
    expect(page.locator("tbody tr")).to_have_count(1)

    # An API key for a school beyond the first 200.
    page.get_by_role("link", name="API keys").click()
    keys = page.locator("form", has=page.get_by_role("heading", name="Create an API key"))
    keys.get_by_label("Name", exact=True).fill("late-school-key")
    keys.get_by_label("Find a school (All schools (global key))").fill("bulk200")
    expect(keys.locator("select[name=tenant]")).to_have_value(http_school_id("bulk200"))
    keys.get_by_role("button", name="Create key").click()
    expect(page.locator('tr[data-key="late-school-key"]')).to_contain_text("School bulk200")
    assert not errors, errors


def test_the_api_keys_search_filters(page):
    sign_in(page)
    page.get_by_role("link", name="API keys").click()
    keys = page.locator("form", has=page.get_by_role("heading", name="Create an API key"))
    for name in ["nightly-backup", "grades-export"]:
        keys.get_by_label("Name", exact=True).fill(name)
        keys.get_by_role("button", name="Create key").click()
        expect(page.locator(f'tr[data-key="{name}"]')).to_be_visible()
    page.get_by_label("Search api keys").fill("grades")
    expect(page.locator("tbody tr")).to_have_count(1)
    expect(page.locator('tr[data-key="grades-export"]')).to_be_visible()


def http_school_id(schema):
    token = http("POST", "/api/v1/system/auth/login/", {"identifier": ROOT[0], "password": ROOT[1]})[1]["access"]
    found = http("GET", f"/api/v1/system/tenants/?search={schema}", token=token)[1]["results"]
    return next(t["id"] for t in found if t["schema_name"] == schema)

