//! Sampler: owns a brs_sampler handle (the lengths and the configuration)
//! and the epoch this rank is in.

use crate::builder::{SamplerBuilder, Setting};
use crate::error::{check, owned, Error, ErrorCode, Result};
use crate::iter::MicroBatches;
use crate::options::{self, OptionValue, Value};
use crate::plan::Plan;
use brs_sys as sys;
use std::marker::PhantomData;
use std::ptr::{null, null_mut, NonNull};

/// What [`Sampler::check_epoch`] found for an epoch that plans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EpochCheck {
    /// The least max_tokens with which every step of the epoch plans.
    pub min_max_tokens: u64,
    /// The most micro-batches a step needs under the configured max_tokens.
    pub micro_batches: u64,
}

/// Plans the micro-batches of every optimizer step of an epoch.
///
/// `'a` is the lifetime of borrowed lengths ([`SamplerBuilder::build_borrowed`]);
/// a sampler with copied lengths is `Sampler<'static>`. A borrowing sampler
/// cannot outlive its lengths:
///
/// ```compile_fail,E0597
/// let sampler = {
///     let lengths = vec![7u32; 64];
///     brs::Sampler::builder().build_borrowed(&lengths).unwrap()
/// };
/// # drop(sampler);
/// ```
///
/// A sampler moves between threads (`Send`) but is not shared (`!Sync`):
///
/// ```compile_fail,E0277
/// fn shared<T: Sync>() {}
/// shared::<brs::Sampler<'static>>();
/// ```
pub struct Sampler<'a> {
    raw: NonNull<sys::brs_sampler>,
    epoch: u64,
    lengths: PhantomData<&'a [u32]>,
}

// SAFETY: the handle owns everything it points to (or borrows lengths that
// PhantomData ties to 'a, and &[u32] is Send), libbrs has no global or
// thread-local state, and brs_sampler_free may run on any thread: moving a
// sampler to another thread is sound.
//
// Not Sync: brs.h promises concurrent use of one sampler only for its
// read-only calls (get_*, fingerprint, last_error, plan_compute), while
// validate and steps_per_epoch, which take &self here, write the handle; and
// a failed call's detail message is valid only until the next call on the
// handle, so two threads could not each read their own. Share a sampler
// across threads by giving each thread its own Sampler.
unsafe impl Send for Sampler<'_> {}

impl Sampler<'_> {
    /// Options for a new sampler; finish with `.build(&lengths)`.
    pub fn builder() -> SamplerBuilder {
        SamplerBuilder::new()
    }

    /// A sampler with its own copy of the lengths.
    pub(crate) fn copying(lengths: &[u32], options: &SamplerBuilder) -> Result<Sampler<'static>> {
        // SAFETY: with COPY the library keeps no pointer to `lengths`.
        unsafe { Sampler::create(lengths, sys::BRS_LENGTHS_COPY, options) }
    }

    /// A sampler that keeps a pointer to `lengths`, tied to their lifetime.
    pub(crate) fn borrowing<'a>(
        lengths: &'a [u32],
        options: &SamplerBuilder,
    ) -> Result<Sampler<'a>> {
        // SAFETY: the sampler is Sampler<'a>, so it cannot outlive `lengths`,
        // and the shared borrow keeps them unchanged for as long.
        unsafe { Sampler::create(lengths, sys::BRS_LENGTHS_BORROW, options) }
    }

    /// # Safety
    /// With BRS_LENGTHS_BORROW, `lengths` must stay alive and unchanged for 'a.
    unsafe fn create<'a>(
        lengths: &[u32],
        mode: i32,
        options: &SamplerBuilder,
    ) -> Result<Sampler<'a>> {
        crate::check_library_version()?;
        let mut raw = null_mut();
        // SAFETY: raw is a valid out-parameter.
        check(sys::brs_sampler_new(&mut raw), String::new)?;
        let raw = NonNull::new(raw).ok_or_else(|| Error::new(ErrorCode::NoMemory, ""))?;
        // From here on, Drop frees the handle on every early return.
        let sampler = Sampler {
            raw,
            epoch: 0,
            lengths: PhantomData,
        };
        // SAFETY: the slice is valid for len() reads; the borrow is the caller's promise.
        sampler.check(sys::brs_sampler_set_lengths(
            sampler.raw(),
            lengths.as_ptr(),
            lengths.len(),
            mode,
        ))?;
        for (key, value) in options.settings()? {
            sampler.check(match value {
                Setting::Int(v) => sys::brs_sampler_set_int(sampler.raw(), key, v),
                Setting::Double(v) => sys::brs_sampler_set_double(sampler.raw(), key, v),
            })?;
        }
        if let Some(buckets) = options.buckets() {
            sampler.set_buckets(buckets)?;
        }
        sampler.check(sys::brs_sampler_validate(sampler.raw()))?;
        Ok(sampler)
    }

    pub(crate) fn raw(&self) -> *mut sys::brs_sampler {
        self.raw.as_ptr()
    }

    /// The status as a Result, with this handle's detail message.
    fn check(&self, status: sys::brs_status) -> Result<()> {
        // SAFETY: the handle is live; the message is copied at once.
        check(status, || unsafe {
            owned(sys::brs_sampler_last_error(self.raw()))
        })
    }

    /// The epoch that `plan` and `micro_batches` use (0 until set).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Moves to another epoch (each epoch draws its own permutation).
    pub fn set_epoch(&mut self, epoch: u64) {
        self.epoch = epoch;
    }

    /// The number of optimizer steps in one epoch, the same on every rank.
    pub fn steps_per_epoch(&self) -> Result<u64> {
        let mut steps = 0;
        // SAFETY: live handle, valid out-parameter; !Sync keeps this call alone.
        self.check(unsafe { sys::brs_sampler_steps_per_epoch(&mut steps, self.raw()) })?;
        Ok(steps)
    }

    /// The number of micro-batches this rank gets per epoch: steps * grad_accum.
    pub fn micro_batches_per_epoch(&self) -> Result<u64> {
        Ok(self.steps_per_epoch()? * self.grad_accum())
    }

    /// A hash of the lengths, every option except the rank, and the plan
    /// algorithm version: ranks of one job compare it to detect divergence.
    pub fn fingerprint(&self) -> Result<u64> {
        let mut hash = 0;
        // SAFETY: live handle, valid out-parameter.
        self.check(unsafe { sys::brs_sampler_fingerprint(&mut hash, self.raw()) })?;
        Ok(hash)
    }

    /// The fingerprint without dp_size, per_device_batch_size, grad_accum
    /// and sync: equal for samplers that draw the same samples in the same
    /// order however each step is split among ranks and micro-steps (a
    /// resume on another number of ranks compares it, and the global batch).
    pub fn stream_fingerprint(&self) -> Result<u64> {
        let mut hash = 0;
        // SAFETY: live handle, valid out-parameter.
        self.check(unsafe { sys::brs_sampler_stream_fingerprint(&mut hash, self.raw()) })?;
        Ok(hash)
    }

    /// Whether max_tokens lets every step of `epoch` be planned, decided in
    /// one pass before any step is planned: `Ok` with the least max_tokens
    /// that plans the epoch and the most micro-batches a step needs;
    /// otherwise the error whose message names that max_tokens
    /// (`CapInfeasible`, `SampleTooLong`), `Unsupported` in packed mode.
    pub fn check_epoch(&self, epoch: u64) -> Result<EpochCheck> {
        let (mut min_max_tokens, mut micro_batches) = (0, 0);
        // SAFETY: live handle, valid out-parameters; a read-only call.
        self.check(unsafe {
            sys::brs_sampler_check_epoch(&mut min_max_tokens, &mut micro_batches, self.raw(), epoch)
        })?;
        Ok(EpochCheck {
            min_max_tokens,
            micro_batches,
        })
    }

    /// The library's default ladder of length buckets for this sampler's
    /// lengths: `steps_per_doubling` evenly spaced lengths per doubling (0:
    /// the library's default, 4: 64, 80, 96, 112, 128, 160, ..., a bucket at
    /// most 25% above any length it holds), from the power of two at or
    /// below the shortest sample to the first rung at or above the longest,
    /// each rounded up to pad_to_multiple_of. It is not set: pass it to
    /// [`SamplerBuilder::length_buckets`] or [`Sampler::set_length_buckets`].
    /// `OutOfRange` for steps_per_doubling above 64.
    pub fn bucket_ladder(&self, steps_per_doubling: u32) -> Result<Vec<u32>> {
        let mut count = 0;
        // SAFETY: live handle; NULL with capacity 0 asks for the length only.
        self.check(unsafe {
            sys::brs_sampler_bucket_ladder(
                null_mut(),
                &mut count,
                self.raw(),
                steps_per_doubling,
                0,
            )
        })?;
        let mut ladder = vec![0u32; count];
        // SAFETY: `ladder` has room for `count` buckets; the count is rewritten.
        self.check(unsafe {
            sys::brs_sampler_bucket_ladder(
                ladder.as_mut_ptr(),
                &mut count,
                self.raw(),
                steps_per_doubling,
                ladder.len(),
            )
        })?;
        ladder.truncate(count);
        Ok(ladder)
    }

    /// Sets the padded lengths a micro-batch may take (see
    /// [`SamplerBuilder::length_buckets`]); an empty list clears them. The
    /// sampler is validated with them: on any error (`InvalidArgument` for a
    /// 0 or a list that is not strictly increasing, `TooLarge` for more than
    /// 65536, `SampleTooLong` naming the last bucket when a sample is longer)
    /// it keeps the buckets it had. The list is copied.
    pub fn set_length_buckets(&mut self, buckets: &[u32]) -> Result<()> {
        let previous = self.length_buckets();
        self.set_buckets(buckets)?;
        // SAFETY: live handle; &mut self keeps this call alone.
        if let Err(error) = self.check(unsafe { sys::brs_sampler_validate(self.raw()) }) {
            self.set_buckets(&previous)?;
            return Err(error);
        }
        Ok(())
    }

    fn set_buckets(&self, buckets: &[u32]) -> Result<()> {
        // SAFETY: live handle; the slice is valid for len() reads and copied.
        self.check(unsafe {
            sys::brs_sampler_set_length_buckets(self.raw(), buckets.as_ptr(), buckets.len())
        })
    }

    /// The length buckets, increasing; empty when none are set.
    pub fn length_buckets(&self) -> Vec<u32> {
        let (mut buckets, mut count) = (null(), 0usize);
        // SAFETY: live handle, valid out-parameters.
        let status =
            unsafe { sys::brs_sampler_get_length_buckets(&mut buckets, &mut count, self.raw()) };
        assert_eq!(status, sys::BRS_OK, "libbrs cannot read the length buckets");
        if count == 0 || buckets.is_null() {
            return Vec::new();
        }
        // SAFETY: the sampler's own array of `count` buckets, valid until
        // they are set again (which needs &mut self); copied at once.
        unsafe { std::slice::from_raw_parts(buckets, count) }.to_vec()
    }

    /// Sets the images of a vision-language dataset: `images[i]` lists the
    /// patch counts (the vision encoder's tokens) of sample i's images, empty
    /// for a sample without one; one entry per sample. A micro-batch then
    /// costs its text plus its images (`encoder_alpha`, `encoder_intercept`)
    /// and its patches are capped by `max_encoder_tokens` (set them with
    /// [`SamplerBuilder::option`]); steps whose samples have no image plan as
    /// before. Errors: `InvalidArgument` for an image of 0 patches, `TooLarge`
    /// for a sample above `BRS_MAX_SAMPLE_PATCHES`, both keeping the loads
    /// the sampler had; then the sampler is validated with the new loads,
    /// and on `InvalidArgument` (not one entry per sample) or
    /// `SampleTooLong` (a sample's patches above max_encoder_tokens) it is
    /// left without loads, planning text only. The lists are copied.
    pub fn set_encoder_loads<I: AsRef<[u32]>>(&mut self, images: &[I]) -> Result<()> {
        let (patches, offsets) = image_table(images);
        // SAFETY: live handle; both arrays are valid for the reads the
        // offsets describe and are copied; &mut self keeps this call alone.
        self.check(unsafe {
            sys::brs_sampler_set_encoder_loads(
                self.raw(),
                patches.as_ptr(),
                offsets.as_ptr(),
                images.len(),
            )
        })?;
        // The library cannot hand the previous loads back, so a set that
        // does not validate falls back to none: a sampler that always plans.
        // SAFETY: live handle; &mut self keeps this call alone.
        if let Err(error) = self.check(unsafe { sys::brs_sampler_validate(self.raw()) }) {
            self.clear_encoder_loads();
            return Err(error);
        }
        Ok(())
    }

    /// Removes the encoder loads: every step plans by its text alone.
    pub fn clear_encoder_loads(&mut self) {
        // SAFETY: live handle; n = 0 with NULL arrays clears and cannot fail.
        let status = unsafe { sys::brs_sampler_set_encoder_loads(self.raw(), null(), null(), 0) };
        assert_eq!(status, sys::BRS_OK, "libbrs cannot clear the encoder loads");
    }

    /// Sample `index`'s images: their count and their patches summed; (0, 0)
    /// without encoder loads. `OutOfRange` past the last sample of the loads.
    pub fn encoder_load(&self, index: u64) -> Result<(u64, u64)> {
        let (mut images, mut patches) = (0, 0);
        // SAFETY: live handle, valid out-parameters; a read-only call.
        self.check(unsafe {
            sys::brs_sampler_encoder_load(&mut images, &mut patches, self.raw(), index)
        })?;
        Ok((images, patches))
    }

    /// The distinct shapes this rank runs in `epoch`, as (batch size, padded
    /// length) sorted by size, then length, found by planning every step
    /// before training, so that they can be warmed or captured (CUDA
    /// graphs, compilers) once. The padded length is the micro-batch's as
    /// its collator pads it (pad_to_multiple_of, the length buckets); in
    /// packed mode the padded total of its one row. Errors: those of
    /// planning any step of the epoch, the message naming it.
    pub fn shapes(&self, epoch: u64) -> Result<Vec<(u64, u64)>> {
        let mut count = 0;
        // SAFETY: live handle; NULL with capacity 0 asks for the count only.
        self.check(unsafe {
            sys::brs_sampler_shapes(null_mut(), &mut count, self.raw(), epoch, 0)
        })?;
        let mut pairs = vec![0u64; 2 * count];
        // SAFETY: `pairs` has room for `count` pairs; the count is rewritten.
        self.check(unsafe {
            sys::brs_sampler_shapes(pairs.as_mut_ptr(), &mut count, self.raw(), epoch, count)
        })?;
        pairs.truncate(2 * count);
        Ok(pairs
            .chunks_exact(2)
            .map(|pair| (pair[0], pair[1]))
            .collect())
    }

    /// The shape vocabulary of the run (`max_shapes` > 0): the at most
    /// max_shapes pairs (batch size, padded length) that every micro-batch of
    /// every rank in every epoch has, sorted by size, then length; chosen
    /// once from the lengths and the configuration, so that they can be
    /// warmed before step 0. Empty when max_shapes is 0. In packed mode the
    /// pairs are (1, padded row total). Errors: `CapInfeasible` when
    /// max_shapes is below the shapes every step needs (the message names the
    /// least that works), `Unsupported` with images or in packed mode without
    /// max_tokens, otherwise those of planning.
    pub fn shape_vocabulary(&self) -> Result<Vec<(u64, u64)>> {
        let mut count = 0;
        // SAFETY: live handle; NULL with capacity 0 asks for the count only.
        self.check(unsafe {
            sys::brs_sampler_shape_vocabulary(null_mut(), &mut count, self.raw(), 0)
        })?;
        let mut pairs = vec![0u64; 2 * count];
        // SAFETY: `pairs` has room for `count` pairs; the count is rewritten.
        self.check(unsafe {
            sys::brs_sampler_shape_vocabulary(pairs.as_mut_ptr(), &mut count, self.raw(), count)
        })?;
        pairs.truncate(2 * count);
        Ok(pairs
            .chunks_exact(2)
            .map(|pair| (pair[0], pair[1]))
            .collect())
    }

    /// One step of `lengths` alone (an RL batch, a window of a stream),
    /// planned with this sampler's dp_size, grad_accum, cost model, cap,
    /// packed mode, sync model and strategy: the plan the one step of an
    /// epoch of those lengths with shuffle off would get. Its indices are
    /// positions into `lengths`; this sampler's own lengths, batch size,
    /// seed and epoch play no part.
    pub fn plan_batch(&self, lengths: &[u32]) -> Result<Plan> {
        let mut plan = Plan::empty()?;
        plan.compute_batch(self, lengths, None)?;
        Ok(plan)
    }

    /// [`Sampler::plan_batch`] for a batch whose samples carry images:
    /// `images[i]` lists the patch counts of sample i's images, as
    /// [`Sampler::set_encoder_loads`] takes them, one entry per length. They
    /// are priced and capped with this sampler's encoder options
    /// (`encoder_alpha`, `encoder_intercept`, `max_encoder_tokens`); its own
    /// encoder loads play no part. Errors: those of `plan_batch`;
    /// `InvalidArgument` for an entry count other than the lengths' or an
    /// image of 0 patches; `SampleTooLong` for a sample whose patches exceed
    /// max_encoder_tokens.
    pub fn plan_batch_with_images<I: AsRef<[u32]>>(
        &self,
        lengths: &[u32],
        images: &[I],
    ) -> Result<Plan> {
        if images.len() != lengths.len() {
            let detail = format!(
                "{} image lists for {} lengths: give one per sample, empty for none",
                images.len(),
                lengths.len()
            );
            return Err(Error::new(ErrorCode::InvalidArgument, &detail));
        }
        let (patches, offsets) = image_table(images);
        let mut plan = Plan::empty()?;
        plan.compute_batch(self, lengths, Some((&patches, &offsets)))?;
        Ok(plan)
    }

    /// Step `step` of the current epoch, for every rank.
    pub fn plan(&self, step: u64) -> Result<Plan> {
        self.plan_at(self.epoch, step)
    }

    /// Step `step` of any epoch, for every rank (plans are random access).
    pub fn plan_at(&self, epoch: u64, step: u64) -> Result<Plan> {
        let mut plan = Plan::empty()?;
        plan.compute(self, epoch, step)?;
        Ok(plan)
    }

    /// This rank's micro-batches of the current epoch, in training order:
    /// steps_per_epoch * grad_accum index lists.
    pub fn micro_batches(&self) -> Result<MicroBatches<'_>> {
        MicroBatches::new(self)
    }

    pub fn per_device_batch_size(&self) -> u64 {
        self.int_option(sys::BRS_OPT_BATCH_SIZE)
    }

    pub fn grad_accum(&self) -> u64 {
        self.int_option(sys::BRS_OPT_GRAD_ACCUM)
    }

    pub fn dp_size(&self) -> u64 {
        self.int_option(sys::BRS_OPT_DP_SIZE)
    }

    pub fn rank(&self) -> u64 {
        self.int_option(sys::BRS_OPT_RANK)
    }

    pub fn seed(&self) -> u64 {
        self.int_option(sys::BRS_OPT_SEED)
    }

    pub fn shuffle(&self) -> bool {
        self.int_option(sys::BRS_OPT_SHUFFLE) != 0
    }

    pub fn drop_last(&self) -> bool {
        self.int_option(sys::BRS_OPT_DROP_LAST) != 0
    }

    /// The cap on tokens per micro-batch, None when there is none.
    pub fn max_tokens(&self) -> Option<u64> {
        Some(self.int_option(sys::BRS_OPT_MAX_TOKENS)).filter(|&cap| cap != 0)
    }

    pub fn packed(&self) -> bool {
        self.int_option(sys::BRS_OPT_PACKED) != 0
    }

    /// The multiple a micro-batch's padded length is rounded up to (1: none).
    pub fn pad_to_multiple_of(&self) -> u64 {
        self.int_option(sys::BRS_OPT_PAD_TO_MULTIPLE_OF)
    }

    /// alpha as the library resolved it (to 1e-6).
    pub fn alpha(&self) -> f64 {
        self.double_option(sys::BRS_OPT_ALPHA)
    }

    /// The intercept as the library resolved it (to 1e-6).
    pub fn intercept(&self) -> f64 {
        self.double_option(sys::BRS_OPT_INTERCEPT)
    }

    /// The cap on image patches per micro-batch, None when there is none.
    pub fn max_encoder_tokens(&self) -> Option<u64> {
        Some(self.int_option(sys::BRS_OPT_MAX_ENCODER_TOKENS)).filter(|&cap| cap != 0)
    }

    /// encoder_alpha, the quadratic term of an image's cost, as resolved.
    pub fn encoder_alpha(&self) -> f64 {
        self.double_option(sys::BRS_OPT_ENCODER_ALPHA)
    }

    /// encoder_intercept, the fixed cost of one image, as resolved.
    pub fn encoder_intercept(&self) -> f64 {
        self.double_option(sys::BRS_OPT_ENCODER_INTERCEPT)
    }

    /// The value the library holds for the option `name` of its table (a
    /// double as resolved to 1e-6), e.g. `sampler.option("sync")`: any option,
    /// including those without a method here. `Unsupported` for an unknown name.
    pub fn option(&self, name: &str) -> Result<Value> {
        let option = options::option(name).ok_or_else(|| {
            let detail = format!("no option is named {name:?}");
            Error::new(ErrorCode::Unsupported, &detail)
        })?;
        // SAFETY: live handle, valid out-parameters.
        unsafe {
            match option.value {
                OptionValue::Int { .. } => {
                    let mut value = 0i64;
                    self.check(sys::brs_sampler_get_int(&mut value, self.raw(), option.key))?;
                    Ok(Value::Int(i128::from(value)))
                }
                OptionValue::Double { .. } => {
                    let mut value = 0f64;
                    self.check(sys::brs_sampler_get_double(
                        &mut value,
                        self.raw(),
                        option.key,
                    ))?;
                    Ok(Value::Double(value))
                }
            }
        }
    }

    /// Reads an option of this binding's version: the library knows every
    /// one of them (the major version is checked at build, and the loader
    /// refuses a library without this binding's newest version node, now
    /// LIBBRS_1.5), and none is negative.
    fn int_option(&self, key: sys::brs_option) -> u64 {
        let mut value = 0;
        // SAFETY: live handle, valid out-parameter.
        let status = unsafe { sys::brs_sampler_get_int(&mut value, self.raw(), key) };
        assert_eq!(
            status,
            sys::BRS_OK,
            "libbrs does not know integer option {key}"
        );
        value as u64
    }

    fn double_option(&self, key: sys::brs_option) -> f64 {
        let mut value = 0.0;
        // SAFETY: live handle, valid out-parameter.
        let status = unsafe { sys::brs_sampler_get_double(&mut value, self.raw(), key) };
        assert_eq!(
            status,
            sys::BRS_OK,
            "libbrs does not know double option {key}"
        );
        value
    }
}

impl Drop for Sampler<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle is ours and no plan refers to it.
        unsafe { sys::brs_sampler_free(self.raw()) }
    }
}

impl std::fmt::Debug for Sampler<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sampler")
            .field("epoch", &self.epoch)
            .field("per_device_batch_size", &self.per_device_batch_size())
            .field("grad_accum", &self.grad_accum())
            .field("dp_size", &self.dp_size())
            .field("rank", &self.rank())
            .field("seed", &self.seed())
            .field("shuffle", &self.shuffle())
            .field("drop_last", &self.drop_last())
            .field("max_tokens", &self.max_tokens())
            .field("packed", &self.packed())
            .field("pad_to_multiple_of", &self.pad_to_multiple_of())
            .field("length_buckets", &self.length_buckets())
            .field("alpha", &self.alpha())
            .field("intercept", &self.intercept())
            .field("max_encoder_tokens", &self.max_encoder_tokens())
            .finish()
    }
}

/// Per-sample image lists laid out as the library takes them: every patch
/// count in order, and n + 1 offsets, sample i's at [offsets[i], offsets[i+1]).
fn image_table<I: AsRef<[u32]>>(images: &[I]) -> (Vec<u32>, Vec<u64>) {
    let mut patches = Vec::new();
    let mut offsets = Vec::with_capacity(images.len() + 1);
    offsets.push(0u64);
    for sample in images {
        patches.extend_from_slice(sample.as_ref());
        offsets.push(patches.len() as u64);
    }
    (patches, offsets)
}
