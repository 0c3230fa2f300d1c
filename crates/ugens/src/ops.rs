//! Operator units: BinaryOpUGen, UnaryOpUGen, MulAdd, Sum3, Sum4.


pub mod binary;
pub mod math;
pub mod muladd;
pub(crate) mod nova;
pub(crate) mod ramp;
pub mod unary;

#[cfg(test)]
mod tests;

