//! Typed requests (`NewX`) and answers (`X`) of the school's own records: classes,
//! subjects, students, departments, teachers and their assignments, attendance, guardians.

// The answers carry the fields a test may assert on; each test reads a few.
#![allow(dead_code)]

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    ATTENDANCE, CLASSES, DEPARTMENTS, GUARDIANS, NewRecord, STUDENTS, SUBJECTS,
    TEACHER_ASSIGNMENTS, TEACHERS, item,
};

/// Who made and last changed a record (a user id, or null for an API key).
#[derive(Deserialize, Debug, Clone, PartialEq)]
pub struct Authors {
    pub created_by: Value,
    pub updated_by: Value,
}

#[derive(Serialize, Default)]
pub struct NewClass<'a> {
    pub name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<i64>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct Class {
    pub id: String,
    pub name: String,
    pub level: Option<i64>,
    pub is_deleted: bool,
    #[serde(flatten)]
    pub authors: Authors,
}

impl NewRecord for NewClass<'_> {
    type Record = Class;
    fn collection(&self) -> String {
        CLASSES.into()
    }
}

impl Class {
    pub fn path(&self) -> String {
        item(CLASSES, &self.id)
    }
}

#[derive(Serialize, Default)]
pub struct NewSubject<'a> {
    pub name: &'a str,
    pub code: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub department: Option<&'a str>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct Subject {
    pub id: String,
    pub name: String,
    pub code: String,
    pub is_deleted: bool,
}

impl NewRecord for NewSubject<'_> {
    type Record = Subject;
    fn collection(&self) -> String {
        SUBJECTS.into()
    }
}

impl Subject {
    pub fn path(&self) -> String {
        item(SUBJECTS, &self.id)
    }
}

#[derive(Serialize, Default)]
pub struct NewStudent<'a> {
    pub admission_number: &'a str,
    pub first_name: &'a str,
    pub last_name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub academic_class: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<&'a str>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct Student {
    pub id: String,
    pub admission_number: String,
    pub first_name: String,
    pub last_name: String,
    pub academic_class: Option<String>,
    pub user: Option<String>,
    pub is_deleted: bool,
}

impl NewRecord for NewStudent<'_> {
    type Record = Student;
    fn collection(&self) -> String {
        STUDENTS.into()
    }
}

impl Student {
    pub fn path(&self) -> String {
        item(STUDENTS, &self.id)
    }
}

#[derive(Serialize, Default)]
pub struct NewDepartment<'a> {
    pub name: &'a str,
    /// A teacher profile.
    pub hod: &'a str,
    pub subject: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub teachers: Option<&'a [&'a str]>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct Department {
    pub id: String,
    pub name: String,
    pub hod: String,
    pub subject: String,
    pub teachers: Vec<String>,
}

impl NewRecord for NewDepartment<'_> {
    type Record = Department;
    fn collection(&self) -> String {
        DEPARTMENTS.into()
    }
}

impl Department {
    pub fn path(&self) -> String {
        item(DEPARTMENTS, &self.id)
    }
}

/// A teacher profile of a user of the school.
#[derive(Serialize, Default)]
pub struct NewTeacher<'a> {
    pub user: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub staff_number: Option<&'a str>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct Teacher {
    pub id: String,
    pub user: String,
    /// The user's name.
    pub name: String,
    pub staff_number: Option<String>,
}

impl NewRecord for NewTeacher<'_> {
    type Record = Teacher;
    fn collection(&self) -> String {
        TEACHERS.into()
    }
}

#[derive(Serialize, Default)]
pub struct NewTeacherAssignment<'a> {
    pub teacher: &'a str,
    pub academic_class: &'a str,
    pub subject: &'a str,
}

#[derive(Deserialize, Debug, Clone)]
pub struct TeacherAssignment {
    pub id: String,
    pub teacher: String,
    pub academic_class: String,
    pub subject: String,
}

impl NewRecord for NewTeacherAssignment<'_> {
    type Record = TeacherAssignment;
    fn collection(&self) -> String {
        TEACHER_ASSIGNMENTS.into()
    }
}

/// One student's attendance on one day.
#[derive(Serialize, Default)]
pub struct NewAttendance<'a> {
    pub student: &'a str,
    pub date: &'a str,
    /// `present`, `absent`, `late` or `excused`.
    pub status: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub academic_class: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<&'a str>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct Attendance {
    pub id: String,
    pub student: String,
    pub date: String,
    pub status: String,
}

impl NewRecord for NewAttendance<'_> {
    type Record = Attendance;
    fn collection(&self) -> String {
        ATTENDANCE.into()
    }
}

/// Taking a class's attendance on one day: a line a student, upserted in one go (200).
#[derive(Serialize, Default)]
pub struct TakeAttendance<'a> {
    /// The class (the path, not the body).
    #[serde(skip)]
    pub class: &'a str,
    pub date: &'a str,
    pub records: Vec<AttendanceLine<'a>>,
}

#[derive(Serialize, Default, Clone)]
pub struct AttendanceLine<'a> {
    pub student: &'a str,
    pub status: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<&'a str>,
}

impl<'a> AttendanceLine<'a> {
    pub fn new(student: &'a str, status: &'a str) -> Self {
        Self {
            student,
            status,
            note: None,
        }
    }
}

impl<'a> TakeAttendance<'a> {
    /// Every one of `students` with the same `status`.
    pub fn all(class: &'a str, date: &'a str, students: &'a [String], status: &'a str) -> Self {
        Self {
            class,
            date,
            records: students
                .iter()
                .map(|student| AttendanceLine::new(student, status))
                .collect(),
        }
    }
}

impl NewRecord for TakeAttendance<'_> {
    type Record = Vec<Attendance>;
    const SUCCESS: u16 = 200;
    fn collection(&self) -> String {
        format!("{CLASSES}{}/attendance/", self.class)
    }
}

#[derive(Serialize, Default)]
pub struct NewGuardian<'a> {
    pub first_name: &'a str,
    pub last_name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relationship: Option<&'a str>,
    /// The guardian's own account, when they have one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<&'a str>,
    pub students: &'a [&'a str],
}

#[derive(Deserialize, Debug, Clone)]
pub struct Guardian {
    pub id: String,
    pub first_name: String,
    pub last_name: String,
    pub students: Vec<String>,
}

impl NewRecord for NewGuardian<'_> {
    type Record = Guardian;
    fn collection(&self) -> String {
        GUARDIANS.into()
    }
}
