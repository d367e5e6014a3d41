//! SamplerBuilder: the options of a sampler, applied when it is built.

use crate::error::{Error, ErrorCode, Result};
use crate::sampler::Sampler;
use brs_sys as sys;

/// The configuration of a [`Sampler`]. An option left unset keeps the
/// library's default (brs.h documents each): per_device_batch_size 8,
/// grad_accum 1, dp_size 1, rank 0, seed 0, shuffle on, drop_last on,
/// alpha 0.001, intercept 0, no max_tokens cap, padded mode,
/// pad_to_multiple_of 1, no length buckets.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SamplerBuilder {
    per_device_batch_size: Option<u64>,
    grad_accum: Option<u64>,
    dp_size: Option<u64>,
    rank: Option<u64>,
    seed: Option<u64>,
    shuffle: Option<bool>,
    drop_last: Option<bool>,
    alpha: Option<f64>,
    intercept: Option<f64>,
    max_tokens: Option<u64>,
    packed: Option<bool>,
    pad_to_multiple_of: Option<u64>,
    length_buckets: Option<Vec<u32>>,
}

impl SamplerBuilder {
    pub fn new() -> SamplerBuilder {
        SamplerBuilder::default()
    }

    /// P, the AVERAGE number of samples per micro-batch (B = P * dp_size * grad_accum).
    pub fn per_device_batch_size(mut self, samples: u64) -> Self {
        self.per_device_batch_size = Some(samples);
        self
    }

    /// G, micro-batches per rank per optimizer step.
    pub fn grad_accum(mut self, micro_steps: u64) -> Self {
        self.grad_accum = Some(micro_steps);
        self
    }

    /// R, the number of data-parallel ranks.
    pub fn dp_size(mut self, ranks: u64) -> Self {
        self.dp_size = Some(ranks);
        self
    }

    /// This rank, 0 <= rank < dp_size: the one the micro-batch iterator yields.
    pub fn rank(mut self, rank: u64) -> Self {
        self.rank = Some(rank);
        self
    }

    /// The shuffle seed, 0 ..= i64::MAX.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Draw each epoch from a seeded permutation (true) or in index order.
    pub fn shuffle(mut self, shuffle: bool) -> Self {
        self.shuffle = Some(shuffle);
        self
    }

    /// Drop the incomplete last step (true) or keep it, topped up to K samples.
    pub fn drop_last(mut self, drop_last: bool) -> Self {
        self.drop_last = Some(drop_last);
        self
    }

    /// The quadratic (attention) term of the cost, 0 ..= 1000.
    pub fn alpha(mut self, alpha: f64) -> Self {
        self.alpha = Some(alpha);
        self
    }

    /// The fixed cost of one micro-batch, 0 ..= 1e12.
    pub fn intercept(mut self, intercept: f64) -> Self {
        self.intercept = Some(intercept);
        self
    }

    /// A hard cap on the padded tokens (bs * longest) of one micro-batch, or
    /// on its tokens in packed mode; None for no cap.
    pub fn max_tokens(mut self, cap: Option<u64>) -> Self {
        self.max_tokens = cap;
        self
    }

    /// Packed mode (varlen attention, no padding) instead of padded.
    pub fn packed(mut self, packed: bool) -> Self {
        self.packed = Some(packed);
        self
    }

    /// The padded length of a micro-batch rounded up to a multiple of this,
    /// 1 ..= 65536, as a collator's pad_to_multiple_of builds it (then to a
    /// length bucket, if any): its cost, max_tokens and padded tokens are
    /// those of the rounded length. In packed mode the micro-batch's one
    /// row is rounded so. 1 rounds nothing.
    pub fn pad_to_multiple_of(mut self, multiple: u64) -> Self {
        self.pad_to_multiple_of = Some(multiple);
        self
    }

    /// The padded lengths a micro-batch may take, strictly increasing, each
    /// at least 1: a micro-batch is padded to the smallest bucket that
    /// holds its longest sample (rounded to pad_to_multiple_of first), or in
    /// packed mode its total. A sample above the last bucket fails the
    /// build with `SampleTooLong`; an empty list sets none. The list is
    /// copied into the sampler. [`Sampler::bucket_ladder`] suggests one.
    pub fn length_buckets(mut self, buckets: &[u32]) -> Self {
        self.length_buckets = Some(buckets.to_vec());
        self
    }

    /// A sampler with its own copy of `lengths` (token count of each sample).
    /// Fails on bad lengths or options, or a configuration that cannot plan
    /// (e.g. fewer samples than micro-batches, rank >= dp_size).
    pub fn build(&self, lengths: &[u32]) -> Result<Sampler<'static>> {
        Sampler::copying(lengths, self)
    }

    /// A sampler that borrows `lengths` instead of copying it (e.g. a memory
    /// map shared by every rank of a node); it cannot outlive them.
    pub fn build_borrowed<'a>(&self, lengths: &'a [u32]) -> Result<Sampler<'a>> {
        Sampler::borrowing(lengths, self)
    }

    /// Every option that was set, as (key, value) for brs_sampler_set_int.
    pub(crate) fn int_options(&self) -> Result<Vec<(sys::brs_option, i64)>> {
        if self.max_tokens == Some(0) {
            let detail = "max_tokens is Some(0); pass None for no cap";
            return Err(Error::new(ErrorCode::OutOfRange, detail));
        }
        let flag = |on: Option<bool>| on.map(u64::from);
        let options = [
            (
                sys::BRS_OPT_BATCH_SIZE,
                "per_device_batch_size",
                self.per_device_batch_size,
            ),
            (sys::BRS_OPT_GRAD_ACCUM, "grad_accum", self.grad_accum),
            (sys::BRS_OPT_DP_SIZE, "dp_size", self.dp_size),
            (sys::BRS_OPT_RANK, "rank", self.rank),
            (sys::BRS_OPT_SEED, "seed", self.seed),
            (sys::BRS_OPT_SHUFFLE, "shuffle", flag(self.shuffle)),
            (sys::BRS_OPT_DROP_LAST, "drop_last", flag(self.drop_last)),
            (sys::BRS_OPT_MAX_TOKENS, "max_tokens", self.max_tokens),
            (sys::BRS_OPT_PACKED, "packed", flag(self.packed)),
            (
                sys::BRS_OPT_PAD_TO_MULTIPLE_OF,
                "pad_to_multiple_of",
                self.pad_to_multiple_of,
            ),
        ];
        options
            .into_iter()
            .filter_map(|(key, name, value)| value.map(|v| (key, name, v)))
            .map(|(key, name, value)| Ok((key, to_c_int(name, value)?)))
            .collect()
    }

    /// The length buckets, when set (brs_sampler_set_length_buckets).
    pub(crate) fn buckets(&self) -> Option<&[u32]> {
        self.length_buckets.as_deref()
    }

    /// Every double option that was set, for brs_sampler_set_double.
    pub(crate) fn double_options(&self) -> Vec<(sys::brs_option, f64)> {
        [
            (sys::BRS_OPT_ALPHA, self.alpha),
            (sys::BRS_OPT_INTERCEPT, self.intercept),
        ]
        .into_iter()
        .filter_map(|(key, value)| value.map(|v| (key, v)))
        .collect()
    }
}

/// The C options are int64_t: a larger u64 is out of range, said here
/// because the library never sees it.
fn to_c_int(name: &str, value: u64) -> Result<i64> {
    i64::try_from(value).map_err(|_| {
        let detail = format!("{name} = {value} is larger than {}", i64::MAX);
        Error::new(ErrorCode::OutOfRange, &detail)
    })
}
