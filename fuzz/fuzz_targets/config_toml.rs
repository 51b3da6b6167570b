//! `.memdir/config.toml`: a bad file is a clear one-line error naming the file, never a panic
//! and never a silent default; a file that loads keeps every key it sets (it reads back the same
//! after being written out), and turning git off changes nothing but git.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memdir_core::config::{Config, MIN_CONTEXT_TOKENS, with_git_disabled};

/// Every key path of a TOML table, `a.b.c`.
fn keys(prefix: &str, t: &toml::Table, out: &mut Vec<String>) {
    for (k, v) in t {
        let path = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        if let toml::Value::Table(inner) = v {
            keys(&path, inner, out);
        }
        out.push(path);
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let cfg = match Config::from_toml(text) {
        Err(e) => {
            assert!(e.starts_with("bad .memdir/config.toml: "), "{e:?}");
            assert!(!e.contains('\n') && e.len() < 600, "one short line: {e:?}");
            return;
        }
        Ok(cfg) => cfg,
    };
    assert!(cfg.core.max_lines > 0 && cfg.core.max_bytes > 0);
    assert!(cfg.index.max_lines > 0 && cfg.state.max_bytes > 0);
    assert!(cfg.context.max_tokens >= MIN_CONTEXT_TOKENS);
    // Nothing the file says is dropped: every key it sets is a key of the settings.
    let table: toml::Table = toml::from_str(text).expect("it loaded, so it is TOML");
    let written = toml::to_string(&cfg).expect("settings serialize");
    let back_table: toml::Table = toml::from_str(&written).expect("written settings are TOML");
    let (mut have, mut known) = (Vec::new(), Vec::new());
    keys("", &table, &mut have);
    keys("", &back_table, &mut known);
    for k in &have {
        assert!(
            known.contains(k),
            "key {k} was accepted but is not a setting: {text:?}"
        );
    }
    let again = Config::from_toml(&written).expect("written settings load");
    assert_eq!(again, cfg, "settings read back the same: {written}");

    if let Ok(off) = with_git_disabled(text) {
        let mut off_cfg = Config::from_toml(&off).expect("checked by with_git_disabled");
        assert!(!off_cfg.git.enabled);
        off_cfg.git.enabled = cfg.git.enabled;
        assert_eq!(off_cfg, cfg, "only git changed: {text:?} -> {off:?}");
    }
});
