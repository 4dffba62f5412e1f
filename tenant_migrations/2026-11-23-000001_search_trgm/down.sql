DROP INDEX academic_sessions_search, exam_sessions_search, academic_classes_search,
    departments_search, subjects_search, students_search, exams_search, marks_search,
    teacher_grade_comments_search, school_roles_search, teacher_profiles_search,
    students_list_order;
