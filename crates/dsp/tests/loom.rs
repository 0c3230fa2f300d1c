//! Model checks of the ready stack and the threads' shares of the initially
//! ready items, under every interleaving loom explores:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p magnetar-dsp --release --test loom
//! ```
#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;
use magnetar_dsp::ready::ReadyStack;
use magnetar_dsp::shares::Shares;

#[test]
fn loom_concurrent_pushes_and_pops_hand_out_each_item_once() {
    loom::model(|| {
        let stack = Arc::new(ReadyStack::new(3));
        stack.push(0);
        let s = Arc::clone(&stack);
        let t = thread::spawn(move || {
            s.push(1);
            s.pop()
        });
        stack.push(2);
        let mine = stack.pop();
        let theirs = t.join().unwrap();
        let mut got: Vec<u32> = [mine, theirs].into_iter().flatten().collect();
        while let Some(v) = stack.pop() {
            got.push(v);
        }
        got.sort();
        assert_eq!(got, vec![0, 1, 2]);
    });
}

#[test]
fn loom_a_stalled_pop_does_not_return_an_item_pushed_again_meanwhile() {
    // The ABA case: one thread pops while the other pops the same top,
    // pops the next, and pushes the first again (as a later block would).
    loom::model(|| {
        let stack = Arc::new(ReadyStack::new(2));
        stack.push(1);
        stack.push(0);
        let s = Arc::clone(&stack);
        let t = thread::spawn(move || s.pop());
        let a = stack.pop();
        let b = stack.pop();
        if let Some(a) = a {
            stack.push(a);
        }
        let theirs = t.join().unwrap();
        let mut got: Vec<u32> = [theirs, b].into_iter().flatten().collect();
        while let Some(v) = stack.pop() {
            got.push(v);
        }
        got.sort();
        // Each item leaves the stack exactly once in the end.
        assert_eq!(got, vec![0, 1]);
    });
}

#[test]
fn loom_two_poppers_never_take_the_same_item() {
    loom::model(|| {
        let stack = Arc::new(ReadyStack::new(2));
        stack.push(0);
        stack.push(1);
        let s = Arc::clone(&stack);
        let t = thread::spawn(move || s.pop());
        let mine = stack.pop();
        let theirs = t.join().unwrap();
        assert!(mine.is_some() && theirs.is_some());
        assert_ne!(mine, theirs);
        assert_eq!(stack.pop(), None);
    });
}

/// Every thread takes until nothing is left; returns what each took.
fn drain_in_threads(shares: Arc<Shares>, threads: usize) -> Vec<Vec<u32>> {
    let others: Vec<_> = (1..threads)
        .map(|w| {
            let s = Arc::clone(&shares);
            thread::spawn(move || std::iter::from_fn(|| s.take(w)).collect::<Vec<u32>>())
        })
        .collect();
    let mut all = vec![std::iter::from_fn(|| shares.take(0)).collect::<Vec<u32>>()];
    all.extend(others.into_iter().map(|t| t.join().unwrap()));
    all
}

#[test]
fn loom_an_owner_and_a_thief_never_claim_the_same_item_and_miss_none() {
    // Two threads, three items: thread 0 owns 0, thread 1 owns 1..3; whoever
    // is done first takes from the other's back while the other takes from
    // its front.
    loom::model(|| {
        let shares = Arc::new(Shares::new(2));
        shares.reset(3);
        let took = drain_in_threads(shares, 2);
        let mut all: Vec<u32> = took.concat();
        all.sort();
        assert_eq!(all, vec![0, 1, 2]);
        // Each thread starts at its own share's front (a thief takes from the
        // back): if the other left it anything, thread 0 began at 0, thread 1 at 1.
        for (w, t) in took.iter().enumerate() {
            assert!(t.first().map_or(true, |&i| i == w as u32), "thread {w} took {t:?}");
        }
    });
}

#[test]
fn loom_three_threads_racing_for_one_share_claim_each_item_once() {
    // Two items for three threads: thread 0's share is empty, so it takes
    // from the back of the others' while they take from their fronts.
    loom::model(|| {
        let shares = Arc::new(Shares::new(3));
        shares.reset(2);
        let mut all: Vec<u32> = drain_in_threads(shares, 3).concat();
        all.sort();
        assert_eq!(all, vec![0, 1]);
    });
}
