//! The `/u_cmd` commands plugins define with `DefineUnitCmd`. Some define
//! them in a unit's constructor, on the audio thread, so the table is a
//! fixed array filled without a lock or an allocation.

use crate::ffi::UnitCmdFunc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

const SLOTS: usize = 256;
const NAME: usize = 64;

const FREE: u8 = 0;
const WRITING: u8 = 1;
const READY: u8 = 2;

struct Slot {
    state: AtomicU8,
    unit: [AtomicU8; NAME],
    cmd: [AtomicU8; NAME],
    func: AtomicUsize,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Slot = Slot {
    state: AtomicU8::new(FREE),
    unit: [const { AtomicU8::new(0) }; NAME],
    cmd: [const { AtomicU8::new(0) }; NAME],
    func: AtomicUsize::new(0),
};

static TABLE: [Slot; SLOTS] = [EMPTY; SLOTS];

fn equals(stored: &[AtomicU8; NAME], name: &[u8]) -> bool {
    name.len() < NAME
        && stored.iter().take(name.len()).zip(name).all(|(a, b)| a.load(Ordering::Relaxed) == *b)
        && stored[name.len()].load(Ordering::Relaxed) == 0
}

fn store(into: &[AtomicU8; NAME], name: &[u8]) {
    for (i, cell) in into.iter().enumerate() {
        cell.store(name.get(i).copied().unwrap_or(0), Ordering::Relaxed);
    }
}

/// Adds `cmd` for units named `unit`; false when the names are too long,
/// the command exists already or the table is full.
pub(crate) fn define(unit: &str, cmd: &str, func: UnitCmdFunc) -> bool {
    let (u, c) = (unit.as_bytes(), cmd.as_bytes());
    if u.is_empty() || c.is_empty() || u.len() >= NAME || c.len() >= NAME || find(unit, cmd).is_some() {
        return false;
    }
    for slot in TABLE.iter() {
        if slot.state.compare_exchange(FREE, WRITING, Ordering::Acquire, Ordering::Relaxed).is_ok() {
            store(&slot.unit, u);
            store(&slot.cmd, c);
            slot.func.store(func as usize, Ordering::Relaxed);
            slot.state.store(READY, Ordering::Release);
            return true;
        }
    }
    false
}

/// The function of command `cmd` of units named `unit`.
pub(crate) fn find(unit: &str, cmd: &str) -> Option<UnitCmdFunc> {
    for slot in TABLE.iter() {
        match slot.state.load(Ordering::Acquire) {
            FREE => return None,
            READY if equals(&slot.unit, unit.as_bytes()) && equals(&slot.cmd, cmd.as_bytes()) => {
                let f = slot.func.load(Ordering::Relaxed);
                // SAFETY: `define` stored a `UnitCmdFunc` here before marking the slot ready.
                return Some(unsafe { std::mem::transmute::<usize, UnitCmdFunc>(f) });
            }
            _ => {}
        }
    }
    None
}
