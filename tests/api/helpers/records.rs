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

posted_to!(NewClass => Class at CLASSES);

impl<'a> NewClass<'a> {
    pub fn named(name: &'a str) -> Self {
        Self { name, level: None }
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

posted_to!(NewSubject => Subject at SUBJECTS);

impl<'a> NewSubject<'a> {
    pub fn new(name: &'a str, code: &'a str) -> Self {
        Self {
            name,
            code,
            department: None,
        }
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

posted_to!(NewStudent => Student at STUDENTS);

impl<'a> NewStudent<'a> {
    /// A student in no class.
    pub fn new(admission_number: &'a str, first_name: &'a str, last_name: &'a str) -> Self {
        Self {
            admission_number,
            first_name,
            last_name,
            ..Default::default()
        }
    }

    pub fn in_class(self, academic_class: &'a str) -> Self {
        Self {
            academic_class: Some(academic_class),
            ..self
        }
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

posted_to!(NewDepartment => Department at DEPARTMENTS);

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

posted_to!(NewTeacher => Teacher at TEACHERS);

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

posted_to!(NewTeacherAssignment => TeacherAssignment at TEACHER_ASSIGNMENTS);

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

posted_to!(NewAttendance => Attendance at ATTENDANCE);

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

posted_to!(NewGuardian => Guardian at GUARDIANS);
