"""The API docs page (Swagger UI) under the console's Content-Security-Policy: it renders
the document, nothing on it is blocked, and nothing pasted into it is stored."""


def test_the_docs_page_renders_under_the_strict_policy(browser):
    context = browser.new_context()
    page = context.new_page()
    problems = []
    page.on("pageerror", lambda err: problems.append(str(err)))
    page.on(
        "console",
        lambda msg: problems.append(msg.text)
        if msg.type == "error" or "Content Security Policy" in msg.text
        else None,
    )
    from conftest import BASE

    res = page.goto(BASE + "/api/v1/docs/")
    assert res.status == 200
    assert "script-src 'self'" in res.headers["content-security-policy"]
    page.wait_for_selector(".swagger-ui .info .title", timeout=15000)
    assert "School" in page.inner_text(".swagger-ui .info .title")
    # Swagger UI renders as the page scrolls (waited for without eval: the policy forbids it).
    page.locator(".opblock").first.wait_for(timeout=15000)
    assert page.locator(".opblock-tag").count() >= 2, "the resources are listed"
    page.locator(".auth-wrapper button.authorize").click()
    page.locator(".modal-ux input").first.fill("pasted-token")
    page.locator(".modal-ux button.authorize").first.click()
    stored = page.evaluate("() => JSON.stringify(Object.assign({}, window.localStorage))")
    assert "pasted-token" not in stored, stored
    assert not problems, problems
    context.close()
