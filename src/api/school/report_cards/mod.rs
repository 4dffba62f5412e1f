//! `.../exam-sessions/{exam_session_pk}/report-cards/?academic_class=` (a class's cards;
//! without the class, every class's, for permission holders)
//! and `.../report-cards/{student_id}/` (one card): JSON, or with `Accept:
//! application/pdf` a PDF of one A4 page per card (`pdf`). The cards are computed in
//! `crate::school::report_cards`; here are HTTP, access and the choice of format.

mod font;
mod layout;
mod pdf;

use actix_web::{HttpRequest, HttpResponse, http::header, web};

use crate::{
    api::{
        PathIds,
        list_filter::id_param,
        openapi::{ApiDoc, Auth, Op, schema},
        pagination::query_map,
        routes::Mount,
        school::class_access::require_class_access,
    },
    auth::permissions::{Action, Permission, Resource},
    error::{ApiError, ApiResult},
    request::{Caller, Need, SchoolRequest},
    school::{
        Store, Target,
        classes::Classes,
        exam_sessions::{ExamSession, ExamSessions},
        general_settings::GeneralSettings,
        report_cards::{
            ReportCard,
            compute::StudentRow,
            load::{
                class_during, class_sheet, classless_sheet, live_classes, print_settings,
                readable_cards, rules,
            },
        },
        report_settings::ReportSettings,
        students::{Student, Students},
    },
    tenancy::TenantConn,
};

const PATH: &str =
    "/api/v1/school/sessions/{session_pk}/exam-sessions/{exam_session_pk}/report-cards/";
const VIEW: &[Permission] = &[Permission::new(Action::View, Resource::ReportCard)];
const PDF: &str = "application/pdf";
/// The most cards one PDF answer prints (an A4 page each): a whole school asked for at once
/// is refused past it (ask class by class). Rendering runs after the request's pooled
/// connection and turn are given back, on a blocking thread, in time linear in the text.
pub const MAX_PDF_CARDS: usize = 500;

const ACCESS: &str = "Needs `view_report_card`, or an assignment to teach the class; a \
    student (the `user` of a student record) reads only their own card. With `Accept: \
    application/pdf` the answer is a PDF: one A4 page per card, with the school's name, \
    address and contact from general settings, the school year and exam session in the \
    title, the marks as entered, teacher comments wrapped over lines, the class teacher's \
    remark (`report-remarks/`), the issue date, the class teacher's and the principal's \
    signature lines (the principal's name from report settings) and the footer text. One \
    PDF holds at most 500 cards: a request for more (every class at once) answers 400 \
    `invalid_query`; ask class by class.";

pub fn mount(m: &mut Mount) {
    m.endpoint(PATH).get(class_cards, |doc: &mut ApiDoc| {
        let card = doc.schema::<ReportCard>();
        Op::new(
            "report-cards",
            "Report cards of a class for an exam session",
            Auth::BearerOrKey,
        )
        .description(Some(ACCESS))
        .query(
            "academic_class",
            schema::uuid(),
            "the class; without it every live class's cards, class by class (needs `view_report_card`)",
        )
        .ok(200, Some(schema::array(card)))
        .also_file(PDF)
    });
    m.endpoint(&format!("{PATH}{{student_id}}/"))
        .get(student_card, |doc: &mut ApiDoc| {
            let card = doc.schema::<ReportCard>();
            Op::new(
                "report-cards",
                "A student's report card for an exam session",
                Auth::BearerOrKey,
            )
            .description(Some(ACCESS))
            .ok(200, Some(card))
            .also_file(PDF)
        });
}

/// Whether the client asked for the PDF: `application/pdf` accepted, JSON not.
fn wants_pdf(req: &HttpRequest) -> bool {
    let accept = req
        .headers()
        .get_all(header::ACCEPT)
        .filter_map(|v| v.to_str().ok())
        .collect::<Vec<_>>()
        .join(",")
        .to_ascii_lowercase();
    let accepts = |media: &str| {
        accept.split(',').any(|range| {
            let mut parts = range.split(';').map(str::trim);
            parts.next() == Some(media)
                && !parts.any(|p| p.replace(' ', "") == "q=0" || p.replace(' ', "") == "q=0.0")
        })
    };
    accepts(PDF) && !accepts("application/json")
}

/// The exam session of the path's ids (404 when it or its academic session is missing).
fn exam_session(conn: &mut TenantConn, path: &PathIds) -> ApiResult<ExamSession> {
    let ids = path.parse()?;
    let (session, id) = match ids.as_slice() {
        [session, id, ..] => (*session, *id),
        _ => return Err(ApiError::not_found()),
    };
    let session = ExamSessions::scope(conn, &[session])?;
    ExamSessions::find(conn, Target::live(session, id))?.ok_or_else(ApiError::not_found)
}

/// The answer: the cards as JSON, or what printing them needs. Printing happens in
/// `respond`, after the database connection is given back.
enum Answer {
    Json(serde_json::Value),
    Pdf(Box<Printable>),
}

/// The cards to print and the settings their pages show.
struct Printable {
    cards: Vec<ReportCard>,
    school: Option<GeneralSettings>,
    report: ReportSettings,
}

fn answer(
    conn: &mut TenantConn,
    cards: Vec<ReportCard>,
    as_pdf: bool,
    one: bool,
) -> ApiResult<Answer> {
    if as_pdf {
        if cards.len() > MAX_PDF_CARDS {
            return Err(ApiError::InvalidQuery(format!(
                "one PDF holds at most {MAX_PDF_CARDS} report cards and this asks for {}: \
                 ask for one class at a time with ?academic_class=",
                cards.len()
            )));
        }
        let (school, report) = print_settings(conn)?;
        return Ok(Answer::Pdf(Box::new(Printable {
            cards,
            school,
            report,
        })));
    }
    let value = if one {
        cards.into_iter().next().map(serde_json::to_value)
    } else {
        Some(serde_json::to_value(cards))
    };
    Ok(Answer::Json(
        value
            .ok_or_else(ApiError::not_found)?
            .map_err(ApiError::internal)?,
    ))
}

async fn respond(answer: Answer) -> ApiResult<HttpResponse> {
    match answer {
        Answer::Json(value) => Ok(HttpResponse::Ok().json(value)),
        Answer::Pdf(printable) => {
            let bytes = web::block(move || {
                pdf::render(
                    &printable.cards,
                    printable.school.as_ref(),
                    &printable.report,
                    chrono::Utc::now().date_naive(),
                )
            })
            .await
            .map_err(ApiError::internal)?;
            Ok(HttpResponse::Ok().content_type(PDF).body(bytes))
        }
    }
}

async fn class_cards(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let path = PathIds::of(request.http());
    let params = query_map(request.http());
    let as_pdf = wants_pdf(request.http());
    let answer = request
        .run(Need::Authenticated, move |conn, caller| {
            let class_id = id_param(&params?, "academic_class")?;
            require_class_access(conn, caller, VIEW, class_id)?;
            let exam_session = exam_session(conn, &path)?;
            let classes = match class_id {
                Some(id) => vec![Classes::find(conn, Target::live((), id))?.ok_or_else(|| {
                    ApiError::InvalidQuery(format!("no live class has the id {id}"))
                })?],
                None => live_classes(conn, exam_session.academic_session_id)?,
            };
            let rules = rules(conn)?;
            let mut all = Vec::new();
            for class in &classes {
                let (sheet, header) = class_sheet(conn, &exam_session, class, rules.clone())?;
                all.extend(readable_cards(conn, &sheet, &header, None));
            }
            answer(conn, all, as_pdf, false)
        })
        .await?;
    respond(answer).await
}

/// Whether `caller` is the student's own user.
fn is_own(caller: &Caller, student: &Student) -> bool {
    caller.user_id().is_some() && caller.user_id() == student.user_id
}

async fn student_card(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let path = PathIds::of(request.http());
    let as_pdf = wants_pdf(request.http());
    let answer = request
        .run(Need::Authenticated, move |conn, caller| {
            let student_id = path.last()?;
            let student = Students::find(conn, Target::live((), student_id))?;
            let own = student.as_ref().is_some_and(|s| is_own(caller, s));
            // The class of the exam session's year (a past year's from its enrollments).
            let exam_session = exam_session(conn, &path);
            let class = match (&student, &exam_session) {
                (Some(s), Ok(es)) => class_during(conn, s.id, s.academic_class_id, es)?,
                (Some(s), Err(_)) => s.academic_class_id,
                (None, _) => None,
            };
            if !own {
                require_class_access(conn, caller, VIEW, class)?;
            }
            let student = student.ok_or_else(ApiError::not_found)?;
            let exam_session = exam_session?;
            let class = match class {
                Some(id) => Classes::find(conn, Target::live((), id))?,
                None => None,
            };
            let rules = rules(conn)?;
            let (sheet, header) = match class {
                Some(class) => class_sheet(conn, &exam_session, &class, rules)?,
                None => classless_sheet(conn, &exam_session, row_of(&student), rules)?,
            };
            let card = readable_cards(conn, &sheet, &header, Some(student.id))
                .pop()
                .ok_or_else(ApiError::not_found)?;
            answer(conn, vec![card], as_pdf, true)
        })
        .await?;
    respond(answer).await
}

fn row_of(student: &Student) -> StudentRow {
    StudentRow {
        id: student.id,
        admission_number: student.admission_number.clone(),
        first_name: student.first_name.clone(),
        last_name: student.last_name.clone(),
    }
}
