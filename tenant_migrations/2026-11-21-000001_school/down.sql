DROP TABLE user_role_assignments, school_roles, report_settings, academic_settings,
    general_settings, session_setups, teacher_grade_comments, marks, exams,
    teacher_assignments, students, department_teachers, subjects, departments,
    teacher_profiles, academic_classes, exam_sessions, academic_sessions CASCADE;
