//! OneRoster 1.2 on every school's address (issue 37, API.md 8): the rostering and
//! gradebook services of the REST/JSON binding under `/ims/oneroster/`. Integration
//! clients and the token endpoint are in `api::school::oauth_clients` and `oauth_token`;
//! the entities themselves in `crate::school::oneroster`.

mod call;
pub mod collections;
mod filter;
pub mod query;
pub mod reads;
mod writes;

use actix_web::{HttpRequest, web};

use crate::api::{
    openapi::{
        Auth, Op,
        schema::{array, object},
    },
    routes::Mount,
};
use collections::{
    CATEGORIES, CLASSES, COURSES, Collection, ENROLLMENTS, LINE_ITEMS, PERIODS, RESULTS, SCHOOLS,
    SCORE_SCALES, STUDENTS, TEACHERS, TERMS,
};
use reads::{Nested, Relation};

const TAG: &str = "oneroster";

fn base(service: &str) -> String {
    format!("/ims/oneroster/{service}/v1p2/")
}

fn answer(
    key: &str,
    many: bool,
) -> Option<utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>> {
    let record = object(vec![]);
    Some(object(vec![(
        key,
        if many { array(record) } else { record },
    )]))
}

const fn nested(
    parent: &'static Collection,
    child: &'static Collection,
    relation: Relation,
) -> Nested {
    Nested {
        parent,
        child,
        relation,
        second: None,
    }
}

static NESTED: [(&str, &str, Nested); 19] = [
    (
        "rostering",
        "schools/{id}/classes",
        nested(&SCHOOLS, &CLASSES, Relation::Field("school")),
    ),
    (
        "rostering",
        "schools/{id}/students",
        nested(&SCHOOLS, &STUDENTS, Relation::Field("primaryOrg")),
    ),
    (
        "rostering",
        "schools/{id}/teachers",
        nested(&SCHOOLS, &TEACHERS, Relation::Field("primaryOrg")),
    ),
    (
        "rostering",
        "schools/{id}/enrollments",
        nested(&SCHOOLS, &ENROLLMENTS, Relation::Field("school")),
    ),
    (
        "rostering",
        "schools/{id}/terms",
        nested(&SCHOOLS, &TERMS, Relation::Field("org")),
    ),
    (
        "rostering",
        "schools/{id}/courses",
        nested(&SCHOOLS, &COURSES, Relation::Field("org")),
    ),
    (
        "rostering",
        "classes/{id}/students",
        nested(&CLASSES, &STUDENTS, Relation::Members("student")),
    ),
    (
        "rostering",
        "classes/{id}/teachers",
        nested(&CLASSES, &TEACHERS, Relation::Members("teacher")),
    ),
    (
        "rostering",
        "teachers/{id}/classes",
        nested(&TEACHERS, &CLASSES, Relation::ClassesOf),
    ),
    (
        "rostering",
        "students/{id}/classes",
        nested(&STUDENTS, &CLASSES, Relation::ClassesOf),
    ),
    (
        "rostering",
        "terms/{id}/classes",
        nested(&TERMS, &CLASSES, Relation::Field("terms")),
    ),
    (
        "rostering",
        "terms/{id}/gradingPeriods",
        nested(&TERMS, &PERIODS, Relation::Field("parent")),
    ),
    (
        "rostering",
        "courses/{id}/classes",
        nested(&COURSES, &CLASSES, Relation::Field("course")),
    ),
    (
        "gradebook",
        "classes/{id}/lineItems",
        nested(&CLASSES, &LINE_ITEMS, Relation::Field("class")),
    ),
    (
        "gradebook",
        "classes/{id}/results",
        nested(&CLASSES, &RESULTS, Relation::Field("class")),
    ),
    (
        "gradebook",
        "classes/{id}/lineItems/{second}/results",
        Nested {
            second: Some(&LINE_ITEMS),
            ..nested(&CLASSES, &RESULTS, Relation::AlsoField("lineItem"))
        },
    ),
    (
        "gradebook",
        "classes/{id}/students/{second}/results",
        Nested {
            second: Some(&STUDENTS),
            ..nested(&CLASSES, &RESULTS, Relation::AlsoField("student"))
        },
    ),
    (
        "gradebook",
        "classes/{id}/categories",
        nested(&CLASSES, &CATEGORIES, Relation::Every),
    ),
    (
        "gradebook",
        "classes/{id}/scoreScales",
        nested(&CLASSES, &SCORE_SCALES, Relation::Field("class")),
    ),
];

pub fn mount(m: &mut Mount) {
    for collection in collections::ALL {
        let c: &'static Collection = collection;
        let path = format!("{}{}/", base(c.service), c.path);
        m.endpoint(&path).get(
            move |req: HttpRequest| reads::list(req, c),
            Op::new(TAG, format!("OneRoster: all {}", c.path), Auth::Bearer)
                .description(Some("Query parameters `limit`, `offset`, `sort`, `orderBy`, `fields`, `filter` as the REST binding defines them; `X-Total-Count` and `Link` headers."))
                .ok(200, answer(c.plural, true)),
        );
        let one = format!("{path}{{id}}/");
        let endpoint = m.endpoint(&one).get(
            move |req: HttpRequest| reads::one(req, c),
            Op::new(TAG, format!("OneRoster: one of {}", c.path), Auth::Bearer)
                .ok(200, answer(c.singular, false)),
        );
        if writes::WRITABLE.iter().any(|w| w.path == c.path) {
            endpoint
                .put(
                    move |req: HttpRequest, payload: web::Payload| writes::put(req, payload, c),
                    Op::new(
                        TAG,
                        format!("OneRoster: create or replace one of {}", c.path),
                        Auth::Bearer,
                    )
                    .description(Some(
                        "201 when the PUT created the record, 200 when it replaced one.",
                    ))
                    .ok(200, answer(c.singular, false))
                    .errors(&[409]),
                )
                .delete(
                    move |req: HttpRequest| writes::delete(req, c),
                    Op::new(
                        TAG,
                        format!("OneRoster: delete one of {}", c.path),
                        Auth::Bearer,
                    )
                    .ok(204, None),
                );
        }
    }
    for (service, path, route) in &NESTED {
        let route: &'static Nested = route;
        m.endpoint(&format!("{}{path}/", base(service))).get(
            move |req: HttpRequest| reads::nested(req, route),
            Op::new(TAG, format!("OneRoster: {path}"), Auth::Bearer)
                .ok(200, answer(route.child.plural, true)),
        );
    }
}
