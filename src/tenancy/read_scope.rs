//! Who reads, as far as the school layer's reads care: whose records they may answer
//! (`ReadScope`: a guardian only their children's) and, for a party outside the school,
//! which students they answered (`Disclosed`, logged as disclosures). Both travel with the
//! connection bound to the school (`TenantConn::reader`), set once when the caller is
//! authenticated, so every scoped read of the school layer (`school::Store`'s list, find
//! and parent lookups, the report-card and attendance loaders) narrows and records by them
//! without a handler having to remember to.

use std::{collections::BTreeSet, sync::Arc};

use uuid::Uuid;

/// Whose records may be read.
#[derive(Debug, Clone, Default)]
pub enum ReadScope {
    /// Everything the caller's permissions reach (staff, API keys, the CLI).
    #[default]
    School,
    /// Only what is about these students (a guardian's children; possibly none).
    Students(Arc<[Uuid]>),
}

impl ReadScope {
    /// The students the reads are narrowed to; `None` when they are not narrowed.
    pub fn students(&self) -> Option<&Arc<[Uuid]>> {
        match self {
            Self::School => None,
            Self::Students(ids) => Some(ids),
        }
    }

    /// Whether a record about `student` may be read.
    pub fn shows_student(&self, student: Uuid) -> bool {
        self.students().is_none_or(|ids| ids.contains(&student))
    }
}

/// The reader of a unit of work.
#[derive(Debug, Default)]
pub struct Reader {
    pub scope: ReadScope,
    /// `Some` when the reader is a party outside the school: the (student, kind of record)
    /// pairs its reads answered, each once.
    disclosed: Option<BTreeSet<(Uuid, &'static str)>>,
}

impl Reader {
    /// From now on, keep which students the reads answer (an outside party's read).
    pub fn record_disclosures(&mut self) {
        self.disclosed.get_or_insert_with(BTreeSet::new);
    }

    /// Whether the reads' students are being kept.
    pub fn is_disclosing(&self) -> bool {
        self.disclosed.is_some()
    }

    /// Notes that records of kind `what` about `students` were answered (nothing unless
    /// `record_disclosures` was called).
    pub fn disclosed(&mut self, students: impl IntoIterator<Item = Uuid>, what: &'static str) {
        if let Some(kept) = &mut self.disclosed {
            kept.extend(students.into_iter().map(|student| (student, what)));
        }
    }

    /// What was answered so far: each student once, with the kinds of their records
    /// (`"mark, student"`); the record starts empty again.
    pub fn take_disclosed(&mut self) -> Vec<(Uuid, String)> {
        let Some(kept) = &mut self.disclosed else {
            return Vec::new();
        };
        let mut by_student: Vec<(Uuid, String)> = Vec::new();
        // Ordered by student, then kind: one run per student.
        for (student, what) in std::mem::take(kept) {
            match by_student.last_mut() {
                Some((last, kinds)) if *last == student => {
                    kinds.push_str(", ");
                    kinds.push_str(what);
                }
                _ => by_student.push((student, what.to_owned())),
            }
        }
        by_student
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_keeps_each_student_once_with_the_kinds_of_record_read() {
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        let mut staff = Reader::default();
        staff.disclosed([a], "student");
        assert!(
            staff.take_disclosed().is_empty(),
            "staff reads are no disclosures"
        );

        let mut key = Reader::default();
        key.record_disclosures();
        key.disclosed([a, b, a], "student");
        key.disclosed([a], "mark");
        let mut taken = key.take_disclosed();
        taken.sort();
        let mut expected = vec![(a, "mark, student".to_owned()), (b, "student".to_owned())];
        expected.sort();
        assert_eq!(taken, expected);
        assert!(key.take_disclosed().is_empty() && key.is_disclosing());
    }

    #[test]
    fn a_guardians_scope_shows_their_children_only() {
        let (child, other) = (Uuid::new_v4(), Uuid::new_v4());
        let guardian = ReadScope::Students(vec![child].into());
        assert!(guardian.shows_student(child) && !guardian.shows_student(other));
        assert!(ReadScope::School.shows_student(other));
        assert!(
            ReadScope::Students(Vec::new().into())
                .students()
                .is_some_and(|s| s.is_empty())
        );
    }
}
