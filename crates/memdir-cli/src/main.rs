//! The `memdir` binary: parse, build the engine, dispatch, map errors to exit codes.
#![deny(missing_docs)]

mod app;
mod cli;
mod cmd;
mod dirs;
mod env;
mod page;
mod store;
mod ui;

fn main() {
    std::process::exit(app::main());
}
