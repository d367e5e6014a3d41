//! Plan: one optimizer step for every rank, owned by a brs_plan handle.

use crate::error::{check, owned, Error, ErrorCode, Result};
use crate::sampler::Sampler;
use brs_sys as sys;
use std::ptr::{null, null_mut, NonNull};

/// One optimizer step of one epoch: the micro-batch of every
/// (rank, micro-step) slot with its statistics. A `Plan` returned by
/// [`Sampler::plan`] always holds a computed step; it keeps no reference to
/// the sampler.
pub struct Plan {
    raw: NonNull<sys::brs_plan>,
}

// SAFETY: a plan owns its buffers and keeps no reference to the sampler, and
// brs_plan_free may run on any thread: moving a plan is sound.
//
// Not Sync: the C queries on one plan may run concurrently, but the detail
// message of a failed query (read into Error) is valid only until the next
// call on the handle, so two threads could not each read their own.
unsafe impl Send for Plan {}

/// A context-parallel micro-batch of one rank (since 1.6): the dataset
/// indices its group shares, the group's first global rank and its degree
/// (the group is ranks `first_rank .. first_rank + degree`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpMicroBatch<'a> {
    pub indices: &'a [u64],
    pub first_rank: u64,
    pub degree: u64,
}

/// The statistics of a whole step (brs.h: BRS_PLAN_*), in tokens and cost units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlanStats {
    pub epoch: u64,
    pub step: u64,
    /// Samples in this step: B, or fewer in a kept last step.
    pub num_samples: u64,
    pub dp_size: u64,
    pub grad_accum: u64,
    /// Sum over micro-batches of bs * longest (of tokens when packed).
    pub total_padded_tokens: u64,
    /// Sum of the real tokens of the step.
    pub total_real_tokens: u64,
    /// The largest padded-token count of one micro-batch: the memory peak.
    pub max_padded_tokens: u64,
    /// The largest micro-batch cost: the exact minimum in padded mode.
    pub max_cost: f64,
    /// A proven lower bound on max_cost.
    pub lower_bound: f64,
    pub total_cost: f64,
    /// Sum over micro-steps of the largest cost among ranks (FSDP-style sync).
    pub micro_sync_time: f64,
    /// The largest per-rank sum of costs (DDP with no_sync during accumulation).
    pub step_sync_time: f64,
    /// A proven lower bound on both sync times.
    pub time_lower_bound: f64,
    /// Sum over micro-batches of the image patches (the encoder's tokens);
    /// 0 without encoder loads, as are the next two.
    pub total_encoder_tokens: u64,
    /// The largest image-patch count of one micro-batch: the encoder's memory peak.
    pub max_encoder_tokens: u64,
    /// The images' share of total_cost.
    pub encoder_cost: f64,
    /// The step time of the sync model (micro_sync_time or step_sync_time).
    pub step_time: f64,
    /// The ranks' time spent on useful work (the samples' cost unpadded):
    /// useful_time + padding_time + waiting_time = ranks x step_time.
    pub useful_time: f64,
    /// The ranks' time spent on padding.
    pub padding_time: f64,
    /// The ranks' time spent waiting at the synchronisation.
    pub waiting_time: f64,
}

/// The statistics of one micro-batch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MicroBatchStats {
    /// bs * longest (tokens when packed).
    pub padded_tokens: u64,
    pub real_tokens: u64,
    pub cost: f64,
}

/// The vision-encoder side of one micro-batch; all 0 without encoder loads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MicroBatchEncoder {
    /// The image patches of its samples: the encoder's tokens.
    pub encoder_tokens: u64,
    pub images: u64,
    /// The images' cost, part of [`MicroBatchStats::cost`].
    pub encoder_cost: f64,
}

impl Plan {
    /// A plan handle that holds no step yet.
    pub(crate) fn empty() -> Result<Plan> {
        let mut raw = null_mut();
        // SAFETY: raw is a valid out-parameter.
        check(unsafe { sys::brs_plan_new(&mut raw) }, String::new)?;
        let raw = NonNull::new(raw).ok_or_else(|| Error::new(ErrorCode::NoMemory, ""))?;
        Ok(Plan { raw })
    }

    /// Plans (epoch, step) into this handle, replacing what it held; on error
    /// it holds no step. &mut self: no slice of the old step survives this.
    pub(crate) fn compute(&mut self, sampler: &Sampler<'_>, epoch: u64, step: u64) -> Result<()> {
        // SAFETY: both handles are live; the sampler is only read.
        let status = unsafe { sys::brs_plan_compute(self.raw(), sampler.raw(), epoch, step) };
        self.check(status)
    }

    /// Plans one step of `lengths` alone with the sampler's configuration
    /// (brs_plan_compute_batch), with the samples' images as (patches,
    /// offsets) when given (brs_plan_compute_batch_images): indices are
    /// positions into `lengths`. The offsets have lengths.len() + 1 entries.
    pub(crate) fn compute_batch(
        &mut self,
        config: &Sampler<'_>,
        lengths: &[u32],
        images: Option<(&[u32], &[u64])>,
    ) -> Result<()> {
        // SAFETY: both handles are live; the arrays are read during the call
        // only, the offsets (one more than the lengths) within the patches.
        let status = unsafe {
            match images {
                None => sys::brs_plan_compute_batch(
                    self.raw(),
                    config.raw(),
                    lengths.as_ptr(),
                    lengths.len(),
                ),
                Some((patches, offsets)) => {
                    debug_assert_eq!(offsets.len(), lengths.len() + 1);
                    sys::brs_plan_compute_batch_images(
                        self.raw(),
                        config.raw(),
                        lengths.as_ptr(),
                        patches.as_ptr(),
                        offsets.as_ptr(),
                        lengths.len(),
                    )
                }
            }
        };
        self.check(status)
    }

    fn raw(&self) -> *mut sys::brs_plan {
        self.raw.as_ptr()
    }

    fn check(&self, status: sys::brs_status) -> Result<()> {
        // SAFETY: the handle is live; the message is copied at once.
        check(status, || unsafe {
            owned(sys::brs_plan_last_error(self.raw()))
        })
    }

    pub fn epoch(&self) -> u64 {
        self.int_query(sys::BRS_PLAN_EPOCH)
    }

    pub fn step(&self) -> u64 {
        self.int_query(sys::BRS_PLAN_STEP)
    }

    pub fn dp_size(&self) -> u64 {
        self.int_query(sys::BRS_PLAN_DP_SIZE)
    }

    pub fn grad_accum(&self) -> u64 {
        self.int_query(sys::BRS_PLAN_GRAD_ACCUM)
    }

    /// The dataset indices of the micro-batch of `rank` at micro-step `micro`,
    /// longest sample first; never empty. The slice lives in the plan:
    ///
    /// ```compile_fail,E0505
    /// let sampler = brs::Sampler::builder().build(&[5; 16]).unwrap();
    /// let plan = sampler.plan(0).unwrap();
    /// let indices = plan.micro_batch(0, 0).unwrap();
    /// drop(plan);
    /// println!("{indices:?}");
    /// ```
    pub fn micro_batch(&self, rank: u64, micro: u64) -> Result<&[u64]> {
        let (rank, micro) = slot(rank, micro)?;
        let (mut indices, mut count) = (null(), 0);
        // SAFETY: live handle, valid out-parameters.
        let status =
            unsafe { sys::brs_plan_micro_batch(&mut indices, &mut count, self.raw(), rank, micro) };
        self.check(status)?;
        // SAFETY: libbrs hands out `count` (>= 1) indices owned by the plan,
        // valid until the next compute or free, both of which need &mut self
        // or ownership, so the borrow of self keeps the slice valid.
        Ok(unsafe { std::slice::from_raw_parts(indices, count) })
    }

    /// The padded tokens, real tokens and cost of one micro-batch.
    pub fn micro_batch_stats(&self, rank: u64, micro: u64) -> Result<MicroBatchStats> {
        let (rank, micro) = slot(rank, micro)?;
        let mut stats = MicroBatchStats {
            padded_tokens: 0,
            real_tokens: 0,
            cost: 0.0,
        };
        // SAFETY: live handle, valid out-parameters.
        let status = unsafe {
            sys::brs_plan_micro_batch_stats(
                &mut stats.padded_tokens,
                &mut stats.real_tokens,
                &mut stats.cost,
                self.raw(),
                rank,
                micro,
            )
        };
        self.check(status)?;
        Ok(stats)
    }

    /// The image patches, images and encoder cost of one micro-batch.
    pub fn micro_batch_encoder(&self, rank: u64, micro: u64) -> Result<MicroBatchEncoder> {
        let (rank, micro) = slot(rank, micro)?;
        let mut encoder = MicroBatchEncoder {
            encoder_tokens: 0,
            images: 0,
            encoder_cost: 0.0,
        };
        // SAFETY: live handle, valid out-parameters.
        let status = unsafe {
            sys::brs_plan_micro_batch_encoder(
                &mut encoder.encoder_tokens,
                &mut encoder.images,
                &mut encoder.encoder_cost,
                self.raw(),
                rank,
                micro,
            )
        };
        self.check(status)?;
        Ok(encoder)
    }

    /// The context-parallel micro-batch that global rank `global_rank`
    /// (dp index x cp_size + cp index) runs at micro-step `micro` (since
    /// 1.6): its indices (the same on every rank of its group; empty for a
    /// placeholder), the group's first rank and its degree. Without context
    /// parallelism, the rank's micro-batch at degree 1.
    pub fn cp_micro_batch(&self, global_rank: u64, micro: u64) -> Result<CpMicroBatch<'_>> {
        let (mut indices, mut count, mut first_rank, mut degree) = (null(), 0usize, 0u64, 0u64);
        // SAFETY: live handle, valid out-parameters.
        let status = unsafe {
            sys::brs_plan_cp_micro_batch(
                &mut indices,
                &mut count,
                &mut first_rank,
                &mut degree,
                self.raw(),
                global_rank,
                micro,
            )
        };
        self.check(status)?;
        // SAFETY: `count` indices owned by the plan (a valid pointer when 0),
        // valid while self is borrowed, as in micro_batch.
        let indices = if count == 0 {
            &[][..]
        } else {
            unsafe { std::slice::from_raw_parts(indices, count) }
        };
        Ok(CpMicroBatch {
            indices,
            first_rank,
            degree,
        })
    }

    /// What global rank `global_rank` holds at micro-step `micro` (since
    /// 1.6): its padded tokens, real tokens and its micro-batch's cost.
    pub fn cp_micro_batch_stats(&self, global_rank: u64, micro: u64) -> Result<MicroBatchStats> {
        let mut stats = MicroBatchStats {
            padded_tokens: 0,
            real_tokens: 0,
            cost: 0.0,
        };
        // SAFETY: live handle, valid out-parameters.
        let status = unsafe {
            sys::brs_plan_cp_micro_batch_stats(
                &mut stats.padded_tokens,
                &mut stats.real_tokens,
                &mut stats.cost,
                self.raw(),
                global_rank,
                micro,
            )
        };
        self.check(status)?;
        Ok(stats)
    }

    /// The `(dataset index, start, end)` token ranges global rank
    /// `global_rank` computes at micro-step `micro` (since 1.6): its
    /// head-tail share of each sequence of its micro-batch.
    pub fn cp_token_ranges(&self, global_rank: u64, micro: u64) -> Result<Vec<(u64, u64, u64)>> {
        let mut count = 0usize;
        // SAFETY: live handle; a count-only call (NULL, capacity 0).
        let status = unsafe {
            sys::brs_plan_cp_token_ranges(
                null_mut(),
                &mut count,
                self.raw(),
                global_rank,
                micro,
                0,
            )
        };
        self.check(status)?;
        let mut flat = vec![0u64; 3 * count];
        // SAFETY: room for `count` triples.
        let status = unsafe {
            sys::brs_plan_cp_token_ranges(
                flat.as_mut_ptr(),
                &mut count,
                self.raw(),
                global_rank,
                micro,
                count,
            )
        };
        self.check(status)?;
        Ok(flat.chunks(3).map(|t| (t[0], t[1], t[2])).collect())
    }

    /// The micro-steps every rank runs (grad_accum), with or without context
    /// parallelism (since 1.6).
    pub fn cp_micro_steps(&self) -> Result<u64> {
        let mut count = 0u64;
        // SAFETY: live handle, valid out-parameter.
        let status = unsafe { sys::brs_plan_cp_micro_steps(&mut count, self.raw()) };
        self.check(status)?;
        Ok(count)
    }

    /// Every micro-batch, indexed `[rank][micro]`, copied out of the plan.
    pub fn micro_batches(&self) -> Vec<Vec<Vec<u64>>> {
        let micro_steps = self.grad_accum();
        (0..self.dp_size())
            .map(|rank| {
                (0..micro_steps)
                    .map(|micro| {
                        self.micro_batch(rank, micro)
                            .expect("a slot of the plan")
                            .to_vec()
                    })
                    .collect()
            })
            .collect()
    }

    /// The statistics of the whole step.
    pub fn stats(&self) -> PlanStats {
        PlanStats {
            epoch: self.epoch(),
            step: self.step(),
            num_samples: self.int_query(sys::BRS_PLAN_NUM_SAMPLES),
            dp_size: self.dp_size(),
            grad_accum: self.grad_accum(),
            total_padded_tokens: self.int_query(sys::BRS_PLAN_TOTAL_PADDED_TOKENS),
            total_real_tokens: self.int_query(sys::BRS_PLAN_TOTAL_REAL_TOKENS),
            max_padded_tokens: self.int_query(sys::BRS_PLAN_MAX_PADDED_TOKENS),
            max_cost: self.double_query(sys::BRS_PLAN_MAX_COST),
            lower_bound: self.double_query(sys::BRS_PLAN_LOWER_BOUND),
            total_cost: self.double_query(sys::BRS_PLAN_TOTAL_COST),
            micro_sync_time: self.double_query(sys::BRS_PLAN_MICRO_SYNC_TIME),
            step_sync_time: self.double_query(sys::BRS_PLAN_STEP_SYNC_TIME),
            time_lower_bound: self.double_query(sys::BRS_PLAN_TIME_LOWER_BOUND),
            total_encoder_tokens: self.int_query(sys::BRS_PLAN_TOTAL_ENCODER_TOKENS),
            max_encoder_tokens: self.int_query(sys::BRS_PLAN_MAX_ENCODER_TOKENS),
            encoder_cost: self.double_query(sys::BRS_PLAN_ENCODER_COST),
            step_time: self.double_query(sys::BRS_PLAN_STEP_TIME),
            useful_time: self.double_query(sys::BRS_PLAN_USEFUL_TIME),
            padding_time: self.double_query(sys::BRS_PLAN_PADDING_TIME),
            waiting_time: self.double_query(sys::BRS_PLAN_WAITING_TIME),
        }
    }

    /// Reads a query of a computed plan: a public Plan always holds a step,
    /// and this binding links the 1.5 symbols (so needs a libbrs that knows
    /// every key here), so the query cannot fail unless the library breaks
    /// its contract.
    fn int_query(&self, key: sys::brs_plan_key) -> u64 {
        let mut value = 0;
        // SAFETY: live handle, valid out-parameter.
        let status = unsafe { sys::brs_plan_get_int(&mut value, self.raw(), key) };
        assert_eq!(status, sys::BRS_OK, "libbrs refused plan query {key}");
        value as u64
    }

    fn double_query(&self, key: sys::brs_plan_key) -> f64 {
        let mut value = 0.0;
        // SAFETY: live handle, valid out-parameter.
        let status = unsafe { sys::brs_plan_get_double(&mut value, self.raw(), key) };
        assert_eq!(status, sys::BRS_OK, "libbrs refused plan query {key}");
        value
    }
}

/// The C slot arguments are int64_t; a larger value is out of range.
fn slot(rank: u64, micro: u64) -> Result<(i64, i64)> {
    let out_of_range = |name: &str, value: u64| {
        Error::new(
            ErrorCode::OutOfRange,
            &format!("{name} {value} is larger than {}", i64::MAX),
        )
    };
    let rank = i64::try_from(rank).map_err(|_| out_of_range("rank", rank))?;
    let micro = i64::try_from(micro).map_err(|_| out_of_range("micro-step", micro))?;
    Ok((rank, micro))
}

impl Drop for Plan {
    fn drop(&mut self) {
        // SAFETY: the handle is ours; slices borrowed from it are gone.
        unsafe { sys::brs_plan_free(self.raw()) }
    }
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan")
            .field("stats", &self.stats())
            .finish()
    }
}
