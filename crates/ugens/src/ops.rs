//! Operator units: BinaryOpUGen, UnaryOpUGen, MulAdd, Sum3, Sum4.

pub mod binary;
pub mod math;
pub mod muladd;
pub mod unary;

#[cfg(test)]
mod tests;

