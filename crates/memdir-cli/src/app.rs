//! The program: parse the command line, read the environment, dispatch to the command, print
//! warnings and errors, and return the exit code. No command imports this module.

use crate::cli::{Cli, Command};
use crate::cmd;
use crate::env::{Env, build_env};
use crate::ui::{CliResult, exit};
use clap::Parser;

/// Prints what went wrong without failing the command, one line each on stderr.
fn print_warnings(env: &Env) {
    for mem in env.opened.borrow().iter() {
        for line in mem.take_warnings() {
            eprintln!("memdir: warning: {}", without_os_error_numbers(&line));
        }
    }
}

/// Runs the program and returns its exit code.
pub fn main() -> i32 {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("memdir: internal error: {info}; please report this");
    }));
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::INVALID
            } else {
                exit::OK
            };
            let _ = e.print();
            return code;
        }
    };
    let result = build_env(&cli).and_then(|env| {
        let result = dispatch(cli.command, &env);
        print_warnings(&env);
        result
    });
    match result {
        Ok(()) => exit::OK,
        Err(e) if e.code == exit::OK => {
            // A closed stdout leaves nothing more to say, so its error is dropped.
            let _ = crate::ui::out(&e.message);
            exit::OK
        }
        Err(e) => {
            if !e.message.is_empty() {
                eprintln!("memdir: {}", without_os_error_numbers(&e.message));
            }
            e.code
        }
    }
}

/// Drops the " (os error N)" that Rust appends to system errors: the words before it already
/// say what happened, and the number means nothing to a person.
fn without_os_error_numbers(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find(" (os error ") {
        out.push_str(&rest[..at]);
        let tail = &rest[at + " (os error ".len()..];
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && tail[digits..].starts_with(')') {
            rest = &tail[digits + 1..];
        } else {
            out.push_str(" (os error ");
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

fn dispatch(command: Command, env: &Env) -> CliResult {
    match command {
        Command::Init(a) => cmd::init::run(a, env),
        Command::Context(a) => cmd::context::run(a, env),
        Command::Log(a) => cmd::log::run(a, env),
        Command::Scratch(a) => cmd::scratch::run(a, env),
        Command::Read(a) => cmd::read::run(a, env),
        Command::Write(a) => cmd::write::run(a, env),
        Command::Edit(a) => cmd::edit::run(a, env),
        Command::Ls(a) => cmd::ls::run(a, env),
        Command::Rm(a) => cmd::rm::run(a, env),
        Command::Mv(a) => cmd::mv::run(a, env),
        Command::Note(a) => cmd::note::run(a, env),
        Command::Index(a) => cmd::index::run(a, env),
        Command::Reindex(a) => cmd::reindex::run(a, env),
        Command::State(a) => cmd::state::run(a, env),
        Command::Links(a) => cmd::links::run(a, env),
        Command::Lint(a) => cmd::lint::run(a, env),
        Command::Search(a) => cmd::search::run(a, env),
        Command::Sweep(a) => cmd::sweep::run(a, env),
        Command::Tool(a) => cmd::tool::run(a, env),
        Command::Mcp(a) => cmd::mcp::run(a, env),
        Command::Serve(a) => cmd::serve::run(a, env),
        Command::Ui(a) => cmd::ui::run(a, env),
        Command::Tenant(a) => cmd::tenant::run(a, env),
        Command::Hook(a) => cmd::hook::run(a, env),
        Command::FlushPrompt(a) => cmd::flush_prompt::run(a, env),
        Command::Offload(a) => cmd::offload::run(a, env),
        Command::Completions(a) => cmd::completions::run(a, env),
        Command::Man(a) => cmd::man::run(a, env),
        Command::History(a) => cmd::history::run(a, env),
        Command::Blame(a) => cmd::blame::run(a, env),
        Command::Recent(a) => cmd::recent::run(a, env),
        Command::Undo(a) => cmd::undo::run(a, env),
        Command::Forget(a) => cmd::forget::run(a, env),
        Command::Review(a) => cmd::review::run(a, env),
        Command::Consolidate(a) => cmd::consolidate::run(a, env),
        Command::Version(a) => cmd::version::run(a, env),
        Command::Gate(a) => cmd::gate::run(a, env),
        Command::Install(a) => cmd::install::run(a, env),
        Command::Uninstall(a) => cmd::install::run_uninstall(a, env),
        Command::Export(a) => cmd::export::run(a, env),
        Command::Import(a) => cmd::import::run(a, env),
    }
}
