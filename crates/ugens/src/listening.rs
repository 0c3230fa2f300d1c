//! UGens of this family are registered here.

use crate::registry::Registry;

pub fn register(_r: &mut Registry) {}
