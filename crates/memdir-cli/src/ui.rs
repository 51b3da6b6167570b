//! All output goes through here: stdout for results, one line on stderr for errors, and a
//! broken pipe ends the program quietly.

use memdir::ErrorKind;
use std::io::{self, Write};

/// Exit codes: 0 ok, 1 nothing found, 2 bad input or usage, 3 other failures.
pub mod exit {
    /// Success.
    pub const OK: i32 = 0;
    /// Nothing found.
    pub const NOT_FOUND: i32 = 1;
    /// Bad input or usage.
    pub const INVALID: i32 = 2;
    /// Any other failure (I/O, storage).
    pub const FAILURE: i32 = 3;
}

/// An early end to report: its message and exit code. With exit code 0 (a change saved as a
/// proposal) the message is the command's output and goes to stdout; otherwise to stderr.
#[derive(Debug)]
pub struct CliError {
    /// One line, lowercase, saying what to do.
    pub message: String,
    /// The process exit code.
    pub code: i32,
}

impl CliError {
    /// Bad input (exit 2).
    pub fn invalid(message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            code: exit::INVALID,
        }
    }

    /// A quiet exit with a code and no message (e.g. "no results" or a closed pipe).
    pub fn silent(code: i32) -> Self {
        CliError {
            message: String::new(),
            code,
        }
    }
}

/// A write's outcome: a change to core saved as a proposal means the change was not made (it
/// waits for review), so like every agent front end the CLI reports it as a failure (exit 3)
/// with the message that says where the proposal waits.
pub fn made<T>(o: memdir::Outcome<T>) -> Result<T, CliError> {
    o.done().map_err(|message| CliError {
        message,
        code: exit::FAILURE,
    })
}

impl From<memdir::search::Error> for CliError {
    fn from(e: memdir::search::Error) -> Self {
        CliError::from(memdir::Error::from(e))
    }
}

impl From<memdir::Error> for CliError {
    fn from(e: memdir::Error) -> Self {
        let code = match e.kind() {
            ErrorKind::NotFound => exit::NOT_FOUND,
            ErrorKind::Invalid | ErrorKind::Conflict => exit::INVALID,
            ErrorKind::Unavailable => exit::FAILURE,
        };
        CliError {
            message: e.to_string(),
            code,
        }
    }
}

impl From<memdir::StoreError> for CliError {
    fn from(e: memdir::StoreError) -> Self {
        memdir::Error::from(e).into()
    }
}

impl From<io::Error> for CliError {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            return CliError::silent(exit::OK);
        }
        CliError {
            message: format!("i/o error: {e}"),
            code: exit::FAILURE,
        }
    }
}

/// The result of a command.
pub type CliResult = Result<(), CliError>;

/// Writes bytes to stdout. On a terminal, control characters are shown escaped (`\x1b`)
/// rather than run: what is printed came from agents and the outside world, and an escape
/// sequence in it could clear the screen, set the title or write the clipboard.
pub fn out_bytes(b: &[u8]) -> CliResult {
    use std::io::IsTerminal as _;
    let mut o = io::stdout().lock();
    if o.is_terminal() {
        let text = String::from_utf8_lossy(b);
        o.write_all(memdir_core::text::escape_for_terminal(&text).as_bytes())?;
        o.flush()?;
        return Ok(());
    }
    o.write_all(b)?;
    o.flush()?;
    Ok(())
}

/// Writes text to stdout, adding a newline if it lacks one.
pub fn out(s: &str) -> CliResult {
    if s.ends_with('\n') || s.is_empty() {
        out_bytes(s.as_bytes())
    } else {
        out_bytes(format!("{s}\n").as_bytes())
    }
}

/// Writes one JSON value on its own line.
pub fn out_json<T: serde::Serialize>(v: &T) -> CliResult {
    let s = serde_json::to_string(v).map_err(|e| CliError {
        message: format!("cannot encode json: {e}"),
        code: exit::FAILURE,
    })?;
    out(&s)
}

/// Reads all of stdin as UTF-8 text.
pub fn read_stdin() -> Result<String, CliError> {
    let mut s = String::new();
    io::Read::read_to_string(&mut io::stdin(), &mut s)
        .map_err(|e| CliError::invalid(format!("cannot read stdin as UTF-8 text: {e}")))?;
    Ok(s)
}

/// A body argument: absent means empty, `-` means stdin.
pub fn body_arg(body: Option<&str>) -> Result<String, CliError> {
    match body {
        Some("-") => read_stdin(),
        Some(b) => Ok(b.to_string()),
        None => Ok(String::new()),
    }
}
