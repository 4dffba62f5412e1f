DROP TABLE history;
DROP TABLE events;
DROP FUNCTION number_event();
