//! The printer thread: what the server prints while it runs (`/dumpOSC`,
//! `/n_trace`, `/g_dumpTree`, `Poll`, the error lines of commands, the
//! watchdog) is written to stdout and stderr here, in the order it was
//! handed over. The audio thread hands its text to the control thread
//! through the ring it uses for replies; the control thread hands it on
//! here instead of writing it, so a slow or stopped terminal (a full pipe)
//! holds up neither the control thread nor, behind it, that ring.
//!
//! Before [`start`] (and in NRT mode, where no thread is started) text is
//! written at once by the caller.

use std::io::Write;
use std::sync::mpsc;
use std::sync::OnceLock;

enum Line {
    Out(String),
    Err(String),
    /// Everything before is written: answers on the sender.
    Flush(mpsc::SyncSender<()>),
}

static TX: OnceLock<mpsc::Sender<Line>> = OnceLock::new();

/// Starts the printer thread (once); text handed over from now on is
/// written there.
pub fn start() {
    if TX.get().is_some() {
        return;
    }
    let (tx, rx) = mpsc::channel::<Line>();
    let spawned = std::thread::Builder::new().name("magnetar-print".into()).spawn(move || {
        for line in rx {
            write_now(line);
        }
    });
    if spawned.is_ok() {
        let _ = TX.set(tx);
    }
}

fn write_now(line: Line) {
    match line {
        Line::Out(text) => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        }
        Line::Err(text) => {
            let _ = std::io::stderr().lock().write_all(text.as_bytes());
        }
        Line::Flush(ack) => {
            let _ = std::io::stdout().flush();
            let _ = ack.send(());
        }
    }
}

fn hand_over(line: Line) {
    match TX.get() {
        Some(tx) => {
            if let Err(mpsc::SendError(line)) = tx.send(line) {
                write_now(line);
            }
        }
        None => write_now(line),
    }
}

/// Prints `text` to stdout as it is (add the newline).
pub fn out(text: String) {
    hand_over(Line::Out(text));
}

/// Prints `text` to stderr as it is (add the newline).
pub fn err(text: String) {
    hand_over(Line::Err(text));
}

/// Waits until everything handed over so far is written (before exit).
pub fn flush() {
    if let Some(tx) = TX.get() {
        let (ack_tx, ack_rx) = mpsc::sync_channel(1);
        if tx.send(Line::Flush(ack_tx)).is_ok() {
            let _ = ack_rx.recv_timeout(std::time::Duration::from_secs(5));
        }
    }
}

/// `println!` through the printer thread.
macro_rules! outln {
    ($($t:tt)*) => { $crate::printer::out(format!("{}\n", format_args!($($t)*))) };
}

/// `eprintln!` through the printer thread.
macro_rules! errln {
    ($($t:tt)*) => { $crate::printer::err(format!("{}\n", format_args!($($t)*))) };
}

pub(crate) use {errln, outln};

#[cfg(test)]
mod tests {
    #[test]
    fn text_handed_over_is_written_before_flush_returns() {
        super::start();
        outln!("printer test {}", 1);
        errln!("printer test {}", 2);
        super::flush();
    }
}
