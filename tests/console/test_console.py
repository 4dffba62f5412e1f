"""What a platform administrator does in the console, in a real browser."""

import json
import re
import tarfile

from playwright.sync_api import expect

from conftest import BASE, ROOT, http, sign_in


def test_the_console_is_served_safely(page):
    res = page.request.get(BASE + "/admin/")
    assert res.status == 200
    csp = res.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    assert "unsafe-inline" not in csp
    assert res.headers["x-frame-options"] == "DENY"
    assert "etag" in res.headers and res.headers["cache-control"] == "no-cache"
    cached = page.request.get(BASE + "/admin/", headers={"If-None-Match": res.headers["etag"]})
    assert cached.status == 304
    # The main domain's root leads to the console; a school's address does not serve it.
    root = page.request.get(BASE + "/", max_redirects=0)
    assert root.status == 302 and root.headers["location"] == "/admin/"
    assert page.request.head(BASE + "/admin/").status == 200
    status, body = http("GET", "/admin/", host="seeded.localhost")
    assert status == 404 and body["code"] == "not_found"


def test_wrong_password_and_wrong_layer_are_explained(page):
    sign_in(page, ROOT[0], "not-the-password")
    expect(page.get_by_role("alert").filter(has_text="password is wrong")).to_be_visible()
    sign_in(page, "teacher@seeded.test", ROOT[1])
    expect(page.get_by_role("alert").filter(has_text="belongs to a school")).to_be_visible()
    expect(page.locator("#nav")).to_be_hidden()


def test_schools_users_and_keys_end_to_end(page):
    sign_in(page)
    expect(page.get_by_role("heading", name="Schools")).to_be_visible()
    # Tokens are not kept where other pages or scripts could reach them later.
    assert page.evaluate("localStorage.length") == 0
    assert page.context.cookies() == []

    # The schema name is checked as the server checks it, next to the field.
    form = page.locator("form", has=page.get_by_role("heading", name="Create a school"))
    form.get_by_label("Schema name").fill("Bad-Name")
    form.get_by_label("Name", exact=True).fill("Bad")
    form.get_by_role("button", name="Create school").click()
    expect(form.locator('[data-error-for="schema_name"]')).to_contain_text("lower-case letter")
    # A server refusal shows next to its field too (a duplicate domain).
    form.get_by_label("Schema name").fill("riverside")
    form.get_by_label("Name", exact=True).fill("Riverside Academy")
    form.get_by_label("Domain", exact=True).fill("seeded.localhost")
    form.get_by_role("button", name="Create school").click()
    expect(form.locator(".form-error, [data-error-for]").filter(has_text="seeded.localhost")).to_be_visible()
    form.get_by_label("Domain", exact=True).fill("riverside.localhost")
    form.get_by_role("button", name="Create school").click()
    row = page.locator('tr[data-schema="riverside"]')
    expect(row).to_contain_text("Riverside Academy")
    expect(row).to_contain_text("riverside.localhost")

    # Search finds it by domain.
    page.get_by_label("Search schools").fill("riverside.local")
    expect(page.locator("tbody tr")).to_have_count(1)

    # Add a domain and make it primary.
    row.get_by_role("button", name="Domains").click()
    dialog = page.locator("dialog")
    dialog.get_by_label("Add a domain").fill("www.riverside.localhost")
    dialog.get_by_label("Make it the primary domain").check()
    dialog.get_by_role("button", name="Add domain").click()
    expect(row).to_contain_text("www.riverside.localhost")

    # Rename.
    row.get_by_role("button", name="Rename").click()
    dialog.get_by_label("Name", exact=True).fill("Riverside High")
    dialog.get_by_role("button", name="Save").click()
    expect(row).to_contain_text("Riverside High")

    # A school user with a role, who can then log in to the school.
    page.get_by_role("link", name="Users").click()
    users = page.locator("form", has=page.get_by_role("heading", name="Create a user"))
    users.get_by_label("E-mail", exact=True).fill("head@riverside.test")
    users.get_by_label("Password", exact=True).fill("riverside-pass-1")
    users.get_by_label("First name", exact=True).fill("Rita")
    users.locator("select[name=client]").select_option(label="Riverside High (riverside)")
    users.get_by_label("admin", exact=True).check()
    users.get_by_role("button", name="Create user").click()
    page.get_by_label("Search users").fill("head@riverside")
    expect(page.locator('tr[data-user="head@riverside.test"]')).to_contain_text("Riverside High")
    status, login = http("POST", "/api/v1/school/auth/login/",
                         {"identifier": "head@riverside.test", "password": "riverside-pass-1"},
                         host="riverside.localhost")
    assert status == 200 and login["roles"] == ["admin"]

    # An API key: shown once, then revoked.
    page.get_by_role("link", name="API keys").click()
    keys = page.locator("form", has=page.get_by_role("heading", name="Create an API key"))
    keys.get_by_label("Name", exact=True).fill("reporting")
    keys.get_by_role("button", name="Create key").click()
    secret = page.locator("#new-key")
    expect(secret).to_be_visible()
    key = secret.text_content()
    assert len(key) >= 32
    status, _ = http("GET", "/api/v1/school/classes/", host="riverside.localhost", key=key)
    assert status == 200
    key_row = page.locator('tr[data-key="reporting"]')
    expect(key_row).to_contain_text(key[:8])
    key_row.get_by_role("button", name="Revoke").click()
    page.locator("dialog").get_by_role("button", name="Revoke").click()
    expect(key_row).to_contain_text("revoked")
    status, body = http("GET", "/api/v1/school/classes/", host="riverside.localhost", key=key)
    assert status == 401 and body["code"] == "invalid_api_key"

    # Deactivate the school: its logins are refused from then on.
    page.get_by_role("link", name="Schools").click()
    row = page.locator('tr[data-schema="riverside"]')
    row.get_by_role("button", name="Deactivate").click()
    expect(row).to_contain_text("inactive")
    status, body = http("POST", "/api/v1/school/auth/login/",
                        {"identifier": "head@riverside.test", "password": "riverside-pass-1"},
                        host="riverside.localhost")
    assert status == 403 and body["code"] == "tenant_inactive"

    # Log out revokes the refresh token.
    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    assert page.evaluate("sessionStorage.length") == 0


def test_a_superuser_exports_a_school_as_an_archive(page):
    sign_in(page)
    row = page.locator('tr[data-schema="seeded"]')
    with page.expect_download() as info:
        row.get_by_role("button", name="Export").click()
    download = info.value
    assert re.fullmatch(r"seeded-\d{8}T\d{6}Z\.tar\.gz", download.suggested_filename)
    with tarfile.open(download.path(), "r:gz") as archive:
        names = archive.getnames()
        manifest = json.load(archive.extractfile("manifest.json"))
    assert names[-2:] == ["manifest.json", "manifest.json.sha256"]
    assert "public/users/000001.tsv" in names
    assert manifest["tenant"]["schema_name"] == "seeded"
    assert manifest["domains"][0]["domain"] == "seeded.localhost"
    expect(row.get_by_role("button", name="Export")).to_be_enabled()


def test_a_reload_keeps_the_session_and_a_phone_width_works(browser):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    sign_in(page)
    expect(page.get_by_role("heading", name="Schools")).to_be_visible()
    page.reload()
    expect(page.get_by_role("heading", name="Schools")).to_be_visible()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 400, f"the page scrolls sideways at phone width ({width}px)"
    # Keyboard only: Tab reaches the navigation links.
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.tagName")
    assert re.match("A|BUTTON|INPUT", focused)
    context.close()


def test_an_unavailable_database_shows_a_banner_until_it_is_back(page):
    sign_in(page)
    expect(page.get_by_role("heading", name="Schools")).to_be_visible()
    problem = '{"type":"about:blank","title":"Service Unavailable","status":503,"code":"service_unavailable","detail":"the database is unavailable"}'
    down = lambda route: route.fulfill(status=503, content_type="application/problem+json", body=problem, headers={"Retry-After": "1"})
    page.route("**/api/v1/system/users/**", down)
    page.route("**/readyz", down)
    page.get_by_role("link", name="Users").click()
    banner = page.locator("#banner")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("unavailable")
    page.unroute("**/api/v1/system/users/**")
    page.unroute("**/readyz")
    expect(banner).to_be_hidden(timeout=10_000)
    expect(page.locator('tr[data-user="root@console.test"]')).to_be_visible()
