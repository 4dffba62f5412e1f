-- CASCADE: the function's triggers on students and attendance go with it.
DROP FUNCTION IF EXISTS count_live_rows() CASCADE;
DROP INDEX attendance_list_order;
DROP TABLE live_counts;
