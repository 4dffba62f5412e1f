#!/usr/bin/env python3
"""Verifies every recorded delivery with the Standard Webhooks reference library
(`pip install standardwebhooks`), which this project did not write. Prints one JSON line
per delivery: {"id", "type", "verified"}; exits 1 if any signature fails.

    verify.py SECRET LOG_FILE
"""
import json
import sys

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

secret, log = sys.argv[1], sys.argv[2]
webhook = Webhook(secret)
failed = False
with open(log, encoding="utf-8") as lines:
    for line in lines:
        delivery = json.loads(line)
        try:
            event = webhook.verify(delivery["body"], delivery["headers"])
            print(json.dumps({"id": delivery["headers"]["webhook-id"], "type": event["type"],
                              "verified": True, "answered": delivery["answered"]}))
        except WebhookVerificationError as err:
            failed = True
            print(json.dumps({"id": delivery["headers"].get("webhook-id"), "verified": False,
                              "error": str(err)}))
sys.exit(1 if failed else 0)
