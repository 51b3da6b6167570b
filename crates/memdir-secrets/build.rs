//! The vendored rules as JSON for the crate to embed: the published file is TOML, and reading
//! 100 KB of TOML takes milliseconds a process that writes once should not spend; the same data
//! as JSON reads in a fraction of that.
#![allow(clippy::expect_used)]

fn main() {
    let src = "rules/gitleaks.toml";
    println!("cargo::rerun-if-changed={src}");
    let text = std::fs::read_to_string(src).expect("rules/gitleaks.toml is readable");
    let value: toml::Value = toml::from_str(&text).expect("rules/gitleaks.toml is TOML");
    let json = serde_json::to_string(&value).expect("TOML values are JSON");
    let out = std::path::Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("gitleaks.json");
    std::fs::write(out, json).expect("OUT_DIR is writable");
}
