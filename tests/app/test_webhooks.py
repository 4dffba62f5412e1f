"""Webhooks in the school app (API.md 9): an admin subscribes a receiver on loopback (the
test server runs with WEBHOOK_ALLOW_INSECURE=true), sees the secret once, sees the
deliveries (a refused one and its retry), sends a test event and sends a delivery again;
a disabled subscription says so."""

import json
import os
import subprocess
import sys
import tempfile
import time

import pytest
from playwright.sync_api import expect

from conftest import http, school_token, signed_in

RECEIVER = os.path.join(os.path.dirname(__file__), "..", "webhooks", "receiver.py")


@pytest.fixture
def receiver():
    """tests/webhooks/receiver.py, refusing its first delivery: (port, read the log)."""
    log = tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False).name
    proc = subprocess.Popen([sys.executable, RECEIVER, log, "1"], stdout=subprocess.PIPE, text=True)
    port = int(proc.stdout.readline())

    def seen():
        with open(log, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]

    yield port, seen
    proc.kill()
    proc.wait()
    os.unlink(log)


def wait_for(check, seconds=15):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return False


def test_an_admin_subscribes_tests_and_sends_a_delivery_again(page, receiver):
    port, seen = receiver
    url = f"http://127.0.0.1:{port}/greenwood"
    signed_in(page, "admin@greenwood.test")
    page.locator("#nav").get_by_role("link", name="Webhooks", exact=True).click()
    expect(page.get_by_role("heading", name="Webhooks")).to_be_visible()
    page.get_by_role("button", name="New subscription").click()
    dialog = page.locator("dialog")
    dialog.get_by_label("URL (https)").fill("not a url")
    dialog.get_by_label("Event types", exact=False).fill("subject.made")
    page.watch.expected.append("status of 400")
    dialog.get_by_role("button", name="Subscribe").click()
    expect(dialog.locator('[data-error-for="event_types"]')).to_contain_text("not an event type")
    expect(dialog.locator('[data-error-for="url"]')).to_be_visible()
    dialog.get_by_label("URL (https)").fill(url)
    dialog.get_by_label("Event types", exact=False).fill("subject.created")
    dialog.get_by_label("Description").fill("Parents' chatbot")
    dialog.get_by_role("button", name="Subscribe").click()
    secret = page.get_by_label("Signing secret")
    expect(secret).to_be_visible()
    assert secret.input_value().startswith("whsec_")
    row = page.locator("tbody tr", has_text=url)
    expect(row).to_contain_text("subject.created")
    expect(row).to_contain_text("active")
    page.screenshot(path=os.path.join(tempfile.gettempdir(), "webhooks-list.png"), full_page=True)

    # A change to the school: refused once by the receiver, then acknowledged on retry.
    token = school_token("admin@greenwood.test")
    status, _, subject = http("POST", "/api/v1/school/subjects/", {"name": "Robotics", "code": "ROB"}, token=token)
    assert status == 201, subject
    assert wait_for(lambda: any(d["answered"] == 204 for d in seen())), seen()

    row.get_by_role("link", name=url).click()
    expect(page.get_by_role("heading", name="Webhook subscription")).to_be_visible()
    # The secret is not shown again.
    expect(page.get_by_label("Signing secret")).to_have_count(0)
    deliveries = page.locator("section.card", has=page.get_by_role("heading", name="Recent deliveries"))
    expect(deliveries.locator("tbody tr")).to_have_count(2)
    expect(deliveries.locator("tbody tr").nth(0)).to_contain_text("204")
    expect(deliveries.locator("tbody tr").nth(1)).to_contain_text("500")

    page.get_by_role("button", name="Send test event").click()
    expect(page.locator(".webhook .notice")).to_contain_text("Test event acknowledged (204)")
    expect(deliveries.locator("tbody tr")).to_have_count(3)
    tested = seen()[-1]
    assert json.loads(tested["body"])["type"] == "webhook.test"

    event = seen()[0]["headers"]["webhook-id"]
    before = len(seen())
    deliveries.get_by_role("button", name=f"Send event {event} again").first.click()
    expect(deliveries.locator(".notice")).to_contain_text("queued again (attempt 3)")
    assert wait_for(lambda: len(seen()) > before), seen()
    assert seen()[-1]["headers"]["webhook-id"] == event
    expect(deliveries.locator("tbody tr")).to_have_count(4)
    page.screenshot(path=os.path.join(tempfile.gettempdir(), "webhooks-detail.png"), full_page=True)

    page.get_by_role("button", name="Disable").click()
    expect(page.locator(".webhook .badge")).to_have_text("disabled")
    expect(page.get_by_role("button", name="again")).to_have_count(0)
    page.get_by_role("button", name="Delete").click()
    page.locator("dialog").get_by_role("button", name="Delete").click()
    expect(page.get_by_role("heading", name="Webhooks")).to_be_visible()
    expect(page.locator("tbody tr", has_text=url)).to_have_count(0)


def test_a_teacher_has_no_webhooks_page(page):
    signed_in(page, "teacher@greenwood.test")
    expect(page.locator("#nav").get_by_role("link", name="Webhooks")).to_have_count(0)
