//! Standard output that a closed reader does not turn into a panic.
//!
//! `println!` panics when stdout is a pipe whose reader has gone
//! (`tputctl cc list | head -1`): Rust ignores SIGPIPE, so the write fails
//! with `EPIPE` instead of ending the process as in C tools. Every command
//! prints through [`outln!`](crate::outln) and [`out!`](crate::out), which
//! end the process quietly (exit code 0, nothing on stderr) when the reader
//! has closed: nobody is left to read what would follow. Any other write
//! error ends it with a one-line message and exit code 1.

use std::io::{ErrorKind, Write};

/// Write `args` (and a newline if `newline`) to stdout, flushed.
pub(crate) fn write(args: std::fmt::Arguments<'_>, newline: bool) {
    let mut out = std::io::stdout().lock();
    let written = out
        .write_fmt(args)
        .and_then(|()| if newline { out.write_all(b"\n") } else { Ok(()) })
        .and_then(|()| out.flush());
    if let Err(e) = written {
        closed(e);
    }
}

/// End the process after a failed write to stdout.
fn closed(e: std::io::Error) -> ! {
    if e.kind() == ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("tputctl: error: writing to stdout: {e}");
    std::process::exit(1);
}

/// `println!` to stdout that exits quietly once the reader has gone (see the module).
#[macro_export]
macro_rules! outln {
    () => {
        $crate::output::write(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::output::write(format_args!($($arg)*), true)
    };
}

/// `print!` to stdout that exits quietly once the reader has gone (see the module).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write(format_args!($($arg)*), false)
    };
}
