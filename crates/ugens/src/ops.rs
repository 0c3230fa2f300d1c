//! Operator units: BinaryOpUGen, UnaryOpUGen, MulAdd, Sum3, Sum4, and the
//! range units Clip, Wrap, Fold and InRange ([`ranges`]); trees of sums
//! ([`sum_tree`]) and runs of control-rate operators ([`control_ops`]) that
//! a def runs as one step.

pub mod binary;
pub mod control_ops;
pub mod muladd;
mod ranges;
pub mod sum_tree;
pub mod unary;

pub use ranges::{Clip, Fold, InRange, Wrap};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_lanes;
