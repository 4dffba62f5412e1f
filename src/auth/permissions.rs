//! The permission catalogue of a school: `<action>_<resource>` codenames, the set type a
//! caller's roles add up to, and the default roles every new school gets.

use std::fmt;

use actix_web::http::Method;

macro_rules! resources {
    ($($variant:ident => $name:literal $(only $($only:ident)+)?),+ $(,)?) => {
        /// A school resource that permissions are granted on.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Resource { $($variant),+ }

        impl Resource {
            pub const ALL: &'static [Resource] = &[$(Resource::$variant),+];
            /// How many resources the catalogue has.
            pub const COUNT: usize = Resource::ALL.len();

            pub fn codename(self) -> &'static str {
                match self { $(Resource::$variant => $name),+ }
            }

            /// The actions that exist on this resource: all four, or those it is
            /// `only` (report cards are only viewed; users are never deleted).
            pub fn actions(self) -> &'static [Action] {
                match self {
                    $(Resource::$variant => resources!(@actions $($($only)+)?)),+
                }
            }
        }
    };
    (@actions) => { &Action::ALL };
    (@actions $($only:ident)+) => { &[$(Action::$only),+] };
}

resources! {
    AcademicSession => "academicsession",
    ExamSession => "examsession",
    Exam => "exam",
    Mark => "mark",
    Department => "department",
    Subject => "subject",
    AcademicClass => "academicclass",
    Student => "student",
    TeacherProfile => "teacherprofile",
    TeacherAssignment => "teacherassignment",
    TeacherGradeComment => "teachergradecomment",
    SessionSetup => "sessionsetup",
    GeneralSettings => "generalsettings",
    AcademicSettings => "academicsettings",
    ReportSettings => "reportsettings",
    SchoolRole => "schoolrole",
    UserRoleAssignment => "userroleassignment",
    Attendance => "attendance",
    ReportCard => "report_card" only View,
    Guardian => "guardian",
    Event => "event" only View,
    Webhook => "webhook",
    History => "history" only View,
    Enrollment => "enrollment",
    // OneRoster integration clients (API.md 8): created, listed, revoked; never changed.
    OauthClient => "oauthclient" only View Add Delete,
    User => "user" only View Add Change,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    View,
    Add,
    Change,
    Delete,
}

impl Action {
    pub const ALL: [Action; 4] = [Action::View, Action::Add, Action::Change, Action::Delete];

    pub fn as_str(self) -> &'static str {
        match self {
            Action::View => "view",
            Action::Add => "add",
            Action::Change => "change",
            Action::Delete => "delete",
        }
    }

    /// GET/HEAD → view, POST → add, PUT/PATCH → change, DELETE → delete.
    pub fn for_method(method: &Method) -> Option<Action> {
        match *method {
            Method::GET | Method::HEAD => Some(Action::View),
            Method::POST => Some(Action::Add),
            Method::PUT | Method::PATCH => Some(Action::Change),
            Method::DELETE => Some(Action::Delete),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Permission {
    pub action: Action,
    pub resource: Resource,
}

impl Permission {
    pub const fn new(action: Action, resource: Resource) -> Self {
        Self { action, resource }
    }

    /// The permission's place in a [`PermissionSet`]: resource by resource, four actions
    /// each.
    fn index(self) -> usize {
        let resource = Resource::ALL
            .iter()
            .position(|r| *r == self.resource)
            .unwrap_or(0);
        let action = Action::ALL
            .iter()
            .position(|a| *a == self.action)
            .unwrap_or(0);
        resource * Action::ALL.len() + action
    }

    pub fn parse(codename: &str) -> Option<Self> {
        let (action, resource) = codename.split_once('_')?;
        let resource = Resource::ALL
            .iter()
            .copied()
            .find(|r| r.codename() == resource)?;
        let action = resource
            .actions()
            .iter()
            .copied()
            .find(|a| a.as_str() == action)?;
        Some(Self::new(action, resource))
    }
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}_{}", self.action.as_str(), self.resource.codename())
    }
}

/// 64-bit words a set needs for the whole catalogue (it grows with `Resource`).
const WORDS: usize = (Resource::COUNT * Action::ALL.len()).div_ceil(64);

/// A set of permissions, one bit each, sized by the catalogue: no ceiling on resources.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PermissionSet([u64; WORDS]);

impl PermissionSet {
    pub fn all() -> Self {
        Self::from_iter(all_permissions())
    }

    pub fn contains(self, permission: Permission) -> bool {
        let index = permission.index();
        self.0[index / 64] & (1 << (index % 64)) != 0
    }

    pub fn insert(&mut self, permission: Permission) {
        let index = permission.index();
        self.0[index / 64] |= 1 << (index % 64);
    }

    fn zip(self, other: Self, combine: impl Fn(u64, u64) -> u64) -> Self {
        let mut words = [0; WORDS];
        for (word, (a, b)) in words.iter_mut().zip(self.0.into_iter().zip(other.0)) {
            *word = combine(a, b);
        }
        Self(words)
    }

    pub fn union(self, other: Self) -> Self {
        self.zip(other, |a, b| a | b)
    }

    /// The permissions of `other` this set lacks.
    pub fn lacking(self, other: Self) -> Self {
        self.zip(other, |mine, theirs| theirs & !mine)
    }

    pub fn is_empty(self) -> bool {
        self.0.iter().all(|word| *word == 0)
    }

    /// Whether this set holds every permission of the catalogue.
    pub fn is_complete(self) -> bool {
        self == Self::all()
    }

    /// Only the `view_*` permissions of this set.
    pub fn view_only(self) -> Self {
        self.iter().filter(|p| p.action == Action::View).collect()
    }

    pub fn iter(self) -> impl Iterator<Item = Permission> {
        all_permissions().filter(move |p| self.contains(*p))
    }

    /// Codenames, sorted.
    pub fn codenames(self) -> Vec<String> {
        let mut names: Vec<String> = self.iter().map(|p| p.to_string()).collect();
        names.sort();
        names
    }

    /// Parses codenames, ignoring unknown ones (a role row may predate a rename).
    pub fn from_codenames<'a>(codenames: impl IntoIterator<Item = &'a str>) -> Self {
        codenames
            .into_iter()
            .filter_map(Permission::parse)
            .collect()
    }
}

impl FromIterator<Permission> for PermissionSet {
    fn from_iter<I: IntoIterator<Item = Permission>>(iter: I) -> Self {
        let mut set = Self::default();
        iter.into_iter().for_each(|p| set.insert(p));
        set
    }
}

pub fn all_permissions() -> impl Iterator<Item = Permission> {
    Resource::ALL
        .iter()
        .flat_map(|r| r.actions().iter().map(move |a| Permission::new(*a, *r)))
}

/// Every codename, sorted: the answer of `GET /api/v1/school/permissions/`.
pub fn all_codenames() -> Vec<String> {
    PermissionSet::all().codenames()
}

/// The default role whose holders read only their children's records (API.md 11).
pub const GUARDIAN_ROLE: &str = "guardian";

/// Default roles that came after schools existed, each with the codename that came with
/// it: a school that has not recorded that codename gets the role (see
/// `auth::roles::seed_defaults`).
pub const ROLES_ARRIVING_WITH: &[(&str, &str)] = &[(GUARDIAN_ROLE, "view_guardian")];

/// The roles every new school starts with (API.md sections 5 and 11).
pub fn default_roles() -> Vec<(&'static str, PermissionSet)> {
    use Resource::*;
    let view_all = |except: &[Resource]| -> PermissionSet {
        Resource::ALL
            .iter()
            .filter(|r| !except.contains(r))
            .map(|r| Permission::new(Action::View, *r))
            .collect()
    };
    // Teachers reach attendance and report cards through their class assignments
    // (`crate::auth::class_access`), not through a school-wide grant.
    let by_assignment = [Attendance, ReportCard];
    let grant = |resources: &[Resource], actions: &[Action]| -> PermissionSet {
        resources
            .iter()
            .flat_map(|r| actions.iter().map(move |a| Permission::new(*a, *r)))
            .collect()
    };
    // Webhooks, history and integration clients are for admin and principal only; office
    // reads the event feed.
    let office = view_all(&[Webhook, History, OauthClient])
        .union(grant(&[User], &[Action::Add]))
        .union(grant(
            &[
                AcademicSession,
                ExamSession,
                Department,
                Subject,
                AcademicClass,
                Student,
                TeacherProfile,
                TeacherAssignment,
                SessionSetup,
                GeneralSettings,
                AcademicSettings,
                ReportSettings,
                Attendance,
                Guardian,
                Enrollment,
            ],
            &[Action::Add, Action::Change, Action::Delete],
        ));
    let teacher = view_all(&[
        SchoolRole,
        UserRoleAssignment,
        User,
        by_assignment[0],
        by_assignment[1],
        Guardian,
        Event,
        Webhook,
        History,
        OauthClient,
    ])
    .union(grant(
        &[Exam, Mark, TeacherGradeComment],
        &[Action::Add, Action::Change],
    ))
    .union(grant(&[TeacherGradeComment], &[Action::Delete]));
    let student = grant(
        &[AcademicSession, ExamSession, Exam, Subject, AcademicClass],
        &[Action::View],
    );
    // A guardian's reads are narrowed to their children by the store (`ReadScope`).
    let guardian = grant(
        &[
            Student,
            Mark,
            Attendance,
            ReportCard,
            AcademicSession,
            ExamSession,
            Exam,
            Subject,
        ],
        &[Action::View],
    );
    vec![
        ("admin", PermissionSet::all()),
        ("principal", PermissionSet::all()),
        ("office", office),
        ("teacher", teacher),
        ("student", student),
        (GUARDIAN_ROLE, guardian),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_webhooks_and_history_go_to_whom_api_md_says() {
        let roles = default_roles();
        let holds = |role: &str, codename: &str| {
            let (_, set) = roles.iter().find(|(name, _)| *name == role).expect("role");
            set.contains(Permission::parse(codename).expect("codename"))
        };
        for codename in ["view_event", "view_webhook", "add_webhook", "view_history"] {
            assert!(
                holds("admin", codename) && holds("principal", codename),
                "{codename}"
            );
            assert!(
                !holds("teacher", codename) && !holds("student", codename),
                "{codename}"
            );
        }
        assert!(holds("office", "view_event"));
        assert!(!holds("office", "view_webhook") && !holds("office", "view_history"));
    }

    #[test]
    fn codenames_round_trip() {
        let all = all_codenames();
        // Every resource has four actions but those with fewer (report cards, events, ...).
        let actions: usize = Resource::ALL.iter().map(|r| r.actions().len()).sum();
        assert_eq!(all.len(), actions);
        assert!(all.contains(&"view_report_card".to_owned()));
        assert_eq!(Permission::parse("add_report_card"), None);
        for name in &all {
            assert_eq!(
                Permission::parse(name).map(|p| p.to_string()).as_deref(),
                Some(name.as_str())
            );
        }
        assert!(all.windows(2).all(|w| w[0] < w[1]), "sorted");
        assert_eq!(Permission::parse("view_nothing"), None);
        assert_eq!(Permission::parse("fly_exam"), None);
    }

    #[test]
    fn default_roles_match_the_contract() {
        let roles: std::collections::HashMap<_, _> = default_roles().into_iter().collect();
        let has =
            |role: &str, code: &str| roles[role].contains(Permission::parse(code).expect(code));
        assert!(has("admin", "delete_userroleassignment"));
        assert!(
            has("office", "delete_student")
                && !has("office", "add_exam")
                && has("office", "view_mark")
        );
        assert!(has("teacher", "change_mark") && !has("teacher", "delete_mark"));
        assert!(has("teacher", "delete_teachergradecomment") && !has("teacher", "view_schoolrole"));
        assert!(has("student", "view_exam") && !has("student", "view_mark"));
        assert_eq!(roles["student"].codenames().len(), 5);
        assert!(has("office", "add_attendance") && has("office", "view_report_card"));
        assert!(!has("teacher", "view_attendance") && !has("teacher", "view_report_card"));
        assert!(has("office", "delete_guardian") && !has("office", "view_history"));
        assert!(!has("teacher", "view_guardian") && !has("teacher", "view_history"));
        assert!(has("guardian", "view_mark") && has("guardian", "view_report_card"));
        assert!(!has("guardian", "view_academicclass") && !has("guardian", "change_mark"));
        assert_eq!(roles["guardian"].codenames().len(), 8);
    }

    #[test]
    fn sets_hold_every_permission_of_the_catalogue_whatever_its_size() {
        let all = PermissionSet::all();
        let size = all_permissions().count();
        assert_eq!(all.iter().count(), size);
        let last = Permission::new(Action::View, Resource::ALL[Resource::COUNT - 1]);
        let mut only_last = PermissionSet::default();
        only_last.insert(last);
        assert!(only_last.contains(last) && !only_last.is_empty());
        assert!(all.lacking(only_last).is_empty());
        assert_eq!(only_last.lacking(all).iter().count(), size - 1);
        assert!(all.is_complete() && !only_last.is_complete());
    }
}
