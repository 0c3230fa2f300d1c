//! The repeated value groups of `/s_new`, `/n_set`, `/n_setn` (a control and
//! the values for consecutive controls from it) and `/c_setn` (a bus range
//! and its values), held flat: one list in which each group's head is
//! followed by its values. The list holds the slots of a common command in
//! place and allocates only for a longer one (and, for control names too
//! long to sit in a slot, one string), however many groups the message
//! holds, where a list per group would allocate for each.

use crate::commands::{ControlId, ControlValue};
use smallvec::SmallVec;
use std::fmt;

/// A control as a command names it, borrowed from the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlRef<'a> {
    Index(i32),
    Name(&'a str),
}

impl From<i32> for ControlRef<'_> {
    fn from(v: i32) -> Self {
        ControlRef::Index(v)
    }
}

impl<'a> From<&'a str> for ControlRef<'a> {
    fn from(v: &'a str) -> Self {
        ControlRef::Name(v)
    }
}

impl<'a> From<&'a ControlId> for ControlRef<'a> {
    fn from(v: &'a ControlId) -> Self {
        match v {
            ControlId::Index(i) => ControlRef::Index(*i),
            ControlId::Name(n) => ControlRef::Name(n),
        }
    }
}

impl ControlRef<'_> {
    pub fn to_id(self) -> ControlId {
        match self {
            ControlRef::Index(i) => ControlId::Index(i),
            ControlRef::Name(n) => ControlId::Name(n.to_owned()),
        }
    }
}

/// One element of a flat group list: a group's head, or one of its values.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Slot<H, V> {
    Head(H),
    Value(V),
}

/// The slots a command holds without allocating: four controls with a
/// value each, or one with up to seven values.
const INLINE_SLOTS: usize = 8;

/// Groups as one list of slots, each head followed by its values.
#[derive(Debug, Clone, PartialEq)]
struct Groups<H, V> {
    slots: SmallVec<[Slot<H, V>; INLINE_SLOTS]>,
}

impl<H, V> Default for Groups<H, V> {
    fn default() -> Self {
        Groups { slots: SmallVec::new() }
    }
}

impl<H: Copy, V: Copy> Groups<H, V> {
    fn iter(&self) -> impl Iterator<Item = (&H, Values<'_, H, V>)> + '_ {
        let slots = self.slots.as_slice();
        slots.iter().enumerate().filter_map(move |(i, s)| match s {
            Slot::Head(h) => {
                let rest = &slots[i + 1..];
                let n = rest.iter().position(|s| matches!(s, Slot::Head(_))).unwrap_or(rest.len());
                Some((h, Values { slots: &rest[..n] }))
            }
            Slot::Value(_) => None,
        })
    }

    fn len(&self) -> usize {
        self.slots.iter().filter(|s| matches!(s, Slot::Head(_))).count()
    }
}

/// The values of one group, in order.
#[derive(Clone)]
struct Values<'a, H, V> {
    slots: &'a [Slot<H, V>],
}

impl<H, V: Copy> Iterator for Values<'_, H, V> {
    type Item = V;

    fn next(&mut self) -> Option<V> {
        let (first, rest) = self.slots.split_first()?;
        self.slots = rest;
        match *first {
            Slot::Value(v) => Some(v),
            // Never reached: a group's values stop before the next head.
            Slot::Head(_) => None,
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.slots.len(), Some(self.slots.len()))
    }
}

impl<H, V: Copy> ExactSizeIterator for Values<'_, H, V> {}

/// The longest control name kept in its slot; longer ones go to the
/// command's name store.
const SHORT_NAME: usize = 14;

/// A control in a slot: an index, a short name inline, or where a long
/// name lies in the name store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StoredControl {
    Index(i32),
    Short { len: u8, bytes: [u8; SHORT_NAME] },
    Long { start: u32, len: u32 },
}

/// The control settings of `/s_new`, `/n_set` and `/n_setn`: each names a
/// control (by index or name) and gives the values, bus mappings or ignored
/// places for consecutive controls from it.
#[derive(Clone, Default, PartialEq)]
pub struct ControlSets {
    groups: Groups<StoredControl, ControlValue>,
    long_names: String,
}

impl ControlSets {
    pub fn new() -> ControlSets {
        ControlSets::default()
    }

    /// Starts a setting of consecutive controls from `control`.
    pub fn push_control(&mut self, control: ControlRef<'_>) {
        let stored = match control {
            ControlRef::Index(i) => StoredControl::Index(i),
            ControlRef::Name(n) if n.len() <= SHORT_NAME => {
                let mut bytes = [0; SHORT_NAME];
                bytes[..n.len()].copy_from_slice(n.as_bytes());
                StoredControl::Short { len: n.len() as u8, bytes }
            }
            ControlRef::Name(n) => {
                let start = self.long_names.len() as u32;
                self.long_names.push_str(n);
                StoredControl::Long { start, len: n.len() as u32 }
            }
        };
        self.groups.slots.push(Slot::Head(stored));
    }

    /// Adds a value to the setting started last.
    pub fn push_value(&mut self, value: ControlValue) {
        self.groups.slots.push(Slot::Value(value));
    }

    /// A setting (builder form, for tests and encoders).
    pub fn with<'a>(
        mut self,
        control: impl Into<ControlRef<'a>>,
        values: impl IntoIterator<Item = ControlValue>,
    ) -> ControlSets {
        self.push_control(control.into());
        for v in values {
            self.push_value(v);
        }
        self
    }

    /// The settings in order: each control and its values.
    pub fn iter(&self) -> impl Iterator<Item = (ControlRef<'_>, impl ExactSizeIterator<Item = ControlValue> + '_)> + '_ {
        self.groups.iter().map(|(c, values)| (self.control(c), values))
    }

    fn control<'a>(&'a self, c: &'a StoredControl) -> ControlRef<'a> {
        match *c {
            StoredControl::Index(i) => ControlRef::Index(i),
            StoredControl::Short { len, ref bytes } => ControlRef::Name(short_name(bytes, len)),
            StoredControl::Long { start, len } => {
                ControlRef::Name(self.long_names.get(start as usize..(start + len) as usize).unwrap_or(""))
            }
        }
    }

    /// The number of settings.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    pub fn is_empty(&self) -> bool {
        self.groups.slots.is_empty()
    }

    /// The settings as owned values (for tests and printing).
    pub fn to_vec(&self) -> Vec<(ControlId, Vec<ControlValue>)> {
        self.iter().map(|(c, v)| (c.to_id(), v.collect())).collect()
    }
}

fn short_name(bytes: &[u8; SHORT_NAME], len: u8) -> &str {
    let name = &bytes[..usize::from(len).min(SHORT_NAME)];
    // SAFETY: `push_control` alone makes a `Short` slot, copying a whole
    // `&str` of `len` bytes (checked UTF-8 when it was decoded) to the start
    // of `bytes`, so the first `len` bytes are UTF-8; the slots are private
    // and never changed after.
    unsafe { std::str::from_utf8_unchecked(name) }
}

impl fmt::Debug for ControlSets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter().map(|(c, v)| (c, v.collect::<Vec<_>>()))).finish()
    }
}

/// The ranges of `/c_setn`: a first bus, a count, and the values the
/// message holds for them (fewer than the count when it ends first).
#[derive(Clone, Default, PartialEq)]
pub struct BusRanges {
    groups: Groups<(i32, i32), f32>,
}

impl BusRanges {
    pub fn new() -> BusRanges {
        BusRanges::default()
    }

    /// Starts a range of `count` buses from `start`.
    pub fn push_range(&mut self, start: i32, count: i32) {
        self.groups.slots.push(Slot::Head((start, count)));
    }

    /// Adds a value to the range started last.
    pub fn push_value(&mut self, value: f32) {
        self.groups.slots.push(Slot::Value(value));
    }

    /// A range (builder form, for tests and encoders).
    pub fn with(mut self, start: i32, count: i32, values: impl IntoIterator<Item = f32>) -> BusRanges {
        self.push_range(start, count);
        for v in values {
            self.push_value(v);
        }
        self
    }

    /// The ranges in order: first bus, count, values.
    pub fn iter(&self) -> impl Iterator<Item = (i32, i32, impl ExactSizeIterator<Item = f32> + '_)> + '_ {
        self.groups.iter().map(|(&(start, count), values)| (start, count, values))
    }

    pub fn len(&self) -> usize {
        self.groups.len()
    }

    pub fn is_empty(&self) -> bool {
        self.groups.slots.is_empty()
    }
}

impl fmt::Debug for BusRanges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter().map(|(s, n, v)| (s, n, v.collect::<Vec<_>>()))).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_keep_their_controls_and_values_in_order() {
        let long = "a_control_name_longer_than_a_slot";
        let sets = ControlSets::new()
            .with("freq", [ControlValue::Value(1.0)])
            .with(3, [])
            .with(long, [ControlValue::ControlBus(2), ControlValue::Ignored])
            .with("amp", [ControlValue::Value(0.5)]);
        assert_eq!(sets.len(), 4);
        assert_eq!(
            sets.to_vec(),
            vec![
                ("freq".into(), vec![ControlValue::Value(1.0)]),
                (3.into(), vec![]),
                (long.into(), vec![ControlValue::ControlBus(2), ControlValue::Ignored]),
                ("amp".into(), vec![ControlValue::Value(0.5)]),
            ]
        );
        assert_eq!(sets.iter().nth(2).map(|(_, v)| v.len()), Some(2));
    }

    #[test]
    fn ranges_keep_their_values() {
        let r = BusRanges::new().with(0, 3, [1.0, 2.0]).with(9, 1, []);
        let got: Vec<_> = r.iter().map(|(s, n, v)| (s, n, v.collect::<Vec<_>>())).collect();
        assert_eq!(got, vec![(0, 3, vec![1.0, 2.0]), (9, 1, vec![])]);
    }
}
