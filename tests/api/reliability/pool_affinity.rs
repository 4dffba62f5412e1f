//! School affinity and recycling in the real pool against PostgreSQL: the number of
//! schools each backend serves stays bounded however many the pool serves.

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex},
    time::Duration,
};

use diesel::{Connection, RunQueryDsl, dsl::sql, sql_types::Integer};
use futures_util::future::join_all;
use school_service::{
    config::{Config, PoolSizing},
    db::{
        Db,
        pool::{AffinitySettings, Narrow, PoolSettings},
        recycle::RecycleSettings,
    },
    startup::Application,
    tenancy::{TenantRef, directory::TenantDirectory},
};

use crate::helpers::{TestDb, cli, test_config};

const SCHOOLS: usize = 24;
const POOL: u32 = 4;

/// `SCHOOLS` schools in a fresh database.
async fn fleet() -> (Arc<TestDb>, Vec<TenantRef>) {
    let db = Arc::new(tokio::task::spawn_blocking(TestDb::new).await.expect("db"));
    let url = db.url.clone();
    let schools = tokio::task::spawn_blocking(move || {
        let command = format!("tenant create-many --prefix aff --count {SCHOOLS} --jobs 4");
        let (ok, out, err) = cli(&url, &command, &[]);
        assert!(ok, "create-many: {out}{err}");
        let directory = TenantDirectory::new(Db::new(&url, 1, Duration::from_secs(5)));
        (1..=SCHOOLS)
            .map(|i| directory.find_schema(&format!("aff{i}")).expect("school"))
            .collect::<Vec<_>>()
    })
    .await
    .expect("schools");
    (db, schools)
}

/// Runs `passes` round-robin passes over `schools`, 16 units of work in flight, and
/// answers which schools each PostgreSQL backend (by pid) served.
async fn serve(pool: &Db, schools: &[TenantRef], passes: usize) -> HashMap<i32, HashSet<String>> {
    let served: Arc<Mutex<HashMap<i32, HashSet<String>>>> = Arc::default();
    let units: Vec<TenantRef> = (0..passes).flat_map(|_| schools.iter().cloned()).collect();
    for wave in units.chunks(16) {
        let work = wave.iter().cloned().map(|tenant| {
            let (pool, served) = (pool.clone(), served.clone());
            async move {
                let name = tenant.schema_name.as_str().to_owned();
                let pid = pool
                    .run_in_tenant(tenant, |conn| {
                        // Long enough that units of work overlap, and that a successor connection opens within a few of them.
                        diesel::sql_query("SELECT pg_sleep(0.01)").execute(conn.pg())?;
                        Ok(diesel::select(sql::<Integer>("pg_backend_pid()"))
                            .get_result(conn.pg())?)
                    })
                    .await
                    .expect("unit of work");
                served
                    .lock()
                    .expect("served")
                    .entry(pid)
                    .or_default()
                    .insert(name);
            }
        });
        join_all(work).await;
    }
    Arc::try_unwrap(served)
        .expect("one owner")
        .into_inner()
        .expect("served")
}

fn pool(url: &str, homes: usize, max_schools: Option<usize>) -> Db {
    pool_with(
        url,
        homes,
        RecycleSettings {
            max_schools,
            max_backend_bytes: None,
            ..RecycleSettings::default()
        },
    )
}

fn pool_with(url: &str, homes: usize, recycling: RecycleSettings) -> Db {
    Db::open(url, &settings(homes, recycling))
}

fn settings(homes: usize, recycling: RecycleSettings) -> PoolSettings {
    PoolSettings {
        affinity: AffinitySettings {
            homes,
            recycling,
            ..AffinitySettings::default()
        },
        ..PoolSettings::new(POOL, Duration::from_secs(10))
    }
}

/// A budget of `mib` MiB per backend, and no other reason to replace a connection.
fn memory_budget(mib: u64) -> RecycleSettings {
    RecycleSettings {
        max_schools: None,
        max_backend_bytes: Some(mib << 20),
        ..RecycleSettings::default()
    }
}

fn most_schools(served: &HashMap<i32, HashSet<String>>) -> usize {
    served.values().map(HashSet::len).max().unwrap_or(0)
}

#[tokio::test]
async fn with_affinity_each_backend_serves_its_share_of_the_schools_not_all() {
    let (db, schools) = fleet().await;
    // Six passes: about 36 units of work per connection, so a backend meets some 19 of
    // the 24 schools on average (at three passes, 13: too near the bound to tell).
    let without = serve(&pool(&db.url, 0, None), &schools, 6).await;
    let with = serve(&pool(&db.url, 1, None), &schools, 3).await;
    // Without affinity every backend ends up serving most schools.
    assert!(most_schools(&without) > SCHOOLS / 2, "without: {without:?}");
    // A quarter of 24 is 6 homes per connection; borrowing adds a few.
    assert!(
        most_schools(&with) <= SCHOOLS / 2,
        "with affinity: {:?}",
        with.values().map(HashSet::len).collect::<Vec<_>>()
    );
    assert!(
        with.len() <= POOL as usize,
        "no connection was replaced: {with:?}"
    );
}

#[tokio::test]
async fn a_connection_past_its_school_limit_is_replaced_and_no_backend_grows_past_it() {
    let (db, schools) = fleet().await;
    let cap = 3;
    let pool = pool(&db.url, 0, Some(cap));
    let served = serve(&pool, &schools, 4).await;
    // Without affinity, every connection meets a new school at nearly every unit of work:
    // it is replaced soon after its third, while the recycler opens its successor.
    assert!(
        served.len() > POOL as usize * 2,
        "connections were replaced: {} backends",
        served.len()
    );
    let sizes: Vec<usize> = served.values().map(HashSet::len).collect();
    assert!(
        most_schools(&served) <= cap + 8,
        "every backend's schools stay near the cap: {sizes:?}"
    );
    // The pool's own count of the current connections' schools is bounded the same way.
    let current = pool.schools_per_connection();
    assert!(current.iter().all(|&n| n <= cap + 8), "{current:?}");
}

#[tokio::test]
async fn a_backend_past_its_memory_budget_is_replaced_and_one_within_it_is_kept() {
    let (db, schools) = fleet().await;
    // Every connection serves every school (no homes), so each meets 16 new schools and
    // has its backend's memory read; a budget of 1 MiB is below any backend's.
    let small = pool_with(&db.url, 0, memory_budget(1));
    let served = serve(&small, &schools, 6).await;
    assert!(
        served.len() > POOL as usize,
        "over budget: connections were replaced ({} backends)",
        served.len()
    );
    let ample = pool_with(&db.url, 0, memory_budget(1024));
    let served = serve(&ample, &schools, 6).await;
    assert!(
        served.len() <= POOL as usize,
        "within budget: none replaced ({} backends)",
        served.len()
    );
}

/// Without `DB_POOL_SIZE` the server sizes its pool from the schools it finds at start:
/// one connection per hundred, never below the CPU's size; a size that was given stays.
#[tokio::test]
async fn without_a_size_the_pool_follows_the_number_of_schools() {
    let db = Arc::new(tokio::task::spawn_blocking(TestDb::new).await.expect("db"));
    let url = db.url.clone();
    let schools = tokio::task::spawn_blocking(move || {
        let mut conn = diesel::PgConnection::establish(&url).expect("connect");
        // Registry rows are all the sizing reads; the server is never started.
        diesel::sql_query(
            "INSERT INTO tenants (schema_name, name) \
             SELECT 'sized' || i, 'Sized ' || i FROM generate_series(1, 250) i",
        )
        .execute(&mut conn)
        .expect("registry rows");
        diesel::select(sql::<diesel::sql_types::BigInt>("count(*) FROM tenants"))
            .get_result::<i64>(&mut conn)
            .expect("count")
    })
    .await
    .expect("rows");
    assert!((201..=300).contains(&schools), "{schools} schools");

    let sized = |sizing: PoolSizing| {
        let mut config = test_config(&db.url);
        config.db_pool_size = 2;
        config.db_pool_per_school = 1;
        config.db_pool_sizing = sizing;
        Application::build(config).expect("build").pool_size()
    };
    assert_eq!(
        sized(PoolSizing::FollowsSchools),
        4,
        "{schools} schools: three home connections and a spill connection"
    );
    assert_eq!(sized(PoolSizing::Fixed), 2, "a given size stays");
}

/// One home connection per hundred schools up to eighteen, and one spill connection that is
/// nobody's home once there are more than the CPU's; the schools spread over the CPU's size
/// of homes at first; the per-school share and the in-flight cap, which share the running,
/// not the connections, do not move.
#[test]
fn the_pool_for_schools_has_one_connection_per_hundred_up_to_eighteen() {
    let fitted = |sizing: PoolSizing, schools: u64| {
        let mut config = test_config("postgres://unused");
        config.db_pool_size = 6;
        config.db_pool_per_school = 3;
        config.school_max_in_flight = Some(1);
        config.db_pool_sizing = sizing;
        config.fit_pool_to_schools(schools);
        (
            config.db_pool_size,
            config.db_pool_affinity.spill,
            config.db_pool_affinity.narrow.map(|narrow| narrow.spread),
            config.db_pool_per_school,
            config.school_max_in_flight,
        )
    };
    let follows = PoolSizing::FollowsSchools;
    assert_eq!(fitted(follows, 0), (6, None, None, 3, Some(1)));
    assert_eq!(fitted(follows, 600), (6, None, None, 3, Some(1)));
    assert_eq!(fitted(follows, 601), (8, Some(1), Some(7), 3, Some(1)));
    assert_eq!(fitted(follows, 2_000), (19, Some(1), Some(7), 3, Some(1)));
    assert_eq!(fitted(follows, 10_000), (19, Some(1), Some(7), 3, Some(1)));
    assert_eq!(
        fitted(PoolSizing::Fixed, 2_000),
        (6, None, None, 3, Some(1))
    );
    // A CPU pool of 6 fitted to 2,000 schools, after `adjust`.
    let fitted_to_2000 = |adjust: &dyn Fn(&mut Config)| {
        let mut config = test_config("postgres://unused");
        config.db_pool_size = 6;
        config.db_pool_sizing = follows;
        adjust(&mut config);
        config.fit_pool_to_schools(2_000);
        config
    };
    let unbudgeted = fitted_to_2000(&|config| {
        config.db_pool_affinity.recycling.max_backend_bytes = None;
    });
    assert_eq!(
        (unbudgeted.db_pool_size, unbudgeted.db_pool_affinity.narrow),
        (19, None),
        "no budget: spread over all from the start"
    );
    let spills: Vec<_> = [0, 2]
        .into_iter()
        .map(|spill| {
            let config = fitted_to_2000(&|config| config.db_pool_affinity.spill = Some(spill));
            let spread = config.db_pool_affinity.narrow.map(|narrow| narrow.spread);
            (config.db_pool_size, spread)
        })
        .collect();
    assert_eq!(
        spills,
        [(18, Some(6)), (20, Some(8))],
        "DB_POOL_SPILL=0 and 2"
    );
    let no_homes = fitted_to_2000(&|config| config.db_pool_affinity.homes = 0);
    assert_eq!(
        (no_homes.db_pool_size, no_homes.db_pool_affinity.spill),
        (18, None),
        "without affinity no spill connection"
    );
}

/// A pool that spreads the schools over its first connections keeps to them while their
/// backends stay within budget, and spreads them over all its connections once one
/// outgrows it (and is replaced).
#[tokio::test]
async fn a_pool_spread_over_its_first_connections_widens_when_a_backend_outgrows_its_budget() {
    let (db, schools) = fleet().await;
    let spread_over_two = |mib: u64| {
        let mut settings = settings(0, memory_budget(mib));
        settings.affinity.narrow = Some(Narrow {
            spread: 2,
            schools: SCHOOLS as u64,
        });
        Db::open(&db.url, &settings)
    };
    let ample = spread_over_two(1024);
    let served = serve(&ample, &schools, 6).await;
    let state = ample.state();
    assert_eq!((state.spread, state.connections), (2, 2), "within budget");
    assert_eq!(
        served.len(),
        2,
        "within budget: two backends, none replaced"
    );
    // Every connection serves every school (no homes): each meets 16 new schools, has its
    // backend's memory read, and is over a budget of 1 MiB.
    let small = spread_over_two(1);
    serve(&small, &schools, 6).await;
    assert_eq!(small.state().spread, POOL, "over budget: all connections");
    // The new ones are opened on the recycler thread, and serve work.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while small.state().connections < POOL && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(small.state().connections, POOL, "all connections open");
    let served = serve(&small, &schools, 2).await;
    assert!(served.len() > 2, "{} backends served", served.len());
}

/// A pool asked to open its connections ahead opens every one, each while idle, and
/// serves work meanwhile and after.
#[tokio::test]
async fn a_pool_opens_its_connections_ahead_when_asked() {
    let db = Arc::new(tokio::task::spawn_blocking(TestDb::new).await.expect("db"));
    let pool = Db::open(&db.url, &PoolSettings::new(3, Duration::from_secs(5)));
    assert_eq!(pool.state().connections, 0, "none before");
    pool.open_connections();
    let one: i32 = pool
        .run(|conn| Ok(diesel::select(sql::<Integer>("1")).get_result(conn)?))
        .await
        .expect("work meanwhile");
    assert_eq!(one, 1);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while pool.state().connections < 3 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let state = pool.state();
    assert_eq!((state.connections, state.idle_connections), (3, 3));
}
