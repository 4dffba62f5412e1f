//! The disclosure log's writer: reads by outside parties hand their disclosures to
//! `DisclosureLog::record`, which only queues them (no I/O on the request's path); one
//! writer thread writes what is queued, school by school, in batches: when
//! `BATCH_ROWS` are waiting or `BATCH_DELAY` after the first of them, whichever comes
//! first.
//!
//! A clean shutdown (`close`) writes everything queued before it returns. A crash (the
//! process killed, the machine lost) loses what was queued and not yet written: at most
//! `BATCH_DELAY` of reads. That is the price of keeping the log off the read path; the
//! alternative, writing each disclosure in the read's own transaction, makes every read
//! by a key a write. A failed batch is retried a few times and then logged as lost.

use std::{
    collections::HashMap,
    sync::{Mutex, mpsc},
    thread::JoinHandle,
    time::{Duration, Instant},
};

use super::disclosures::{Disclosures, NewDisclosure};
use crate::{db::Db, tenancy::TenantRef};

/// The longest a disclosure waits to be written.
pub const BATCH_DELAY: Duration = Duration::from_millis(200);
/// Queued rows that are written at once, without waiting for `BATCH_DELAY`.
pub const BATCH_ROWS: usize = 5_000;
/// Attempts at writing one school's batch before it is given up (and logged).
const ATTEMPTS: u32 = 3;

enum Message {
    Entries(TenantRef, Vec<NewDisclosure>),
    /// Write everything queued, then answer.
    Flush(mpsc::Sender<()>),
    /// Write everything queued, answer and stop.
    Close(mpsc::Sender<()>),
}

/// The queue of disclosures and its writer thread.
pub struct DisclosureLog {
    queue: mpsc::Sender<Message>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

impl DisclosureLog {
    /// Starts the writer, which writes through `db`.
    pub fn start(db: Db) -> Self {
        let (queue, received) = mpsc::channel();
        let writer = std::thread::Builder::new()
            .name("disclosure-log".into())
            .spawn(move || write_batches(&db, &received))
            .ok();
        if writer.is_none() {
            log::error!("cannot start the disclosure log's writer: disclosures are not written");
        }
        Self {
            queue,
            writer: Mutex::new(writer),
        }
    }

    /// Queues `entries` of `school` (never blocks).
    pub fn record(&self, school: TenantRef, entries: Vec<NewDisclosure>) {
        if entries.is_empty() {
            return;
        }
        let count = entries.len();
        if self.queue.send(Message::Entries(school, entries)).is_err() {
            log::error!("the disclosure log is closed: {count} disclosures lost");
        }
    }

    /// Blocks until everything queued before the call is written (tests, benchmarks).
    pub fn flush(&self) {
        let (done, wait) = mpsc::channel();
        if self.queue.send(Message::Flush(done)).is_ok() {
            let _ = wait.recv();
        }
    }

    /// Writes everything queued and stops the writer (clean shutdown); blocks until done.
    /// Disclosures recorded afterwards are lost (and logged).
    pub fn close(&self) {
        let (done, wait) = mpsc::channel();
        if self.queue.send(Message::Close(done)).is_ok() {
            let _ = wait.recv();
        }
        let writer = self.writer.lock().ok().and_then(|mut w| w.take());
        if let Some(writer) = writer {
            let _ = writer.join();
        }
    }
}

/// Queued rows by school.
#[derive(Default)]
struct Pending {
    by_school: HashMap<String, (TenantRef, Vec<NewDisclosure>)>,
    rows: usize,
    /// When the oldest queued row must be written.
    due: Option<Instant>,
}

impl Pending {
    fn add(&mut self, school: TenantRef, entries: Vec<NewDisclosure>) {
        self.rows += entries.len();
        self.due.get_or_insert_with(|| Instant::now() + BATCH_DELAY);
        let key = school.schema_name.to_string();
        self.by_school
            .entry(key)
            .or_insert_with(|| (school, Vec::new()))
            .1
            .extend(entries);
    }

    /// Writes every school's rows; a batch that keeps failing is logged as lost.
    fn write(&mut self, db: &Db) {
        for (_, (school, rows)) in self.by_school.drain() {
            let mut attempt = 1;
            while let Err(err) =
                db.with_tenant(&school, |conn| Disclosures::insert_many(conn, &rows))
            {
                if attempt == ATTEMPTS {
                    log::error!(
                        "{} disclosures of {} lost: {err}",
                        rows.len(),
                        school.schema_name
                    );
                    break;
                }
                attempt += 1;
                std::thread::sleep(BATCH_DELAY);
            }
        }
        self.rows = 0;
        self.due = None;
    }
}

/// The writer thread: batches what arrives until it is due, full, flushed or closed.
fn write_batches(db: &Db, received: &mpsc::Receiver<Message>) {
    let mut pending = Pending::default();
    loop {
        let message = match pending.due {
            None => received
                .recv()
                .map_err(|_| mpsc::RecvTimeoutError::Disconnected),
            Some(due) => received.recv_timeout(due.saturating_duration_since(Instant::now())),
        };
        match message {
            Ok(Message::Entries(school, entries)) => {
                pending.add(school, entries);
                if pending.rows >= BATCH_ROWS {
                    pending.write(db);
                }
            }
            Ok(Message::Flush(done)) => {
                pending.write(db);
                let _ = done.send(());
            }
            Ok(Message::Close(done)) => {
                pending.write(db);
                let _ = done.send(());
                return;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => pending.write(db),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                pending.write(db);
                return;
            }
        }
    }
}
