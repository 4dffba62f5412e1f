//! `/api/v1/school/oauth-clients/`: a school's OneRoster integration clients (API.md 8).
//! The secret is answered once, at creation; only its keyed hash is stored. DELETE revokes:
//! the client's tokens stop working at once.

use std::io::{BufWriter, Seek, SeekFrom};

use actix_web::{HttpResponse, web};
use serde::Serialize;

use crate::{
    api::{
        PathIds,
        body::read_object,
        fields::{Fields, Mode, describe, len},
        openapi::{
            ApiDoc, Auth, Op,
            schema::{object, page_of, request_schema, string},
        },
        pagination::{ListQuery, page},
        routes::Mount,
        spool::{PIECE_BYTES, spool_file, stream_file},
        system::tenants::paging,
    },
    auth::permissions::{Action, Permission, Resource},
    error::{ApiError, ApiResult},
    request::{Need, SchoolRequest},
    school::{
        disclosures::Disclosures,
        oneroster::{
            clients::{self, OauthClient, SCOPES},
            csv,
            roster::Provider,
        },
        table::given,
    },
};

const TAG: &str = "oneroster";

pub fn mount(m: &mut Mount) {
    let client = m.doc().schema::<OauthClient>();
    m.endpoint("/api/v1/school/oauth-clients/")
        .get(list, |doc: &mut ApiDoc| {
            let page = page_of(doc, "OauthClientPage", client.clone());
            paging(Op::new(
                TAG,
                "List the school's integration clients (never their secrets)",
                Auth::BearerOrKey,
            ))
            .ok(200, Some(page))
        })
        .post(create, |doc: &mut ApiDoc| {
            let created = utoipa::openapi::schema::AllOfBuilder::new()
                .item(client.clone())
                .item(object(vec![("client_secret", string())]))
                .build();
            let created = doc.named(
                "OauthClientCreated",
                utoipa::openapi::schema::Schema::AllOf(created).into(),
            );
            Op::new(
                TAG,
                "Create an integration client (the secret is shown once)",
                Auth::BearerOrKey,
            )
            .description(Some(
                "`scopes`: OneRoster 1.2 scope URIs \
                 (`https://purl.imsglobal.org/spec/or/v1p2/scope/roster.readonly` etc.); \
                 default all six.",
            ))
            .body(request_schema(&describe(parse_new), true))
            .ok(201, Some(created))
        });
    m.endpoint("/api/v1/school/oneroster/export/").get(export, {
        Op::new(
            TAG,
            "The school's roster and gradebook as a OneRoster 1.2 CSV zip (bulk)",
            Auth::BearerOrKey,
        )
        .description(Some(
            "`manifest.csv` and the files it lists, with the CSV binding's headers and \
             column order. Needs `view_oauthclient`.",
        ))
        .ok_file(200)
    });
    m.endpoint("/api/v1/school/oauth-clients/{id}/")
        .get(
            retrieve,
            Op::new(TAG, "Retrieve an integration client", Auth::BearerOrKey)
                .ok(200, Some(client.clone())),
        )
        .delete(
            revoke,
            Op::new(
                TAG,
                "Revoke an integration client (its tokens stop working at once)",
                Auth::BearerOrKey,
            )
            .ok(204, None),
        );
}

/// A create's body as read.
struct NewClientFields {
    name: Option<String>,
    scopes: Option<Vec<String>>,
}

/// The rules of a create's body (also its documentation).
fn parse_new(f: &mut Fields<'_>) -> NewClientFields {
    NewClientFields {
        name: f.required("name", &len(1, 100)),
        scopes: f.optional(
            "scopes",
            SCOPES.iter().map(|s| (*s).to_owned()).collect(),
            &|scopes: &Vec<String>| match scopes.iter().find(|s| !SCOPES.contains(&s.as_str())) {
                Some(unknown) => Err(format!("\"{unknown}\" is not a OneRoster 1.2 scope")),
                None => Ok(()),
            },
        ),
    }
}

#[derive(Serialize)]
struct CreatedClient {
    #[serde(flatten)]
    record: OauthClient,
    client_secret: String,
}

async fn list(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let http = request.http().clone();
    let query = ListQuery::parse(&http);
    let page_query = query.as_ref().ok().cloned();
    let (count, rows) = request
        .run(Need::Method(Resource::OauthClient), move |conn, _| {
            let query = query?;
            let (count, rows) = clients::page(conn, query.offset(), query.page_size)?;
            query.check_page(count)?;
            Ok((count, rows))
        })
        .await?;
    let page_query =
        page_query.ok_or_else(|| ApiError::InvalidQuery("bad list parameters".into()))?;
    Ok(HttpResponse::Ok().json(page(&http, &page_query, count, rows)?))
}

async fn create(request: SchoolRequest, payload: web::Payload) -> ApiResult<HttpResponse> {
    let body = read_object(request.http(), payload).await;
    let key = request.state().config.jwt_secret.clone();
    let created = request
        .run(Need::Method(Resource::OauthClient), move |conn, caller| {
            let body = body?;
            let mut f = Fields::new(&body, Mode::Create);
            let parsed = parse_new(&mut f);
            let parsed = f.finish(parsed)?;
            let name = given(parsed.name, "name").map_err(ApiError::internal)?;
            let mut scopes = given(parsed.scopes, "scopes").map_err(ApiError::internal)?;
            scopes.sort();
            scopes.dedup();
            let (record, client_secret) =
                clients::create(conn, key.expose(), &name, &scopes, caller.user_id())?;
            Ok(CreatedClient {
                record,
                client_secret,
            })
        })
        .await?;
    Ok(HttpResponse::Created().json(created))
}

const EXPORT: &[Permission] = &[Permission::new(Action::View, Resource::OauthClient)];

/// The school's OneRoster CSV zip, built in one snapshot of the school into a spool file
/// and streamed from there.
async fn export(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let info = request.http().connection_info().clone();
    let base = format!("{}://{}/ims/oneroster", info.scheme(), info.host());
    let zip = request
        .run(Need::All(EXPORT), move |conn, caller| {
            let provider = Provider {
                base,
                org_id: caller.tenant.id,
                org_name: caller.tenant.name.clone(),
            };
            // Written to a spool file collection by collection, then streamed.
            let spool = BufWriter::with_capacity(PIECE_BYTES, spool_file("oneroster.zip")?);
            let spool = conn.transaction(|conn| csv::export(&provider, conn, spool))?;
            let mut zip = spool
                .into_inner()
                .map_err(|err| ApiError::internal(err.into_error()))?;
            zip.seek(SeekFrom::Start(0)).map_err(ApiError::internal)?;
            // Every live student is in it: read by an API key, a disclosure of each.
            if conn.reader().is_disclosing() {
                let students = Disclosures::live_students(conn)?;
                conn.reader().disclosed(students, "oneroster_export");
            }
            Ok(zip)
        })
        .await?;
    Ok(HttpResponse::Ok()
        // A download like the system export's (generated clients read it as a file);
        // the name says it is a zip.
        .content_type("application/octet-stream")
        .insert_header((
            actix_web::http::header::CONTENT_DISPOSITION,
            "attachment; filename=\"oneroster.zip\"",
        ))
        .insert_header((actix_web::http::header::CACHE_CONTROL, "no-store"))
        .streaming(stream_file(zip)))
}

async fn retrieve(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let path = PathIds::of(request.http());
    let record = request
        .run(Need::Method(Resource::OauthClient), move |conn, _| {
            clients::find(conn, path.last()?)
        })
        .await?
        .ok_or_else(ApiError::not_found)?;
    Ok(HttpResponse::Ok().json(record))
}

async fn revoke(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let path = PathIds::of(request.http());
    request
        .run(
            Need::Method(Resource::OauthClient),
            move |conn, _| match clients::revoke(conn, path.last()?)? {
                true => Ok(()),
                false => Err(ApiError::not_found()),
            },
        )
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
