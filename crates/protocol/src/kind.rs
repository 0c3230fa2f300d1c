//! Which command a message is, found once from its address: scsynth's
//! numbered commands and magnetar's extensions in one table, so that the
//! server looks a name up once per message and dispatches on a small value
//! from then on.

use crate::osc::Address;

macro_rules! command_kinds {
    (
        numbered { $($nv:ident = $n:literal => $nname:literal,)* }
        extensions { $($ev:ident = $e:literal => $ename:literal,)* }
    ) => {
        /// A command the server knows, by scsynth's command number where it
        /// has one (`/n_cmd`, 13, is numbered but not implemented).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum CommandKind {
            $($nv = $n,)*
            $($ev = $e,)*
        }

        /// Command numbers (scsynth's `cmd_*` enum) and names.
        pub const COMMAND_NUMBERS: &[(i32, &str)] = &[$(($n, $nname),)*];

        impl CommandKind {
            /// Every kind, numbered ones first in number order.
            pub const ALL: &'static [CommandKind] = &[$(CommandKind::$nv,)* $(CommandKind::$ev,)*];

            /// The command's address (as `/done` and `/fail` name it).
            pub fn name(self) -> &'static str {
                match self {
                    $(CommandKind::$nv => $nname,)*
                    $(CommandKind::$ev => $ename,)*
                }
            }

            /// The kind a command name names.
            pub fn from_name(name: &str) -> Option<CommandKind> {
                match name {
                    $($nname => Some(CommandKind::$nv),)*
                    $($ename => Some(CommandKind::$ev),)*
                    _ => None,
                }
            }

            /// The kind an integer address names. scsynth looks only at the
            /// address's last byte (as a signed char).
            pub fn from_number(number: i32) -> Option<CommandKind> {
                match (number & 0xff) as u8 as i8 {
                    $($n => Some(CommandKind::$nv),)*
                    _ => None,
                }
            }
        }
    };
}

command_kinds! {
    numbered {
        None = 0 => "/none",
        Notify = 1 => "/notify",
        Status = 2 => "/status",
        Quit = 3 => "/quit",
        Cmd = 4 => "/cmd",
        DRecv = 5 => "/d_recv",
        DLoad = 6 => "/d_load",
        DLoadDir = 7 => "/d_loadDir",
        DFreeAll = 8 => "/d_freeAll",
        SNew = 9 => "/s_new",
        NTrace = 10 => "/n_trace",
        NFree = 11 => "/n_free",
        NRun = 12 => "/n_run",
        NCmd = 13 => "/n_cmd",
        NMap = 14 => "/n_map",
        NSet = 15 => "/n_set",
        NSetn = 16 => "/n_setn",
        NFill = 17 => "/n_fill",
        NBefore = 18 => "/n_before",
        NAfter = 19 => "/n_after",
        UCmd = 20 => "/u_cmd",
        GNew = 21 => "/g_new",
        GHead = 22 => "/g_head",
        GTail = 23 => "/g_tail",
        GFreeAll = 24 => "/g_freeAll",
        CSet = 25 => "/c_set",
        CSetn = 26 => "/c_setn",
        CFill = 27 => "/c_fill",
        BAlloc = 28 => "/b_alloc",
        BAllocRead = 29 => "/b_allocRead",
        BRead = 30 => "/b_read",
        BWrite = 31 => "/b_write",
        BFree = 32 => "/b_free",
        BClose = 33 => "/b_close",
        BZero = 34 => "/b_zero",
        BSet = 35 => "/b_set",
        BSetn = 36 => "/b_setn",
        BFill = 37 => "/b_fill",
        BGen = 38 => "/b_gen",
        DumpOsc = 39 => "/dumpOSC",
        CGet = 40 => "/c_get",
        CGetn = 41 => "/c_getn",
        BGet = 42 => "/b_get",
        BGetn = 43 => "/b_getn",
        SGet = 44 => "/s_get",
        SGetn = 45 => "/s_getn",
        NQuery = 46 => "/n_query",
        BQuery = 47 => "/b_query",
        NMapn = 48 => "/n_mapn",
        SNoid = 49 => "/s_noid",
        GDeepFree = 50 => "/g_deepFree",
        ClearSched = 51 => "/clearSched",
        Sync = 52 => "/sync",
        DFree = 53 => "/d_free",
        BAllocReadChannel = 54 => "/b_allocReadChannel",
        BReadChannel = 55 => "/b_readChannel",
        GDumpTree = 56 => "/g_dumpTree",
        GQueryTree = 57 => "/g_queryTree",
        Error = 58 => "/error",
        SNewargs = 59 => "/s_newargs",
        NMapa = 60 => "/n_mapa",
        NMapan = 61 => "/n_mapan",
        NOrder = 62 => "/n_order",
        PNew = 63 => "/p_new",
        Version = 64 => "/version",
        RtMemoryStatus = 65 => "/rtMemoryStatus",
        BSetSampleRate = 66 => "/b_setSampleRate",
    }
    extensions {
        NrtEnd = 100 => "/nrt_end",
        MagnetarRtStats = 101 => "/magnetar_rtStats",
        MagnetarDiskStats = 102 => "/magnetar_diskStats",
    }
}

impl CommandKind {
    /// The kind a message's address names, if the server knows it.
    pub fn of(address: &Address) -> Option<CommandKind> {
        match address {
            Address::Name(n) => CommandKind::from_name(n),
            Address::Number(n) => CommandKind::from_number(*n),
        }
    }

    /// A buffer command (`/b_*`).
    pub fn is_buffer(self) -> bool {
        self.name().starts_with("/b_")
    }

    /// Whether the work is scsynth's stage 2, done off the audio thread
    /// (files, SynthDef parsing, buffer memory), with `/done` (or
    /// `/synced`) once the result is installed.
    pub fn runs_in_stage2(self) -> bool {
        use CommandKind as K;
        matches!(
            self,
            K::DRecv
                | K::DLoad
                | K::DLoadDir
                | K::BAlloc
                | K::BAllocRead
                | K::BAllocReadChannel
                | K::BRead
                | K::BReadChannel
                | K::BWrite
                | K::BFree
                | K::BClose
                | K::BGen
                | K::BZero
                | K::Sync
        )
    }

    /// An asynchronous buffer command that works on the contents the
    /// buffer already has.
    pub fn reads_buffer_contents(self) -> bool {
        use CommandKind as K;
        matches!(self, K::BRead | K::BReadChannel | K::BWrite | K::BGen | K::BZero)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_find_the_same_kind() {
        for &k in CommandKind::ALL {
            assert_eq!(CommandKind::from_name(k.name()), Some(k));
            if (k as u8) < 100 {
                assert_eq!(CommandKind::from_number(k as i32), Some(k));
                // Only the last byte counts.
                assert_eq!(CommandKind::from_number(k as i32 + 0x7f00), Some(k));
            }
        }
        assert_eq!(CommandKind::from_number(67), None);
        assert_eq!(CommandKind::from_number(200), None);
        assert_eq!(CommandKind::from_number(-1), None);
        assert_eq!(CommandKind::from_name("/s_new "), None);
        assert_eq!(COMMAND_NUMBERS.len(), 67);
    }

    #[test]
    fn contents_readers_are_stage2_buffer_commands() {
        for &k in CommandKind::ALL {
            if k.reads_buffer_contents() {
                assert!(k.runs_in_stage2() && k.is_buffer(), "{k:?}");
            }
        }
        assert!(CommandKind::Sync.runs_in_stage2());
        assert!(!CommandKind::BSet.runs_in_stage2());
        assert!(!CommandKind::Notify.runs_in_stage2());
    }
}
