//! The number of interconnect (wire) buffers scsynth gives a def, which `-w`
//! bounds: scsynth refuses a def that needs more while it runs.
//!
//! scsynth colours buffers over the def's units in order: each audio-rate
//! output takes a free buffer (or a new one) held for as many reads as it
//! has; each audio-rate read of it lets one go (reads by demand-rate units
//! never do), and a buffer whose reads are all done is free again. A unit
//! normally lets its inputs go before it takes its outputs; a few units that
//! may not write over their inputs take their outputs first, which can only
//! need more buffers. This count lets every unit go first, so it never
//! exceeds scsynth's: a def refused here is refused by scsynth too.

use magnetar_synthdef::{Input, Rate, SynthDef};

/// Wire buffers scsynth needs for `def` at least.
pub fn wire_buffers_needed(def: &SynthDef) -> usize {
    let consumers: Vec<Vec<u32>> = {
        let mut c: Vec<Vec<u32>> = def.ugens.iter().map(|u| vec![0; u.outputs.len()]).collect();
        for u in &def.ugens {
            for input in &u.inputs {
                if let Input::Unit { unit, output } = *input {
                    if let Some(n) = c.get_mut(unit as usize).and_then(|o| o.get_mut(output as usize)) {
                        *n += 1;
                    }
                }
            }
        }
        c
    };
    // Reads left per buffer, buffers free for reuse, and each output's buffer.
    let mut refs: Vec<u32> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    let mut buffer_of: Vec<Vec<Option<usize>>> = def.ugens.iter().map(|u| vec![None; u.outputs.len()]).collect();
    for (j, u) in def.ugens.iter().enumerate() {
        if u.rate != Rate::Demand {
            for input in u.inputs.iter().rev() {
                let Input::Unit { unit, output } = *input else { continue };
                let Some(Some(b)) = buffer_of.get(unit as usize).and_then(|o| o.get(output as usize)).copied() else {
                    continue;
                };
                if refs[b] > 0 {
                    refs[b] -= 1;
                    if refs[b] == 0 {
                        free.push(b);
                    }
                }
            }
        }
        for (i, rate) in u.outputs.iter().enumerate() {
            if *rate == Rate::Audio {
                let b = free.pop().unwrap_or_else(|| {
                    refs.push(0);
                    refs.len() - 1
                });
                refs[b] = consumers[j][i];
                buffer_of[j][i] = Some(b);
            }
        }
    }
    refs.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use magnetar_synthdef::UGenSpec;

    fn ugen(rate: Rate, inputs: Vec<Input>, outputs: usize) -> UGenSpec {
        UGenSpec { name: "X".into(), rate, special_index: 0, inputs, outputs: vec![rate; outputs] }
    }

    fn def(ugens: Vec<UGenSpec>) -> SynthDef {
        SynthDef {
            name: "d".into(),
            constants: vec![0.0],
            params: vec![],
            param_names: vec![],
            ugens,
            variants: vec![],
        }
    }

    #[test]
    fn a_chain_reuses_one_buffer_and_parallel_sources_need_one_each() {
        let c = Input::Constant(0);
        let u = |unit| Input::Unit { unit, output: 0 };
        // a -> b -> c -> out: each output is read once, right away.
        let chain = def(vec![
            ugen(Rate::Audio, vec![c], 1),
            ugen(Rate::Audio, vec![u(0)], 1),
            ugen(Rate::Audio, vec![u(1)], 1),
            ugen(Rate::Audio, vec![c, u(2)], 0),
        ]);
        assert_eq!(wire_buffers_needed(&chain), 1);
        // Three sources summed at the end: all three live at once.
        let fan = def(vec![
            ugen(Rate::Audio, vec![c], 1),
            ugen(Rate::Audio, vec![c], 1),
            ugen(Rate::Audio, vec![c], 1),
            ugen(Rate::Audio, vec![u(0), u(1), u(2)], 1),
        ]);
        assert_eq!(wire_buffers_needed(&fan), 3);
        // Control-rate wires take no buffer.
        let kr = def(vec![ugen(Rate::Control, vec![c], 1), ugen(Rate::Control, vec![u(0)], 1)]);
        assert_eq!(wire_buffers_needed(&kr), 0);
    }
}
