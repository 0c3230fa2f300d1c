//! Writes SynthDef bytes by hand, in either integer width.
#![allow(dead_code)]

/// Appends SynthDef items; `wide` picks 32-bit (version 2) or 16-bit counts.
pub struct Bytes {
    pub data: Vec<u8>,
    pub wide: bool,
}

impl Bytes {
    /// A file header for `version` announcing `count` defs.
    pub fn file(version: i32, count: i16) -> Bytes {
        let mut b = Bytes {
            data: b"SCgf".to_vec(),
            wide: version == 2,
        };
        b.data.extend(version.to_be_bytes());
        b.data.extend(count.to_be_bytes());
        b
    }

    pub fn int(&mut self, v: i32) -> &mut Self {
        if self.wide {
            self.data.extend(v.to_be_bytes());
        } else {
            self.data.extend((v as i16).to_be_bytes());
        }
        self
    }

    pub fn i16(&mut self, v: i16) -> &mut Self {
        self.data.extend(v.to_be_bytes());
        self
    }

    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.data.push(v);
        self
    }

    pub fn f32(&mut self, v: f32) -> &mut Self {
        self.data.extend(v.to_be_bytes());
        self
    }

    pub fn floats(&mut self, values: &[f32]) -> &mut Self {
        self.int(values.len() as i32);
        for &v in values {
            self.f32(v);
        }
        self
    }

    pub fn pstring(&mut self, s: &str) -> &mut Self {
        self.data.push(s.len() as u8);
        self.data.extend(s.as_bytes());
        self
    }

    /// A unit header; inputs and output rates follow with `input`/`u8`.
    pub fn unit(
        &mut self,
        name: &str,
        rate: u8,
        inputs: i32,
        outputs: i32,
        special: i16,
    ) -> &mut Self {
        self.pstring(name)
            .u8(rate)
            .int(inputs)
            .int(outputs)
            .i16(special)
    }

    pub fn constant_input(&mut self, index: i32) -> &mut Self {
        self.int(-1).int(index)
    }

    pub fn unit_input(&mut self, unit: i32, output: i32) -> &mut Self {
        self.int(unit).int(output)
    }
}

pub fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}
