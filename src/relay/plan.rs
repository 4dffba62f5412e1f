//! One visit's bookkeeping, in memory: which of the school's new events go to which
//! subscription now, which wait behind an earlier event of their record, and how far each
//! subscription may be moved on (`queued_through`) once a batch of answers is recorded.
//! No query here: `school` reads and records, this decides.
//!
//! A subscription's cursor may pass an event only once the event is answered and
//! recorded, or parked in the queue in the same recording. So after a crash the cursor is
//! at or before every event whose delivery was not recorded: those are sent again, with
//! the same `webhook-id` (at least once).

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

use uuid::Uuid;

use crate::{
    db::commit_watch::Handed,
    school::webhook_queue::{
        Acknowledged, Due, HandedOn, Held, NewEvent, Outcome, Parked, Recording, Subscription,
    },
};

/// Where a delivery came from: the events past the cursor, or the queue (a retry, "send
/// again", an event that was held).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Source {
    Fresh,
    Queued,
}

struct Sub {
    sub: Subscription,
    /// Events up to here were looked at for this subscription.
    seen: i64,
    /// Fresh events sent or waiting, not yet recorded: the cursor stays before them.
    outstanding: BTreeSet<i64>,
    /// Records with a fresh delivery on its way, and the fresh events of each waiting
    /// behind it (per-record order).
    sending: HashMap<Uuid, VecDeque<Due>>,
}

#[derive(Default)]
pub(super) struct Plan {
    subs: HashMap<Uuid, Sub>,
    /// (subscription, record) with entries in the queue: their new events are parked
    /// behind them.
    held: HashSet<Held>,
    /// Parked since the last recording (recorded with it).
    parked: Vec<Parked>,
    /// Answers since the last recording.
    pending: Recording,
    /// Subscriptions with an acknowledged delivery since the last recording.
    acknowledged: HashSet<Uuid>,
}

/// An answer: the delivery, where it came from, how it went, and its record (fresh ones).
pub(super) type Answer = (Due, Source, Outcome, Option<Uuid>);

impl Plan {
    /// The active subscriptions, as read now: new ones start at their cursor, gone ones are
    /// dropped (their answers on the way are still recorded).
    pub(super) fn subscriptions(&mut self, current: Vec<Subscription>) {
        let ids: HashSet<Uuid> = current.iter().map(|s| s.id).collect();
        self.subs.retain(|id, _| ids.contains(id));
        for sub in current {
            match self.subs.get_mut(&sub.id) {
                Some(known) => {
                    known.sub.url = sub.url;
                    known.sub.secret = sub.secret;
                    known.sub.event_types = sub.event_types;
                }
                None => {
                    let seen = sub.queued_through;
                    self.subs.insert(
                        sub.id,
                        Sub {
                            sub,
                            seen,
                            outstanding: BTreeSet::new(),
                            sending: HashMap::new(),
                        },
                    );
                }
            }
        }
    }

    /// The queue's (subscription, record) pairs, as read now, and those of the entries
    /// parked here and not recorded yet.
    pub(super) fn held(&mut self, held: Vec<Held>) {
        self.held = held.into_iter().collect();
        self.held.extend(self.parked.iter().map(|p| Held {
            webhook_id: p.webhook_id,
            record_id: p.record_id,
        }));
    }

    pub(super) fn has_subscriptions(&self) -> bool {
        !self.subs.is_empty()
    }

    /// Where to read new events from: past the subscription that has seen the least.
    pub(super) fn read_after(&self) -> Option<i64> {
        self.subs.values().map(|s| s.seen).min()
    }

    /// Fresh events not yet recorded, over all subscriptions.
    pub(super) fn outstanding(&self) -> usize {
        self.subs.values().map(|s| s.outstanding.len()).sum()
    }

    /// Takes events read past `read_after`, in order: answers the deliveries to send now,
    /// with their records. The others wait behind their record's delivery on its way, or
    /// are parked behind its entries in the queue.
    pub(super) fn take(&mut self, events: &[NewEvent]) -> Vec<(Due, Uuid)> {
        let mut send = Vec::new();
        for event in events {
            for sub in self.subs.values_mut() {
                if event.seq <= sub.seen {
                    continue;
                }
                sub.seen = event.seq;
                if !sub.sub.wants(&event.event_type) {
                    continue;
                }
                let key = Held {
                    webhook_id: sub.sub.id,
                    record_id: event.record_id,
                };
                if self.held.contains(&key) {
                    // Parked with the next recording, which may move the cursor past it.
                    self.parked.push(Parked {
                        webhook_id: sub.sub.id,
                        seq: event.seq,
                        event_id: event.id,
                        record_id: event.record_id,
                    });
                    continue;
                }
                let due = due_of(&sub.sub, event);
                sub.outstanding.insert(event.seq);
                match sub.sending.get_mut(&event.record_id) {
                    Some(waiting) => waiting.push_back(due),
                    None => {
                        sub.sending.insert(event.record_id, VecDeque::new());
                        send.push((due, event.record_id));
                    }
                }
            }
        }
        send
    }

    /// Takes what writers read for this relay after their commits (`db::commit_watch`):
    /// a batch read from at or before `read_after` follows on from what was read, and is
    /// taken like a look's; one that does not is dropped. Answers the deliveries to send
    /// now, and whether a look is still needed (a batch dropped, or one that stopped at
    /// its limit).
    pub(super) fn take_handed(&mut self, mut batches: Vec<Handed>) -> (Vec<(Due, Uuid)>, bool) {
        batches.sort_by_key(|b| b.after);
        let mut send = Vec::new();
        let mut look = false;
        for batch in batches {
            if self.read_after().is_some_and(|read| batch.after <= read) {
                send.extend(self.take(&batch.events));
                look |= batch.full;
            } else {
                look = true;
            }
        }
        (send, look)
    }

    /// Takes one answer: it is recorded with the next recording, and the next event of its
    /// record, if one waits and this one was acknowledged, goes now (a failed one's record
    /// is parked behind it instead). Followers do not wait for the recording: after a
    /// crash the cursor is before both, and both are sent again, in order.
    pub(super) fn answered(&mut self, answer: Answer) -> Option<(Due, Uuid)> {
        let (due, source, outcome, record_id) = answer;
        let failed = matches!(outcome, Outcome::Failed(..));
        match outcome {
            Outcome::Acknowledged(status) => {
                self.acknowledged.insert(due.webhook_id);
                self.pending.acknowledged.push(Acknowledged {
                    webhook_id: due.webhook_id,
                    seq: due.seq,
                    event_id: due.event_id,
                    attempt: due.attempts + 1,
                    status,
                    queued: source == Source::Queued,
                });
            }
            Outcome::Failed(..) => self.pending.failed.push((due.clone(), outcome)),
        }
        if source == Source::Queued {
            return None;
        }
        let record_id = record_id?;
        let sub = self.subs.get_mut(&due.webhook_id)?;
        let mut waiting = sub.sending.remove(&record_id).unwrap_or_default();
        if failed {
            // The failed event is queued for its retry, and its record's later events
            // behind it.
            self.held.insert(Held {
                webhook_id: due.webhook_id,
                record_id,
            });
            for d in std::iter::once(&due).chain(waiting.iter()) {
                sub.outstanding.remove(&d.seq);
                self.parked.push(Parked {
                    webhook_id: d.webhook_id,
                    seq: d.seq,
                    event_id: d.event_id,
                    record_id,
                });
            }
            return None;
        }
        sub.outstanding.remove(&due.seq);
        let next = waiting.pop_front()?;
        sub.sending.insert(record_id, waiting);
        Some((next, record_id))
    }

    /// Answers taken and events parked since the last recording.
    pub(super) fn unrecorded(&self) -> usize {
        self.pending.acknowledged.len() + self.pending.failed.len() + self.parked.len()
    }

    /// Everything to record now, with the cursors it lets move (`None`: nothing).
    pub(super) fn recording(&mut self) -> Option<Recording> {
        let mut recording = std::mem::take(&mut self.pending);
        recording.parked = std::mem::take(&mut self.parked);
        // A subscription gone meanwhile has no queue to park in.
        recording
            .parked
            .retain(|p| self.subs.contains_key(&p.webhook_id));
        recording.handed_on = self.handed_on();
        let empty = recording.acknowledged.is_empty()
            && recording.failed.is_empty()
            && recording.parked.is_empty()
            && recording.handed_on.is_empty();
        (!empty).then_some(recording)
    }

    /// How far each subscription may be moved on with this recording: before its first
    /// outstanding event, or through what it has seen.
    fn handed_on(&mut self) -> Vec<HandedOn> {
        let acknowledged = std::mem::take(&mut self.acknowledged);
        self.subs
            .values_mut()
            .filter_map(|sub| {
                let through = sub.outstanding.first().map_or(sub.seen, |first| first - 1);
                let moved = through > sub.sub.queued_through;
                let acked = acknowledged.contains(&sub.sub.id);
                if moved {
                    sub.sub.queued_through = through;
                }
                (moved || acked).then_some(HandedOn {
                    webhook_id: sub.sub.id,
                    through: sub.sub.queued_through,
                    acknowledged: acked,
                })
            })
            .collect()
    }

    /// A subscription disabled by a failure: nothing more goes to it.
    pub(super) fn disabled(&mut self, webhook_id: Uuid) {
        self.subs.remove(&webhook_id);
    }
}

fn due_of(sub: &Subscription, event: &NewEvent) -> Due {
    Due {
        webhook_id: sub.id,
        seq: event.seq,
        event_id: event.id,
        attempts: 0,
        url: sub.url.clone(),
        secret: sub.secret.clone(),
        event_type: event.event_type.clone(),
        occurred_at: event.occurred_at,
        data: event.data.clone(),
    }
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use serde_json::json;

    use super::*;

    fn sub(id: Uuid, types: &[&str], through: i64) -> Subscription {
        Subscription {
            id,
            url: "https://receiver.example/hook".into(),
            secret: "whsec_x".into(),
            event_types: types.iter().map(|t| (*t).to_owned()).collect(),
            queued_through: through,
        }
    }

    fn event(seq: i64, kind: &str, record: Uuid) -> NewEvent {
        NewEvent {
            seq,
            id: Uuid::new_v4(),
            event_type: kind.into(),
            record_id: record,
            occurred_at: Utc::now(),
            data: json!({}),
        }
    }

    fn ack(due: Due, record: Uuid) -> Answer {
        (due, Source::Fresh, Outcome::Acknowledged(204), Some(record))
    }

    fn seqs(sent: &[(Due, Uuid)]) -> Vec<i64> {
        sent.iter().map(|(d, _)| d.seq).collect()
    }

    #[test]
    fn a_record_s_later_event_waits_for_the_earlier_and_the_cursor_for_both() {
        let (hook, a, b) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let mut plan = Plan::default();
        plan.subscriptions(vec![sub(hook, &["*"], 10)]);
        assert_eq!(plan.read_after(), Some(10));
        let sent = plan.take(&[
            event(11, "mark.created", a),
            event(12, "mark.updated", a),
            event(13, "student.created", b),
        ]);
        assert_eq!(seqs(&sent), [11, 13]);
        // 13 answered first: the cursor may not pass 11 (on its way) nor 12 (waiting).
        assert!(plan.answered(ack(sent[1].0.clone(), b)).is_none());
        let recording = plan.recording().expect("an answer to record");
        assert_eq!(recording.acknowledged.len(), 1);
        assert_eq!(recording.handed_on.len(), 1);
        assert_eq!(recording.handed_on[0].through, 10);
        assert!(recording.handed_on[0].acknowledged);
        // 11 answered: 12 goes at once; the cursor stops before it.
        let (next, record) = plan.answered(ack(sent[0].0.clone(), a)).expect("12 goes");
        assert_eq!((next.seq, record), (12, a));
        assert_eq!(plan.recording().expect("11").handed_on[0].through, 11);
        assert!(plan.answered(ack(next, a)).is_none());
        assert_eq!(plan.recording().expect("12").handed_on[0].through, 13);
        assert_eq!(plan.outstanding(), 0);
        assert!(plan.recording().is_none(), "nothing left to record");
    }

    #[test]
    fn a_failure_parks_its_record_behind_it_and_the_cursor_moves_past_them() {
        let (hook, a, b) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let mut plan = Plan::default();
        plan.subscriptions(vec![sub(hook, &["*"], 0)]);
        let sent = plan.take(&[event(1, "mark.created", a), event(2, "mark.updated", a)]);
        assert_eq!(sent.len(), 1);
        let failed = (
            sent[0].0.clone(),
            Source::Fresh,
            Outcome::Failed(Some(500), "answered 500".into()),
            Some(a),
        );
        assert!(plan.answered(failed).is_none());
        let recording = plan.recording().expect("a failure to record");
        let parked: Vec<i64> = recording.parked.iter().map(|p| p.seq).collect();
        assert_eq!(parked, [1, 2]);
        assert_eq!(recording.failed.len(), 1);
        assert_eq!(recording.handed_on[0].through, 2);
        // A later event of the record is parked too; another record's goes.
        let sent = plan.take(&[event(3, "mark.updated", a), event(4, "x.created", b)]);
        assert_eq!(seqs(&sent), [4]);
        assert_eq!(plan.unrecorded(), 1);
        assert!(plan.answered(ack(sent[0].0.clone(), b)).is_none());
        let recording = plan.recording().expect("3 parked, 4 acknowledged");
        let parked: Vec<i64> = recording.parked.iter().map(|p| p.seq).collect();
        assert_eq!(parked, [3]);
        assert_eq!(recording.handed_on[0].through, 4);
    }

    #[test]
    fn a_record_parked_but_not_recorded_stays_held_when_the_queue_is_read_again() {
        let (hook, a) = (Uuid::new_v4(), Uuid::new_v4());
        let mut plan = Plan::default();
        plan.subscriptions(vec![sub(hook, &["*"], 0)]);
        let sent = plan.take(&[event(1, "mark.created", a)]);
        let failed = (
            sent[0].0.clone(),
            Source::Fresh,
            Outcome::Failed(None, "could not connect".into()),
            Some(a),
        );
        assert!(plan.answered(failed).is_none());
        // The queue, read before the failure is recorded, does not hold the record yet.
        plan.held(Vec::new());
        assert!(plan.take(&[event(2, "mark.updated", a)]).is_empty());
        let recording = plan.recording().expect("parked");
        let parked: Vec<i64> = recording.parked.iter().map(|p| p.seq).collect();
        assert_eq!(parked, [1, 2]);
    }

    #[test]
    fn a_handed_batch_is_taken_only_when_it_follows_on_from_what_was_read() {
        let (hook, a, b) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let mut plan = Plan::default();
        plan.subscriptions(vec![sub(hook, &["*"], 10)]);
        let batch = |after: i64, events: Vec<NewEvent>, full: bool| Handed {
            after,
            events,
            full,
        };
        // Two writers read from 10; the second also saw the first's event: each event is
        // taken once, in order.
        let (sent, look) = plan.take_handed(vec![
            batch(
                10,
                vec![event(11, "x.updated", a), event(12, "x.updated", b)],
                false,
            ),
            batch(10, vec![event(11, "x.updated", a)], false),
        ]);
        assert_eq!((seqs(&sent), look), (vec![11, 12], false));
        // Read from past what this relay has read (12): events may be missing in between.
        let (sent, look) =
            plan.take_handed(vec![batch(13, vec![event(14, "x.updated", b)], false)]);
        assert!(sent.is_empty() && look);
        assert_eq!(plan.read_after(), Some(12));
        // A batch that stopped at its limit is taken, and more is looked for.
        let (sent, look) = plan.take_handed(vec![batch(12, vec![event(13, "x.updated", a)], true)]);
        assert!(sent.is_empty(), "13 waits behind 11, on its way");
        assert!(look);
        assert_eq!(plan.read_after(), Some(13));
    }

    #[test]
    fn a_subscription_gets_only_its_types_and_a_new_one_starts_at_its_cursor() {
        let (marks, all, a) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        let mut plan = Plan::default();
        plan.subscriptions(vec![sub(marks, &["mark.created"], 5)]);
        let sent = plan.take(&[event(6, "student.created", a), event(7, "mark.created", a)]);
        assert_eq!(seqs(&sent), [7]);
        plan.subscriptions(vec![sub(marks, &["mark.created"], 5), sub(all, &["*"], 6)]);
        assert_eq!(plan.read_after(), Some(6));
        let sent = plan.take(&[event(7, "mark.created", a), event(8, "x.deleted", a)]);
        // `marks` saw 7 already; `all` gets 7, then 8 waits behind it.
        assert_eq!(
            sent.iter()
                .map(|(d, _)| (d.webhook_id, d.seq))
                .collect::<Vec<_>>(),
            [(all, 7)]
        );
    }
}
