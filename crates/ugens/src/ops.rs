//! Operator units: BinaryOpUGen, UnaryOpUGen, MulAdd, Sum3, Sum4.

use crate::registry::Registry;

pub mod binary;
pub mod math;
pub mod muladd;
pub(crate) mod nova;
pub(crate) mod ramp;
pub mod unary;

#[cfg(test)]
mod tests;

pub fn register(r: &mut Registry) {
    r.add_ctor("BinaryOpUGen", binary::construct);
    r.add_ctor("UnaryOpUGen", unary::construct);
    r.add::<muladd::MulAdd>("MulAdd");
    r.add::<muladd::Sum<3>>("Sum3");
    r.add::<muladd::Sum<4>>("Sum4");
}
