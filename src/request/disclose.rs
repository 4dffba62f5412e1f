//! The unit of work's last step for a read: which callers' reads are disclosures (API.md
//! 11: API keys and, with OneRoster, integration clients; never the school's staff or
//! guardians), and the rows a request's reads make for the disclosure log
//! (`school::disclosure_log`).

use chrono::Utc;
use uuid::Uuid;

use crate::{
    request::require::{Caller, Principal},
    school::disclosures::{NewDisclosure, Party, PartyKind},
};

/// The party outside the school that `caller` is, if any.
pub fn outside_party(caller: &Caller) -> Option<Party> {
    match &caller.principal {
        Principal::ApiKey(key) => Some(Party::new(PartyKind::ApiKey, key.id, &key.name)),
        Principal::User(_) => None,
    }
}

/// One disclosure per student the read of `target` (the request's path and query)
/// answered, with the kinds of their records it answered.
pub fn disclosures_of(
    party: &Party,
    target: &str,
    disclosed: Vec<(Uuid, String)>,
) -> Vec<NewDisclosure> {
    let at = Utc::now();
    disclosed
        .into_iter()
        .map(|(student, kinds)| NewDisclosure {
            student_id: student,
            at,
            party_type: party.kind.clone(),
            party_id: party.id,
            party_name: party.name.clone(),
            what: format!("{kinds} (GET {target})"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use uuid::Uuid;

    use super::disclosures_of;
    use crate::school::disclosures::{Party, PartyKind};

    #[test]
    fn each_student_read_is_one_disclosure_naming_the_party_and_the_read() {
        let key = Uuid::new_v4();
        let party = Party::new(PartyKind::ApiKey, key, "sync");
        let (first, second) = (Uuid::new_v4(), Uuid::new_v4());
        let read = vec![(first, "student".to_owned()), (second, "marks".to_owned())];
        let rows = disclosures_of(&party, "/api/v1/school/students/?page=2", read);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].student_id, first);
        assert_eq!(
            rows[0].what,
            "student (GET /api/v1/school/students/?page=2)"
        );
        assert_eq!(rows[1].what, "marks (GET /api/v1/school/students/?page=2)");
        assert!(rows.iter().all(|row| row.party_id == key
            && row.party_type == "api_key"
            && row.party_name == "sync"));
    }
}
