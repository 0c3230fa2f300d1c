//! `Print` for plugins. Outside a unit call (while a library loads, in a
//! command's non-real-time stage) the text goes straight to stdout. From a
//! unit on the audio thread it goes, in pieces of fixed size, through a
//! lock-free queue to a printing thread, as magnetar prints `Poll`: the
//! audio thread makes no system call and takes no lock for it.

use magnetar_rt::mpsc;
use std::cell::Cell;
use std::io::Write;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

const PIECE: usize = 240;
const QUEUED_PIECES: usize = 1024;

struct Piece {
    len: u16,
    text: [u8; PIECE],
}

struct Printer {
    tx: mpsc::Sender<Piece>,
    rx: Mutex<mpsc::Receiver<Piece>>,
}

static PRINTER: OnceLock<Printer> = OnceLock::new();

thread_local! {
    // Set while this thread runs plugin unit code (see `unit`).
    static IN_UNIT: Cell<bool> = const { Cell::new(false) };
}

/// Starts the printing thread; called once when plugins load.
pub(crate) fn start() {
    let (tx, rx) = mpsc::channel(QUEUED_PIECES);
    if PRINTER.set(Printer { tx, rx: Mutex::new(rx) }).is_ok() {
        let spawned = std::thread::Builder::new().name("plugin-print".into()).spawn(|| loop {
            std::thread::sleep(Duration::from_millis(10));
            flush();
        });
        if let Err(e) = spawned {
            eprintln!("plugins: no thread to print plugin messages: {e}");
        }
    }
}

/// Marks the calling thread as running plugin unit code (true) or not.
pub(crate) fn set_in_unit(on: bool) -> bool {
    IN_UNIT.with(|c| c.replace(on))
}

/// Writes out what units queued; the server calls it before exiting.
pub fn flush() {
    let Some(p) = PRINTER.get() else { return };
    let Ok(mut rx) = p.rx.lock() else { return };
    let out = std::io::stdout();
    let mut out = out.lock();
    let mut wrote = false;
    while let Some(piece) = rx.pop() {
        let _ = out.write_all(&piece.text[..piece.len as usize]);
        wrote = true;
    }
    if wrote {
        let _ = out.flush();
    }
}

/// A line of the host's own about plugin code, printed as the plugin's
/// text would be from this thread (queued on the audio thread).
pub(crate) fn line(text: &str) {
    // SAFETY: passes a buffer and its length.
    unsafe { magnetar_plugin_print(text.as_ptr(), text.len()) };
}

/// Called by the shim's `Print` with the formatted text.
///
/// # Safety
/// `text` points at `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn magnetar_plugin_print(text: *const u8, len: usize) {
    if text.is_null() {
        return;
    }
    // SAFETY: the shim passes its own formatted buffer and its length.
    let bytes = unsafe { std::slice::from_raw_parts(text, len) };
    let queue = PRINTER.get().filter(|_| IN_UNIT.with(Cell::get));
    match queue {
        Some(p) => {
            for chunk in bytes.chunks(PIECE) {
                let mut piece = Piece { len: chunk.len() as u16, text: [0; PIECE] };
                piece.text[..chunk.len()].copy_from_slice(chunk);
                // A full queue drops the text rather than block the audio thread.
                let _ = p.tx.push(piece);
            }
        }
        None => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(bytes);
            let _ = out.flush();
        }
    }
}
