//! Where the school app and the console are served: `/app/` on school addresses only,
//! `/` leading to the one that belongs to the host, nothing on unknown hosts.

use crate::helpers::{TestApp, spawn_app};

async fn get(app: &TestApp, path: &str, host: &str) -> reqwest::Response {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    (client.get(format!("{}{path}", app.address)))
        .header("Host", host)
        .send()
        .await
        .expect("request")
}

fn location(res: &reqwest::Response) -> &str {
    res.headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

#[tokio::test]
async fn each_host_gets_its_own_app() {
    let app = spawn_app().await;
    let school = get(&app, "/", "alpha.localhost").await;
    assert_eq!(
        (school.status().as_u16(), location(&school)),
        (302, "/app/")
    );
    let main = get(&app, "/", "localhost").await;
    assert_eq!((main.status().as_u16(), location(&main)), (302, "/admin/"));

    for path in ["/app/", "/app/app.js", "/app/marks.js", "/app/shared.js"] {
        let res = get(&app, path, "alpha.localhost").await;
        assert_eq!(res.status(), 200, "{path}");
        let csp = res.headers()["content-security-policy"]
            .to_str()
            .expect("csp");
        assert!(csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"));
        assert_eq!(get(&app, path, "localhost").await.status(), 404, "{path}");
    }
    assert_eq!(get(&app, "/admin/", "alpha.localhost").await.status(), 404);
    for host in ["localhost", "alpha.localhost"] {
        let icon = get(&app, "/favicon.ico", host).await;
        assert_eq!(icon.status(), 200);
        assert_eq!(icon.headers()["content-type"], "image/svg+xml");
    }
    for path in ["/", "/app/", "/favicon.ico"] {
        assert_eq!(
            get(&app, path, "nowhere.localhost").await.status(),
            404,
            "{path}"
        );
    }
}
