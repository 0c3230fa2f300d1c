//! Reading `SCgf` files (versions 0, 1 and 2) into [`SynthDef`]s.

use crate::def::{Input, ParamName, Rate, SynthDef, UGenSpec, Variant};
use crate::error::SynthDefError;
use crate::reader::Reader;

/// The longest UGen, control or variant name scsynth accepts (its name buffers hold 32 bytes).
pub const MAX_NAME_LEN: usize = 31;
/// The longest def name; a one-byte length prefix cannot say more.
pub const MAX_DEF_NAME_LEN: usize = 255;

/// The layout of the defs in a file, from the version field of its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Version 0: 16-bit counts and indices, no variant section.
    V0,
    /// Version 1: 16-bit counts and indices, with variants.
    V1,
    /// Version 2: 32-bit counts and indices, with variants.
    V2,
}

impl Format {
    /// The format for a header's version number, if it is one scsynth reads.
    pub fn from_version(version: i32) -> Option<Format> {
        match version {
            0 => Some(Format::V0),
            1 => Some(Format::V1),
            2 => Some(Format::V2),
            _ => None,
        }
    }

    /// Whether counts and indices take 4 bytes (else 2).
    fn wide(self) -> bool {
        self == Format::V2
    }

    fn int_size(self) -> u64 {
        if self.wide() {
            4
        } else {
            2
        }
    }
}

const MAGIC: &[u8; 4] = b"SCgf";
/// Bytes of the magic, version and def count.
pub const HEADER_LEN: usize = 10;

/// Parses a whole `.scsyndef` file (or `/d_recv` blob), which may hold several defs.
///
/// Bytes after the last def are ignored, as scsynth does.
pub fn parse(bytes: &[u8]) -> Result<Vec<SynthDef>, SynthDefError> {
    let (format, count) = parse_header(bytes)?;
    // A forged count must not size the list: no def takes fewer than an empty
    // name and four counts, so the remaining bytes bound how many can follow.
    let min_def_size = 1 + 4 * format.int_size() as usize;
    let room = bytes.len().saturating_sub(HEADER_LEN) / min_def_size;
    let mut defs = Vec::with_capacity(usize::from(count).min(room));
    let mut offset = HEADER_LEN;
    for _ in 0..count {
        let (def, next) = parse_one_at(bytes, offset, format)?;
        defs.push(def);
        offset = next;
    }
    Ok(defs)
}

/// Reads the file header: its format and how many defs follow it (starting at [`HEADER_LEN`]).
pub fn parse_header(bytes: &[u8]) -> Result<(Format, u16), SynthDefError> {
    let mut reader = Reader::new(bytes, 0);
    let magic = reader.take(4, || "the file type id".into())?;
    if magic != MAGIC {
        return Err(SynthDefError::BadMagic {
            found: String::from_utf8_lossy(magic).into_owned(),
            offset: 0,
        });
    }
    let version = reader.i32(|| "the file version".into())?;
    let format = Format::from_version(version)
        .ok_or(SynthDefError::UnsupportedVersion { version, offset: 4 })?;
    let count = reader.count(false, || "the number of synth definitions".into())?;
    // A non-negative i16 always fits.
    let count = u16::try_from(count).unwrap_or(u16::MAX);
    Ok((format, count))
}

/// Parses the one def that starts at `offset`, returning it and the offset just past it.
pub fn parse_one_at(
    bytes: &[u8],
    offset: usize,
    format: Format,
) -> Result<(SynthDef, usize), SynthDefError> {
    let mut r = Reader::new(bytes, offset);
    let wide = format.wide();
    let int_size = format.int_size();

    let name = r.pstring(MAX_DEF_NAME_LEN, || "the def name".into())?;
    r.def = Some(name.clone());

    let num_constants = r.count(wide, || "the number of constants".into())?;
    r.ensure(u64::from(num_constants), 4, || {
        format!("the {num_constants} constants")
    })?;
    let mut constants = Vec::with_capacity(num_constants as usize);
    for i in 0..num_constants {
        constants.push(r.f32(|| format!("constant {i}"))?);
    }

    let num_params = r.count(wide, || "the number of parameters".into())?;
    r.ensure(u64::from(num_params), 4, || {
        format!("the {num_params} parameter values")
    })?;
    let mut params = Vec::with_capacity(num_params as usize);
    for i in 0..num_params {
        params.push(r.f32(|| format!("parameter {i}"))?);
    }

    let num_names = r.count(wide, || "the number of control names".into())?;
    r.ensure(u64::from(num_names), 1 + int_size, || {
        format!("the {num_names} control names")
    })?;
    let mut param_names = Vec::with_capacity(num_names as usize);
    for i in 0..num_names {
        param_names.push(read_param_name(&mut r, wide, i, num_params)?);
    }

    let num_ugens = r.count(wide, || "the number of units".into())?;
    // Smallest unit: empty name, rate, two counts, special index.
    r.ensure(u64::from(num_ugens), 1 + 1 + 2 * int_size + 2, || {
        format!("the {num_ugens} units")
    })?;
    let mut ugens: Vec<UGenSpec> = Vec::with_capacity(num_ugens as usize);
    for unit in 0..num_ugens {
        let spec = read_ugen(&mut r, wide, unit, &constants, &ugens)?;
        ugens.push(spec);
    }

    let num_variants = match format {
        Format::V0 => 0,
        Format::V1 | Format::V2 => r.count(false, || "the number of variants".into())?,
    };
    r.ensure(
        u64::from(num_variants),
        1 + 4 * u64::from(num_params),
        || format!("the {num_variants} variants"),
    )?;
    let mut variants = Vec::with_capacity(num_variants as usize);
    for v in 0..num_variants {
        let name = r.pstring(MAX_NAME_LEN, || format!("the name of variant {v}"))?;
        r.ensure(u64::from(num_params), 4, || {
            format!("the values of variant {name:?}")
        })?;
        let mut values = Vec::with_capacity(num_params as usize);
        for i in 0..num_params {
            values.push(r.f32(|| format!("value {i} of variant {name:?}"))?);
        }
        variants.push(Variant {
            name,
            params: values,
        });
    }

    let def = SynthDef {
        name,
        constants,
        params,
        param_names,
        ugens,
        variants,
    };
    Ok((def, r.pos()))
}

fn read_param_name(
    r: &mut Reader<'_>,
    wide: bool,
    i: u32,
    num_params: u32,
) -> Result<ParamName, SynthDefError> {
    let name = r.pstring(MAX_NAME_LEN, || format!("the name of control {i}"))?;
    let offset = r.pos();
    let index = r.int(wide, || format!("the index of control {name:?}"))?;
    match u32::try_from(index) {
        Ok(index) if index < num_params => Ok(ParamName { name, index }),
        _ => Err(SynthDefError::ParamIndexOutOfRange {
            def: r.label(),
            name,
            index,
            count: num_params,
            offset,
        }),
    }
}

fn read_rate(r: &mut Reader<'_>, what: impl Fn() -> String) -> Result<Rate, SynthDefError> {
    let offset = r.pos();
    let byte = r.u8(&what)?;
    Rate::from_u8(byte).ok_or_else(|| SynthDefError::UnknownRate {
        def: r.label(),
        what: what(),
        rate: byte,
        offset,
    })
}

/// Reads unit number `unit`; `earlier` holds the units before it.
fn read_ugen(
    r: &mut Reader<'_>,
    wide: bool,
    unit: u32,
    constants: &[f32],
    earlier: &[UGenSpec],
) -> Result<UGenSpec, SynthDefError> {
    let name = r.pstring(MAX_NAME_LEN, || format!("the name of unit {unit}"))?;
    let rate = read_rate(r, || format!("unit {unit} ({name})"))?;
    let num_inputs = r.count(wide, || {
        format!("the number of inputs of unit {unit} ({name})")
    })?;
    let num_outputs = r.count(wide, || {
        format!("the number of outputs of unit {unit} ({name})")
    })?;
    let special_index = r.i16(|| format!("the special index of unit {unit} ({name})"))?;

    let input_size = 2 * if wide { 4 } else { 2 };
    r.ensure(u64::from(num_inputs), input_size, || {
        format!("the {num_inputs} inputs of unit {unit} ({name})")
    })?;
    let mut inputs = Vec::with_capacity(num_inputs as usize);
    for input in 0..num_inputs {
        let offset = r.pos();
        let what = || format!("input {input} of unit {unit} ({name})");
        let from = r.int(wide, what)?;
        let index = r.int(wide, what)?;
        inputs.push(resolve_input(
            r, unit, &name, input, from, index, offset, constants, earlier,
        )?);
    }

    r.ensure(u64::from(num_outputs), 1, || {
        format!("the {num_outputs} outputs of unit {unit} ({name})")
    })?;
    let mut outputs = Vec::with_capacity(num_outputs as usize);
    for output in 0..num_outputs {
        outputs.push(read_rate(r, || {
            format!("output {output} of unit {unit} ({name})")
        })?);
    }

    Ok(UGenSpec {
        name,
        rate,
        special_index,
        inputs,
        outputs,
    })
}

/// Turns an input spec into an [`Input`], checking that what it names exists.
#[allow(clippy::too_many_arguments)]
fn resolve_input(
    r: &Reader<'_>,
    unit: u32,
    name: &str,
    input: u32,
    from: i32,
    index: i32,
    offset: usize,
    constants: &[f32],
    earlier: &[UGenSpec],
) -> Result<Input, SynthDefError> {
    if from == -1 {
        return match u32::try_from(index) {
            Ok(constant) if (constant as usize) < constants.len() => Ok(Input::Constant(constant)),
            _ => Err(SynthDefError::MissingConstant {
                def: r.label(),
                unit,
                ugen: name.to_owned(),
                input,
                constant: index,
                count: constants.len() as u32,
                offset,
            }),
        };
    }
    let source = match u32::try_from(from) {
        Ok(from) if (from as usize) < earlier.len() => from,
        _ => {
            return Err(SynthDefError::UnitNotBefore {
                def: r.label(),
                unit,
                ugen: name.to_owned(),
                input,
                from,
                offset,
            })
        }
    };
    let source_spec = &earlier[source as usize];
    match u32::try_from(index) {
        Ok(output) if (output as usize) < source_spec.outputs.len() => Ok(Input::Unit {
            unit: source,
            output,
        }),
        _ => Err(SynthDefError::MissingOutput {
            def: r.label(),
            unit,
            ugen: name.to_owned(),
            input,
            from: source,
            from_ugen: source_spec.name.clone(),
            output: index,
            count: source_spec.outputs.len() as u32,
            offset,
        }),
    }
}
