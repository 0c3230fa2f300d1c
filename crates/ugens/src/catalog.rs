//! Every unit magnetar knows, family by family, each with what it declares
//! (see [`crate::decl`]): the one list a new unit is added to. The families
//! know nothing of the registry; [`Registry::with_all`] runs [`register_all`].

use crate::batch::{batch_lanes, kept_batch_lanes, lane_batchable, new_kept_batch, new_lane_batch};
use crate::decl::{BufferUse, BusUse, Rates};
use crate::registry::Registry;
use crate::unit::Rate;

/// Registers every unit of every family, and the test units when asked for
/// (see [`crate::fault_test`]).
pub(crate) fn register_all(r: &mut Registry) {
    osc(r);
    noise(r);
    filters(r);
    delays(r);
    reverb(r);
    envelopes(r);
    triggers(r);
    ops(r);
    io(r);
    pan(r);
    bufio(r);
    info(r);
    reply(r);
    gc_units(r);
    demand(r);
    tables(r);
    convert(r);
    chaos(r);
    fft(r);
    grains(r);
    listening(r);
    convolution(r);
    scope(r);
    ui(r);
    disk(r);
    if crate::fault_test::enabled() {
        use crate::fault_test::*;
        r.add::<MagnetarFault>("MagnetarFault").pure();
        r.add::<MagnetarStall>("MagnetarStall");
    }
}

fn osc(r: &mut Registry) {
    use crate::osc::*;
    r.add::<SinOsc>("SinOsc").pure().inputs(2).outputs(1);
    r.add_lanes("SinOsc", sinosc_lanes);
    r.add_batch("SinOsc", lane_batchable, new_kept_batch::<SinOsc>);
    r.add_batch_lanes("SinOsc", kept_batch_lanes::<SinOsc>);
    r.add::<FSinOsc>("FSinOsc").pure().inputs(2).outputs(1);
    r.add_batch("FSinOsc", fsinosc_batchable, new_fsinosc_batch);
    r.add_batch_lanes("FSinOsc", fsinosc_batch_lanes);
    r.add::<Osc>("Osc").buffer(0, BufferUse::Read).inputs(3).outputs(1);
    r.add::<OscN>("OscN").buffer(0, BufferUse::Read).inputs(3).outputs(1);
    r.add::<COsc>("COsc").buffer(0, BufferUse::Read).inputs(3).outputs(1);
    r.add::<VOsc>("VOsc").outputs(1);
    r.add::<VOsc3>("VOsc3").outputs(1);
    r.add::<Saw>("Saw").pure().inputs(1).outputs(1);
    r.add_lanes("Saw", saw_lanes);
    r.add_batch("Saw", lane_batchable, new_lane_batch::<Saw>);
    r.add::<Pulse>("Pulse").pure().inputs(2).outputs(1);
    r.add_lanes("Pulse", pulse_lanes);
    r.add_batch("Pulse", lane_batchable, new_lane_batch::<Pulse>);
    r.add::<Blip>("Blip").pure().inputs(2).outputs(1);
    r.add::<Formant>("Formant").pure().inputs(3).outputs(1);
    r.add::<LFSaw>("LFSaw").pure().inputs(2).outputs(1);
    r.add_lanes("LFSaw", lfsaw_lanes);
    r.add_batch("LFSaw", lane_batchable, new_lane_batch::<LFSaw>);
    r.add_batch_lanes("LFSaw", batch_lanes::<LFSaw>);
    r.add::<LFPulse>("LFPulse").pure().inputs(3).outputs(1);
    r.add_lanes("LFPulse", lfpulse_lanes);
    r.add_batch("LFPulse", lane_batchable, new_lane_batch::<LFPulse>);
    r.add_batch_lanes("LFPulse", batch_lanes::<LFPulse>);
    r.add::<LFTri>("LFTri").pure().inputs(2).outputs(1);
    r.add_lanes("LFTri", lftri_lanes);
    r.add_batch("LFTri", lane_batchable, new_lane_batch::<LFTri>);
    r.add_batch_lanes("LFTri", batch_lanes::<LFTri>);
    r.add::<LFPar>("LFPar").pure().inputs(2).outputs(1);
    r.add::<LFCub>("LFCub").pure().inputs(2).outputs(1);
    r.add::<VarSaw>("VarSaw").pure().inputs(3).outputs(1);
    r.add::<SyncSaw>("SyncSaw").pure().inputs(2).outputs(1);
    r.add::<Impulse>("Impulse").pure().inputs(2).outputs(1);
    r.add_lanes("Impulse", impulse_lanes);
    r.add_batch("Impulse", lane_batchable, new_lane_batch::<Impulse>);
    r.add_batch_lanes("Impulse", batch_lanes::<Impulse>);
    r.add::<LFGauss>("LFGauss").outputs(1);
    r.add::<Vibrato>("Vibrato").random().outputs(1);
    r.add::<SinOscFB>("SinOscFB").pure().inputs(2).outputs(1);
    r.add::<Klang>("Klang").pure().inputs(2).outputs(1);
    r.add::<Klank>("Klank").pure().inputs(4).outputs(1);
}

fn reverb(r: &mut Registry) {
    use crate::reverb::*;
    r.add::<FreeVerb>("FreeVerb").pure().inputs(4).outputs(1);
    r.add::<FreeVerb2>("FreeVerb2").pure().inputs(5).outputs(2);
    r.add::<GVerb>("GVerb").pure().inputs(10).outputs(2);
}

fn noise(r: &mut Registry) {
    use crate::noise::*;
    r.add::<WhiteNoise>("WhiteNoise").random().outputs(1);
    r.add_lanes("WhiteNoise", white_noise_lanes);
    r.add::<ClipNoise>("ClipNoise").random().outputs(1);
    r.add::<PinkNoise>("PinkNoise").random().outputs(1);
    r.add::<BrownNoise>("BrownNoise").random().outputs(1);
    r.add::<Dust>("Dust").random().inputs(1).outputs(1);
    r.add::<Dust2>("Dust2").random().inputs(1).outputs(1);
    r.add_lanes("Dust", dust_lanes::<false>);
    r.add_lanes("Dust2", dust_lanes::<true>);
    r.add::<LFNoise0>("LFNoise0").random().inputs(1).outputs(1);
    r.add::<LFNoise1>("LFNoise1").random().inputs(1).outputs(1);
    r.add::<LFNoise2>("LFNoise2").random().inputs(1).outputs(1);
    r.add::<Rand>("Rand").random().inputs(2).outputs(1);
    r.add::<IRand>("IRand").random().inputs(2).outputs(1);
    r.add::<ExpRand>("ExpRand").random().inputs(2).outputs(1);
    r.add::<LinRand>("LinRand").random().inputs(3).outputs(1);
    r.add::<NRand>("NRand").random().inputs(3).outputs(1);
    r.add::<TRand>("TRand").random().inputs(3).outputs(1);
    r.add::<RandSeed>("RandSeed").random().inputs(2).outputs(1);
    r.add::<RandID>("RandID").random().inputs(1).outputs(1);
    r.add::<LFDNoise0>("LFDNoise0").random().inputs(1).outputs(1);
    r.add::<LFDNoise1>("LFDNoise1").random().inputs(1).outputs(1);
    r.add::<LFDNoise3>("LFDNoise3").random().inputs(1).outputs(1);
    r.add::<LFClipNoise>("LFClipNoise").random().inputs(1).outputs(1);
    r.add::<LFDClipNoise>("LFDClipNoise").random().inputs(1).outputs(1);
    r.add::<GrayNoise>("GrayNoise").random().outputs(1);
    r.add::<Crackle>("Crackle").random().inputs(1).outputs(1);
    r.add::<Logistic>("Logistic").pure().inputs(3).outputs(1);
    r.add::<Hasher>("Hasher").pure().inputs(1).outputs(1);
    r.add::<CoinGate>("CoinGate").random().inputs(2).outputs(1);
    r.add::<TExpRand>("TExpRand").random().inputs(3).outputs(1);
    r.add::<TIRand>("TIRand").random().inputs(3).outputs(1);
    r.add::<TWindex>("TWindex").random().outputs(1);
}

fn filters(r: &mut Registry) {
    use crate::filters::*;
    r.add::<Lpf>("LPF").pure().outputs(1);
    r.add::<hilbert::Hilbert>("Hilbert").pure().inputs(1).outputs(2);
    r.add::<hilbert::FreqShift>("FreqShift").pure().inputs(3).outputs(1);
    r.add_lanes("LPF", twopole::section_lanes::<twopole::LpfDesign>);
    r.add_lanes("HPF", twopole::section_lanes::<twopole::HpfDesign>);
    r.add_lanes("BPF", twopole::section_lanes::<twopole::BpfDesign>);
    r.add_lanes("BRF", twopole::section_lanes::<twopole::BrfDesign>);
    r.add_lanes("RLPF", twopole::section_lanes::<twopole::RlpfDesign>);
    r.add_lanes("RHPF", twopole::section_lanes::<twopole::RhpfDesign>);
    r.add_lanes("Resonz", twopole::section_lanes::<twopole::ResonzDesign>);
    r.add_lanes("Ringz", twopole::section_lanes::<twopole::RingzDesign>);
    // Several of one section in one synth (a filter bank on one source) run
    // as one step, by the same kernels.
    r.add_batch("LPF", lane_batchable, new_kept_batch::<twopole::Section<twopole::LpfDesign>>);
    r.add_batch("HPF", lane_batchable, new_kept_batch::<twopole::Section<twopole::HpfDesign>>);
    r.add_batch("BPF", lane_batchable, new_kept_batch::<twopole::Section<twopole::BpfDesign>>);
    r.add_batch("BRF", lane_batchable, new_kept_batch::<twopole::Section<twopole::BrfDesign>>);
    r.add_batch("RLPF", lane_batchable, new_kept_batch::<twopole::Section<twopole::RlpfDesign>>);
    r.add_batch("RHPF", lane_batchable, new_kept_batch::<twopole::Section<twopole::RhpfDesign>>);
    r.add_batch("Resonz", lane_batchable, new_kept_batch::<twopole::Section<twopole::ResonzDesign>>);
    r.add_batch("Ringz", lane_batchable, new_kept_batch::<twopole::Section<twopole::RingzDesign>>);
    // The batch steps of several synths, their members sixteen at a time.
    r.add_batch_lanes("LPF", kept_batch_lanes::<twopole::Section<twopole::LpfDesign>>);
    r.add_batch_lanes("HPF", kept_batch_lanes::<twopole::Section<twopole::HpfDesign>>);
    r.add_batch_lanes("BPF", kept_batch_lanes::<twopole::Section<twopole::BpfDesign>>);
    r.add_batch_lanes("BRF", kept_batch_lanes::<twopole::Section<twopole::BrfDesign>>);
    r.add_batch_lanes("RLPF", kept_batch_lanes::<twopole::Section<twopole::RlpfDesign>>);
    r.add_batch_lanes("RHPF", kept_batch_lanes::<twopole::Section<twopole::RhpfDesign>>);
    r.add_batch_lanes("Resonz", kept_batch_lanes::<twopole::Section<twopole::ResonzDesign>>);
    r.add_batch_lanes("Ringz", kept_batch_lanes::<twopole::Section<twopole::RingzDesign>>);
    r.add::<Hpf>("HPF").pure().outputs(1);
    r.add::<Bpf>("BPF").pure().outputs(1);
    r.add::<Brf>("BRF").pure().outputs(1);
    r.add::<Rlpf>("RLPF").pure().outputs(1);
    r.add::<Rhpf>("RHPF").pure().outputs(1);
    r.add::<Resonz>("Resonz").pure().outputs(1);
    r.add::<Ringz>("Ringz").pure().outputs(1);
    r.add::<Formlet>("Formlet").pure().outputs(1);
    r.add::<TwoPoleFilter>("TwoPole").pure().outputs(1);
    r.add::<TwoZeroFilter>("TwoZero").pure().outputs(1);
    r.add::<OnePole>("OnePole").pure().outputs(1);
    r.add::<OneZero>("OneZero").pure().outputs(1);
    r.add::<Integrator>("Integrator").pure().outputs(1);
    r.add::<Decay>("Decay").pure().outputs(1);
    r.add::<Decay2>("Decay2").pure().outputs(1);
    r.add::<LeakDc>("LeakDC").pure().outputs(1);
    r.add::<Lag>("Lag").pure().outputs(1);
    r.add::<Lag2>("Lag2").pure().outputs(1);
    r.add::<Lag3>("Lag3").pure().outputs(1);
    r.add::<LagUd>("LagUD").pure().outputs(1);
    r.add::<Lag2Ud>("Lag2UD").pure().outputs(1);
    r.add::<Lag3Ud>("Lag3UD").pure().outputs(1);
    r.add::<VarLag>("VarLag").pure().outputs(1);
    r.add::<Ramp>("Ramp").pure().outputs(1);
    r.add::<Slew>("Slew").pure().outputs(1);
    r.add::<Fos>("FOS").pure().outputs(1);
    r.add::<Sos>("SOS").pure().outputs(1);
    r.add::<Apf>("APF").pure().outputs(1);
    r.add::<Median>("Median").pure().outputs(1);
    r.add::<Lpz1>("LPZ1").pure().outputs(1);
    r.add::<Hpz1>("HPZ1").pure().outputs(1);
    r.add::<Lpz2>("LPZ2").pure().outputs(1);
    r.add::<Hpz2>("HPZ2").pure().outputs(1);
    r.add::<Bpz2>("BPZ2").pure().outputs(1);
    r.add::<Brz2>("BRZ2").pure().outputs(1);
    r.add::<Slope>("Slope").pure().outputs(1);
    r.add::<MidEq>("MidEQ").pure().outputs(1);
    r.add::<LinExp>("LinExp").pure().outputs(1);
    r.add::<DetectSilence>("DetectSilence").done_action(3).outputs(1);
    r.add::<BLowPass>("BLowPass").pure().outputs(1);
    r.add::<BHiPass>("BHiPass").pure().outputs(1);
    r.add::<BBandPass>("BBandPass").pure().outputs(1);
    r.add::<BBandStop>("BBandStop").pure().outputs(1);
    r.add::<BPeakEq>("BPeakEQ").pure().outputs(1);
    r.add::<BAllPass>("BAllPass").pure().outputs(1);
    r.add::<BLowShelf>("BLowShelf").pure().outputs(1);
    r.add::<BHiShelf>("BHiShelf").pure().outputs(1);
    r.add::<MoogFf>("MoogFF").pure().outputs(1);
    r.add::<Amplitude>("Amplitude").pure().outputs(1);
    r.add::<Compander>("Compander").pure().outputs(1);
    r.add::<Limiter>("Limiter").pure().outputs(1);
    r.add::<Normalizer>("Normalizer").pure().outputs(1);
    r.add::<nonlinear::Flip>("Flip").inputs(1).outputs(1);
    r.add::<nonlinear::MantissaMask>("MantissaMask").inputs(2).outputs(1);
    r.add::<AmpComp>("AmpComp").pure().outputs(1);
    r.add::<AmpCompA>("AmpCompA").pure().outputs(1);
}

fn delays(r: &mut Registry) {
    use crate::delays::*;
    r.add::<DelayN>("DelayN").pure().outputs(1);
    r.add::<DelayL>("DelayL").pure().outputs(1);
    r.add::<DelayC>("DelayC").pure().outputs(1);
    r.add::<CombN>("CombN").pure().outputs(1);
    r.add::<CombL>("CombL").pure().outputs(1);
    r.add::<CombC>("CombC").pure().outputs(1);
    r.add::<AllpassN>("AllpassN").pure().outputs(1);
    r.add::<AllpassL>("AllpassL").pure().outputs(1);
    r.add::<AllpassC>("AllpassC").pure().outputs(1);
    r.add::<Delay1>("Delay1").pure().outputs(1);
    r.add::<Delay2>("Delay2").pure().outputs(1);
    r.add::<Pluck>("Pluck").pure().inputs(6).outputs(1);
    r.add::<taps::DelTapWr>("DelTapWr").inputs(2).outputs(1);
    r.add_ctor("DelTapRd", taps::new_deltaprd).inputs(4).outputs(1);
    delays_buf(r);
}

fn delays_buf(r: &mut Registry) {
    use crate::delays::buf::*;
    r.add::<BufDelayN>("BufDelayN").buffer(0, BufferUse::Write).outputs(1);
    r.add::<BufDelayL>("BufDelayL").buffer(0, BufferUse::Write).outputs(1);
    r.add::<BufDelayC>("BufDelayC").buffer(0, BufferUse::Write).outputs(1);
    r.add::<BufCombN>("BufCombN").buffer(0, BufferUse::Write).outputs(1);
    r.add::<BufCombL>("BufCombL").buffer(0, BufferUse::Write).outputs(1);
    r.add::<BufCombC>("BufCombC").buffer(0, BufferUse::Write).outputs(1);
    r.add::<BufAllpassN>("BufAllpassN").buffer(0, BufferUse::Write).outputs(1);
    r.add::<BufAllpassL>("BufAllpassL").buffer(0, BufferUse::Write).outputs(1);
    r.add::<BufAllpassC>("BufAllpassC").buffer(0, BufferUse::Write).outputs(1);
}

fn envelopes(r: &mut Registry) {
    use crate::envelopes::*;
    r.add::<Line>("Line").done_action(3).inputs(4).outputs(1);
    r.add::<XLine>("XLine").done_action(3).inputs(4).outputs(1);
    r.add::<EnvGen>("EnvGen").done_action(4).inputs(9).outputs(1);
    r.add::<Linen>("Linen").done_action(4).inputs(5).outputs(1);
    r.add::<ienv_gen::IEnvGen>("IEnvGen").inputs(5).outputs(1);
}

fn triggers(r: &mut Registry) {
    use crate::triggers::*;
    r.add_ctor("Trig", TrigHold::new_trig).pure().inputs(2).outputs(1);
    r.add_ctor("Trig1", TrigHold::new_trig1).pure().inputs(2).outputs(1);
    r.add::<TDelay>("TDelay").pure().inputs(2).outputs(1);
    r.add::<Latch>("Latch").pure().inputs(2).outputs(1);
    r.add::<Gate>("Gate").pure().inputs(2).outputs(1);
    r.add::<PulseCount>("PulseCount").pure().inputs(2).outputs(1);
    r.add::<PulseDivider>("PulseDivider").pure().inputs(3).outputs(1);
    r.add::<Stepper>("Stepper").pure().inputs(6).outputs(1);
    r.add::<ToggleFF>("ToggleFF").pure().inputs(1).outputs(1);
    r.add::<SetResetFF>("SetResetFF").pure().inputs(2).outputs(1);
    r.add::<Schmidt>("Schmidt").pure().inputs(3).outputs(1);
    r.add::<Timer>("Timer").pure().inputs(1).outputs(1);
    r.add::<Sweep>("Sweep").pure().inputs(2).outputs(1);
    r.add::<Phasor>("Phasor").pure().inputs(5).outputs(1);
    r.add_ctor("Peak", Tracker::new_peak).pure().inputs(2).outputs(1);
    r.add_ctor("RunningMax", Tracker::new_running_max).pure().inputs(2).outputs(1);
    r.add_ctor("RunningMin", Tracker::new_running_min).pure().inputs(2).outputs(1);
    r.add::<Select>("Select").pure().inputs(2).outputs(1);
    r.add::<Done>("Done").own_synth().inputs(1);
    r.add::<FreeSelf>("FreeSelf").own_synth().inputs(1);
    r.add::<PauseSelf>("PauseSelf").own_synth().inputs(1);
    r.add_ctor("FreeSelfWhenDone", ActWhenDone::new_free).own_synth().inputs(1);
    r.add_ctor("PauseSelfWhenDone", ActWhenDone::new_pause).own_synth().inputs(1);
    r.add::<Free>("Free").inputs(2);
    r.add::<Pause>("Pause").inputs(2);
    r.add::<LastValue>("LastValue").pure().outputs(1);
    r.add::<RunningSum>("RunningSum").pure().outputs(1);
    r.add::<ZeroCrossing>("ZeroCrossing").pure().outputs(1);
    r.add::<PeakFollower>("PeakFollower").pure().outputs(1);
    r.add::<MostChange>("MostChange").pure().outputs(1);
    r.add::<LeastChange>("LeastChange").pure().outputs(1);
    r.add::<ModDif>("ModDif").pure().outputs(1);
}

fn ops(r: &mut Registry) {
    use crate::ops::*;
    r.add_ctor("BinaryOpUGen", binary::construct).random_ops(&[47, 48]).inputs(2).outputs(1);
    r.add_ctor("UnaryOpUGen", unary::construct).random_ops(&[37, 38, 39, 40, 41, 44]).outputs(1);
    r.add::<muladd::MulAdd>("MulAdd").pure().inputs(3).outputs(1);
    r.add::<muladd::Sum<3>>("Sum3").pure().inputs(3).outputs(1);
    r.add::<muladd::Sum<4>>("Sum4").pure().inputs(4).outputs(1);
    binary::register_lanes(r);
    r.add_light_lanes("Sum3", muladd::sum_lanes::<3>);
    r.add_light_lanes("Sum4", muladd::sum_lanes::<4>);
    r.add::<Clip>("Clip").pure().inputs(3).outputs(1);
    r.add::<Wrap>("Wrap").pure().inputs(3).outputs(1);
    r.add::<Fold>("Fold").pure().inputs(3).outputs(1);
    r.add::<InRange>("InRange").pure().inputs(3).outputs(1);
}

fn io(r: &mut Registry) {
    use crate::io::*;
    r.add::<Control>("Control").controls();
    r.add::<TrigControl>("TrigControl").controls();
    r.add::<LagControl>("LagControl").controls();
    r.add::<AudioControl>("AudioControl").controls();
    r.add::<In>("In").bus(0, BusUse::Read { feedback: false }).inputs(1);
    r.add::<InFeedback>("InFeedback").bus(0, BusUse::Read { feedback: true }).inputs(1);
    r.add_ctor("Out", new_out).bus(0, BusUse::Write { replace: false }).inputs(1);
    r.add_ctor("ReplaceOut", new_replace_out).bus(0, BusUse::Write { replace: true }).inputs(1);
    r.add_ordered_lanes("Out", out_lanes::<false>);
    r.add_ordered_lanes("ReplaceOut", out_lanes::<true>);
    r.add::<XOut>("XOut").bus(0, BusUse::WriteMixed).inputs(2);
    // It writes audio buses a block at a time, from audio-rate inputs.
    r.add::<OffsetOut>("OffsetOut").bus(0, BusUse::WriteMixed).inputs(1).rates(Rates::of(&[Rate::Scalar, Rate::Audio, Rate::Demand]));
    r.add::<LocalIn>("LocalIn").local_buses();
    r.add::<LocalOut>("LocalOut").local_buses();
    r.add::<InTrig>("InTrig").bus(0, BusUse::ReadControl);
    r.add::<LagIn>("LagIn").bus(0, BusUse::ReadControl);
}

fn pan(r: &mut Registry) {
    use crate::pan::*;
    r.add_ctor("Pan2", pan2).pure().inputs(1).outputs(2);
    r.add_ctor("LinPan2", lin_pan2).pure().inputs(1).outputs(2);
    r.add_ctor("Balance2", balance2).pure().inputs(2).outputs(2);
    r.add_ctor("XFade2", xfade2).pure().inputs(2).outputs(1);
    r.add::<LinXFade2>("LinXFade2").pure().inputs(2).outputs(1);
    r.add::<Pan4>("Pan4").pure().inputs(1).outputs(4);
    r.add::<PanAz>("PanAz").pure();
    r.add_ctor("PanB", with_outputs::<PanB, 4>).pure();
    r.add_ctor("PanB2", with_outputs::<PanB2, 3>).pure();
    r.add_ctor("BiPanB2", with_outputs::<BiPanB2, 3>).pure();
    r.add::<DecodeB2>("DecodeB2").pure();
    r.add_ctor("Rotate2", with_outputs::<Rotate2, 2>).pure();
}

fn bufio(r: &mut Registry) {
    use crate::bufio::*;
    r.add::<PlayBuf>("PlayBuf").buffer(0, BufferUse::Read).done_action(5).inputs(6);
    r.add::<BufRd>("BufRd").buffer(0, BufferUse::Read).inputs(4);
    r.add::<BufWr>("BufWr").buffer(0, BufferUse::Write).inputs(3);
    r.add::<RecordBuf>("RecordBuf").buffer(0, BufferUse::Write).done_action(7).inputs(4);
    r.add::<local::MaxLocalBufs>("MaxLocalBufs");
    r.add::<local::LocalBuf>("LocalBuf");
    r.add::<local::SetBuf>("SetBuf");
    r.add::<local::ClearBuf>("ClearBuf");
}

fn info(r: &mut Registry) {
    use crate::info::*;
    r.add::<Dc>("DC").pure().inputs(1).outputs(1);
    r.add_ctor("SampleRate", sample_rate).outputs(1);
    r.add_ctor("SampleDur", sample_dur).outputs(1);
    r.add_ctor("ControlRate", control_rate).outputs(1);
    r.add_ctor("ControlDur", control_dur).outputs(1);
    r.add_ctor("RadiansPerSample", radians_per_sample).outputs(1);
    r.add_ctor("BlockSize", block_size).outputs(1);
    r.add_ctor("SubsampleOffset", subsample_offset).outputs(1);
    r.add_ctor("NumInputBuses", num_input_buses).outputs(1);
    r.add_ctor("NumOutputBuses", num_output_buses).outputs(1);
    r.add_ctor("NumAudioBuses", num_audio_buses).outputs(1);
    r.add_ctor("NumControlBuses", num_control_buses).outputs(1);
    r.add_ctor("NumBuffers", num_buffers).buffer_table().outputs(1);
    r.add_ctor("NodeID", node_id).outputs(1);
    r.add_ctor("NumRunningSynths", num_running_synths).outputs(1);
    r.add_ctor("BufSampleRate", buf_sample_rate).buffer(0, BufferUse::Info).inputs(1).outputs(1);
    r.add_ctor("BufRateScale", buf_rate_scale).buffer(0, BufferUse::Info).inputs(1).outputs(1);
    r.add_ctor("BufSamples", buf_samples).buffer(0, BufferUse::Info).inputs(1).outputs(1);
    r.add_ctor("BufFrames", buf_frames).buffer(0, BufferUse::Info).inputs(1).outputs(1);
    r.add_ctor("BufChannels", buf_channels).buffer(0, BufferUse::Info).inputs(1).outputs(1);
    r.add_ctor("BufDur", buf_dur).buffer(0, BufferUse::Info).inputs(1).outputs(1);
    r.add::<Silent>("Silent").pure();
    r.add::<CheckBadValues>("CheckBadValues").outputs(1);
    r.add::<Sanitize>("Sanitize").outputs(1);
}

fn convert(r: &mut Registry) {
    use crate::convert::*;
    r.add::<K2A>("K2A").pure().inputs(1).outputs(1);
    r.add::<A2K>("A2K").pure().inputs(1).outputs(1);
    r.add::<T2A>("T2A").pure().outputs(1);
    r.add::<T2K>("T2K").pure().outputs(1);
}

fn reply(r: &mut Registry) {
    use crate::reply::*;
    r.add::<SendTrig>("SendTrig").replies().inputs(3);
    r.add::<SendReply>("SendReply").replies().inputs(3);
    r.add::<Poll>("Poll").replies().inputs(2);
    r.add::<peak_rms::SendPeakRMS>("SendPeakRMS").replies().inputs(4);
}

fn gc_units(r: &mut Registry) {
    use crate::gc_units::*;
    r.add::<GrainCloud>("GrainCloud").inputs(4).outputs(1);
}

fn demand(r: &mut Registry) {
    demand_readers(r);
    demand_patterns(r);
    demand_values(r);
    demand_envgen(r);
}

fn demand_readers(r: &mut Registry) {
    use crate::demand::readers::*;
    r.add::<Demand>("Demand").inputs(2);
    r.add::<Duty>("Duty").inputs(4).outputs(1);
    r.add::<TDuty>("TDuty").inputs(4).outputs(1);
    r.add::<crate::demand::dpoll::Dpoll>("Dpoll").inputs(1);
}

fn demand_patterns(r: &mut Registry) {
    use crate::demand::*;
    use crate::demand::patterns::*;
    r.add::<Demanded<Seq>>("Dseq");
    r.add::<Demanded<Ser>>("Dser");
    r.add::<Demanded<Rand>>("Drand").random();
    r.add::<Demanded<XRand>>("Dxrand").random();
    r.add::<Demanded<WRand>>("Dwrand").random();
    r.add::<Demanded<Shuf>>("Dshuf").random();
    r.add::<Demanded<Switch1>>("Dswitch1");
    r.add::<Demanded<Switch>>("Dswitch");
    r.add::<Demanded<Dup>>("Dstutter");
    r.add::<Demanded<Dup>>("Ddup");
    r.add::<Demanded<Const>>("Dconst");
    r.add::<Demanded<Reset>>("Dreset");
}

fn demand_values(r: &mut Registry) {
    use crate::demand::*;
    use crate::demand::values::*;
    r.add::<Demanded<Series<false>>>("Dseries");
    r.add::<Demanded<Series<true>>>("Dgeom");
    r.add::<Demanded<White>>("Dwhite").random();
    r.add::<Demanded<IWhite>>("Diwhite").random();
    r.add::<Demanded<Brown<f32>>>("Dbrown").random();
    r.add::<Demanded<Brown<i32>>>("Dibrown").random();
    r.add::<BufRead>("Dbufrd").inputs(3).outputs(1);
    r.add::<BufWrite>("Dbufwr").inputs(4).outputs(1);
}

fn demand_envgen(r: &mut Registry) {
    use crate::demand::envgen::*;
    r.add::<DemandEnvGen>("DemandEnvGen").inputs(10).outputs(1);
}

fn tables(r: &mut Registry) {
    use crate::tables::*;
    r.add::<Index>("Index").inputs(1).outputs(1);
    r.add::<IndexL>("IndexL").inputs(1).outputs(1);
    r.add::<WrapIndex>("WrapIndex").inputs(1).outputs(1);
    r.add::<FoldIndex>("FoldIndex").inputs(1).outputs(1);
    r.add::<IndexInBetween>("IndexInBetween").inputs(1).outputs(1);
    r.add::<DetectIndex>("DetectIndex").inputs(1).outputs(1);
    r.add::<DegreeToKey>("DegreeToKey").inputs(1).outputs(1);
    r.add::<Shaper>("Shaper").inputs(1).outputs(1);
}

fn chaos(r: &mut Registry) {
    use crate::chaos::*;
    r.add::<CuspN>("CuspN").pure().outputs(1);
    r.add::<CuspL>("CuspL").pure().outputs(1);
    r.add::<FBSineN>("FBSineN").pure().outputs(1);
    r.add::<FBSineL>("FBSineL").pure().outputs(1);
    r.add::<FBSineC>("FBSineC").pure().outputs(1);
    r.add::<GbmanN>("GbmanN").pure().outputs(1);
    r.add::<GbmanL>("GbmanL").pure().outputs(1);
    r.add::<HenonN>("HenonN").pure().outputs(1);
    r.add::<HenonL>("HenonL").pure().outputs(1);
    r.add::<HenonC>("HenonC").pure().outputs(1);
    r.add::<LatoocarfianN>("LatoocarfianN").pure().outputs(1);
    r.add::<LatoocarfianL>("LatoocarfianL").pure().outputs(1);
    r.add::<LatoocarfianC>("LatoocarfianC").pure().outputs(1);
    r.add::<LinCongN>("LinCongN").pure().outputs(1);
    r.add::<LinCongL>("LinCongL").pure().outputs(1);
    r.add::<LinCongC>("LinCongC").pure().outputs(1);
    r.add::<LorenzL>("LorenzL").pure().outputs(1);
    r.add::<QuadN>("QuadN").pure().outputs(1);
    r.add::<QuadL>("QuadL").pure().outputs(1);
    r.add::<QuadC>("QuadC").pure().outputs(1);
    r.add::<StandardN>("StandardN").pure().outputs(1);
    r.add::<StandardL>("StandardL").pure().outputs(1);
    r.add::<Gendy1>("Gendy1").random().outputs(1);
    r.add::<Gendy2>("Gendy2").random().outputs(1);
    r.add::<Gendy3>("Gendy3").random().outputs(1);
    r.add::<Spring>("Spring").pure().outputs(1);
    r.add::<Ball>("Ball").random().outputs(1);
    r.add::<TBall>("TBall").random().outputs(1);
}

fn fft(r: &mut Registry) {
    use crate::fft::*;
    r.add::<frames::Fft>("FFT").inputs(6).outputs(1);
    r.add::<frames::Ifft>("IFFT").inputs(3).outputs(1);
    r.add::<frames::FftTrigger>("FFTTrigger").inputs(3).outputs(1);
    r.add::<Pv<single::MagAbove>>("PV_MagAbove").inputs(2).outputs(1);
    r.add::<Pv<single::MagBelow>>("PV_MagBelow").inputs(2).outputs(1);
    r.add::<Pv<single::MagClip>>("PV_MagClip").inputs(2).outputs(1);
    r.add::<Pv<single::LocalMax>>("PV_LocalMax").inputs(2).outputs(1);
    r.add::<Pv<single::MagSquared>>("PV_MagSquared").inputs(1).outputs(1);
    r.add::<Pv<single::PhaseShift>>("PV_PhaseShift").inputs(3).outputs(1);
    r.add::<Pv<single::PhaseShift90>>("PV_PhaseShift90").inputs(1).outputs(1);
    r.add::<Pv<single::PhaseShift270>>("PV_PhaseShift270").inputs(1).outputs(1);
    r.add::<Pv<single::Conj>>("PV_Conj").inputs(1).outputs(1);
    r.add::<Pv<single::BrickWall>>("PV_BrickWall").inputs(2).outputs(1);
    r.add::<Pv<single::RectComb>>("PV_RectComb").inputs(4).outputs(1);
    r.add::<Pv<single::MagSmear>>("PV_MagSmear").inputs(2).outputs(1);
    r.add::<Pv<single::BinShift>>("PV_BinShift").inputs(4).outputs(1);
    r.add::<Pv<single::MagShift>>("PV_MagShift").inputs(3).outputs(1);
    r.add::<Pv<single::MagFreeze>>("PV_MagFreeze").inputs(2).outputs(1);
    r.add::<Pv2<single::RectComb2>>("PV_RectComb2").inputs(5).outputs(1);
    r.add::<Pv2<pair::MagMul>>("PV_MagMul").inputs(2).outputs(1);
    r.add::<Pv2<pair::MagDiv>>("PV_MagDiv").inputs(3).outputs(1);
    r.add::<Pv2<pair::CopyPhase>>("PV_CopyPhase").inputs(2).outputs(1);
    r.add::<Pv2<pair::Max>>("PV_Max").inputs(2).outputs(1);
    r.add::<Pv2<pair::Min>>("PV_Min").inputs(2).outputs(1);
    r.add::<Pv2<pair::Mul>>("PV_Mul").inputs(2).outputs(1);
    r.add::<Pv2<pair::Div>>("PV_Div").inputs(2).outputs(1);
    r.add::<Pv2<pair::Add>>("PV_Add").inputs(2).outputs(1);
    r.add::<Pv2<pair::BinWipe>>("PV_BinWipe").inputs(3).outputs(1);
    r.add::<pv::PvCopy>("PV_Copy").inputs(2).outputs(1);
    r.add::<Pv<random::MagNoise>>("PV_MagNoise").random().inputs(1).outputs(1);
    r.add::<Pv<random::RandComb>>("PV_RandComb").random().inputs(3).outputs(1);
    r.add::<Pv2<random::RandWipe>>("PV_RandWipe").random().inputs(4).outputs(1);
    r.add::<Pv<random::Diffuser>>("PV_Diffuser").random().inputs(2).outputs(1);
    r.add::<Pv<random::BinScramble>>("PV_BinScramble").random().inputs(4).outputs(1);
    r.add::<pack::PackFft>("PackFFT").inputs(6).outputs(1);
    r.add::<pack::Unpack1Fft>("Unpack1FFT").inputs(4).outputs(1);
    r.add::<Pv<pack::ConformalMap>>("PV_ConformalMap").inputs(3).outputs(1);
}

fn grains(r: &mut Registry) {
    use crate::grains::*;
    r.add::<GrainSin>("GrainSin").inputs(6);
    r.add::<GrainFM>("GrainFM").inputs(8);
    r.add::<GrainIn>("GrainIn").inputs(6);
    r.add::<GrainBuf>("GrainBuf").inputs(9);
    // Its channel count is the number of outputs the def gives it.
    r.add::<Warp1>("Warp1").random().inputs(8).outputs(1);
    r.add::<TGrains>("TGrains").inputs(8);
    r.add::<PitchShift>("PitchShift").random().inputs(5).outputs(1);
    r.add::<psin::PSinGrain>("PSinGrain").inputs(3).outputs(1);
    r.add::<tap::GrainTap>("GrainTap").random().inputs(6).outputs(1);
}

fn listening(r: &mut Registry) {
    use crate::listening::*;
    r.add::<pitch::Pitch>("Pitch").inputs(11).outputs(2);
    r.add::<spectral::SpecCentroid>("SpecCentroid").inputs(1).outputs(1);
    r.add::<spectral::SpecFlatness>("SpecFlatness").inputs(1).outputs(1);
    r.add::<spectral::SpecPcile>("SpecPcile").inputs(2).outputs(1);
    r.add::<onsets::Onsets>("Onsets").inputs(9).outputs(1);
    r.add::<loudness::Loudness>("Loudness").inputs(3).outputs(1);
    r.add::<loudness::Mfcc>("MFCC").inputs(2);
    r.add::<keytrack::KeyTrack>("KeyTrack").inputs(3).outputs(1);
    r.add::<beattrack::BeatTrack>("BeatTrack").inputs(2).outputs(4);
    r.add::<beattrack2::BeatTrack2>("BeatTrack2").inputs(6).outputs(6);
    r.add::<feature::PvHainsworthFoote>("PV_HainsworthFoote").inputs(5).outputs(1);
    r.add::<feature::PvJensenAndersen>("PV_JensenAndersen").inputs(7).outputs(1);
}

fn convolution(r: &mut Registry) {
    use crate::convolution::*;
    r.add::<fixed::Convolution>("Convolution").inputs(3).outputs(1);
    r.add::<fixed::Convolution2>("Convolution2").inputs(4).outputs(1);
    r.add::<fixed::Convolution2L>("Convolution2L").inputs(5).outputs(1);
    r.add::<stereo::StereoConvolution2L>("StereoConvolution2L").inputs(6).outputs(2);
    r.add::<direct::Convolution3>("Convolution3").inputs(4).outputs(1);
    // Reads the spectra its buffer (input 2, irbufnum) holds and keeps the
    // rest in its own state: its synths spread over a parallel group's threads.
    r.add::<partitioned::PartConv>("PartConv").buffer(2, BufferUse::Read).inputs(3).outputs(1);
    // Extensions (paper 003): zero-latency non-uniformly partitioned convolution.
    // Each reads the response its buffer holds and keeps the rest in its own
    // state and task slots (atomics and a wake-up, from any thread): synths
    // of them spread over a parallel group's threads. Building one takes a
    // phase from the world and registers its tasks there; a synth's first
    // block (its units built) always runs in order on the audio thread.
    r.add::<nupc_unit::MagnetarConv>("MagnetarConv").buffer(1, BufferUse::Read).inputs(2).outputs(1);
    r.add::<nupc_unit::MagnetarConvTd>("MagnetarConvTD").buffer(1, BufferUse::Read).inputs(2).outputs(1);
}

fn scope(r: &mut Registry) {
    use crate::scope::*;
    r.add::<ScopeOut2>("ScopeOut2").inputs(2);
    r.add::<ScopeOut>("ScopeOut");
}

fn ui(r: &mut Registry) {
    use crate::ui::*;
    r.add::<Mouse<0>>("MouseX").inputs(4).outputs(1);
    r.add::<Mouse<1>>("MouseY").inputs(4).outputs(1);
    r.add::<MouseButton>("MouseButton").inputs(3).outputs(1);
    r.add::<KeyState>("KeyState").inputs(4).outputs(1);
}

fn disk(r: &mut Registry) {
    use crate::disk::*;
    // Each changes its buffer's streaming state (the halves it has asked
    // for, where the file ends) besides its samples.
    r.add::<DiskIn>("DiskIn").buffer(0, BufferUse::Write).disk().inputs(2);
    r.add::<DiskOut>("DiskOut").buffer(0, BufferUse::Write).disk().inputs(1);
    // VDiskIn's loop and sendID are optional: defs from before sendID
    // existed give it three inputs.
    r.add::<VDiskIn>("VDiskIn").buffer(0, BufferUse::Write).disk().replies().inputs(2);
}
