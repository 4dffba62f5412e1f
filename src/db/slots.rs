//! The pool's connections: one slot per connection, handed out by `affinity::Dispatcher`,
//! each connection replaced by `recycle` when it is due.
//!
//! A slot is held through a [`SlotTicket`] (one holder at a time); the connection in it is
//! opened on first use, and taken out for a unit of work as a [`PooledConn`], which puts it
//! back (or drops it when broken) and frees the slot when dropped.

use std::{
    ops::{Deref, DerefMut},
    sync::{
        Arc, Mutex, MutexGuard,
        atomic::{AtomicBool, Ordering},
        mpsc,
    },
    time::{Duration, Instant},
};

use crate::{
    db::{
        affinity::{Claim, Dispatcher, Grant},
        pool::{AffinitySettings, Connector, PgConn, PoolMode},
        recycle::{self, ConnLife, Job, Reason, RecycleSettings},
    },
    error::{ApiError, ApiResult},
    observability::metrics,
};

struct Slot {
    conn: Option<PgConn>,
    life: ConnLife,
    /// The successor the recycler opened, taking over at the next checkout.
    successor: Option<(PgConn, Reason)>,
    /// A successor is being opened (or waits): do not ask for another.
    replacing: bool,
}

pub struct Slots {
    slots: Vec<Mutex<Slot>>,
    dispatcher: Dispatcher,
    connector: Connector,
    recycling: RecycleSettings,
    /// How long a waiter for its homes waits before it may borrow a connection that knows
    /// its school, and before any (`AffinitySettings`).
    borrow_times: [Duration; 2],
    /// To the recycler thread.
    jobs: Mutex<mpsc::Sender<Job>>,
    /// While the schools are spread over the first connections only: the schools each is
    /// home to, which a memory reading is projected to (`widen`).
    narrow_homes: Option<usize>,
    /// Backends' memory can be read (a budget is set, and the role may read
    /// `pg_backend_memory_contexts`: cleared at the first refusal).
    measuring: AtomicBool,
}

impl Slots {
    /// `size` slots, none connected yet; starts the recycler thread.
    pub fn new(size: usize, affinity: &AffinitySettings, connector: Connector) -> Arc<Self> {
        let recycling = affinity.recycling;
        let dispatcher = Dispatcher::new(size, affinity.homes)
            .with_spill(affinity.spill.unwrap_or(0))
            .with_running(affinity.running.unwrap_or(size))
            .with_spread(affinity.narrow.map_or(size, |narrow| narrow.spread));
        // What the dispatcher made of it (none without affinity).
        let spill = dispatcher.spill();
        let (jobs, queue) = mpsc::channel();
        let slots = Arc::new(Self {
            slots: (0..size)
                .map(|_| {
                    Mutex::new(Slot {
                        conn: None,
                        life: ConnLife::new(&recycling),
                        successor: None,
                        replacing: false,
                    })
                })
                .collect(),
            dispatcher,
            narrow_homes: affinity
                .narrow
                .map(|narrow| narrow.homes_per_connection(affinity.homes, spill)),
            borrow_times: [
                affinity.borrow_after,
                affinity.borrow_any_after.max(affinity.borrow_after),
            ],
            connector,
            measuring: AtomicBool::new(recycling.max_backend_bytes.is_some()),
            recycling,
            jobs: Mutex::new(jobs),
        });
        recycle::spawn(Arc::downgrade(&slots), queue);
        slots
    }

    fn slot(&self, slot: usize) -> MutexGuard<'_, Slot> {
        self.slots[slot].lock().unwrap_or_else(|p| p.into_inner())
    }

    fn send(&self, job: Job) {
        let jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        // The recycler only stops once the pool is dropped.
        let _ = jobs.send(job);
    }

    /// Waits on this (blocking) thread for a slot, at most `timeout`.
    pub fn take_blocking(self: &Arc<Self>, timeout: Duration) -> Option<SlotTicket> {
        let (sender, receiver) = mpsc::sync_channel(1);
        let preference = self.dispatcher.preference(None);
        let id = match self.dispatcher.claim(preference, Grant::Blocking(sender)) {
            Claim::Now(slot) => return Some(self.ticket(slot)),
            Claim::Queued(id) => id,
        };
        if let Ok(slot) = receiver.recv_timeout(timeout) {
            return Some(self.ticket(slot));
        }
        if self.dispatcher.cancel(id) {
            return None;
        }
        // Granted between the timeout and the cancel: it came after all.
        receiver.try_recv().ok().map(|slot| self.ticket(slot))
    }

    /// How long after queueing a waiter for its homes may borrow more widely: a connection
    /// that knows its school after `borrow_after`, any connection after `borrow_any_after`
    /// (`affinity::Dispatcher::borrow`).
    pub(crate) fn borrow_times(&self) -> [Duration; 2] {
        self.borrow_times
    }

    /// The dispatcher, for work queued as jobs (`db::lanes`).
    pub(crate) fn dispatcher(&self) -> &Dispatcher {
        &self.dispatcher
    }

    /// The ticket of `slot`, which the caller was granted.
    pub(crate) fn ticket(self: &Arc<Self>, slot: usize) -> SlotTicket {
        SlotTicket {
            slots: self.clone(),
            slot,
        }
    }

    /// The connection of `ticket`'s slot, opened (on this blocking thread) when the slot has
    /// none; its successor first when the recycler has one ready.
    pub fn checkout(&self, ticket: SlotTicket, school: Option<u64>) -> ApiResult<PooledConn> {
        let mut slot = self.slot(ticket.slot);
        // A new connection in the slot: its backend knows no school yet.
        let mut fresh = false;
        if let Some((successor, reason)) = slot.successor.take() {
            fresh = true;
            if let Some(old) = slot.conn.replace(successor) {
                self.send(Job::Close(Box::new(old)));
            }
            slot.life = ConnLife::new(&self.recycling);
            slot.replacing = false;
            metrics::pool_connection_recycled(reason.label());
        }
        let conn = match slot.conn.take() {
            Some(conn) => conn,
            None => {
                drop(slot);
                let (conn, relocked) = self.connect_fresh(ticket.slot).map_err(|err| {
                    log::warn!("could not open a database connection: {err}");
                    ApiError::ServiceUnavailable
                })?;
                slot = relocked;
                fresh = true;
                conn
            }
        };
        let new_school = slot.life.served(school);
        if new_school {
            metrics::pool_connection_schools(ticket.slot, slot.life.schools());
        }
        drop(slot);
        if new_school || fresh {
            self.dispatcher.served(ticket.slot, school, fresh);
        }
        Ok(PooledConn {
            conn: Some(conn),
            ticket: Some(ticket),
        })
    }

    /// A unit of work is done with `conn`: back into its slot unless broken (then the
    /// ticket frees the slot); a successor is asked for when the connection is due. When
    /// its backend's memory is to be read, the recycler does that first, holding the slot
    /// meanwhile, so the request that used it is not kept waiting.
    fn put_back(&self, ticket: SlotTicket, conn: PgConn) {
        if self.measuring.load(Ordering::Relaxed) && conn.mode == PoolMode::Session {
            let reading_due = self.slot(ticket.slot).life.reading_due(&self.recycling);
            if reading_due && !conn.broken {
                self.send(Job::Measure(Box::new(conn), ticket));
                return;
            }
        }
        self.store(&ticket, conn);
    }

    fn store(&self, ticket: &SlotTicket, mut conn: PgConn) {
        if conn.broken || diesel::r2d2::R2D2Connection::is_broken(&mut conn.conn) {
            return;
        }
        let now = Instant::now();
        let mut slot = self.slot(ticket.slot);
        slot.life.used(now);
        slot.conn = Some(conn);
        if slot.replacing {
            return;
        }
        if let Some(reason) = slot.life.due(&self.recycling, now) {
            slot.replacing = true;
            drop(slot);
            self.replace(ticket.slot, reason);
        }
    }

    /// Asks the recycler for a successor to `index`'s connection, whose slot is marked
    /// replacing. A backend that outgrew its memory budget first widens the pool to all
    /// its connections (if the projection did not already): the schools' catalog entries
    /// do not fit the ones they are spread over.
    fn replace(&self, index: usize, reason: Reason) {
        // A spill connection's schools are not spread over it: it is only replaced.
        if reason == Reason::Memory && !self.dispatcher.is_spill(index) {
            self.widen();
        }
        self.send(Job::Replace(index));
    }

    /// Spreads the schools over every connection (`Dispatcher::widen`), once, and has the
    /// new ones opened off the request path. Asked for when a reading projects a backend
    /// past its budget once it has served all its homes (early: the fewer schools warmed
    /// on a home they then leave, the better), when one is past it, and when memory
    /// cannot be read.
    fn widen(&self) {
        if self.dispatcher.widen() {
            log::info!(
                "pool: the schools' catalog entries outgrow the memory budget of the \
                 connections they were spread over; they now spread over all {}",
                self.slots.len()
            );
            metrics::pool_widened();
            self.send(Job::Open);
        }
    }

    /// How many connections the schools are spread over: the first ones until the pool
    /// widens (`widen`).
    pub fn spread(&self) -> usize {
        self.dispatcher.spread()
    }

    /// The recycler's part: reads the memory of `conn`'s backend, then puts it back into
    /// the slot `ticket` holds (and frees the slot).
    pub(crate) fn measure(&self, mut conn: PgConn, ticket: SlotTicket) {
        use diesel::{RunQueryDsl, dsl::sql, sql_types::BigInt};
        let query = "(SELECT coalesce(sum(total_bytes), 0)::int8 FROM pg_backend_memory_contexts)";
        let bytes = match diesel::select(sql::<BigInt>(query)).get_result::<i64>(&mut conn.conn) {
            Ok(bytes) => {
                let bytes = u64::try_from(bytes).unwrap_or(0);
                metrics::pool_connection_memory(ticket.slot, bytes);
                Some(bytes)
            }
            Err(diesel::result::Error::DatabaseError(_, info))
                if info.message().contains("permission denied") =>
            {
                self.measuring.store(false, Ordering::Relaxed);
                log::warn!(
                    "DB_POOL_MAX_BACKEND_MIB is not applied: this role may not read \
                     pg_backend_memory_contexts (grant it pg_read_all_stats; see \
                     docs/scale-out.md)"
                );
                // Unmeasured, the backends are bounded only by how widely the schools
                // spread: over every connection.
                self.widen();
                None
            }
            Err(err) => {
                log::warn!("could not read a pooled backend's memory: {err}");
                None
            }
        };
        let mut slot = self.slot(ticket.slot);
        slot.life.read_memory(bytes);
        // Only while the schools are spread over the first connections: once widened there
        // is nothing left to widen.
        let narrow =
            self.dispatcher.spread() < self.slots.len() && !self.dispatcher.is_spill(ticket.slot);
        let outgrows = (self.narrow_homes.filter(|_| narrow))
            .is_some_and(|homes| slot.life.would_outgrow(&self.recycling, homes));
        drop(slot);
        if outgrows {
            self.widen();
        }
        self.store(&ticket, conn);
    }

    /// The recycler's part: opens a successor for `slot_index` (one at a time: the
    /// recycler is one thread).
    pub(crate) fn open_successor(&self, slot_index: usize) {
        let reason = {
            let slot = self.slot(slot_index);
            slot.life
                .due(&self.recycling, Instant::now())
                .unwrap_or(Reason::Lifetime)
        };
        match self.connector.connect() {
            Ok(conn) => self.slot(slot_index).successor = Some((conn, reason)),
            Err(err) => {
                log::warn!("could not open a successor connection: {err}");
                self.slot(slot_index).replacing = false;
            }
        }
    }

    /// Asks the recycler to open every connection not open yet (`open_idle`).
    pub(crate) fn open_all(&self) {
        self.send(Job::Open);
    }

    /// The recycler's part: opens the connection of each idle slot that has none, holding
    /// the slot meanwhile; stops at the first that cannot be opened (the database is out of
    /// reach: the slots open on demand later).
    pub(crate) fn open_idle(&self) {
        for index in 0..self.slots.len() {
            if !self.dispatcher.claim_idle(index) {
                continue;
            }
            let open = self.slot(index).conn.is_some();
            let opened = if open { Ok(()) } else { self.open_in(index) };
            self.dispatcher.release(index);
            if let Err(err) = opened {
                log::warn!("could not open a database connection ahead: {err}");
                return;
            }
        }
    }

    /// Opens a connection into `index`'s slot, which the caller holds: a new backend,
    /// which knows no school yet.
    fn open_in(&self, index: usize) -> diesel::ConnectionResult<()> {
        let (conn, mut slot) = self.connect_fresh(index)?;
        slot.conn = Some(conn);
        drop(slot);
        self.dispatcher.served(index, None, true);
        Ok(())
    }

    /// A new connection for `index`'s slot, which the caller holds (opened without the
    /// slot's lock), and the slot locked again with its life started afresh.
    fn connect_fresh(
        &self,
        index: usize,
    ) -> diesel::ConnectionResult<(PgConn, MutexGuard<'_, Slot>)> {
        let conn = self.connector.connect()?;
        let mut slot = self.slot(index);
        slot.life = ConnLife::new(&self.recycling);
        Ok((conn, slot))
    }

    /// The recycler's part: closes connections idle too long, and swaps in successors of
    /// idle slots (one idle slot at a time, held only for the swap).
    pub(crate) fn sweep(&self, now: Instant) {
        for index in 0..self.slots.len() {
            if !self.dispatcher.claim_idle(index) {
                continue;
            }
            let mut slot = self.slot(index);
            let (mut closing, mut due) = (None, None);
            if slot.life.idle_too_long(&self.recycling, now) {
                // A successor too: the slot opens afresh on its next use.
                closing = slot.conn.take();
                slot.successor = None;
                slot.replacing = false;
            } else if slot.conn.is_some() && !slot.replacing {
                due = slot.life.due(&self.recycling, now);
                slot.replacing = due.is_some();
            }
            drop(slot);
            if let Some(reason) = due {
                self.replace(index, reason);
            }
            self.dispatcher.release(index);
            drop(closing);
        }
    }

    /// Connections open and idle now (for `/metrics` and tests).
    pub fn counts(&self) -> (u32, u32) {
        let open = self
            .slots
            .iter()
            .map(|slot| slot.lock().unwrap_or_else(|p| p.into_inner()))
            .filter(|slot| slot.conn.is_some())
            .count();
        let idle = self.dispatcher.idle_count().min(open);
        (open as u32, idle as u32)
    }

    /// For each slot with a connection, how many distinct schools it has served.
    pub fn schools_per_connection(&self) -> Vec<usize> {
        self.slots
            .iter()
            .map(|slot| slot.lock().unwrap_or_else(|p| p.into_inner()))
            .filter(|slot| slot.conn.is_some())
            .map(|slot| slot.life.schools())
            .collect()
    }
}

/// The right to one slot; freed when dropped.
pub struct SlotTicket {
    slots: Arc<Slots>,
    slot: usize,
}

impl SlotTicket {
    pub fn slots(&self) -> &Arc<Slots> {
        &self.slots
    }
}

impl Drop for SlotTicket {
    fn drop(&mut self) {
        self.slots.dispatcher.release(self.slot);
    }
}

/// A connection out of its slot for one unit of work.
pub struct PooledConn {
    conn: Option<PgConn>,
    ticket: Option<SlotTicket>,
}

impl Deref for PooledConn {
    type Target = PgConn;
    fn deref(&self) -> &PgConn {
        self.conn.as_ref().expect("connection until dropped")
    }
}

impl DerefMut for PooledConn {
    fn deref_mut(&mut self) -> &mut PgConn {
        self.conn.as_mut().expect("connection until dropped")
    }
}

impl Drop for PooledConn {
    /// The connection goes back before the slot is freed, so its next holder finds it.
    fn drop(&mut self) {
        if let (Some(conn), Some(ticket)) = (self.conn.take(), self.ticket.take()) {
            ticket.slots.clone().put_back(ticket, conn);
        }
    }
}
