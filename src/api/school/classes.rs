//! `/api/v1/school/classes/`: academic classes.

use crate::{
    api::{
        fields::{Fields, any, len, range},
        routes::Mount,
        school::crud::{self, SchoolResource},
    },
    auth::permissions::Resource,
    school::classes::{ClassChanges, Classes},
};

impl SchoolResource for Classes {
    const PERMISSION: Resource = Resource::AcademicClass;
    const PATH: &'static str = "/api/v1/school/classes/";
    const CREATE_RULES: Option<&'static str> =
        Some("`name` is unique among live classes (409 `conflict`).");

    fn parse(f: &mut Fields<'_>) -> ClassChanges {
        ClassChanges {
            name: f.required("name", &len(1, 255)),
            level: f.nullable("level", None, &range(0, 100)),
            is_deleted: f.optional("is_deleted", false, &any),
        }
    }
}

pub fn mount(m: &mut Mount) {
    crud::mount::<Classes>(m);
}
