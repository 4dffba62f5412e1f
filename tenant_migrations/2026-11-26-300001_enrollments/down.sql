DROP TABLE rollovers;
DROP TABLE enrollments;
