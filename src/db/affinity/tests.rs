use std::{collections::HashMap, sync::mpsc};

use super::{Claim, Dispatcher, Grant, PASSED_OVER_LIMIT, Preference, ranking};

/// A queued claim: its id and where its slot arrives.
fn queue(dispatcher: &Dispatcher, school: Option<u64>) -> (u64, mpsc::Receiver<usize>) {
    let (sender, receiver) = mpsc::sync_channel(1);
    let preference = dispatcher.preference(school);
    match dispatcher.claim(preference, Grant::Blocking(sender)) {
        Claim::Queued(id) => (id, receiver),
        Claim::Now(slot) => panic!("expected to wait, got slot {slot} at once"),
    }
}

fn claim_now(dispatcher: &Dispatcher, school: Option<u64>) -> usize {
    let (sender, _receiver) = mpsc::sync_channel(1);
    match dispatcher.claim(dispatcher.preference(school), Grant::Blocking(sender)) {
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
fn a_waiting_school_borrows_a_warm_connection_first_and_any_connection_later() {
    let size = 4;
    let dispatcher = Dispatcher::new(size, 1);
    let school = 7;
    let order = ranking(school, size);
    assert_eq!(claim_now(&dispatcher, Some(school)), order[0]);
    // Its home busy, it waits for it, though others are idle; after `borrow_after` it may
    // borrow a connection that knows its school, and there is none.
    let (first, _) = queue(&dispatcher, Some(school));
    assert_eq!(dispatcher.borrow(first), None, "no warm connection yet");
    // After ten times as long, any: its best ranked.
    assert_eq!(dispatcher.borrow(first), Some(order[1]), "any, best ranked");
    dispatcher.served(order[1], Some(school), false);
    dispatcher.release(order[1]);
    // The next one waits too, then borrows the connection that now knows its school.
    let (second, _) = queue(&dispatcher, Some(school));
    assert_eq!(dispatcher.borrow(second), Some(order[1]), "warm");
    assert!(!dispatcher.cancel(second), "a borrower is no longer queued");
}

#[test]
fn a_spill_slot_is_nobodys_home_and_is_lent_first_to_a_waiter_that_may_borrow_any() {
    let size = 5;
    let dispatcher = Dispatcher::new(size, 1).with_spill(1);
    for school in 0..500 {
        let preference = dispatcher.preference(Some(school));
        assert!(!preference.is_home(0), "school {school}");
        assert_eq!(
            preference.rank_of(0),
            1,
            "school {school}: right after its home"
        );
    }
    let school = (0..)
        .find(|&key| ranking(key, size)[1] != 0)
        .expect("a school whose next choice is not slot 0");
    let home = claim_now(&dispatcher, Some(school));
    assert_ne!(home, 0);
    let (waiting, _) = queue(&dispatcher, Some(school));
    assert_eq!(dispatcher.borrow(waiting), None, "nothing knows its school");
    assert_eq!(
        dispatcher.borrow(waiting),
        Some(0),
        "the spill slot, not its next choice"
    );
}

#[test]
fn spill_slots_stay_out_of_the_homes_through_a_widening_and_platform_work_takes_them_last() {
    let dispatcher = Dispatcher::new(6, 1).with_spill(1).with_spread(3);
    let first_homes: Vec<usize> = (0..300)
        .map(|school| {
            dispatcher
                .preference(Some(school))
                .first_home()
                .expect("home")
        })
        .collect();
    assert!(first_homes.iter().all(|home| (1..3).contains(home)));
    assert!(dispatcher.widen());
    for (school, &before) in (0..300).zip(&first_homes) {
        let home = dispatcher
            .preference(Some(school))
            .first_home()
            .expect("home");
        assert!((1..6).contains(&home), "school {school}: {home}");
        assert!(
            home == before || home >= 3,
            "school {school} moved among old homes"
        );
    }
    let platform: Vec<usize> = (0..5).map(|_| claim_now(&dispatcher, None)).collect();
    assert_eq!(platform, vec![1, 2, 3, 4, 5], "the spill slot last");
    assert_eq!(claim_now(&dispatcher, None), 0);

    // Of several spill slots, each school takes them in its own order.
    let dispatcher = Dispatcher::new(8, 1).with_spill(2);
    let first_spills: std::collections::HashSet<usize> = (0..100)
        .map(|school| match dispatcher.preference(Some(school)) {
            Preference::School { ranking, homes, .. } => ranking[homes],
            Preference::Any { .. } => panic!("a school's preference"),
        })
        .collect();
    assert_eq!(first_spills, [0, 1].into());
}

#[test]
fn spill_and_spread_come_to_the_same_whichever_is_set_first() {
    let spill_first = Dispatcher::new(6, 1).with_spill(1).with_spread(1);
    let spread_first = Dispatcher::new(6, 1).with_spread(1).with_spill(1);
    for dispatcher in [&spill_first, &spread_first] {
        assert_eq!((dispatcher.spill(), dispatcher.spread()), (1, 2));
        assert_eq!(
            dispatcher.preference(Some(3)).first_home(),
            Some(1),
            "the one home besides the spill slot"
        );
    }
}

#[test]
fn a_spill_slot_that_comes_back_goes_to_a_waiter_that_may_borrow_any() {
    let dispatcher = Dispatcher::new(3, 1).with_spill(1);
    let held = [claim_now(&dispatcher, None), claim_now(&dispatcher, None)];
    assert_eq!(held, [1, 2]);
    assert!(
        dispatcher.claim_idle(0),
        "the pool's upkeep holds the spill slot"
    );
    let (waiting, receiver) = queue(&dispatcher, Some(7));
    assert_eq!(dispatcher.borrow(waiting), None);
    assert_eq!(dispatcher.borrow(waiting), None, "nothing idle");
    dispatcher.release(0);
    assert_eq!(receiver.try_recv(), Ok(0));
}

#[test]
fn a_school_whose_home_another_school_holds_waits_for_it() {
    let size = 4;
    let dispatcher = Dispatcher::new(size, 1);
    let a = school_at_home(0, size, 0);
    let b = school_at_home(0, size, a + 1);
    assert_eq!(claim_now(&dispatcher, Some(a)), 0);
    let (waiting, receiver) = queue(&dispatcher, Some(b));
    assert_eq!(dispatcher.idle_count(), 3, "three idle, none taken");
    dispatcher.release(0);
    assert_eq!(receiver.try_recv(), Ok(0), "its home, warm");
    assert!(!dispatcher.cancel(waiting));
}

#[test]
fn a_connection_that_served_the_school_before_comes_first_and_a_new_one_forgets() {
    let size = 4;
    let dispatcher = Dispatcher::new(size, 1);
    let a = school_at_home(0, size, 0);
    let b = (a + 1..)
        .find(|&key| home(key, size) == 0 && ranking(key, size)[1] != 3)
        .expect("a school");
    let warm = ranking(b, size)[3];
    dispatcher.served(warm, Some(b), false);
    claim_now(&dispatcher, Some(a));
    let (waiting, _) = queue(&dispatcher, Some(b));
    assert_eq!(
        dispatcher.borrow(waiting),
        Some(warm),
        "warm, though ranked last"
    );
    // Coming back, a warm connection goes to a waiter of the school at once ...
    let (_, receiver) = queue(&dispatcher, Some(b));
    dispatcher.release(warm);
    assert_eq!(receiver.try_recv(), Ok(warm));
    // ... but not once a new connection has taken the slot over.
    dispatcher.served(warm, None, true);
    let (_, receiver) = queue(&dispatcher, Some(b));
    dispatcher.release(warm);
    assert!(receiver.try_recv().is_err(), "cold: left idle");
}

#[test]
fn a_connection_nobody_may_borrow_stays_idle() {
    let size = 3;
    let dispatcher = Dispatcher::new(size, 1);
    let (a, b) = (school_at_home(0, size, 0), school_at_home(1, size, 0));
    claim_now(&dispatcher, Some(a));
    claim_now(&dispatcher, Some(b));
    claim_now(&dispatcher, None);
    let c = school_at_home(0, size, a + 1);
    let (_, waits_for_0) = queue(&dispatcher, Some(c));
    dispatcher.release(2);
    assert!(waits_for_0.try_recv().is_err(), "not its home: it waits");
    assert_eq!(dispatcher.idle_count(), 1);
}

#[test]
fn a_waiter_past_ten_borrowing_times_is_lent_any_connection_that_comes_back() {
    let size = 3;
    let dispatcher = Dispatcher::new(size, 1);
    let a = school_at_home(0, size, 0);
    claim_now(&dispatcher, Some(a));
    for _ in 0..size - 1 {
        claim_now(&dispatcher, None);
    }
    let b = school_at_home(0, size, a + 1);
    let (late, receiver) = queue(&dispatcher, Some(b));
    assert_eq!(dispatcher.borrow(late), None, "nothing idle");
    dispatcher.release(1);
    assert!(
        receiver.try_recv().is_err(),
        "cold, and it has not waited long"
    );
    assert_eq!(dispatcher.borrow(late), Some(1), "now any: the idle one");
    assert_eq!(dispatcher.borrow(late), None, "no longer queued");
    dispatcher.release(2);
    assert_eq!(dispatcher.idle_count(), 1);
}

#[test]
fn a_backed_up_home_lends_a_warm_connection_at_once_and_no_other() {
    let size = 5;
    let dispatcher = Dispatcher::new(size, 1);
    let mut schools = (0..).filter(|&key| home(key, size) == 0);
    let holder = schools.next().expect("a school");
    claim_now(&dispatcher, Some(holder));
    for _ in 0..super::BORROW_QUEUE {
        queue(&dispatcher, Some(schools.next().expect("a school")));
    }
    // The next one's school, which a connection knows, borrows that one at once ...
    let school = schools.next().expect("a school");
    let warm = ranking(school, size)[3];
    dispatcher.served(warm, Some(school), false);
    assert_eq!(claim_now(&dispatcher, Some(school)), warm);
    // ... and one that no idle connection knows waits, though three are idle.
    queue(&dispatcher, Some(schools.next().expect("a school")));
    assert_eq!(dispatcher.idle_count(), 3);
}

#[test]
fn a_returned_connection_goes_to_the_oldest_waiter_whose_home_it_is() {
    let dispatcher = Dispatcher::new(2, 1);
    let (a, b) = (school_at_home(0, 2, 0), school_at_home(1, 2, 0));
    assert_eq!(claim_now(&dispatcher, Some(a)), 0);
    assert_eq!(claim_now(&dispatcher, Some(b)), 1);
    let (_, wants_0) = queue(&dispatcher, Some(a));
    let (_, wants_1) = queue(&dispatcher, Some(b));
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
fn a_connection_nobody_calls_home_goes_to_the_oldest_waiter_that_may_borrow_it() {
    let dispatcher = Dispatcher::new(2, 1);
    let a = school_at_home(0, 2, 0);
    claim_now(&dispatcher, Some(a));
    claim_now(&dispatcher, None);
    let (first_id, first) = queue(&dispatcher, Some(a));
    let (second_id, second) = queue(&dispatcher, Some(a));
    // Both have waited ten times `borrow_after`, with nothing idle: any may be lent.
    for id in [first_id, second_id, first_id, second_id] {
        assert_eq!(dispatcher.borrow(id), None);
    }
    dispatcher.release(1);
    assert_eq!(first.try_recv(), Ok(1), "borrowed");
    assert!(second.try_recv().is_err());
}

#[test]
fn a_waiter_passed_over_four_times_the_pool_size_gets_the_next_one() {
    let dispatcher = Dispatcher::new(2, 1);
    let (a, b) = (school_at_home(0, 2, 0), school_at_home(1, 2, 0));
    claim_now(&dispatcher, None);
    claim_now(&dispatcher, None);
    let (_, starved) = queue(&dispatcher, Some(a));
    let limit = 2 * PASSED_OVER_LIMIT;
    for round in 0..limit {
        let (_, lucky) = queue(&dispatcher, Some(b));
        dispatcher.release(1);
        assert_eq!(lucky.try_recv(), Ok(1), "round {round}: b's home goes to b");
        assert!(starved.try_recv().is_err());
    }
    let (_, next) = queue(&dispatcher, Some(b));
    dispatcher.release(1);
    assert_eq!(
        starved.try_recv(),
        Ok(1),
        "passed over {limit} times: its turn"
    );
    assert!(next.try_recv().is_err());
}

#[test]
fn a_waiter_that_may_borrow_any_connection_comes_before_younger_ones_with_idle_homes() {
    // Three connections, two running: a's home is busy, and the running is full.
    let dispatcher = Dispatcher::new(3, 1).with_running(2);
    let (a, b, c) = (
        school_at_home(0, 3, 0),
        school_at_home(1, 3, 0),
        school_at_home(2, 3, 0),
    );
    claim_now(&dispatcher, Some(a));
    claim_now(&dispatcher, Some(b));
    let (waited_id, waited) = queue(&dispatcher, Some(a));
    // Ten times `borrow_after`: it may take any connection, once one may run.
    for _ in 0..2 {
        assert_eq!(dispatcher.borrow(waited_id), None, "the running is full");
    }
    let (_, younger) = queue(&dispatcher, Some(c));
    dispatcher.release(1);
    let slot = waited.try_recv().expect("the long waiter runs next");
    assert_ne!(slot, 0, "its home is still busy");
    assert!(
        younger.try_recv().is_err(),
        "younger, though its home is idle"
    );
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
    let (older_id, older) = queue(&dispatcher, Some(last));
    let (younger_id, younger) = queue(&dispatcher, Some(second));
    // Both have waited ten times their `borrow_after`, with nothing idle.
    for id in [older_id, younger_id, older_id, younger_id] {
        assert_eq!(dispatcher.borrow(id), None);
    }
    dispatcher.release(3);
    assert_eq!(younger.try_recv(), Ok(3));
    assert!(older.try_recv().is_err());
}

#[test]
fn a_cancelled_waiter_is_skipped_and_a_granted_one_cannot_cancel() {
    let dispatcher = Dispatcher::new(1, 1);
    claim_now(&dispatcher, Some(1));
    let (gone, _) = queue(&dispatcher, Some(1));
    let (stays, receiver) = queue(&dispatcher, Some(2));
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
    let (_, next) = queue(&dispatcher, Some(2));
    dispatcher.release(0);
    assert_eq!(next.try_recv(), Ok(0));
    dispatcher.release(0);
    assert_eq!(dispatcher.idle_count(), 1);
}

#[test]
fn without_affinity_waiters_are_served_in_arrival_order() {
    let dispatcher = Dispatcher::new(2, 0);
    assert!(matches!(
        dispatcher.preference(Some(5)),
        Preference::Any { .. }
    ));
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

/// The pool in the large: `schools` round robin over `size` connections, 16 units of work
/// in flight (the fleet benchmark's shape, without the database or time passing), five
/// units of work per school. Returns each connection's distinct schools and the share of
/// units of work that ran on a connection that is not their home.
fn round_robin(size: usize, schools: u64, cap: usize) -> (Vec<usize>, f64) {
    let clients = 16;
    let dispatcher = Dispatcher::new(size, 1).with_running(cap);
    let mut served: Vec<std::collections::HashSet<u64>> = vec![Default::default(); size];
    let mut running: std::collections::VecDeque<(usize, u64)> = Default::default();
    let mut waiting: std::collections::VecDeque<(u64, mpsc::Receiver<usize>)> = Default::default();
    let mut borrowed = 0;
    let start = |school: u64,
                 running: &mut std::collections::VecDeque<_>,
                 waiting: &mut std::collections::VecDeque<_>| {
        let (sender, receiver) = mpsc::sync_channel(1);
        match dispatcher.claim(dispatcher.preference(Some(school)), Grant::Blocking(sender)) {
            Claim::Now(slot) => running.push_back((slot, school)),
            Claim::Queued(_) => waiting.push_back((school, receiver)),
        }
    };
    for school in 0..clients {
        start(school, &mut running, &mut waiting);
    }
    let units = schools * 5;
    for next in clients..(clients + units) {
        // The oldest unit of work finishes; its client sends the next school's request.
        let (slot, school) = running.pop_front().expect("running");
        if served[slot].insert(school) {
            dispatcher.served(slot, Some(school), false);
        }
        if home(school, size) != slot {
            borrowed += 1;
        }
        dispatcher.release(slot);
        waiting.retain_mut(|(school, receiver)| match receiver.try_recv() {
            Ok(slot) => {
                running.push_back((slot, *school));
                false
            }
            Err(_) => true,
        });
        start(next % schools, &mut running, &mut waiting);
        assert!(
            running.len() <= cap,
            "{} running, at most {cap}",
            running.len()
        );
    }
    let per_connection = served.iter().map(|schools| schools.len()).collect();
    (per_connection, borrowed as f64 / units as f64)
}

/// Each connection serves about its share of the schools, plus the few it lends, not all
/// of them; few units of work borrow.
#[test]
fn under_saturation_each_connection_serves_about_its_share_of_schools() {
    for (size, most) in [(7, 400), (12, 250)] {
        let (per_connection, borrowed) = round_robin(size, 2_000, size);
        let max = *per_connection.iter().max().expect("max");
        // A seventh of 2,000 is 286, a twelfth 167. Without affinity: 2,000 each.
        assert!(
            max < most,
            "{size}: schools per connection {per_connection:?}"
        );
        assert!(borrowed < 0.2, "{size}: borrowed {borrowed}");
    }
}

/// Eighteen connections, six of them running at once: each connection serves its homes
/// (a hundred and eleven schools) and almost none other.
#[test]
fn a_running_cap_below_the_pool_keeps_each_school_on_its_home() {
    let (per_connection, borrowed) = round_robin(18, 2_000, 6);
    let max = *per_connection.iter().max().expect("max");
    assert!(max < 160, "schools per connection {per_connection:?}");
    assert!(borrowed < 0.05, "borrowed {borrowed}");
}

#[test]
fn a_full_running_keeps_an_idle_home_waiting_then_gives_it_the_next_place() {
    let size = 4;
    let dispatcher = Dispatcher::new(size, 1).with_running(2);
    let (a, b) = (school_at_home(0, size, 0), school_at_home(1, size, 0));
    let (c, d) = (school_at_home(2, size, 0), school_at_home(3, size, 0));
    assert_eq!(claim_now(&dispatcher, Some(a)), 0);
    assert_eq!(claim_now(&dispatcher, Some(b)), 1);
    // Its home is idle, but two units of work run already.
    let (waiting, slot) = queue(&dispatcher, Some(c));
    assert_eq!(
        dispatcher.borrow(waiting),
        None,
        "no borrowing past the cap"
    );
    assert_eq!(dispatcher.borrow(waiting), None, "nor later");
    // A place frees: the waiter takes its idle home, not the connection that came back.
    dispatcher.release(0);
    assert_eq!(slot.try_recv(), Ok(2));
    assert_eq!(dispatcher.idle_count(), 2);
    let (_, later) = queue(&dispatcher, Some(d));
    dispatcher.release(2);
    assert_eq!(later.try_recv(), Ok(3), "its home, the next place");
    // Room again and nobody waits: a claim takes its home at once.
    dispatcher.release(1);
    assert_eq!(claim_now(&dispatcher, Some(a)), 0);
}

/// A place freed by a connection coming back goes to that connection's own waiter when one
/// is among the oldest `running`: its lane is awake. Older waiters are passed over once.
#[test]
fn a_freed_place_prefers_a_near_waiter_of_the_connection_that_came_back() {
    let size = 4;
    let dispatcher = Dispatcher::new(size, 1).with_running(2);
    let (a, b) = (school_at_home(0, size, 0), school_at_home(1, size, 0));
    let c = school_at_home(2, size, 0);
    let a2 = school_at_home(0, size, a + 1);
    assert_eq!(claim_now(&dispatcher, Some(a)), 0);
    assert_eq!(claim_now(&dispatcher, Some(b)), 1);
    let (_, idle_home) = queue(&dispatcher, Some(c));
    let (_, same_home) = queue(&dispatcher, Some(a2));
    dispatcher.release(0);
    assert_eq!(
        same_home.try_recv(),
        Ok(0),
        "the waiter of the connection back"
    );
    assert!(idle_home.try_recv().is_err(), "still waiting");
    dispatcher.release(1);
    assert_eq!(
        idle_home.try_recv(),
        Ok(2),
        "its idle home at the next place"
    );
}

#[test]
fn a_pool_spread_over_its_first_slots_hands_out_only_those_until_it_widens() {
    let dispatcher = Dispatcher::new(6, 1).with_spread(2);
    assert_eq!(dispatcher.spread(), 2);
    let schools: Vec<u64> = (0..200).collect();
    for &school in &schools {
        let slot = claim_now(&dispatcher, Some(school));
        assert_eq!(slot, home(school, 2), "school {school}: its home of two");
        dispatcher.release(slot);
    }
    assert!(!dispatcher.claim_idle(2), "slot 2 is not handed out yet");
    let held = [claim_now(&dispatcher, None), claim_now(&dispatcher, None)];
    let (_, granted) = queue(&dispatcher, None);
    held.iter().for_each(|&slot| dispatcher.release(slot));
    let granted = granted.recv().expect("a slot of the two");
    assert!(granted < 2, "{granted}");
    dispatcher.release(granted);

    assert!(dispatcher.widen(), "widened");
    assert!(!dispatcher.widen(), "once");
    assert_eq!(dispatcher.spread(), 6);
    for &school in &schools {
        let slot = claim_now(&dispatcher, Some(school));
        assert_eq!(slot, home(school, 6), "school {school}: its home of six");
        // A school keeps its home unless a new slot outranks it.
        assert!(slot == home(school, 2) || slot >= 2, "school {school}");
        dispatcher.release(slot);
    }
    assert!(dispatcher.claim_idle(5), "every slot is handed out now");
}
