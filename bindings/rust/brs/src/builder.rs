//! SamplerBuilder: the options of a sampler, applied when it is built.

use crate::error::{Error, ErrorCode, Result};
use crate::options::{self, OptionInfo, OptionValue, Value};
use crate::sampler::Sampler;
use brs_sys as sys;
use std::collections::BTreeMap;

/// The configuration of a [`Sampler`]: any option of the library's table
/// ([`options()`](crate::options())), set by its one name with
/// [`option`](Self::option) or by a typed method. An option left unset keeps
/// the library's default (brs.h documents each; [`crate::option`] reads it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SamplerBuilder {
    /// By the option's name; the library checks each value when it is built.
    options: BTreeMap<String, Value>,
    length_buckets: Option<Vec<u32>>,
    /// `max_tokens(Some(0))`, refused at build: None is this API's "no cap".
    zero_cap: bool,
}

impl SamplerBuilder {
    pub fn new() -> SamplerBuilder {
        SamplerBuilder::default()
    }

    /// Sets the option `name` of the library's table, e.g.
    /// `.option("sync", "step")`, `.option("alpha", 0.002)`,
    /// `.option("shuffle", false)`. An integer option takes an integer (a
    /// bool is 1 or 0) or, when its values are named (strategy, sync), the
    /// name; a double option takes a number. The name, the type and the
    /// bounds are checked when the sampler is built: an unknown name is
    /// `Unsupported`, a value of the wrong kind `InvalidArgument`, one
    /// outside the bounds `OutOfRange`.
    pub fn option(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.options.insert(name.to_owned(), value.into());
        self
    }

    /// P, the AVERAGE number of samples per micro-batch (B = P * dp_size *
    /// grad_accum): the library's `batch_size`.
    pub fn per_device_batch_size(self, samples: u64) -> Self {
        self.option("batch_size", samples)
    }

    /// G, micro-batches per rank per optimizer step.
    pub fn grad_accum(self, micro_steps: u64) -> Self {
        self.option("grad_accum", micro_steps)
    }

    /// R, the number of data-parallel ranks.
    pub fn dp_size(self, ranks: u64) -> Self {
        self.option("dp_size", ranks)
    }

    /// This rank, 0 <= rank < dp_size: the one the micro-batch iterator yields.
    pub fn rank(self, rank: u64) -> Self {
        self.option("rank", rank)
    }

    /// The shuffle seed, 0 ..= i64::MAX.
    pub fn seed(self, seed: u64) -> Self {
        self.option("seed", seed)
    }

    /// Draw each epoch from a seeded permutation (true) or in index order.
    pub fn shuffle(self, shuffle: bool) -> Self {
        self.option("shuffle", shuffle)
    }

    /// Drop the incomplete last step (true) or keep it, topped up to K samples.
    pub fn drop_last(self, drop_last: bool) -> Self {
        self.option("drop_last", drop_last)
    }

    /// The quadratic (attention) term of the cost, 0 ..= 1000.
    pub fn alpha(self, alpha: f64) -> Self {
        self.option("alpha", alpha)
    }

    /// The fixed cost of one micro-batch, 0 ..= 1e12.
    pub fn intercept(self, intercept: f64) -> Self {
        self.option("intercept", intercept)
    }

    /// A hard cap on the padded tokens (bs * longest) of one micro-batch, or
    /// on its tokens in packed mode; None for no cap.
    pub fn max_tokens(mut self, cap: Option<u64>) -> Self {
        self.zero_cap = cap == Some(0);
        match cap {
            Some(cap) => self.option("max_tokens", cap),
            None => {
                self.options.remove("max_tokens");
                self
            }
        }
    }

    /// Packed mode (varlen attention, no padding) instead of padded.
    pub fn packed(self, packed: bool) -> Self {
        self.option("packed", packed)
    }

    /// The padded length of a micro-batch rounded up to a multiple of this,
    /// 1 ..= 65536, as a collator's pad_to_multiple_of builds it (then to a
    /// length bucket, if any): its cost, max_tokens and padded tokens are
    /// those of the rounded length. In packed mode the micro-batch's one
    /// row is rounded so. 1 rounds nothing.
    pub fn pad_to_multiple_of(self, multiple: u64) -> Self {
        self.option("pad_to_multiple_of", multiple)
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

    /// Every option that was set, as its key and the value to store.
    pub(crate) fn settings(&self) -> Result<Vec<(sys::brs_option, Setting)>> {
        if self.zero_cap {
            let detail = "max_tokens is Some(0); pass None for no cap";
            return Err(Error::new(ErrorCode::OutOfRange, detail));
        }
        self.options
            .iter()
            .map(|(name, value)| setting(name, value))
            .collect()
    }

    /// The length buckets, when set (brs_sampler_set_length_buckets).
    pub(crate) fn buckets(&self) -> Option<&[u32]> {
        self.length_buckets.as_deref()
    }
}

/// A value in the C type of its option: brs_sampler_set_int or _set_double.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Setting {
    Int(i64),
    Double(f64),
}

/// The key of `name` and `value` in its option's type, as the table says.
fn setting(name: &str, value: &Value) -> Result<(sys::brs_option, Setting)> {
    let option = options::option(name).ok_or_else(|| unknown(name))?;
    let stored = match (&option.value, value) {
        (OptionValue::Int { .. }, Value::Int(v)) => Setting::Int(to_c_int(name, *v)?),
        (OptionValue::Int { .. }, Value::Name(text)) => {
            Setting::Int(named_value(name, &option, text)?)
        }
        (OptionValue::Double { .. }, Value::Int(v)) => Setting::Double(*v as f64),
        (OptionValue::Double { .. }, Value::Double(v)) => Setting::Double(*v),
        (_, value) => return Err(wrong_kind(name, &option.value, value)),
    };
    Ok((option.key, stored))
}

/// The number of a named value (strategy "random" is 1), found by the
/// library (brs_option_value_find).
fn named_value(name: &str, option: &OptionInfo, text: &str) -> Result<i64> {
    if let Ok(c_text) = std::ffi::CString::new(text) {
        let mut found = 0i64;
        // SAFETY: a valid out-pointer and a NUL-terminated name the call only reads.
        let status = unsafe { sys::brs_option_value_find(&mut found, option.key, c_text.as_ptr()) };
        if status == sys::BRS_OK {
            return Ok(found);
        }
    }
    let names = &option.value_names;
    if names.is_empty() {
        return Err(wrong_kind(name, &option.value, &Value::Name(text.into())));
    }
    let detail = format!("{name} = {text:?}; it takes one of {names:?} (or its number)");
    Err(Error::new(ErrorCode::OutOfRange, &detail))
}

fn unknown(name: &str) -> Error {
    let known: Vec<&str> = options::options().iter().map(|o| o.name).collect();
    let detail = format!("no option is named {name:?}; the options are {known:?}");
    Error::new(ErrorCode::Unsupported, &detail)
}

fn wrong_kind(name: &str, option: &OptionValue, value: &Value) -> Error {
    let wanted = match option {
        OptionValue::Int { .. } => "an integer",
        OptionValue::Double { .. } => "a number",
    };
    let detail = format!("{name} takes {wanted}; got {value:?}");
    Error::new(ErrorCode::InvalidArgument, &detail)
}

/// The C options are int64_t: a wider value is out of range, said here
/// because the library never sees it.
fn to_c_int(name: &str, value: i128) -> Result<i64> {
    i64::try_from(value).map_err(|_| {
        let bound = if value < 0 { i64::MIN } else { i64::MAX };
        let relation = if value < 0 { "smaller" } else { "larger" };
        let detail = format!("{name} = {value} is {relation} than {bound}");
        Error::new(ErrorCode::OutOfRange, &detail)
    })
}
