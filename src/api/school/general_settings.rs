//! `/api/v1/school/general-settings/`: the school's name and contact details.

use crate::{
    api::{
        fields::{Email, Fields, len},
        routes::Mount,
        school::crud::{self, SchoolResource},
    },
    auth::permissions::Resource,
    school::general_settings::{GeneralSettingsChanges, GeneralSettingsStore},
};

impl SchoolResource for GeneralSettingsStore {
    const PERMISSION: Resource = Resource::GeneralSettings;
    const PATH: &'static str = "/api/v1/school/general-settings/";

    fn parse(f: &mut Fields<'_>) -> GeneralSettingsChanges {
        GeneralSettingsChanges {
            school_name: f.required("school_name", &len(1, 255)),
            address: f.required("address", &len(0, 1000)),
            phone: f.required("phone", &len(0, 50)),
            email: f.required("email", &Email),
            logo: f.optional("logo", String::new(), &len(0, 2048)),
        }
    }
}

pub fn mount(m: &mut Mount) {
    crud::mount::<GeneralSettingsStore>(m);
}
