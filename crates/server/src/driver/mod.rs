//! Audio drivers (being written).
