use std::collections::HashMap;

use tokio::sync::oneshot;

use super::{Claim, Dispatcher, Grant, PASSED_OVER_LIMIT, Preference, ranking};

/// A queued claim: its id and where its slot arrives.
fn queue(dispatcher: &Dispatcher, school: Option<u64>) -> (u64, oneshot::Receiver<usize>) {
    let (sender, receiver) = oneshot::channel();
    let preference = dispatcher.preference(school);
    match dispatcher.claim(preference, Grant::Async(sender)) {
        Claim::Queued(id) => (id, receiver),
        Claim::Now(slot) => panic!("expected to wait, got slot {slot} at once"),
    }
}

fn claim_now(dispatcher: &Dispatcher, school: Option<u64>) -> usize {
    let (sender, _receiver) = oneshot::channel();
    match dispatcher.claim(dispatcher.preference(school), Grant::Async(sender)) {
        Claim::Now(slot) => slot,
        Claim::Queued(_) => panic!("expected an idle slot"),
    }
}

fn home(school: u64, size: usize) -> usize {
    ranking(school, size)[0]
}

/// A school whose first choice (of `size`) is `slot`.
fn school_at_home(slot: usize, size: usize, skip: u64) -> u64 {
    (skip..)
        .find(|&key| home(key, size) == slot)
        .expect("a school")
}

#[test]
fn a_ranking_orders_every_slot_once() {
    let mut slots = ranking(42, 7);
    slots.sort_unstable();
    assert_eq!(slots, (0..7).collect::<Vec<_>>());
}

#[test]
fn homes_are_spread_evenly_over_the_connections() {
    let mut per_slot = HashMap::new();
    for school in 0..7_000u64 {
        *per_slot.entry(home(school, 7)).or_insert(0) += 1;
    }
    assert_eq!(per_slot.len(), 7);
    for (slot, schools) in per_slot {
        assert!((850..=1150).contains(&schools), "slot {slot}: {schools}");
    }
}

#[test]
fn growing_the_pool_moves_few_schools() {
    let moved = (0..10_000u64)
        .filter(|&school| home(school, 7) != home(school, 8))
        .count();
    // Rendezvous hashing moves exactly the schools the new slot wins: about 1/8.
    assert!((1_000..=1_500).contains(&moved), "moved {moved}");
    let moved_to_new = (0..10_000u64)
        .filter(|&school| home(school, 7) != home(school, 8))
        .all(|school| home(school, 8) == 7);
    assert!(moved_to_new, "a school that moved went to the new slot");
}

#[test]
fn a_school_takes_its_home_when_idle_and_borrows_its_next_choice_when_not() {
    let dispatcher = Dispatcher::new(4, 1);
    let school = 7;
    let order = ranking(school, 4);
    assert_eq!(claim_now(&dispatcher, Some(school)), order[0]);
    // Its home busy, it waits for it first; then borrows its next choice.
    let (first, _) = queue(&dispatcher, Some(school));
    assert_eq!(dispatcher.borrow(first), Some(order[1]), "borrowed");
    let (second, _) = queue(&dispatcher, Some(school));
    assert_eq!(dispatcher.borrow(second), Some(order[2]), "borrowed");
    assert!(!dispatcher.cancel(second), "a borrower is no longer queued");
}

#[test]
fn a_returned_connection_goes_to_the_oldest_waiter_whose_home_it_is() {
    let dispatcher = Dispatcher::new(2, 1);
    let (a, b) = (school_at_home(0, 2, 0), school_at_home(1, 2, 0));
    assert_eq!(claim_now(&dispatcher, Some(a)), 0);
    assert_eq!(claim_now(&dispatcher, Some(b)), 1);
    let (_, mut wants_0) = queue(&dispatcher, Some(a));
    let (_, mut wants_1) = queue(&dispatcher, Some(b));
    dispatcher.release(1);
    assert_eq!(
        wants_1.try_recv(),
        Ok(1),
        "the younger waiter, whose home it is"
    );
    assert!(wants_0.try_recv().is_err());
    dispatcher.release(0);
    assert_eq!(wants_0.try_recv(), Ok(0));
}

#[test]
fn a_connection_nobody_calls_home_goes_to_the_oldest_waiter() {
    let dispatcher = Dispatcher::new(2, 1);
    let a = school_at_home(0, 2, 0);
    claim_now(&dispatcher, Some(a));
    claim_now(&dispatcher, None);
    let (_, mut first) = queue(&dispatcher, Some(a));
    let (_, mut second) = queue(&dispatcher, Some(a));
    dispatcher.release(1);
    assert_eq!(
        first.try_recv(),
        Ok(1),
        "borrowed: the connection is not left idle"
    );
    assert!(second.try_recv().is_err());
}

#[test]
fn a_waiter_passed_over_four_times_the_pool_size_gets_the_next_one() {
    let dispatcher = Dispatcher::new(2, 1);
    let (a, b) = (school_at_home(0, 2, 0), school_at_home(1, 2, 0));
    claim_now(&dispatcher, None);
    claim_now(&dispatcher, None);
    let (_, mut starved) = queue(&dispatcher, Some(a));
    let limit = 2 * PASSED_OVER_LIMIT;
    for round in 0..limit {
        let (_, mut lucky) = queue(&dispatcher, Some(b));
        dispatcher.release(1);
        assert_eq!(lucky.try_recv(), Ok(1), "round {round}: b's home goes to b");
        assert!(starved.try_recv().is_err());
    }
    let (_, mut next) = queue(&dispatcher, Some(b));
    dispatcher.release(1);
    assert_eq!(
        starved.try_recv(),
        Ok(1),
        "passed over {limit} times: its turn"
    );
    assert!(next.try_recv().is_err());
}

#[test]
fn a_connection_nobody_calls_home_goes_to_the_waiter_that_ranks_it_highest() {
    let size = 4;
    let dispatcher = Dispatcher::new(size, 1);
    for _ in 0..size {
        claim_now(&dispatcher, None);
    }
    // Slot 3 comes back; nobody waiting calls it home. The older waiter ranks it last,
    // the younger second: the younger borrows it (its next choice, not a random one).
    let last = (0..)
        .find(|&key| ranking(key, size)[0] != 3 && ranking(key, size)[size - 1] == 3)
        .expect("a school ranking slot 3 last");
    let second = (0..)
        .find(|&key| ranking(key, size)[1] == 3)
        .expect("a school ranking slot 3 second");
    let (_, mut older) = queue(&dispatcher, Some(last));
    let (_, mut younger) = queue(&dispatcher, Some(second));
    dispatcher.release(3);
    assert_eq!(younger.try_recv(), Ok(3));
    assert!(older.try_recv().is_err());
}

#[test]
fn a_cancelled_waiter_is_skipped_and_a_granted_one_cannot_cancel() {
    let dispatcher = Dispatcher::new(1, 1);
    claim_now(&dispatcher, Some(1));
    let (gone, _) = queue(&dispatcher, Some(1));
    let (stays, mut receiver) = queue(&dispatcher, Some(2));
    assert!(dispatcher.cancel(gone));
    dispatcher.release(0);
    assert_eq!(receiver.try_recv(), Ok(0));
    assert!(
        !dispatcher.cancel(stays),
        "already granted: the slot is the caller's"
    );
}

#[test]
fn a_waiter_that_dropped_its_receiver_does_not_swallow_the_connection() {
    let dispatcher = Dispatcher::new(1, 1);
    claim_now(&dispatcher, Some(1));
    let (_, receiver) = queue(&dispatcher, Some(1));
    drop(receiver);
    let (_, mut next) = queue(&dispatcher, Some(2));
    dispatcher.release(0);
    assert_eq!(next.try_recv(), Ok(0));
    dispatcher.release(0);
    assert_eq!(dispatcher.idle_count(), 1);
}

#[test]
fn without_affinity_waiters_are_served_in_arrival_order() {
    let dispatcher = Dispatcher::new(2, 0);
    assert!(matches!(dispatcher.preference(Some(5)), Preference::Any));
    claim_now(&dispatcher, Some(1));
    claim_now(&dispatcher, Some(2));
    let mut waiters: Vec<_> = (10..14)
        .map(|school| queue(&dispatcher, Some(school)).1)
        .collect();
    for (n, waiter) in waiters.iter_mut().enumerate() {
        dispatcher.release(n % 2);
        assert_eq!(waiter.try_recv(), Ok(n % 2));
    }
}

/// The pool in the large: 2,000 schools round robin over 7 connections, 16 units of work
/// in flight (the benchmark's shape, without the database), five units of work per school.
/// Each connection serves about a seventh of the schools, plus the few it lends, not all
/// of them.
#[test]
fn under_saturation_each_connection_serves_about_its_share_of_schools() {
    let (size, schools, clients) = (7, 2_000u64, 16);
    let dispatcher = Dispatcher::new(size, 1);
    let mut served: Vec<std::collections::HashSet<u64>> = vec![Default::default(); size];
    let mut running: std::collections::VecDeque<(usize, u64)> = Default::default();
    let mut waiting: std::collections::VecDeque<(u64, oneshot::Receiver<usize>)> =
        Default::default();
    let mut next_school = 0u64;
    for _ in 0..clients {
        let school = next_school % schools;
        next_school += 1;
        let (sender, receiver) = oneshot::channel();
        match dispatcher.claim(dispatcher.preference(Some(school)), Grant::Async(sender)) {
            Claim::Now(slot) => running.push_back((slot, school)),
            Claim::Queued(_) => waiting.push_back((school, receiver)),
        }
    }
    for _ in 0..(schools * 5) {
        // The oldest unit of work finishes; its client sends the next school's request.
        let (slot, school) = running.pop_front().expect("running");
        served[slot].insert(school);
        dispatcher.release(slot);
        waiting.retain_mut(|(school, receiver)| match receiver.try_recv() {
            Ok(slot) => {
                running.push_back((slot, *school));
                false
            }
            Err(_) => true,
        });
        let school = next_school % schools;
        next_school += 1;
        let (sender, receiver) = oneshot::channel();
        match dispatcher.claim(dispatcher.preference(Some(school)), Grant::Async(sender)) {
            Claim::Now(slot) => running.push_back((slot, school)),
            Claim::Queued(_) => waiting.push_back((school, receiver)),
        }
    }
    let per_connection: Vec<usize> = served.iter().map(|schools| schools.len()).collect();
    let max = *per_connection.iter().max().expect("max");
    // A seventh of 2,000 is 286; borrowing adds some. Without affinity: 2,000 each.
    assert!(max < 500, "schools per connection: {per_connection:?}");
}
