//! OSC transport (being written).
