DROP TABLE known_permissions;
DROP TABLE attendance;
