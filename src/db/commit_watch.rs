//! Schools whose commits of events someone in this process is waiting for: the webhook
//! relay running inside `serve` watches the schools it is delivering for, and a commit
//! that numbered events of a watched school (`TenantConn`) wakes it at once. Without it the
//! relay would find a busy school's new events only by looking at its queue again and
//! again (issue 40: those empty looks cost more than the deliveries). A commit made by
//! another process is not seen here; the relay still looks now and then for those.
//!
//! A commit of an unwatched school costs one atomic load when nothing is watched, and a
//! map look-up under a short lock otherwise.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicUsize, Ordering},
    },
};

use tokio::sync::Notify;

use super::schema_name::SchemaName;

#[derive(Default)]
pub struct CommitWatch {
    /// How many schools are watched: zero makes `committed` a single load.
    watched: AtomicUsize,
    schools: Mutex<HashMap<SchemaName, Arc<Notify>>>,
}

impl CommitWatch {
    /// Watches `school` until the answer is dropped. One watcher per school: a second
    /// `watch` of the same school takes it over.
    pub fn watch(self: &Arc<Self>, school: SchemaName) -> Watching {
        let notify = Arc::new(Notify::new());
        let mut schools = self.schools.lock().unwrap_or_else(PoisonError::into_inner);
        if schools.insert(school.clone(), notify.clone()).is_none() {
            self.watched.fetch_add(1, Ordering::Relaxed);
        }
        Watching {
            watch: self.clone(),
            school,
            notify,
        }
    }

    /// A transaction of `school` committed events.
    pub(crate) fn committed(&self, school: &SchemaName) {
        if self.watched.load(Ordering::Relaxed) == 0 {
            return;
        }
        let schools = self.schools.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(notify) = schools.get(school) {
            // A permit is kept when the watcher is not waiting: a commit between two of
            // its waits is not missed.
            notify.notify_one();
        }
    }
}

/// One school watched (see `CommitWatch::watch`).
pub struct Watching {
    watch: Arc<CommitWatch>,
    school: SchemaName,
    notify: Arc<Notify>,
}

impl Watching {
    /// Waits for the school's next commit of events (at once if one came since the last
    /// wait).
    pub async fn committed(&self) {
        self.notify.notified().await;
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
            .is_some_and(|n| Arc::ptr_eq(n, &self.notify))
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
        watch.committed(&school("school_a"));
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
    async fn a_watcher_taken_over_is_not_unregistered_by_the_old_one() {
        let watch = Arc::new(CommitWatch::default());
        let old = watch.watch(school("school_a"));
        let new = watch.watch(school("school_a"));
        drop(old);
        watch.committed(&school("school_a"));
        tokio::time::timeout(Duration::from_secs(1), new.committed())
            .await
            .expect("the new watcher is woken");
        assert_eq!(watch.watched.load(Ordering::Relaxed), 1);
    }
}
