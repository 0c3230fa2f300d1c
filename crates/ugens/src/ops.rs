//! Operator units: BinaryOpUGen, UnaryOpUGen, MulAdd, Sum3, Sum4, and the
//! range units Clip, Wrap, Fold and InRange ([`ranges`]).

pub mod binary;
pub mod muladd;
mod ranges;
pub mod unary;

pub use ranges::{Clip, Fold, InRange, Wrap};

#[cfg(test)]
mod tests;

