DROP TABLE webhook_pending;
