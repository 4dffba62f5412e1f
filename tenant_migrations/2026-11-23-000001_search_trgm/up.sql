-- One multi-column trigram index per searchable table, over exactly the columns `?search=`
-- matches (src/school/*: `search: [..]`), so an ILIKE '%text%' on any of them is a bitmap
-- index scan. The operator class is schema-qualified: it lives in `public`, which is not
-- on a school's search_path.
CREATE INDEX academic_sessions_search ON academic_sessions USING gin (name public.gin_trgm_ops);
CREATE INDEX exam_sessions_search ON exam_sessions USING gin (name public.gin_trgm_ops, term public.gin_trgm_ops);
CREATE INDEX academic_classes_search ON academic_classes USING gin (name public.gin_trgm_ops);
CREATE INDEX departments_search ON departments USING gin (name public.gin_trgm_ops);
CREATE INDEX subjects_search ON subjects USING gin (name public.gin_trgm_ops, code public.gin_trgm_ops);
CREATE INDEX students_search ON students
    USING gin (admission_number public.gin_trgm_ops, first_name public.gin_trgm_ops, last_name public.gin_trgm_ops);
CREATE INDEX exams_search ON exams USING gin (name public.gin_trgm_ops);
CREATE INDEX marks_search ON marks USING gin (studentadmissionnumber public.gin_trgm_ops);
CREATE INDEX teacher_grade_comments_search ON teacher_grade_comments
    USING gin (grade public.gin_trgm_ops, comment public.gin_trgm_ops);
CREATE INDEX school_roles_search ON school_roles USING gin (name public.gin_trgm_ops);
CREATE INDEX teacher_profiles_search ON teacher_profiles USING gin (staff_number public.gin_trgm_ops);

-- Lists are ordered by (created_at, id) over live rows: the first page of a large table
-- reads 50 index entries instead of sorting every row, and its count is an index-only scan.
CREATE INDEX students_list_order ON students (created_at, id) WHERE NOT is_deleted;
