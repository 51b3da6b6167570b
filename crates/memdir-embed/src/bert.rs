//! A minimal BERT encoder (the architecture of all-MiniLM-L6-v2, bge-small, e5-small and kin),
//! inference only, on candle's CPU backend.
//!
//! It is written here rather than taken from candle-transformers because that crate compiles
//! every model it knows, and this one needs a single encoder; owning it also lets the query,
//! key and value projections run as one fused matrix product.

use candle_core::{D, DType, Device, Module, Result, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder};
use serde::Deserialize;

/// The fields of a Hugging Face `config.json` that a BERT encoder needs.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct BertConfig {
    pub(crate) vocab_size: usize,
    pub(crate) hidden_size: usize,
    pub(crate) num_hidden_layers: usize,
    pub(crate) num_attention_heads: usize,
    pub(crate) intermediate_size: usize,
    #[serde(default = "default_act")]
    pub(crate) hidden_act: String,
    pub(crate) max_position_embeddings: usize,
    #[serde(default = "default_type_vocab")]
    pub(crate) type_vocab_size: usize,
    #[serde(default = "default_eps")]
    pub(crate) layer_norm_eps: f64,
}

fn default_act() -> String {
    "gelu".to_owned()
}
fn default_type_vocab() -> usize {
    2
}
fn default_eps() -> f64 {
    1e-12
}

#[derive(Clone, Copy, Debug)]
enum Act {
    Gelu,
    GeluTanh,
    Relu,
}

impl Act {
    fn parse(name: &str) -> Option<Self> {
        match name {
            "gelu" => Some(Self::Gelu),
            "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" => Some(Self::GeluTanh),
            "relu" => Some(Self::Relu),
            _ => None,
        }
    }

    fn apply(self, xs: &Tensor) -> Result<Tensor> {
        match self {
            Self::Gelu => xs.gelu_erf(),
            Self::GeluTanh => xs.gelu(),
            Self::Relu => xs.relu(),
        }
    }
}

fn linear(vb: &VarBuilder, name: &str, inp: usize, out: usize) -> Result<Linear> {
    let vb = vb.pp(name);
    Ok(Linear::new(
        vb.get((out, inp), "weight")?,
        Some(vb.get(out, "bias")?),
    ))
}

fn layer_norm(vb: &VarBuilder, name: &str, size: usize, eps: f64) -> Result<LayerNorm> {
    let vb = vb.pp(name);
    Ok(LayerNorm::new(
        vb.get(size, "weight")?,
        vb.get(size, "bias")?,
        eps,
    ))
}

struct Layer {
    qkv: Linear,
    attn_out: Linear,
    attn_norm: LayerNorm,
    up: Linear,
    down: Linear,
    out_norm: LayerNorm,
}

/// The encoder: embeddings, then `num_hidden_layers` transformer layers.
pub(crate) struct Bert {
    word: Embedding,
    position: Embedding,
    token_type: Tensor,
    emb_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    head_dim: usize,
    act: Act,
    pub(crate) max_positions: usize,
}

impl Bert {
    /// Loads the weights; accepts both bare names (`embeddings.…`) and a `bert.` prefix.
    pub(crate) fn load(vb: VarBuilder, cfg: &BertConfig) -> Result<Self> {
        let vb = if vb.contains_tensor("embeddings.word_embeddings.weight") {
            vb
        } else {
            vb.pp("bert")
        };
        let act = Act::parse(&cfg.hidden_act).ok_or_else(|| {
            candle_core::Error::Msg(format!("unsupported hidden_act {:?}", cfg.hidden_act))
        })?;
        if cfg.num_attention_heads == 0 || !cfg.hidden_size.is_multiple_of(cfg.num_attention_heads)
        {
            return Err(candle_core::Error::Msg(
                "hidden_size is not a multiple of num_attention_heads".to_owned(),
            ));
        }
        let h = cfg.hidden_size;
        let e = vb.pp("embeddings");
        let word = Embedding::new(e.get((cfg.vocab_size, h), "word_embeddings.weight")?, h);
        let position = Embedding::new(
            e.get(
                (cfg.max_position_embeddings, h),
                "position_embeddings.weight",
            )?,
            h,
        );
        // Single-segment inputs only ever use token type 0: keep that one row.
        let token_type = e
            .get((cfg.type_vocab_size, h), "token_type_embeddings.weight")?
            .get(0)?;
        let emb_norm = layer_norm(&e, "LayerNorm", h, cfg.layer_norm_eps)?;
        let mut layers = Vec::with_capacity(cfg.num_hidden_layers);
        for i in 0..cfg.num_hidden_layers {
            let l = vb.pp(format!("encoder.layer.{i}"));
            let a = l.pp("attention");
            let s = a.pp("self");
            let (q, k, v) = (
                linear(&s, "query", h, h)?,
                linear(&s, "key", h, h)?,
                linear(&s, "value", h, h)?,
            );
            let w = Tensor::cat(&[q.weight(), k.weight(), v.weight()], 0)?;
            let b = match (q.bias(), k.bias(), v.bias()) {
                (Some(qb), Some(kb), Some(vb)) => Some(Tensor::cat(&[qb, kb, vb], 0)?),
                _ => None,
            };
            layers.push(Layer {
                qkv: Linear::new(w, b),
                attn_out: linear(&a, "output.dense", h, h)?,
                attn_norm: layer_norm(&a, "output.LayerNorm", h, cfg.layer_norm_eps)?,
                up: linear(&l, "intermediate.dense", h, cfg.intermediate_size)?,
                down: linear(&l, "output.dense", cfg.intermediate_size, h)?,
                out_norm: layer_norm(&l, "output.LayerNorm", h, cfg.layer_norm_eps)?,
            });
        }
        Ok(Self {
            word,
            position,
            token_type,
            emb_norm,
            layers,
            heads: cfg.num_attention_heads,
            head_dim: h / cfg.num_attention_heads,
            act,
            max_positions: cfg.max_position_embeddings,
        })
    }

    /// Runs the encoder on `ids` (batch × tokens, u32) with `mask` (batch × tokens, f32, 1 for a
    /// real token and 0 for padding) and returns the last hidden states (batch × tokens × hidden).
    pub(crate) fn forward(&self, ids: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let (batch, tokens) = ids.dims2()?;
        let positions = Tensor::arange(0u32, tokens as u32, ids.device())?;
        let mut xs = self
            .word
            .forward(ids)?
            .broadcast_add(&self.position.forward(&positions)?)?
            .broadcast_add(&self.token_type)?;
        xs = self.emb_norm.forward(&xs)?;
        // 0 where attended, a large negative number on padding, shaped to broadcast over heads
        // and query positions.
        let bias = ((mask.ones_like()? - mask)? * -1e4f64)?.reshape((batch, 1, 1, tokens))?;
        let scale = 1.0 / (self.head_dim as f64).sqrt();
        for layer in &self.layers {
            let qkv = layer.qkv.forward(&xs)?;
            let split = |i: usize| -> Result<Tensor> {
                qkv.narrow(
                    D::Minus1,
                    i * self.heads * self.head_dim,
                    self.heads * self.head_dim,
                )?
                .reshape((batch, tokens, self.heads, self.head_dim))?
                .transpose(1, 2)?
                .contiguous()
            };
            let (q, k, v) = (split(0)?, split(1)?, split(2)?);
            let scores = (q.matmul(&k.t()?)? * scale)?.broadcast_add(&bias)?;
            let probs = candle_nn::ops::softmax_last_dim(&scores)?;
            let ctx = probs.matmul(&v)?.transpose(1, 2)?.reshape((
                batch,
                tokens,
                self.heads * self.head_dim,
            ))?;
            xs = layer
                .attn_norm
                .forward(&(layer.attn_out.forward(&ctx)? + &xs)?)?;
            let ff = layer
                .down
                .forward(&self.act.apply(&layer.up.forward(&xs)?)?)?;
            xs = layer.out_norm.forward(&(ff + &xs)?)?;
        }
        Ok(xs)
    }
}

/// Mean of the hidden states over real tokens (sentence-transformers' mean pooling).
pub(crate) fn mean_pool(hidden: &Tensor, mask: &Tensor) -> Result<Tensor> {
    let m = mask.unsqueeze(D::Minus1)?.to_dtype(DType::F32)?;
    let summed = hidden.broadcast_mul(&m)?.sum(1)?;
    let counts = m.sum(1)?.clamp(1e-9f64, f64::MAX)?;
    summed.broadcast_div(&counts)
}

/// The CPU device (the only one this crate uses).
pub(crate) fn device() -> Device {
    Device::Cpu
}
