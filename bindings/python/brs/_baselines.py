"""The samplers brs is compared with, exactly as the C CLI's `brs compare` builds them.

Both read an epoch order in fixed-size micro-batches of P samples:
  - random: a seeded Fisher-Yates shuffle (SplitMix64 keyed by seed and epoch), as torch's
    RandomSampler / DistributedSampler would draw;
  - length-grouped: transformers' LengthGroupedSampler: the shuffle cut into megabatches of
    mult x (P * G) samples, mult = min(N // (4 * P * G), 50) but at least 1, each sorted longest
    first, the megabatch with the longest head swapped to the front.
Consecutive micro-batches go to the ranks in turn (as accelerate shards a batch sampler), so
step t reads order[t*B : (t+1)*B]. The order is this module's own, not libbrs's permutation,
and no global random generator is used.
"""

from typing import List, NamedTuple

_MASK = (1 << 64) - 1


class Slot(NamedTuple):
    """What one micro-batch weighs."""

    padded_tokens: int
    real_tokens: int
    cost: float


class CostModel(NamedTuple):
    alpha: float
    intercept: float
    packed: bool

    def measure(self, lengths, indices):
        chosen = [lengths[i] for i in indices]
        tokens = sum(chosen)
        if self.packed:
            squares = float(sum(length * length for length in chosen))
            return Slot(tokens, tokens, self.intercept + float(tokens) + self.alpha * squares)
        longest = max(chosen)
        padded = len(chosen) * longest
        cost = self.intercept + float(padded) + self.alpha * float(padded) * float(longest)
        return Slot(padded, tokens, cost)


def _splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & _MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return state, z ^ (z >> 31)


def random_order(n, seed, epoch, shuffle=True):
    order = list(range(n))
    if not shuffle:
        return order
    # Seed and epoch are mixed separately: seed + epoch would make (0, 1) and (1, 0) equal.
    _, a = _splitmix64(seed & _MASK)
    _, b = _splitmix64((epoch ^ 0xD1B54A32D192ED03) & _MASK)
    state = a ^ b
    for i in range(n, 1, -1):
        threshold = ((1 << 64) - i) % i  # rejection keeps the draw free of modulo bias
        while True:
            state, value = _splitmix64(state)
            if value >= threshold:
                break
        j = value % i
        order[i - 1], order[j] = order[j], order[i - 1]
    return order


def megabatch_size(n, batch_size, grad_accum):
    batch = batch_size * grad_accum
    return max(1, min(n // (4 * batch), 50)) * batch


def length_grouped_order(lengths, batch_size, grad_accum, seed, epoch, shuffle=True):
    order = random_order(len(lengths), seed, epoch, shuffle)
    size = megabatch_size(len(lengths), batch_size, grad_accum)
    longest_head = 0
    for start in range(0, len(order), size):
        # sorted() is stable: ties keep their shuffled order, as in transformers.
        order[start:start + size] = sorted(order[start:start + size], key=lambda i: -lengths[i])
        if lengths[order[start]] > lengths[order[longest_head]]:
            longest_head = start
    order[0], order[longest_head] = order[longest_head], order[0]
    return order


def step_slots(order, lengths, step, batch_size, grad_accum, dp_size, model) -> List[List[Slot]]:
    """slots[rank][micro] of `step` when reading `order` in fixed-size micro-batches.

    A kept last step with fewer than B samples is split as evenly as possible and topped up to
    K samples from the start of the order (libbrs's drop_last=False rule).
    """
    n, k = len(order), dp_size * grad_accum
    start = step * batch_size * k
    samples = max(min(n - start, batch_size * k), k)
    slots = [[None] * grad_accum for _ in range(dp_size)]
    for c in range(k):
        begin, end = c * samples // k, (c + 1) * samples // k
        chunk = [order[(start + p) % n] for p in range(begin, end)]
        slots[c % dp_size][c // dp_size] = model.measure(lengths, chunk)
    return slots
