//! Model checks of the ready stack under every interleaving loom explores:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p magnetar-dsp --release --test loom
//! ```
#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;
use magnetar_dsp::ready::ReadyStack;

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
