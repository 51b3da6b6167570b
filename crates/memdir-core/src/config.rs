//! `.memdir/config.toml`: the memory folder's settings. Every key is optional.
//!
//! ```toml
//! [core]
//! max_lines = 100
//! max_bytes = 8192
//!
//! [scratch]
//! default_ttl = "60m"
//!
//! [index]
//! max_lines = 200
//! max_bytes = 25600
//!
//! [state]
//! max_lines = 100
//! max_bytes = 16384
//! archive_after = "30d"
//!
//! [context]
//! max_tokens = 4000
//! log_days = 2
//! ```

use crate::caps::Cap;
use serde::{Deserialize, Serialize};

/// The smallest context budget memdir accepts: room for the one-line stand-ins of every layer.
pub const MIN_CONTEXT_TOKENS: usize = 200;

/// All settings, with defaults for whatever the file leaves out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The cap on `core.md`.
    pub core: CoreConfig,
    /// Scratch settings.
    pub scratch: ScratchConfig,
    /// The cap on the index, `MEMORY.md`.
    pub index: IndexConfig,
    /// The cap on `state.md` and when its lines are archived.
    pub state: StateConfig,
    /// Which embedder builds the vector index for `--mode semantic|hybrid`.
    pub embed: EmbedSettings,
    /// Git provenance.
    pub git: GitConfig,
    /// Writers.
    pub writers: WritersConfig,
    /// Who may change core memory directly.
    pub policy: PolicyConfig,
    /// What the context loads and its budget.
    pub context: ContextConfig,
    /// What the agent hosts' hooks do beyond the defaults.
    pub hooks: HooksConfig,
    /// What `memdir consolidate` looks for, and the optional language model it asks.
    pub consolidate: ConsolidateConfig,
    /// Which layout the folder has (memdir's own, or a host's: see [`crate::host`]).
    pub layout: LayoutConfig,
    /// What a write does with a credential in its content.
    pub secrets: SecretsConfig,
}

/// The `[secrets]` section: `policy = "redact"` (the default), `"refuse"` or `"off"`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SecretsConfig {
    /// What a write does with a credential it carries.
    pub policy: SecretPolicy,
}

/// What a write does with a credential in its content.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SecretPolicy {
    /// The credential is replaced by `[redacted:<kind>:<first-4>…]` and the write goes on.
    #[default]
    Redact,
    /// The write is refused, naming the kind and the line; nothing is written.
    Refuse,
    /// Content is stored as given.
    Off,
}

impl SecretPolicy {
    /// The stricter of two policies (`refuse`, then `redact`, then `off`): a service's tenant
    /// writes under the stricter of its own `[secrets]` and the operator's.
    pub fn stricter(self, other: SecretPolicy) -> SecretPolicy {
        let rank = |p: SecretPolicy| match p {
            SecretPolicy::Off => 0,
            SecretPolicy::Redact => 1,
            SecretPolicy::Refuse => 2,
        };
        if rank(other) > rank(self) {
            other
        } else {
            self
        }
    }
}

/// The `[layout]` section: `name = "memdir"`, `"claude-code"` or `"openclaw"`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LayoutConfig {
    /// The layout's name.
    pub name: crate::host::LayoutName,
}

/// The `[context]` section: the context's budget and how many days of logs it loads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContextConfig {
    /// The most tokens (estimated as bytes / 4) the context may take.
    pub max_tokens: usize,
    /// How many of the most recent days that have a log are loaded.
    pub log_days: usize,
}

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            max_tokens: 4000,
            log_days: 2,
        }
    }
}

/// The `[hooks]` section: recall per prompt (`memdir hook user-prompt`, Claude Code's
/// UserPromptSubmit), off unless asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HooksConfig {
    /// Inject the memory lines most relevant to each prompt.
    pub recall: bool,
    /// The most characters recall injects.
    pub recall_max_chars: usize,
}

impl Default for HooksConfig {
    fn default() -> Self {
        HooksConfig {
            recall: false,
            recall_max_chars: 1200,
        }
    }
}

/// The `[consolidate]` section: `memdir consolidate`'s thresholds and its optional model, an
/// OpenAI-compatible chat endpoint configured like the embedder's.
///
/// ```toml
/// [consolidate]
/// min_days = 3                  # a user statement recurring on this many days is a core candidate
/// window = "30d"                # how far before the new logs recurrence is counted
/// archive_untouched = "90d"     # unlinked notes untouched this long are archive candidates
/// provider = "none"             # or "openai": also ask a chat model
/// # url = "http://127.0.0.1:11434/v1"      # any OpenAI-compatible /v1/chat/completions
/// # model = "llama3.1"
/// # api_key_env = "OPENAI_API_KEY"         # the name of the variable, never the key itself
/// # timeout_secs = 120
/// # max_prompt_bytes = 32768
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConsolidateConfig {
    /// A user statement must recur on at least this many days to be proposed for core.
    pub min_days: usize,
    /// How far back from the first new day recurrence is counted, e.g. `30d`.
    pub window: String,
    /// Notes nothing links to and untouched this long are archive candidates, e.g. `90d`.
    pub archive_untouched: String,
    /// `none` (deterministic only) or `openai` (also ask a chat model).
    pub provider: String,
    /// The chat endpoint's base URL.
    pub url: Option<String>,
    /// The model name sent to the endpoint.
    pub model: Option<String>,
    /// The name of the environment variable that holds the endpoint's API key.
    pub api_key_env: Option<String>,
    /// Seconds allowed for the model's answer.
    pub timeout_secs: u64,
    /// The largest prompt sent, in bytes (the newest log lines are kept).
    pub max_prompt_bytes: usize,
}

impl Default for ConsolidateConfig {
    fn default() -> Self {
        ConsolidateConfig {
            min_days: 3,
            window: "30d".to_string(),
            archive_untouched: "90d".to_string(),
            provider: "none".to_string(),
            url: None,
            model: None,
            api_key_env: None,
            timeout_secs: 120,
            max_prompt_bytes: 32 * 1024,
        }
    }
}

/// The `[embed]` section: the embedder of the vector index. Keyword search never needs it.
///
/// ```toml
/// [embed]
/// provider = "local"            # "none" (default), "local" or "openai"
/// model_dir = "/models/all-MiniLM-L6-v2"   # local: model.safetensors, tokenizer.json, config.json
/// # url = "http://127.0.0.1:11434/v1"      # openai: any OpenAI-compatible /v1/embeddings
/// # model = "nomic-embed-text"
/// # api_key_env = "OPENAI_API_KEY"         # the name of the variable, never the key itself
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbedSettings {
    /// `none`, `local` or `openai`.
    pub provider: String,
    /// The local model's directory (relative paths are taken from the memory folder).
    pub model_dir: Option<String>,
    /// The endpoint's base URL.
    pub url: Option<String>,
    /// The model name sent to the endpoint.
    pub model: Option<String>,
    /// The name of the environment variable that holds the endpoint's API key.
    pub api_key_env: Option<String>,
    /// Texts per endpoint request.
    pub batch_size: usize,
    /// Seconds allowed per endpoint request.
    pub timeout_secs: u64,
    /// Retries of a failed endpoint request.
    pub retries: u32,
}

impl Default for EmbedSettings {
    fn default() -> Self {
        EmbedSettings {
            provider: "none".to_string(),
            model_dir: None,
            url: None,
            model: None,
            api_key_env: None,
            batch_size: 64,
            timeout_secs: 30,
            retries: 3,
        }
    }
}

/// The cap on the generated index, `MEMORY.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IndexConfig {
    /// Most lines allowed.
    pub max_lines: usize,
    /// Most bytes allowed.
    pub max_bytes: usize,
}

impl IndexConfig {
    /// The cap these settings give.
    pub fn cap(&self) -> Cap {
        Cap {
            max_lines: self.max_lines,
            max_bytes: self.max_bytes,
        }
    }
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            max_lines: 200,
            max_bytes: 25 * 1024,
        }
    }
}

/// The cap on `state.md`, and the age at which `sweep` archives its entries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StateConfig {
    /// Most lines allowed.
    pub max_lines: usize,
    /// Most bytes allowed.
    pub max_bytes: usize,
    /// Entries dated more than this long ago move to the archive on `sweep`, e.g. `30d`.
    pub archive_after: String,
}

impl StateConfig {
    /// The cap these settings give.
    pub fn cap(&self) -> Cap {
        Cap {
            max_lines: self.max_lines,
            max_bytes: self.max_bytes,
        }
    }
}

impl Default for StateConfig {
    fn default() -> Self {
        StateConfig {
            max_lines: 100,
            max_bytes: 16 * 1024,
            archive_after: "30d".to_string(),
        }
    }
}

/// Git provenance settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GitConfig {
    /// Commit every change made through memdir when the folder is a git repository.
    pub enabled: bool,
}

impl Default for GitConfig {
    fn default() -> Self {
        GitConfig { enabled: true }
    }
}

/// Writer settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WritersConfig {
    /// The main writer, who appends to `log/YYYY-MM-DD.md`; every other writer has its own file.
    pub main: String,
}

impl Default for WritersConfig {
    fn default() -> Self {
        WritersConfig {
            main: "main".to_string(),
        }
    }
}

/// The gate on core memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PolicyConfig {
    /// Sources (`user`, `agent`) whose changes to core.md apply directly; others become proposals.
    pub core_writers: Vec<String>,
    /// The largest share of core's lines an automated rewrite may drop without being forced.
    pub max_core_drop: f64,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            core_writers: vec!["user".to_string()],
            max_core_drop: 0.25,
        }
    }
}

/// The cap on `core.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CoreConfig {
    /// Most lines allowed.
    pub max_lines: usize,
    /// Most bytes allowed.
    pub max_bytes: usize,
}

impl CoreConfig {
    /// The cap these settings give.
    pub fn cap(&self) -> Cap {
        Cap {
            max_lines: self.max_lines,
            max_bytes: self.max_bytes,
        }
    }
}

impl Default for CoreConfig {
    fn default() -> Self {
        CoreConfig {
            max_lines: 100,
            max_bytes: 8 * 1024,
        }
    }
}

/// Scratch settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScratchConfig {
    /// The time to live when none is given, e.g. `60m`.
    pub default_ttl: String,
}

impl Default for ScratchConfig {
    fn default() -> Self {
        ScratchConfig {
            default_ttl: "60m".to_string(),
        }
    }
}

impl Config {
    /// Parses the file's text; an error names the bad key.
    pub fn from_toml(text: &str) -> Result<Config, String> {
        let cfg: Config = toml::from_str(text)
            .map_err(|e| format!("bad .memdir/config.toml: {}", toml_error(text, &e)))?;
        crate::duration::parse_ttl(&cfg.scratch.default_ttl)
            .map_err(|e| format!("bad .memdir/config.toml: scratch.default_ttl: {e}"))?;
        if cfg.core.max_lines == 0 || cfg.core.max_bytes == 0 {
            return Err("bad .memdir/config.toml: core caps must be above zero".to_string());
        }
        if cfg.index.max_lines == 0 || cfg.index.max_bytes == 0 {
            return Err("bad .memdir/config.toml: index caps must be above zero".to_string());
        }
        if cfg.state.max_lines == 0 || cfg.state.max_bytes == 0 {
            return Err("bad .memdir/config.toml: state caps must be above zero".to_string());
        }
        if cfg.context.max_tokens < MIN_CONTEXT_TOKENS {
            return Err(format!(
                "bad .memdir/config.toml: context.max_tokens must be at least {MIN_CONTEXT_TOKENS}"
            ));
        }
        crate::duration::parse_ttl(&cfg.state.archive_after)
            .map_err(|e| format!("bad .memdir/config.toml: state.archive_after: {e}"))?;
        if !matches!(cfg.embed.provider.as_str(), "none" | "local" | "openai") {
            return Err(format!(
                "bad .memdir/config.toml: embed.provider {:?}: use none, local or openai",
                cfg.embed.provider
            ));
        }
        for (key, value) in [
            ("consolidate.window", &cfg.consolidate.window),
            (
                "consolidate.archive_untouched",
                &cfg.consolidate.archive_untouched,
            ),
        ] {
            crate::duration::parse_ttl(value)
                .map_err(|e| format!("bad .memdir/config.toml: {key}: {e}"))?;
        }
        if !matches!(cfg.consolidate.provider.as_str(), "none" | "openai") {
            return Err(format!(
                "bad .memdir/config.toml: consolidate.provider {:?}: use none or openai",
                cfg.consolidate.provider
            ));
        }
        Ok(cfg)
    }

    /// The text `memdir init` writes: every section and key with its default, commented, so
    /// people see what they can set. Section headers stand alone on their line (comments go
    /// above them), so [`with_git_disabled`] finds `[git]`.
    pub fn template() -> String {
        let d = Config::default();
        let e = &d.embed;
        let writers = d
            .policy
            .core_writers
            .iter()
            .map(|w| format!("{w:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        [
            "# memdir settings; every key is optional and shows its default.".to_string(),
            format!(
                "# where the layers live: \"memdir\", \"claude-code\" or \"openclaw\" (see docs/format.md)\n[layout]\n# name = \"{}\"",
                d.layout.name
            ),
            format!(
                "# core.md, loaded every turn\n[core]\n# max_lines = {}\n# max_bytes = {}",
                d.core.max_lines, d.core.max_bytes
            ),
            format!("[scratch]\n# default_ttl = \"{}\"", d.scratch.default_ttl),
            "# credentials in what is written: \"redact\", \"refuse\" or \"off\" (see docs/format.md)\n[secrets]\n# policy = \"redact\"".to_string(),
            format!(
                "# MEMORY.md\n[index]\n# max_lines = {}\n# max_bytes = {}",
                d.index.max_lines, d.index.max_bytes
            ),
            format!(
                "# state.md; lines older than archive_after move to archive/ on sweep\n[state]\n\
                 # max_lines = {}\n# max_bytes = {}\n# archive_after = \"{}\"",
                d.state.max_lines, d.state.max_bytes, d.state.archive_after
            ),
            format!(
                "[context]\n# max_tokens = {}\n# log_days = {}",
                d.context.max_tokens, d.context.log_days
            ),
            format!(
                "# memdir hook user-prompt: the memory lines most relevant to each prompt\n[hooks]\n\
                 # recall = {}\n# recall_max_chars = {}",
                d.hooks.recall, d.hooks.recall_max_chars
            ),
            format!(
                "# the embedder of search --mode semantic|hybrid; MEMDIR_MODEL_DIR overrides it\n[embed]\n\
                 # provider = \"{}\"                          # \"none\", \"local\" or \"openai\"\n\
                 # model_dir = \"/models/all-MiniLM-L6-v2\"    # local (relative paths start at the memory folder)\n\
                 # url = \"http://127.0.0.1:11434/v1\"          # openai: any OpenAI-compatible endpoint\n\
                 # model = \"nomic-embed-text\"\n\
                 # api_key_env = \"OPENAI_API_KEY\"             # the variable's name; the key is never logged\n\
                 # batch_size = {}\n# timeout_secs = {}\n# retries = {}",
                e.provider, e.batch_size, e.timeout_secs, e.retries
            ),
            format!(
                "# commit every change made through memdir\n[git]\n# enabled = {}",
                d.git.enabled
            ),
            format!(
                "# the main writer logs to log/YYYY-MM-DD.md, others to their own file\n[writers]\n# main = \"{}\"",
                d.writers.main
            ),
            format!(
                "# which sources change core.md directly; other changes become proposals\n[policy]\n\
                 # core_writers = [{writers}]\n\
                 # max_core_drop = {}              # share of core's lines an automated rewrite may drop",
                d.policy.max_core_drop
            ),
            format!(
                "# memdir consolidate\n[consolidate]\n# min_days = {}\n# window = \"{}\"\n# archive_untouched = \"{}\"\n\
                 # provider = \"{}\"   # or \"openai\": also ask an OpenAI-compatible chat model\n\
                 # url = \"http://127.0.0.1:11434/v1\"\n# model = \"llama3.1\"\n\
                 # api_key_env = \"OPENAI_API_KEY\"   # the variable's name, never the key\n\
                 # timeout_secs = {}\n# max_prompt_bytes = {}",
                d.consolidate.min_days,
                d.consolidate.window,
                d.consolidate.archive_untouched,
                d.consolidate.provider,
                d.consolidate.timeout_secs,
                d.consolidate.max_prompt_bytes
            ),
        ]
        .join("\n\n")
            + "\n"
    }
}

/// The config template with `[layout] name` set, for `memdir init --existing` (memdir's own
/// layout is the default and stays commented out).
pub fn template_with_layout(name: crate::host::LayoutName) -> String {
    if name == crate::host::LayoutName::Memdir {
        return Config::template();
    }
    Config::template().replacen("# name = \"memdir\"", &format!("name = \"{name}\""), 1)
}

/// `text` (a config file) with git provenance turned off: `enabled = false` under `[git]`,
/// replacing an `enabled` line there or adding the section. Every other line stays. Fails when
/// the result would not read back with git off (a file laid out in a way this cannot edit).
pub fn with_git_disabled(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len() + 24);
    let mut in_git = false;
    let mut done = false;
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        if t.starts_with('[') {
            in_git = t == "[git]";
            out.push_str(line);
            if in_git && !done {
                // Right under the header, so a person sees it where they look for it.
                if !line.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str("enabled = false\n");
                done = true;
            }
            continue;
        }
        if in_git && t.starts_with("enabled") && t[7..].trim_start().starts_with('=') {
            // The old value: dropped, or the section would set the key twice.
            continue;
        }
        out.push_str(line);
    }
    if !done {
        if !in_git {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str("\n[git]\n");
        }
        out.push_str("enabled = false\n");
    }
    match Config::from_toml(&out) {
        Ok(c) if !c.git.enabled => Ok(out),
        _ => Err(
            "cannot turn git off in .memdir/config.toml: set `enabled = false` under [git] by hand"
                .to_string(),
        ),
    }
}

/// A TOML error as one short line: where it is and what is wrong, never the offending line
/// itself (it may be huge, or hold a secret); at most [`MAX_ERROR_BYTES`] of the message.
fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let message = one_line(e.message());
    let message = match message.get(..message.floor_char_boundary(MAX_ERROR_BYTES)) {
        Some(cut) if cut.len() < message.len() => format!("{cut}..."),
        _ => message,
    };
    match e.span() {
        Some(span) => {
            let before = text.get(..span.start).unwrap_or(text);
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            format!("line {line}, column {column}: {message}")
        }
        None => message,
    }
}

/// The longest error message from the TOML parser that is repeated back.
const MAX_ERROR_BYTES: usize = 200;

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 13 item 14: a bad line is located, never echoed back whole.
    #[test]
    fn a_bad_line_is_not_echoed() {
        let secret = "x".repeat(5000);
        let err = Config::from_toml(&format!("[core]\nmax_lines = \"{secret}\"\n")).unwrap_err();
        assert!(
            err.starts_with("bad .memdir/config.toml: line 2, column"),
            "{err}"
        );
        assert!(err.len() < 400, "{} bytes: {err}", err.len());
        let err = Config::from_toml(&format!("{secret} = = 1")).unwrap_err();
        assert!(err.len() < 400, "{} bytes: {err}", err.len());
    }

    #[test]
    fn defaults_partial_and_errors() {
        assert_eq!(Config::from_toml("").unwrap(), Config::default());
        assert_eq!(
            Config::from_toml(&Config::template()).unwrap(),
            Config::default()
        );
        // Every section is in the template, and uncommenting every key keeps the defaults
        // (except the example endpoint and model, which have no default).
        let template = Config::template();
        let defaults = toml::to_string(&Config::default()).unwrap();
        for line in defaults.lines().filter(|l| l.starts_with('[')) {
            assert!(
                template.contains(line),
                "{line} is missing from the template"
            );
        }
        let uncommented: String = template
            .lines()
            .map(|l| {
                l.strip_prefix("# ")
                    .filter(|k| k.contains(" = "))
                    .unwrap_or(l)
            })
            .filter(|l| {
                !l.starts_with("model_dir")
                    && !l.starts_with("url")
                    && !l.starts_with("model ")
                    && !l.starts_with("api_key_env")
            })
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(
            Config::from_toml(&uncommented).unwrap(),
            Config::default(),
            "{uncommented}"
        );
        let c = Config::from_toml("[core]\nmax_lines = 5\n").unwrap();
        assert_eq!(c.core.max_lines, 5);
        assert_eq!(c.core.max_bytes, 8192);
        let e = Config::from_toml("[core]\nmax_line = 5\n").unwrap_err();
        assert!(e.contains("max_line"), "{e}");
        assert!(!e.contains('\n'));
        assert!(Config::from_toml("[scratch]\ndefault_ttl = \"soon\"\n").is_err());
        let c =
            Config::from_toml("[index]\nmax_lines = 3\n[state]\narchive_after = \"7d\"\n").unwrap();
        assert_eq!(c.index.cap().max_lines, 3);
        assert_eq!(c.index.max_bytes, 25 * 1024);
        assert_eq!(c.state.archive_after, "7d");
        assert!(Config::from_toml("[state]\narchive_after = \"never\"\n").is_err());
        assert!(Config::from_toml("[index]\nmax_lines = 0\n").is_err());
        let c = Config::from_toml("[context]\nmax_tokens = 900\nlog_days = 5\n").unwrap();
        assert_eq!((c.context.max_tokens, c.context.log_days), (900, 5));
        assert!(Config::from_toml("[context]\nmax_tokens = 10\n").is_err());
        for text in [
            String::new(),
            Config::template(),
            "[git]\nenabled = true\n[core]\nmax_lines = 5\n".to_string(),
            "[git]\n# enabled = true\n".to_string(),
            "[core]\nmax_lines = 5".to_string(),
        ] {
            let off = with_git_disabled(&text).unwrap();
            let c = Config::from_toml(&off).unwrap();
            assert!(!c.git.enabled, "{off}");
            assert_eq!(with_git_disabled(&off).unwrap(), off);
        }
        let c = Config::from_toml("[consolidate]\nmin_days = 2\nprovider = \"openai\"\n").unwrap();
        assert_eq!(
            (c.consolidate.min_days, c.consolidate.window.as_str()),
            (2, "30d")
        );
        assert!(Config::from_toml("[consolidate]\nprovider = \"gpt\"\n").is_err());
        assert!(Config::from_toml("[consolidate]\nwindow = \"soon\"\n").is_err());
    }
}
