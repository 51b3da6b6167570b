//! Reading `tokenizer.json` quickly.
//!
//! `Tokenizer::from_bytes` parses the model part (a vocabulary of ~30,000 entries) into a
//! `serde_json::Value` first and deserializes it a second time from there (`ModelWrapper` keeps
//! files without a `"type"` readable that way): 30 ms of a CLI query's 35 ms tokenizer load.
//! [`parse`] reads the model by its `"type"` straight into that model's own type and builds the
//! rest as `from_bytes` does (the same parts, then the added tokens with `add_tokens`), so the
//! result is the same tokenizer; anything it does not know is left to `from_bytes`.

use serde::Deserialize;
use serde_json::value::RawValue;
use tokenizers::models::bpe::BPE;
use tokenizers::models::unigram::Unigram;
use tokenizers::models::wordlevel::WordLevel;
use tokenizers::models::wordpiece::WordPiece;
use tokenizers::{
    AddedToken, DecoderWrapper, ModelWrapper, NormalizerWrapper, PaddingParams,
    PostProcessorWrapper, PreTokenizerWrapper, Tokenizer, TruncationParams,
};

/// The parts of `tokenizer.json`, the model left as raw JSON.
#[derive(Deserialize)]
struct Parts<'a> {
    version: Option<String>,
    #[serde(default)]
    truncation: Option<TruncationParams>,
    #[serde(default)]
    padding: Option<PaddingParams>,
    #[serde(default)]
    added_tokens: Vec<Added>,
    #[serde(default)]
    normalizer: Option<NormalizerWrapper>,
    #[serde(default)]
    pre_tokenizer: Option<PreTokenizerWrapper>,
    #[serde(borrow)]
    model: &'a RawValue,
    #[serde(default)]
    decoder: Option<DecoderWrapper>,
    #[serde(default)]
    post_processor: Option<PostProcessorWrapper>,
}

/// An entry of `added_tokens`: its id (checked, as `from_bytes` only warns) and the token.
#[derive(Deserialize)]
struct Added {
    id: u32,
    #[serde(flatten)]
    token: AddedToken,
}

/// The model's `"type"`.
#[derive(Deserialize)]
struct Kind {
    #[serde(rename = "type")]
    kind: Option<String>,
}

/// Parses `tokenizer.json` into the tokenizer `Tokenizer::from_bytes` would build.
pub(crate) fn parse(bytes: &[u8]) -> Result<Tokenizer, String> {
    match fast(bytes) {
        Some(t) => Ok(t),
        None => Tokenizer::from_bytes(bytes).map_err(|e| e.to_string()),
    }
}

/// The quick path, or `None` for any file it does not read exactly as `from_bytes` does.
fn fast(bytes: &[u8]) -> Option<Tokenizer> {
    let parts: Parts<'_> = serde_json::from_slice(bytes).ok()?;
    if parts.version.as_deref() != Some("1.0") {
        return None;
    }
    let raw = parts.model.get();
    let model: ModelWrapper = match serde_json::from_str::<Kind>(raw).ok()?.kind.as_deref()? {
        "WordPiece" => serde_json::from_str::<WordPiece>(raw).ok()?.into(),
        "BPE" => serde_json::from_str::<BPE>(raw).ok()?.into(),
        "WordLevel" => serde_json::from_str::<WordLevel>(raw).ok()?.into(),
        "Unigram" => serde_json::from_str::<Unigram>(raw).ok()?.into(),
        _ => return None,
    };
    let mut tokenizer = Tokenizer::new(model);
    tokenizer
        .with_normalizer(parts.normalizer)
        .with_pre_tokenizer(parts.pre_tokenizer)
        .with_post_processor(parts.post_processor)
        .with_decoder(parts.decoder)
        .with_padding(parts.padding)
        .with_truncation(parts.truncation)
        .ok()?;
    let tokens: Vec<AddedToken> = parts.added_tokens.iter().map(|a| a.token.clone()).collect();
    tokenizer.add_tokens(&tokens);
    // Every added token must have the id the file gives it, or this is not the file's tokenizer.
    parts
        .added_tokens
        .iter()
        .all(|a| tokenizer.token_to_id(&a.token.content) == Some(a.id))
        .then_some(tokenizer)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// A text's token ids and their offsets.
    type Encoded = (Vec<u32>, Vec<(usize, usize)>);

    /// Token ids and offsets of a few texts, special tokens added and not.
    fn encodings(t: &Tokenizer) -> Vec<Encoded> {
        let texts = [
            "Hello, world! Héllo wörld",
            "[MASK] an added token inside [SEP] a text",
            "  spaces\tand\nnewlines  ",
            "unbelievably long wordpieces: antidisestablishmentarianism",
            "",
        ];
        texts
            .iter()
            .flat_map(|text| [true, false].map(|special| t.encode(*text, special).unwrap()))
            .map(|e| (e.get_ids().to_vec(), e.get_offsets().to_vec()))
            .collect()
    }

    #[test]
    fn reads_a_tokenizer_as_from_bytes_does() {
        let tiny = memdir_test_model::TinyModel::new();
        let bytes = std::fs::read(tiny.path().join("tokenizer.json")).unwrap();
        let quick = fast(&bytes).expect("the quick path reads a WordPiece tokenizer");
        let reference = Tokenizer::from_bytes(&bytes).unwrap();
        assert_eq!(encodings(&quick), encodings(&reference));
        assert_eq!(quick.get_vocab(true), reference.get_vocab(true));
        assert_eq!(
            quick.get_added_tokens_decoder(),
            reference.get_added_tokens_decoder()
        );
    }

    #[test]
    fn the_real_models_tokenizers_read_the_same_both_ways() {
        let dirs = [
            memdir_test_model::real_model(),
            memdir_test_model::real_static_model(),
        ];
        for dir in dirs.into_iter().flatten() {
            let bytes = std::fs::read(dir.join("tokenizer.json")).unwrap();
            let quick = fast(&bytes).expect("the quick path reads the model's tokenizer");
            let reference = Tokenizer::from_bytes(&bytes).unwrap();
            assert_eq!(
                encodings(&quick),
                encodings(&reference),
                "{}",
                dir.display()
            );
            assert_eq!(quick.get_vocab(true), reference.get_vocab(true));
        }
    }

    #[test]
    fn what_it_cannot_read_goes_to_from_bytes() {
        // No `"type"` on the model: only `from_bytes` knows how to guess it.
        let untyped = br#"{"version":"1.0","truncation":null,"padding":null,"added_tokens":[],
            "normalizer":null,"pre_tokenizer":null,"post_processor":null,"decoder":null,
            "model":{"vocab":{"a":0,"[UNK]":1},"unk_token":"[UNK]"}}"#;
        assert!(fast(untyped).is_none());
        let t = parse(untyped).unwrap();
        assert_eq!(t.token_to_id("a"), Some(0));
        // A broken file fails with the library's own message.
        assert!(parse(b"{not json").is_err());
    }
}
