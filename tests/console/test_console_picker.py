"""The school pickers of "Create a user" and "Create an API key" (issue 39): the select is
named "School" by its own label, the search box by its own name; a late first list does not
replace the answer to what was typed."""

from playwright.sync_api import expect

from conftest import sign_in


def test_the_school_select_is_named_school_and_the_search_apart(page):
    sign_in(page)
    page.get_by_role("link", name="Users").click()
    users = page.locator("form", has=page.get_by_role("heading", name="Create a user"))
    school = users.get_by_label("School", exact=True)
    expect(school).to_have_count(1)
    assert school.evaluate("e => e.tagName") == "SELECT"
    expect(users.get_by_role("combobox", name="School", exact=True)).to_be_visible()
    expect(users.get_by_role("searchbox", name="Find a school (None (platform user))")).to_be_visible()
    page.get_by_role("link", name="API keys").click()
    keys = page.locator("form", has=page.get_by_role("heading", name="Create an API key"))
    expect(keys.get_by_role("combobox", name="School", exact=True)).to_be_visible()


def test_a_first_list_arriving_after_typing_keeps_the_searchs_answer(page):
    sign_in(page)
    held = []
    # Hold the picker's first (unfiltered) list until the typed search has answered.
    first_list = lambda url: url.endswith("/api/v1/system/tenants/?page=1&page_size=50")  # noqa: E731
    page.route(first_list, lambda route: held.append(route))
    page.get_by_role("link", name="Users").click()
    users = page.locator("form", has=page.get_by_role("heading", name="Create a user"))
    users.get_by_role("searchbox", name="Find a school (None (platform user))").fill("seeded")
    school = users.get_by_role("combobox", name="School", exact=True)
    expect(school.locator("option", has_text="seeded")).to_have_count(1)
    expect(school).not_to_have_value("")
    for route in held:
        route.continue_()
    page.wait_for_timeout(300)
    expect(school.locator("option", has_text="seeded")).to_have_count(1)
    expect(school).not_to_have_value("")
