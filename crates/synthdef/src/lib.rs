//! Parsing SuperCollider SynthDef files (`SCgf`, versions 0, 1 and 2) into a
//! typed, validated [`SynthDef`].
//!
//! Malformed data gives a [`SynthDefError`] naming the def and the byte offset;
//! no input makes the parser panic or allocate much more than the input's size.
//! UGen names are not checked against any plugin list: that is the engine's job.
//!
//! ```
//! // A version 2 file with one def "silence": Out.ar(0, 0) (one constant, no controls).
//! let mut bytes = b"SCgf".to_vec();
//! bytes.extend(2i32.to_be_bytes());
//! bytes.extend(1i16.to_be_bytes());
//! bytes.push(7);
//! bytes.extend(b"silence");
//! bytes.extend(1i32.to_be_bytes()); // constants
//! bytes.extend(0f32.to_be_bytes());
//! bytes.extend(0i32.to_be_bytes()); // parameters
//! bytes.extend(0i32.to_be_bytes()); // control names
//! bytes.extend(1i32.to_be_bytes()); // units
//! bytes.push(3);
//! bytes.extend(b"Out");
//! bytes.push(2); // audio rate
//! bytes.extend(2i32.to_be_bytes()); // inputs
//! bytes.extend(0i32.to_be_bytes()); // outputs
//! bytes.extend(0i16.to_be_bytes()); // special index
//! for _ in 0..2 {
//!     bytes.extend((-1i32).to_be_bytes());
//!     bytes.extend(0i32.to_be_bytes()); // constant 0
//! }
//! bytes.extend(0i16.to_be_bytes()); // variants
//!
//! let defs = magnetar_synthdef::parse(&bytes).unwrap();
//! assert_eq!(defs[0].name, "silence");
//! assert_eq!(defs[0].ugens[0].inputs[1], magnetar_synthdef::Input::Constant(0));
//! ```

mod def;
mod error;
mod parse;
mod reader;

pub use def::{Input, ParamName, Rate, SynthDef, UGenSpec, Variant};
pub use error::{DefLabel, SynthDefError};
pub use parse::{
    parse, parse_header, parse_one_at, Format, HEADER_LEN, MAX_DEF_NAME_LEN, MAX_NAME_LEN,
};
