//! One thread per pooled connection (its *lane*), running the units of work granted that
//! connection's slot, one after the other: the one hop a database request makes.
//!
//! Before, a unit of work waited on the executor for its slot, then moved to the blocking
//! pool and was woken with its answer. Under load the thread releasing a connection woke a
//! waiting request's worker, which then woke a blocking thread: two hand-offs and three
//! wake-ups per request. Here a unit of work that has to wait is queued as itself: the
//! slot's grant ([`Grant::Hand`]) puts it on the slot's lane, which is usually the very
//! thread releasing the slot, so it runs next without waking anyone. The request's worker
//! is woken once, with the answer. Which unit of work gets which slot, and when, is the
//! dispatcher's rule as before (`db::affinity`); diesel runs on lanes, never on the
//! executor.

use std::{
    collections::VecDeque,
    panic::AssertUnwindSafe,
    sync::{Arc, Condvar, Mutex, MutexGuard},
    time::Instant,
};

use tokio::sync::oneshot;

use crate::db::{
    affinity::{Claim, Grant},
    slots::{SlotTicket, Slots},
};

/// A unit of work waiting for a slot; run on the slot's lane with the slot's ticket.
type Unit = Box<dyn FnOnce(SlotTicket) + Send>;

/// Why a unit of work gave no answer.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Missed {
    /// No slot came before the deadline: the work never ran.
    Timeout,
    /// The work panicked (or its lane could not start).
    Failed,
}

/// The pool's lanes, one per slot; each thread starts with its first unit of work and
/// ends once the lanes are dropped and its queue is empty.
pub(crate) struct Lanes {
    lanes: Vec<Arc<Lane>>,
}

struct Lane {
    state: Mutex<LaneState>,
    ready: Condvar,
}

#[derive(Default)]
struct LaneState {
    queue: VecDeque<(Unit, SlotTicket)>,
    started: bool,
    /// The thread waits on `ready` (only then is it notified: a notification is a syscall).
    sleeping: bool,
    closed: bool,
}

impl Lane {
    fn state(&self) -> MutexGuard<'_, LaneState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Lanes {
    pub fn new(size: usize) -> Arc<Self> {
        let lanes = (0..size)
            .map(|_| {
                Arc::new(Lane {
                    state: Mutex::new(LaneState::default()),
                    ready: Condvar::new(),
                })
            })
            .collect();
        Arc::new(Self { lanes })
    }

    /// Runs `work` with a slot chosen for the school keyed `school` (or none), on that
    /// slot's lane, and waits for its answer. A unit of work still queued after the pool's
    /// `borrow_after` (`affinity::BORROW_AFTER` by default) may borrow an idle connection,
    /// more widely after `borrow_any_after` (the dispatcher's rule), and gives up at
    /// `deadline`; once it has a slot, it runs to the end. Cancel-safe: a unit of work whose
    /// caller is gone before it got a slot leaves the queue unrun.
    pub async fn run<T, F>(
        self: &Arc<Self>,
        slots: &Arc<Slots>,
        school: Option<u64>,
        deadline: Instant,
        work: F,
    ) -> Result<T, Missed>
    where
        F: FnOnce(SlotTicket) -> T + Send + 'static,
        T: Send + 'static,
    {
        let (answer, mut answered) = oneshot::channel();
        let unit: Unit = Box::new(move |ticket| {
            let _ = answer.send(work(ticket));
        });
        let unit = Arc::new(Mutex::new(Some(unit)));
        let hand = {
            let (lanes, slots, unit) = (self.clone(), slots.clone(), unit.clone());
            move |slot| lanes.start(&slots, slot, &unit)
        };
        let dispatcher = slots.dispatcher();
        let id = match dispatcher.claim(dispatcher.preference(school), Grant::Hand(Box::new(hand)))
        {
            Claim::Now(slot) => {
                self.start(slots, slot, &unit);
                return answered.await.map_err(|_| Missed::Failed);
            }
            Claim::Queued(id) => id,
        };
        let mut queued = Queued {
            slots,
            id: Some(id),
        };
        // Each `borrow_after` waited lets it borrow more widely (`Dispatcher::borrow`).
        let queued_at = Instant::now();
        for borrow_after in slots.borrow_times() {
            let borrow_at = (queued_at + borrow_after).min(deadline);
            if let Ok(answer) = tokio::time::timeout_at(borrow_at.into(), &mut answered).await {
                queued.id = None;
                return answer.map_err(|_| Missed::Failed);
            }
            if let Some(slot) = dispatcher.borrow(id) {
                queued.id = None;
                self.start(slots, slot, &unit);
                return answered.await.map_err(|_| Missed::Failed);
            }
        }
        match tokio::time::timeout_at(deadline.into(), &mut answered).await {
            Ok(answer) => {
                queued.id = None;
                return answer.map_err(|_| Missed::Failed);
            }
            Err(_) if dispatcher.cancel(id) => {
                queued.id = None;
                return Err(Missed::Timeout);
            }
            Err(_) => {}
        }
        // Granted (or answered) meanwhile: it runs to the end.
        queued.id = None;
        answered.await.map_err(|_| Missed::Failed)
    }

    /// Puts the unit of work, if still there, on `slot`'s lane with the slot's ticket.
    /// Called under the dispatcher's lock when the slot is granted: quick, and it drops no
    /// ticket (that would release a slot, i.e. take the lock again).
    fn start(&self, slots: &Arc<Slots>, slot: usize, unit: &Mutex<Option<Unit>>) -> bool {
        let Some(unit) = unit.lock().unwrap_or_else(|p| p.into_inner()).take() else {
            return false;
        };
        let lane = &self.lanes[slot];
        let mut state = lane.state();
        state.queue.push_back((unit, slots.ticket(slot)));
        if !state.started {
            state.started = true;
            let thread_lane = lane.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("db-lane-{slot}"))
                .spawn(move || serve(&thread_lane));
            if let Err(err) = spawned {
                // Left queued (dropping its ticket here would take the dispatcher's lock
                // again): the lane's next unit of work tries to start it again.
                log::error!("could not start database lane {slot}: {err}");
                state.started = false;
            }
        } else if state.sleeping {
            lane.ready.notify_one();
        }
        true
    }
}

impl Drop for Lanes {
    fn drop(&mut self) {
        for lane in &self.lanes {
            lane.state().closed = true;
            lane.ready.notify_one();
        }
    }
}

/// A lane's thread: its units of work in the order they came, until closed and empty.
fn serve(lane: &Lane) {
    let mut state = lane.state();
    loop {
        if let Some((unit, ticket)) = state.queue.pop_front() {
            drop(state);
            // A panic fails its own request only: its answer's sender is dropped.
            let _ = std::panic::catch_unwind(AssertUnwindSafe(|| unit(ticket)));
            state = lane.state();
            continue;
        }
        if state.closed {
            return;
        }
        state.sleeping = true;
        state = lane.ready.wait(state).unwrap_or_else(|p| p.into_inner());
        state.sleeping = false;
    }
}

/// A unit of work's place in the dispatcher's queue; dropped while still there (its caller
/// is gone), it leaves the queue.
struct Queued<'a> {
    slots: &'a Arc<Slots>,
    id: Option<u64>,
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            self.slots.dispatcher().cancel(id);
        }
    }
}
