//! What a unit declares when it is registered: the rates it runs at, the
//! inputs and outputs it needs, and what it does besides reading its
//! inputs and writing its outputs.
//!
//! The def compiler refuses a def that gives a unit a rate it cannot run at
//! or fewer inputs or outputs than it reads or writes (more are fine: as in
//! scsynth, the unit leaves them alone).
//! The def compiler and the engine read these declarations to decide which
//! units may be reordered, batched, or run in a parallel group's threads.
//! A unit that declares nothing is taken to touch the world outside its
//! synth (other nodes, the server, replies): it keeps its order and ties its
//! synth to the thread that runs its group.

use crate::unit::Rate;

/// How a unit uses the random generator of the synth it runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Random {
    #[default]
    Never,
    /// Draws from it (or reseeds it).
    Always,
    /// Draws for these operator numbers (the def's special index) only.
    Ops(&'static [i16]),
}

/// How a unit uses the buses named by one of its inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BusUse {
    /// Reads them (`In`); `feedback` reads an audio bus as the previous
    /// block left it when nothing wrote it yet (`InFeedback`).
    Read { feedback: bool },
    /// Writes them: summing into them (`Out`) or replacing them
    /// (`ReplaceOut`).
    Write { replace: bool },
    /// Writes them mixed with what they hold (`XOut`) or at a sample offset
    /// (`OffsetOut`): the order of writers matters beyond their sum.
    WriteMixed,
    /// Reads control buses whatever rate it runs at (`LagIn`, and `InTrig`,
    /// which also reads whether they were written in this block).
    ReadControl,
}

/// How a unit uses a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferUse {
    /// Its size, channels or rate only.
    Info,
    /// Its samples, read.
    Read,
    /// Its samples, written (also the buffer delays, whose line lives there).
    Write,
}

/// A bus or buffer a unit uses, and the input that names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Uses<T> {
    /// The input carrying the bus or buffer number (None: the whole table,
    /// as `NumBuffers` reads).
    pub input: Option<u8>,
    pub how: T,
}

/// What a unit does besides computing its outputs from its inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effects {
    /// Nothing but its inputs, outputs and own state: it may run in any
    /// order its data allows.
    pub pure: bool,
    pub random: Random,
    /// Touches the world outside its synth in ways not declared below:
    /// runs in order, and its synth never leaves its group's thread.
    pub outside: bool,
    /// Foreign code (a plugin's): may share state between its units.
    pub foreign: bool,
    /// Reads its synth's controls.
    pub controls: bool,
    /// Uses its synth's local buses (`LocalIn`, `LocalOut`).
    pub local_buses: bool,
    /// Ends or pauses its own synth, or reads done flags of its synth's units.
    pub own_synth: bool,
    pub bus: Option<Uses<BusUse>>,
    pub buffer: Option<Uses<BufferUse>>,
    /// The input carrying its done action.
    pub done_action: Option<u8>,
    /// Sends messages to clients (`/tr`, `SendReply`, polls) through the
    /// world's queue: runs in order, on the thread of its group.
    pub replies: bool,
    /// Asks the disk threads for the next half of its streaming buffer
    /// through the world's queue: runs in order, on the thread of its group.
    pub disk: bool,
}

impl Effects {
    /// What a unit that declares nothing is taken to do.
    pub const UNDECLARED: Effects = Effects {
        pure: false,
        random: Random::Never,
        outside: true,
        foreign: false,
        controls: false,
        local_buses: false,
        own_synth: false,
        bus: None,
        buffer: None,
        done_action: None,
        replies: false,
        disk: false,
    };

    /// A plugin's unit: foreign code, never reordered, batched or spread.
    pub const FOREIGN: Effects = Effects { foreign: true, ..Effects::UNDECLARED };

    /// Whether the unit, with operator number `special_index`, draws from
    /// (or reseeds) its synth's random generator.
    pub fn draws(&self, special_index: i16) -> bool {
        match self.random {
            Random::Never => false,
            Random::Always => true,
            Random::Ops(ops) => ops.contains(&special_index),
        }
    }

    /// Whether the unit may be reordered freely within its data dependencies.
    pub fn is_pure(&self, special_index: i16) -> bool {
        self.pure && !self.foreign && !self.draws(special_index)
    }

    /// The buffer input of a unit that reads (false) or writes (true)
    /// buffer samples.
    pub fn buffer_samples(&self) -> Option<(Option<u8>, bool)> {
        match self.buffer {
            Some(Uses { input, how: BufferUse::Read }) => Some((input, false)),
            Some(Uses { input, how: BufferUse::Write }) => Some((input, true)),
            _ => None,
        }
    }
}

impl Default for Effects {
    fn default() -> Self {
        Effects::UNDECLARED
    }
}

/// A set of calculation rates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rates(u8);

impl Rates {
    pub const ALL: Rates = Rates(0b1111);
    /// Scalar, control and audio rate: any but demand rate.
    pub const SIGNAL: Rates = Rates(0b0111);

    pub const fn of(rates: &[Rate]) -> Rates {
        let mut bits = 0;
        let mut i = 0;
        while i < rates.len() {
            bits |= 1 << rates[i] as u8;
            i += 1;
        }
        Rates(bits)
    }

    pub fn contains(self, rate: Rate) -> bool {
        self.0 & (1 << rate as u8) != 0
    }
}

/// Everything a unit declares at registration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decl {
    pub effects: Effects,
    /// The rates a def may give it.
    pub rates: Rates,
    /// The fewest inputs and outputs it runs with (it reads or writes no
    /// more than it is given past these).
    pub min_inputs: u8,
    pub min_outputs: u8,
}

impl Decl {
    /// What an undeclared unit is taken to be: any rate, any inputs and
    /// outputs, touching the world outside its synth.
    pub const UNDECLARED: Decl = Decl { effects: Effects::UNDECLARED, rates: Rates::ALL, min_inputs: 0, min_outputs: 0 };

    /// A plugin's unit: as scsynth, trusts the def's inputs and outputs.
    pub const FOREIGN: Decl = Decl { effects: Effects::FOREIGN, ..Decl::UNDECLARED };

    /// Why a def's unit at `rate` with `inputs` and `outputs` cannot run as
    /// given, if it cannot.
    pub fn mismatch(&self, rate: Rate, inputs: usize, outputs: usize) -> Option<Mismatch> {
        if !self.rates.contains(rate) {
            Some(Mismatch::Rate(rate))
        } else if inputs < self.min_inputs as usize {
            Some(Mismatch::Inputs { given: inputs, needed: self.min_inputs as usize })
        } else if outputs < self.min_outputs as usize {
            Some(Mismatch::Outputs { given: outputs, needed: self.min_outputs as usize })
        } else {
            None
        }
    }
}

impl Default for Decl {
    fn default() -> Self {
        Decl::UNDECLARED
    }
}

/// How a def's unit differs from what the unit declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mismatch {
    Rate(Rate),
    Inputs { given: usize, needed: usize },
    Outputs { given: usize, needed: usize },
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Mismatch::Rate(rate) => {
                let name = match rate {
                    Rate::Scalar => "scalar",
                    Rate::Control => "control",
                    Rate::Audio => "audio",
                    Rate::Demand => "demand",
                };
                write!(f, "does not run at {name} rate")
            }
            Mismatch::Inputs { given, needed } => write!(f, "needs {needed} inputs, the def gives it {given}"),
            Mismatch::Outputs { given, needed } => write!(f, "needs {needed} outputs, the def gives it {given}"),
        }
    }
}

/// After any declaration: the unit touches nothing outside its synth but
/// what it declared; the queues of replies and disk requests keep it in
/// order (whichever call comes first).
fn declared(e: &mut Effects) {
    e.outside = e.replies || e.disk;
}

/// Declares a registered unit's effects, one call after another:
/// `r.add::<SinOsc>("SinOsc").pure()`.
pub struct Declare<'r> {
    decl: &'r mut Decl,
}

impl<'r> Declare<'r> {
    pub fn new(decl: &'r mut Decl) -> Self {
        Declare { decl }
    }


    /// Runs only at these rates.
    pub fn rates(self, rates: Rates) -> Self {
        self.decl.rates = rates;
        self
    }

    /// Reads inputs 0 to `n - 1` at least.
    pub fn inputs(self, n: u8) -> Self {
        self.decl.min_inputs = n;
        self
    }

    /// Writes outputs 0 to `n - 1` at least.
    pub fn outputs(self, n: u8) -> Self {
        self.decl.min_outputs = n;
        self
    }

    /// Only its inputs, outputs and own state.
    pub fn pure(self) -> Self {
        self.decl.effects.pure = true;
        declared(&mut self.decl.effects);
        self
    }

    /// Draws from (or reseeds) its synth's random generator, and nothing
    /// else outside its synth.
    pub fn random(self) -> Self {
        self.decl.effects.random = Random::Always;
        declared(&mut self.decl.effects);
        self
    }

    /// Pure, but for operators `ops`, which draw random numbers.
    pub fn random_ops(self, ops: &'static [i16]) -> Self {
        self.decl.effects.random = Random::Ops(ops);
        self.pure()
    }

    /// Reads its synth's controls.
    pub fn controls(self) -> Self {
        self.decl.effects.controls = true;
        declared(&mut self.decl.effects);
        self
    }

    /// Uses its synth's local buses.
    pub fn local_buses(self) -> Self {
        self.decl.effects.local_buses = true;
        declared(&mut self.decl.effects);
        self
    }

    /// Ends or pauses its own synth, or reads its synth's done flags.
    pub fn own_synth(self) -> Self {
        self.decl.effects.own_synth = true;
        declared(&mut self.decl.effects);
        self
    }

    /// Uses the buses whose number input `input` carries.
    pub fn bus(self, input: u8, how: BusUse) -> Self {
        self.decl.effects.bus = Some(Uses { input: Some(input), how });
        declared(&mut self.decl.effects);
        self
    }

    /// Uses the buffer whose number input `input` carries.
    pub fn buffer(self, input: u8, how: BufferUse) -> Self {
        self.decl.effects.buffer = Some(Uses { input: Some(input), how });
        declared(&mut self.decl.effects);
        self
    }

    /// Reads the buffer table as a whole (its size).
    pub fn buffer_table(self) -> Self {
        self.decl.effects.buffer = Some(Uses { input: None, how: BufferUse::Info });
        declared(&mut self.decl.effects);
        self
    }

    /// Runs the done action input `input` carries.
    pub fn done_action(self, input: u8) -> Self {
        self.decl.effects.done_action = Some(input);
        declared(&mut self.decl.effects);
        self
    }

    /// Sends messages to clients. The replies go through the world's queue,
    /// which a parallel group's threads do not share, so this keeps the
    /// unit's synth in order whatever else it declares.
    pub fn replies(self) -> Self {
        self.decl.effects.replies = true;
        declared(&mut self.decl.effects);
        self
    }

    /// Streams a buffer through the disk threads. Its requests go through
    /// the world's queue, which a parallel group's threads do not share, so
    /// this keeps the unit's synth in order whatever else it declares.
    pub fn disk(self) -> Self {
        self.decl.effects.disk = true;
        declared(&mut self.decl.effects);
        self
    }
}
