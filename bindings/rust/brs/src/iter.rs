//! MicroBatches: this rank's micro-batches of one epoch, in training order.

use crate::error::Result;
use crate::plan::Plan;
use crate::sampler::Sampler;

/// Yields, for step 0, 1, ... of the sampler's epoch, this rank's
/// micro-batch of micro-step 0 .. grad_accum-1, as dataset indices.
///
/// Item `i` is the micro-batch at position `i`, or the error that kept its
/// step from being planned (e.g. [`crate::ErrorCode::CapInfeasible`]):
/// steps are planned independently, so one step's error does not end the
/// epoch, and the iterator always yields exactly
/// `micro_batches_per_epoch()` items. `nth`/`skip` jump without planning
/// the skipped steps, which makes resuming at a saved position O(1).
pub struct MicroBatches<'s> {
    sampler: &'s Sampler<'s>,
    epoch: u64,
    rank: u64,
    grad_accum: u64,
    position: u64,
    end: u64,
    plan: Plan,
    /// The step `plan` holds, and how computing it went.
    planned: Option<(u64, Result<()>)>,
}

impl<'s> MicroBatches<'s> {
    pub(crate) fn new(sampler: &'s Sampler<'s>) -> Result<MicroBatches<'s>> {
        Ok(MicroBatches {
            sampler,
            epoch: sampler.epoch(),
            rank: sampler.rank(),
            grad_accum: sampler.grad_accum(),
            position: 0,
            end: sampler.micro_batches_per_epoch()?,
            plan: Plan::empty()?,
            planned: None,
        })
    }

    /// The position of the next item: what to save to resume there.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Plans `step` into the reused handle unless it already holds it.
    fn plan_step(&mut self, step: u64) -> Result<()> {
        if !matches!(&self.planned, Some((held, _)) if *held == step) {
            let outcome = self.plan.compute(self.sampler, self.epoch, step);
            self.planned = Some((step, outcome));
        }
        self.planned.as_ref().unwrap().1.clone()
    }
}

impl Iterator for MicroBatches<'_> {
    type Item = Result<Vec<u64>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.position >= self.end {
            return None;
        }
        let (step, micro) = (
            self.position / self.grad_accum,
            self.position % self.grad_accum,
        );
        self.position += 1;
        let batch = self
            .plan_step(step)
            .and_then(|()| self.plan.micro_batch(self.rank, micro))
            .map(<[u64]>::to_vec);
        Some(batch)
    }

    fn nth(&mut self, n: usize) -> Option<Self::Item> {
        self.position = self.position.saturating_add(n as u64).min(self.end);
        self.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::try_from(self.end - self.position).unwrap_or(usize::MAX);
        (left, Some(left))
    }
}

impl ExactSizeIterator for MicroBatches<'_> {}
impl std::iter::FusedIterator for MicroBatches<'_> {}
