//! `memdir offload`

use crate::env::Env;
use crate::ui::{CliResult, body_arg, out};

/// Store a large output under offload/YYYY-MM-DD/ and print a short reference to it: the path,
/// its size, and its first and last lines. The file keeps the output byte for byte.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  cargo test 2>&1 | memdir offload --label \"cargo test\"\n  memdir offload --label plan \"a long text\""
)]
pub struct Args {
    /// A few words naming the output, used in the file name.
    #[arg(long, value_name = "LABEL")]
    pub label: Option<String>,
    /// The content; `-` or nothing reads stdin.
    #[arg(allow_hyphen_values = true)]
    pub content: Option<String>,
}

/// Runs `offload`.
pub fn run(a: Args, env: &Env) -> CliResult {
    let content = body_arg(Some(a.content.as_deref().unwrap_or("-")))?;
    let r = memdir_mcp::offload::offload(&env.open()?, &content, a.label.as_deref())?;
    out(&r.render())
}
