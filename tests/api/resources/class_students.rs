//! `GET /api/v1/school/classes/{class_pk}/students/`: the students of one class (the school
//! app's marks sheet), paged and searched like every list, and the same rows through
//! `/students/?academic_class=`.

use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn a_class_lists_its_own_live_students() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let class = |name: &'static str| {
        let (app, admin) = (&app, &admin);
        async move {
            let class = NewClass::named(name);
            class.create(app, admin).await.id
        }
    };
    let (blue, green) = (class("Blue").await, class("Green").await);
    for (number, first, class) in [
        ("B-1", "Ann", &blue),
        ("B-2", "Bob", &blue),
        ("B-3", "Cid", &blue),
        ("G-1", "Dee", &green),
    ] {
        let student = NewStudent::new(number, first, "Lee").in_class(class);
        student.create(&app, &admin).await;
    }
    let moved = app
        .get(&format!("{STUDENTS}?search=Cid"), &admin)
        .await
        .body["results"][0]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    app.patch(
        &format!("{STUDENTS}{moved}/"),
        &admin,
        json!({"is_deleted": true}),
    )
    .await
    .assert(200, None);

    let of = |class: &str, query: &str| format!("{CLASSES}{class}/students/{query}");
    let reply = app.get(&of(&blue, ""), &admin).await;
    reply.assert(200, None);
    assert_eq!(reply.body["count"], 2);
    let numbers: Vec<&str> = (reply.body["results"].as_array().expect("results").iter())
        .map(|s| s["admission_number"].as_str().expect("number"))
        .collect();
    assert_eq!(
        numbers,
        ["B-1", "B-2"],
        "oldest first, this class only, live only"
    );
    assert_eq!(
        app.get(&of(&blue, "?include_deleted=true"), &admin)
            .await
            .body["count"],
        3
    );
    assert_eq!(
        app.get(&of(&blue, "?search=bob"), &admin).await.body["count"],
        1
    );
    let paged = app.get(&of(&blue, "?page_size=1&page=2"), &admin).await;
    paged.assert(200, None);
    assert_eq!(paged.body["results"][0]["admission_number"], "B-2");
    assert!(paged.body["previous"].is_string() && paged.body["next"].is_null());
    app.get(&of(&blue, "?page=3"), &admin)
        .await
        .assert(404, Some("invalid_page"));
    assert_eq!(app.get(&of(&green, ""), &admin).await.body["count"], 1);

    // Teachers may read it; a user without a role may not.
    let teacher = app.as_school_user("alpha", "teacher").await;
    app.get(&of(&blue, ""), &teacher).await.assert(200, None);
    let norole = app.as_school_user("alpha", "norole").await;
    app.get(&of(&blue, ""), &norole)
        .await
        .assert(403, Some("permission_denied"));

    // A missing, deleted or other school's class is not found; a bad id is a 400.
    let unknown = uuid::Uuid::new_v4().to_string();
    app.get(&of(&unknown, ""), &admin)
        .await
        .assert(404, Some("not_found"));
    let beta = app.as_school_user("beta", "admin").await;
    app.get(&of(&blue, ""), &beta)
        .await
        .assert(404, Some("not_found"));
    app.patch(
        &format!("{CLASSES}{green}/"),
        &admin,
        json!({"is_deleted": true}),
    )
    .await
    .assert(200, None);
    app.get(&of(&green, ""), &admin)
        .await
        .assert(404, Some("not_found"));
    let kept = app.get(&of(&green, "?include_deleted=true"), &admin).await;
    kept.assert(200, None);
    assert_eq!(
        kept.body["count"], 1,
        "a deleted class's students, when asked for"
    );
    let reply = app.get(&of("not-a-uuid", ""), &admin).await;
    assert_eq!(reply.status.as_u16(), 400, "{:?}", reply.body);

    // The same rows through `/students/?academic_class=`.
    let filtered = app
        .get(&format!("{STUDENTS}?academic_class={blue}"), &admin)
        .await;
    filtered.assert(200, None);
    assert_eq!(filtered.body["count"], 2);
    assert_eq!(filtered.body["results"][1]["admission_number"], "B-2");
    app.get(&format!("{STUDENTS}?academic_class=nope"), &admin)
        .await
        .assert(400, Some("invalid_query"));
}
