//! Schools whose commits of events someone in this process is waiting for: the webhook
//! relay running inside `serve` watches the schools it is delivering for, and a commit
//! that numbered events of a watched school (`TenantConn`) wakes it at once. Without it the
//! relay would find a busy school's new events only by looking at its queue again and
//! again (issue 40: those empty looks cost more than the deliveries). A commit made by
//! another process is not seen here; the relay still looks now and then for those.
//!
//! The writer also reads the new events for the relay, on its connection still bound to
//! the school, right after its commit (`Handed`): the relay's own look would have cost a
//! hop to a connection, the binding's statement and the look, a third of what a delivery
//! cost PostgreSQL. The relay says where to read from (`Watching::read_from`) and takes a
//! batch only when it follows on from what it has read; otherwise it looks itself.
//!
//! A commit of an unwatched school costs one atomic load when nothing is watched, and a
//! map look-up under a short lock otherwise.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering},
    },
};

use chrono::{DateTime, Utc};
use diesel::{QueryableByName, sql_types};
use serde_json::Value;
use tokio::sync::Notify;
use uuid::Uuid;

use super::schema_name::SchemaName;

/// A committed event, as the relay reads it past its cursor and deliveries carry it.
#[derive(QueryableByName, Debug, Clone)]
pub struct NewEvent {
    #[diesel(sql_type = sql_types::BigInt)]
    pub seq: i64,
    #[diesel(sql_type = sql_types::Uuid)]
    pub id: Uuid,
    #[diesel(sql_type = sql_types::Text)]
    pub event_type: String,
    #[diesel(sql_type = sql_types::Uuid)]
    pub record_id: Uuid,
    #[diesel(sql_type = sql_types::Timestamptz)]
    pub occurred_at: DateTime<Utc>,
    #[diesel(sql_type = sql_types::Jsonb)]
    pub data: Value,
}

/// What a writer read for the watcher after its commit: the events numbered after
/// `after`, in order, all of them unless `full` (the read stopped at its limit).
#[derive(Debug)]
pub struct Handed {
    pub after: i64,
    pub events: Vec<NewEvent>,
    pub full: bool,
}

/// `Watched::after` when writers are not to read for the watcher.
const NO_READ: i64 = i64::MIN;

struct Watched {
    notify: Notify,
    /// Where writers read from for the watcher (`NO_READ`: they do not).
    after: AtomicI64,
    handed: Mutex<Vec<Handed>>,
    /// A commit woke the watcher without handing what it committed.
    unread: AtomicBool,
}

#[derive(Default)]
pub struct CommitWatch {
    /// How many schools are watched: zero makes `committed` a single load.
    watched: AtomicUsize,
    schools: Mutex<HashMap<SchemaName, Arc<Watched>>>,
}

impl CommitWatch {
    /// Watches `school` until the answer is dropped. One watcher per school: a second
    /// `watch` of the same school takes it over.
    pub fn watch(self: &Arc<Self>, school: SchemaName) -> Watching {
        let watched = Arc::new(Watched {
            notify: Notify::new(),
            after: AtomicI64::new(NO_READ),
            handed: Mutex::default(),
            unread: AtomicBool::new(false),
        });
        let mut schools = self.schools.lock().unwrap_or_else(PoisonError::into_inner);
        if schools.insert(school.clone(), watched.clone()).is_none() {
            self.watched.fetch_add(1, Ordering::Relaxed);
        }
        Watching {
            watch: self.clone(),
            school,
            watched,
        }
    }

    /// A transaction of `school` committed events. When the watcher wants them read,
    /// `read(after)` reads them (on the writer's connection; `None` if it cannot) and
    /// they are handed over with the wake-up.
    pub(crate) fn committed(&self, school: &SchemaName, read: impl FnOnce(i64) -> Option<Handed>) {
        if self.watched.load(Ordering::Relaxed) == 0 {
            return;
        }
        let watched = {
            let schools = self.schools.lock().unwrap_or_else(PoisonError::into_inner);
            match schools.get(school) {
                Some(watched) => watched.clone(),
                None => return,
            }
        };
        let after = watched.after.load(Ordering::Acquire);
        match (after != NO_READ).then(|| read(after)).flatten() {
            Some(handed) => watched
                .handed
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(handed),
            None => watched.unread.store(true, Ordering::Release),
        }
        // A permit is kept when the watcher is not waiting: a commit between two of its
        // waits is not missed.
        watched.notify.notify_one();
    }
}

/// One school watched (see `CommitWatch::watch`).
pub struct Watching {
    watch: Arc<CommitWatch>,
    school: SchemaName,
    watched: Arc<Watched>,
}

impl Watching {
    /// Waits for the school's next commit of events (at once if one came since the last
    /// wait).
    pub async fn committed(&self) {
        self.watched.notify.notified().await;
    }

    /// Where writers are to read new events from for this watcher from now on (`None`:
    /// they are not to; it will look itself).
    pub fn read_from(&self, after: Option<i64>) {
        self.watched
            .after
            .store(after.unwrap_or(NO_READ), Ordering::Release);
    }

    /// What writers read since the last call, in the order they handed it, and whether a
    /// commit came meanwhile that nobody read for (then the watcher looks itself).
    pub fn take_handed(&self) -> (Vec<Handed>, bool) {
        let unread = self.watched.unread.swap(false, Ordering::AcqRel);
        let handed = std::mem::take(
            &mut *self
                .watched
                .handed
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        (handed, unread)
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        let mut schools = self
            .watch
            .schools
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if schools
            .get(&self.school)
            .is_some_and(|w| Arc::ptr_eq(w, &self.watched))
        {
            schools.remove(&self.school);
            self.watch.watched.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn school(name: &str) -> SchemaName {
        SchemaName::parse(name).expect("schema name")
    }

    #[tokio::test]
    async fn a_commit_wakes_only_its_school_s_watcher_even_before_it_waits() {
        let watch = Arc::new(CommitWatch::default());
        let a = watch.watch(school("school_a"));
        let b = watch.watch(school("school_b"));
        watch.committed(&school("school_a"), |_| None);
        tokio::time::timeout(Duration::from_secs(1), a.committed())
            .await
            .expect("a's commit wakes a");
        let woken = tokio::time::timeout(Duration::from_millis(50), b.committed()).await;
        assert!(woken.is_err(), "a's commit must not wake b");
        drop(a);
        drop(b);
        assert_eq!(watch.watched.load(Ordering::Relaxed), 0);
        assert!(watch.schools.lock().expect("lock").is_empty());
    }

    #[tokio::test]
    async fn writers_read_for_the_watcher_only_from_where_it_asks() {
        let watch = Arc::new(CommitWatch::default());
        let a = watch.watch(school("school_a"));
        let read = |after: i64| {
            Some(Handed {
                after,
                events: Vec::new(),
                full: false,
            })
        };
        // Not asked: nothing read, and the watcher knows a commit went unread.
        watch.committed(&school("school_a"), |_| panic!("read without being asked"));
        let (handed, unread) = a.take_handed();
        assert!(handed.is_empty() && unread);
        a.read_from(Some(41));
        watch.committed(&school("school_a"), read);
        watch.committed(&school("school_a"), read);
        let (handed, unread) = a.take_handed();
        assert_eq!(handed.iter().map(|h| h.after).collect::<Vec<_>>(), [41, 41]);
        assert!(!unread);
        // A read that fails leaves the look to the watcher.
        watch.committed(&school("school_a"), |_| None);
        assert!(a.take_handed().1);
        a.read_from(None);
        watch.committed(&school("school_a"), |_| {
            panic!("read after being told not to")
        });
        assert!(a.take_handed().1);
    }

    #[tokio::test]
    async fn a_watcher_taken_over_is_not_unregistered_by_the_old_one() {
        let watch = Arc::new(CommitWatch::default());
        let old = watch.watch(school("school_a"));
        let new = watch.watch(school("school_a"));
        drop(old);
        watch.committed(&school("school_a"), |_| None);
        tokio::time::timeout(Duration::from_secs(1), new.committed())
            .await
            .expect("the new watcher is woken");
        assert_eq!(watch.watched.load(Ordering::Relaxed), 1);
    }
}
