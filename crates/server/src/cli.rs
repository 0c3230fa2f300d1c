//! scsynth's command line, parsed the way scsynth parses it: single-letter
//! flags each followed by their arguments, `-N` by six.

use magnetar_engine::EngineOptions;

#[derive(Clone, Debug, PartialEq)]
pub struct NrtArgs {
    /// `None` for `_`: read commands from standard input.
    pub score: Option<String>,
    /// `None` for `_`: no input file.
    pub input: Option<String>,
    pub output: String,
    pub sample_rate: f64,
    pub header_format: String,
    pub sample_format: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Cli {
    pub udp_port: Option<u16>,
    pub tcp_port: Option<u16>,
    pub bind_address: String,
    pub engine: EngineOptions,
    pub hardware_buffer_size: usize,
    pub preferred_sample_rate: Option<f64>,
    pub load_synthdefs: bool,
    pub max_logins: usize,
    pub password: Option<String>,
    pub nrt: Option<NrtArgs>,
    pub memory_locking: bool,
    pub verbosity: i32,
    pub ugen_plugin_path: Option<String>,
    pub restricted_path: Option<String>,
    pub device_name: Option<String>,
    pub threads: Option<usize>,
    /// magnetar's own long options `--disk-threads` and `--disk-scheduling`.
    pub disk: crate::disk::DiskOptions,
    /// `--plugins 0` loads no UGen plugins.
    pub plugins: bool,
    /// `--prefer-plugins all|Name,Name...`: plugins' units instead of
    /// magnetar's for these names.
    pub prefer_plugins: Option<String>,
    /// `--buffer-memory <MB>`: all buffers together hold at most this much
    /// (0, the default: no bound, as scsynth).
    pub buffer_memory_mb: u64,
}

impl Cli {
    /// The `--buffer-memory` cap in bytes, if there is one.
    pub fn buffer_memory_limit(&self) -> Option<u64> {
        (self.buffer_memory_mb > 0).then(|| self.buffer_memory_mb.saturating_mul(1 << 20))
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CliError {
    #[error("invalid option {0}")]
    InvalidOption(String),
    #[error("option {0} needs {1} argument(s)")]
    MissingArgument(String, usize),
    #[error("option {flag}: '{value}' is not a valid {what}")]
    BadValue { flag: String, value: String, what: &'static str },
    #[error("there must be a -u and/or a -t option, or -N for non-real-time")]
    NoMode,
    #[error("number of audio bus channels ({audio}) < inputs ({inputs}) + outputs ({outputs})")]
    TooFewAudioBuses { audio: usize, inputs: usize, outputs: usize },
    #[error("block size must be between 1 and 4096, got {0}")]
    BadBlockSize(usize),
}

pub const USAGE: &str = "\
usage: magnetar [options]
   -u <udp-port-number>    a port number 1-65535 (0: any free port)
   -t <tcp-port-number>    a port number 1-65535 (0: any free port)
   -B <bind-to-address>    default 127.0.0.1; 0.0.0.0 listens on all interfaces
   -c <number-of-control-bus-channels> (default 16384)
   -a <number-of-audio-bus-channels>   (default 1024)
   -i <number-of-input-bus-channels>   (default 8)
   -o <number-of-output-bus-channels>  (default 8)
   -z <block-size>                     (default 64)
   -Z <hardware-buffer-size>           (default 0: driver's choice)
   -S <hardware-sample-rate>           (default 0: driver's choice)
   -b <number-of-sample-buffers>       (default 1024)
   -n <max-number-of-nodes>            (default 1024)
   -d <max-number-of-synth-defs>       (default 1024)
   -m <real-time-memory-size in KB>    (default 8192)
   -w <number-of-wire-buffers>         (default 64)
   -r <number-of-random-seeds>         (default 64)
   -D <load synthdefs? 1 or 0>         (default 1)
   -R <publish to Rendezvous? 1 or 0>  (default 1; ignored)
   -l <max-logins>                     (default 64)
   -p <session-password>               TCP clients must send it first
   -N <cmd-filename> <input-filename> <output-filename> <sample-rate> <header-format> <sample-format>
                                       non-real-time rendering; `_` for no input file
   -L                                  lock memory
   -H <hardware-device-name>
   -V <verbosity>                      0 normal, -1 quieter, -2 quietest
   -U <ugen-plugins-path>              where to look for UGen plugins, directories separated by ':'
                                       (default: scsynth's plugin directory, then the system's and
                                       the user's SuperCollider Extensions directories)
   -P <restricted-path>                file commands may only touch files under it
   -T <threads>                        threads for parallel groups (default: number of cores)
   -g <random generator per synth? 1 or 0> (default 0: synths share the world's, as in scsynth;
                                       1: each synth has its own, as in supernova, and noise
                                       synths in parallel groups spread over the threads)
   -x <exact sums in parallel groups? 1 or 0> (default 1: children's writes to a shared bus
                                       are added in child order, the same bits as one thread;
                                       0: in the order the threads finish, as in supernova)
   --disk-threads <n>                  threads that stream DiskIn/DiskOut buffers (default 1)
   --disk-scheduling <need|fcfs>       need (default): the stream closest to running dry first,
                                       woken at a low watermark, real-time priority below a
                                       critical one; fcfs: arrival order, woken for each half
   --plugins <1 or 0>                  load scsynth UGen plugins (default 1)
   --prefer-plugins <all|Name,...>     the plugins' units instead of magnetar's for these names
                                       (scsynth's own plugins are loaded only with this option)
   --buffer-memory <MB>                all buffers together hold at most this much; a /b_alloc*
                                       past it answers /fail (default 0: no bound, as scsynth)
";

fn parse_num<T: std::str::FromStr>(flag: &str, value: &str, what: &'static str) -> Result<T, CliError> {
    value.trim().parse::<T>().map_err(|_| CliError::BadValue { flag: flag.into(), value: value.into(), what })
}

impl Cli {
    pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<Cli, CliError> {
        let mut cli = Cli {
            udp_port: None,
            tcp_port: None,
            bind_address: "127.0.0.1".into(),
            engine: EngineOptions::default(),
            hardware_buffer_size: 0,
            preferred_sample_rate: None,
            load_synthdefs: true,
            max_logins: 64,
            password: None,
            nrt: None,
            memory_locking: false,
            verbosity: 0,
            ugen_plugin_path: None,
            restricted_path: None,
            device_name: None,
            threads: None,
            disk: crate::disk::DiskOptions::default().with_env(),
            plugins: true,
            prefer_plugins: None,
            buffer_memory_mb: magnetar_engine::limits::DEFAULT_BUFFER_MEMORY_MB,
        };
        let args: Vec<&str> = args.iter().map(|a| a.as_ref()).collect();
        let mut i = 0;
        while i < args.len() {
            let flag = args[i];
            if let Some(long) = flag.strip_prefix("--") {
                let v = args.get(i + 1).copied().ok_or_else(|| CliError::MissingArgument(flag.into(), 1))?;
                match long {
                    "disk-threads" => {
                        let n: usize = parse_num(flag, v, "thread count")?;
                        cli.disk.threads = n.clamp(1, 64);
                    }
                    "disk-scheduling" => {
                        cli.disk.scheduling = crate::disk::DiskScheduling::from_name(v).ok_or_else(|| {
                            CliError::BadValue { flag: flag.into(), value: v.into(), what: "scheduling (need or fcfs)" }
                        })?;
                    }
                    "plugins" => {
                        cli.plugins = match v {
                            "1" => true,
                            "0" => false,
                            _ => return Err(CliError::BadValue { flag: flag.into(), value: v.into(), what: "choice (1 or 0)" }),
                        };
                    }
                    "prefer-plugins" => cli.prefer_plugins = Some(v.into()),
                    "buffer-memory" => cli.buffer_memory_mb = parse_num(flag, v, "size in MB")?,
                    _ => return Err(CliError::InvalidOption(flag.into())),
                }
                i += 2;
                continue;
            }
            let mut chars = flag.chars();
            let letter = match (chars.next(), chars.next(), chars.next()) {
                (Some('-'), Some(c), None) => c,
                _ => return Err(CliError::InvalidOption(flag.into())),
            };
            let needs = match letter {
                'L' => 0,
                'N' => 6,
                'u' | 't' | 'B' | 'a' | 'i' | 'o' | 'c' | 'z' | 'b' | 'l' | 'n' | 'd' | 'p' | 'm' | 'w' | 'Z'
                | 'r' | 'S' | 'D' | 'I' | 'O' | 'M' | 's' | 'H' | 'V' | 'v' | 'R' | 'U' | 'P' | 'C' | 'T' | 'g' | 'x' => 1,
                _ => return Err(CliError::InvalidOption(flag.into())),
            };
            if i + needs >= args.len() + usize::from(needs == 0) {
                return Err(CliError::MissingArgument(flag.into(), needs));
            }
            let v = args.get(i + 1).copied().unwrap_or("");
            let e = &mut cli.engine;
            match letter {
                'u' => cli.udp_port = Some(parse_num(flag, v, "port number")?),
                't' => cli.tcp_port = Some(parse_num(flag, v, "port number")?),
                'B' => cli.bind_address = v.into(),
                'a' => e.num_audio_buses = parse_num(flag, v, "bus count")?,
                'i' => e.num_input_channels = parse_num(flag, v, "channel count")?,
                'o' => e.num_output_channels = parse_num(flag, v, "channel count")?,
                'c' => e.num_control_buses = parse_num(flag, v, "bus count")?,
                // scsynth rounds the block size up to a power of two.
                'z' => e.block_size = parse_num::<usize>(flag, v, "block size")?.max(1).next_power_of_two(),
                'Z' => cli.hardware_buffer_size = parse_num(flag, v, "buffer size")?,
                'S' => {
                    let sr: f64 = parse_num(flag, v, "sample rate")?;
                    cli.preferred_sample_rate = (sr > 0.0).then_some(sr);
                }
                'b' => e.num_buffers = parse_num(flag, v, "buffer count")?,
                'n' => e.max_nodes = parse_num(flag, v, "node count")?,
                'd' => e.max_synthdefs = parse_num(flag, v, "synthdef count")?,
                'm' => e.rt_memory_kb = parse_num(flag, v, "memory size")?,
                'w' => e.num_wire_bufs = parse_num(flag, v, "wire buffer count")?,
                'r' => e.random_seeds = parse_num(flag, v, "seed count")?,
                'D' => cli.load_synthdefs = parse_num::<i64>(flag, v, "0 or 1")? != 0,
                'l' => cli.max_logins = parse_num(flag, v, "login count")?,
                'p' => cli.password = Some(v.into()),
                'H' => cli.device_name = Some(v.into()),
                'V' | 'v' => cli.verbosity = parse_num(flag, v, "verbosity")?,
                'U' => cli.ugen_plugin_path = Some(v.into()),
                'P' => cli.restricted_path = Some(v.into()),
                'T' => {
                    let t: usize = parse_num(flag, v, "thread count")?;
                    cli.threads = Some(t);
                    e.threads = t.max(1);
                }
                'g' => e.rgen_per_synth = parse_num::<i64>(flag, v, "0 or 1")? != 0,
                'x' => e.parallel_exact = parse_num::<i64>(flag, v, "0 or 1")? != 0,
                'L' => cli.memory_locking = true,
                'N' => {
                    let sr: f64 = parse_num(flag, args[i + 4], "sample rate")?;
                    let opt = |s: &str| (s != "_").then(|| s.to_string());
                    cli.nrt = Some(NrtArgs {
                        score: opt(args[i + 1]),
                        input: opt(args[i + 2]),
                        output: args[i + 3].into(),
                        // scsynth truncates the rate to a whole number.
                        sample_rate: sr.trunc(),
                        header_format: args[i + 5].into(),
                        sample_format: args[i + 6].into(),
                    });
                }
                // Accepted for compatibility, without effect here.
                'R' | 'I' | 'O' | 'M' | 's' | 'C' => {}
                _ => unreachable!("letters are filtered above"),
            }
            i += 1 + needs;
        }
        if cli.threads.is_none() {
            // supernova's default: one thread per core.
            cli.engine.threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        }
        if cli.udp_port.is_none() && cli.tcp_port.is_none() && cli.nrt.is_none() {
            return Err(CliError::NoMode);
        }
        let e = &cli.engine;
        if e.num_input_channels + e.num_output_channels > e.num_audio_buses {
            return Err(CliError::TooFewAudioBuses {
                audio: e.num_audio_buses,
                inputs: e.num_input_channels,
                outputs: e.num_output_channels,
            });
        }
        if e.block_size == 0 || e.block_size > magnetar_engine::limits::MAX_BLOCK_SIZE {
            return Err(CliError::BadBlockSize(e.block_size));
        }
        Ok(cli)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_nrt_command_line_parses() {
        let cli = Cli::parse(&["-o", "2", "-N", "score.osc", "_", "out.wav", "48000", "WAV", "float"]).unwrap();
        assert_eq!(cli.engine.num_output_channels, 2);
        let nrt = cli.nrt.unwrap();
        assert_eq!(nrt.score.as_deref(), Some("score.osc"));
        assert_eq!(nrt.input, None);
        assert_eq!(nrt.sample_rate, 48000.0);
        assert_eq!(nrt.header_format, "WAV");
    }

    #[test]
    fn unknown_flags_and_missing_values_are_errors() {
        assert_eq!(Cli::parse(&["-u", "57110", "-q"]), Err(CliError::InvalidOption("-q".into())));
        assert!(matches!(Cli::parse(&["-u"]), Err(CliError::MissingArgument(..))));
        assert!(matches!(Cli::parse(&["-u", "x"]), Err(CliError::BadValue { .. })));
        assert_eq!(Cli::parse::<&str>(&[]), Err(CliError::NoMode));
    }

    #[test]
    fn synths_share_the_world_generator_unless_asked_otherwise() {
        let nrt = ["-N", "s", "_", "o.wav", "48000", "WAV", "float"];
        assert!(!Cli::parse(&nrt).unwrap().engine.rgen_per_synth);
        let own: Vec<&str> = ["-g", "1"].iter().chain(nrt.iter()).copied().collect();
        assert!(Cli::parse(&own).unwrap().engine.rgen_per_synth);
        assert!(matches!(Cli::parse(&["-g", "yes", "-u", "57110"]), Err(CliError::BadValue { .. })));
    }

    #[test]
    fn parallel_sums_keep_child_order_unless_asked_otherwise() {
        let nrt = ["-N", "s", "_", "o.wav", "48000", "WAV", "float"];
        assert!(Cli::parse(&nrt).unwrap().engine.parallel_exact);
        let any_order: Vec<&str> = ["-x", "0"].iter().chain(nrt.iter()).copied().collect();
        assert!(!Cli::parse(&any_order).unwrap().engine.parallel_exact);
        assert!(matches!(Cli::parse(&["-x", "-u", "57110"]), Err(CliError::BadValue { .. })));
    }

    #[test]
    fn buffer_memory_is_unbounded_unless_asked() {
        assert_eq!(Cli::parse(&["-u", "57110"]).unwrap().buffer_memory_limit(), None);
        let cli = Cli::parse(&["--buffer-memory", "512", "-u", "57110"]).unwrap();
        assert_eq!(cli.buffer_memory_limit(), Some(512 << 20));
        assert!(matches!(Cli::parse(&["--buffer-memory", "lots", "-u", "57110"]), Err(CliError::BadValue { .. })));
    }

    #[test]
    fn disk_streaming_has_long_options_of_its_own() {
        let cli = Cli::parse(&["--disk-threads", "3", "--disk-scheduling", "fcfs", "-u", "57110"]).unwrap();
        assert_eq!(cli.disk.threads, 3);
        assert_eq!(cli.disk.scheduling, crate::disk::DiskScheduling::FirstComeFirstServed);
        let cli = Cli::parse(&["-u", "57110"]).unwrap();
        assert_eq!((cli.disk.threads, cli.disk.scheduling), (1, crate::disk::DiskScheduling::NeedBased));
        assert!(matches!(Cli::parse(&["--disk-scheduling", "edf", "-u", "1"]), Err(CliError::BadValue { .. })));
        assert!(matches!(Cli::parse(&["-u", "1", "--disk-threads"]), Err(CliError::MissingArgument(..))));
        assert_eq!(Cli::parse(&["--disk", "1", "-u", "1"]), Err(CliError::InvalidOption("--disk".into())));
    }

    #[test]
    fn block_size_rounds_up_to_a_power_of_two_as_in_scsynth() {
        let cli = Cli::parse(&["-z", "100", "-N", "s", "_", "o.wav", "48000", "WAV", "float"]).unwrap();
        assert_eq!(cli.engine.block_size, 128);
    }

    #[test]
    fn too_few_audio_buses_for_the_hardware_channels_is_refused() {
        let r = Cli::parse(&["-u", "57110", "-a", "4", "-i", "2", "-o", "4"]);
        assert!(matches!(r, Err(CliError::TooFewAudioBuses { .. })));
    }
}
