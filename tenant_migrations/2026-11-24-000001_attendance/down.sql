DROP TABLE known_permissions, attendance;
