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
    r.add_ctor("BinaryOpUGen", binary::construct).random_ops(&[47, 48]).inputs(2).outputs(1);
    r.add_ctor("UnaryOpUGen", unary::construct).random_ops(&[37, 38, 39, 40, 41, 44]).outputs(1);
    r.add::<muladd::MulAdd>("MulAdd").pure().inputs(3).outputs(1);
    r.add::<muladd::Sum<3>>("Sum3").pure().inputs(3).outputs(1);
    r.add::<muladd::Sum<4>>("Sum4").pure().inputs(4).outputs(1);
}
