//! A corpus of credentials (one per family the issue names, and a few more big providers) and
//! of near misses, shared by the detector's tests and the write-path tests of the CLI and MCP.
//!
//! The credentials are fake and assembled from parts here, so no key-shaped string sits in the
//! repository for a push-protection scanner to trip on.
#![allow(dead_code)]

/// `n` characters cycling through `alphabet`, starting at `seed`: key-shaped, not a real key.
pub fn filler(alphabet: &str, n: usize, seed: usize) -> String {
    let a: Vec<char> = alphabet.chars().collect();
    (0..n).map(|i| a[(seed + i * 7) % a.len()]).collect()
}

const ALNUM: &str = "aB3dE5fG7hJ9kL2mN4pQ6rS8tU1vW0xYz";
const UPPER27: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/// A secret in a line an agent might write, the rule that must find it, and the secret itself.
pub struct Case {
    pub family: &'static str,
    pub rule: &'static str,
    pub line: String,
    pub secret: String,
}

/// One credential per family.
pub fn secrets() -> Vec<Case> {
    let aws = ["AK", "IA", &filler(UPPER27, 16, 3)].concat();
    let ghp = format!("{}_{}", "ghp", filler(ALNUM, 36, 1));
    let slack = format!(
        "{}-{}-{}-{}",
        "xoxb",
        "2384729384",
        "7438291038475",
        filler(ALNUM, 24, 5)
    );
    let stripe = format!("{}_{}_{}", "sk", "live", filler(ALNUM, 24, 2));
    let openai = [
        "sk-",
        &filler(ALNUM, 20, 4),
        "T3Blbk",
        "FJ",
        &filler(ALNUM, 20, 6),
    ]
    .concat();
    let anthropic = format!(
        "{}-{}-{}AA",
        "sk-ant",
        "api03",
        filler(&format!("{ALNUM}_-"), 93, 8)
    );
    let gcp = ["AI", "za", &filler(ALNUM, 35, 9)].concat();
    let key_body: Vec<String> = (0..4)
        .map(|i| filler(&format!("{ALNUM}+/"), 64, i))
        .collect();
    let pem = format!(
        "-----BEGIN RSA {}-----\n{}\n-----END RSA {}-----",
        "PRIVATE KEY",
        key_body.join("\n"),
        "PRIVATE KEY"
    );
    let jwt = format!(
        "{}.{}.{}",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
        "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0",
        filler(&format!("{ALNUM}_-"), 43, 3)
    );
    let password = filler(ALNUM, 18, 11);
    let entropy = filler(ALNUM, 32, 13);
    vec![
        Case {
            family: "cloud key (AWS)",
            rule: "aws-access-token",
            line: format!("the deploy box uses {aws} for S3"),
            secret: aws,
        },
        Case {
            family: "provider token (GitHub)",
            rule: "github-pat",
            line: format!("export GITHUB_TOKEN={ghp}"),
            secret: ghp,
        },
        Case {
            family: "provider token (Slack)",
            rule: "slack-bot-token",
            line: format!("bot token is {slack} for #ops"),
            secret: slack,
        },
        Case {
            family: "provider token (Stripe)",
            rule: "stripe-access-token",
            line: format!("charge with {stripe} in prod"),
            secret: stripe,
        },
        Case {
            family: "provider token (OpenAI)",
            rule: "openai-api-key",
            line: format!("the notebook calls the API with {openai} today"),
            secret: openai,
        },
        Case {
            family: "provider token (Anthropic)",
            rule: "anthropic-api-key",
            line: format!("ANTHROPIC_API_KEY={anthropic}"),
            secret: anthropic,
        },
        Case {
            family: "cloud key (Google)",
            rule: "gcp-api-key",
            line: format!("maps key {gcp} from the console"),
            secret: gcp,
        },
        Case {
            family: "private key block",
            rule: "private-key",
            line: format!("the server key:\n{pem}\nend"),
            secret: pem,
        },
        Case {
            family: "JWT",
            rule: "jwt",
            line: format!("session cookie {jwt} expired"),
            secret: jwt,
        },
        Case {
            family: "password assignment",
            rule: "generic-api-key",
            line: format!("db_password={password}"),
            secret: password,
        },
        Case {
            family: "high-entropy assignment",
            rule: "generic-api-key",
            line: format!("SESSION_SECRET: {entropy}"),
            secret: entropy,
        },
    ]
}

/// Lines that look like secrets to a careless eye and are not.
pub fn near_misses() -> Vec<&'static str> {
    vec![
        "request 3f2b8c1e-9a4d-4e7b-8c2a-1d5e6f7a8b9c failed with 502",
        "user_id: 3f2b8c1e-9a4d-4e7b-8c2a-1d5e6f7a8b9c",
        "merged commit 9fceb02d0ae598e95dc970b74767f19372d61af8 into main",
        "reverted 9fceb02 and e83c516 after the bisect",
        "![logo](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)",
        "pulled sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 from the registry",
        "build log: md5 d41d8cd98f00b204e9800998ecf8427e matches",
        "the API key is in 1Password under Deploy; never paste it here",
        "password reset email sent to the user at 09:14",
        "api_version=2024-06-01",
        "token_count=1532 for the summary",
        "set the key to the value of $AWS_SECRET_ACCESS_KEY in CI",
        "password: ${DB_PASSWORD}",
        "secret_name = prod/db/credentials",
        "access log rotated; 14 files, 2.3 GB",
    ]
}
