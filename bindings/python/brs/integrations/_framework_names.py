"""The library's messages in a framework's own terms: an integration builds its sampler from the
framework's arguments, so a bad one is named as the user wrote it (the Trainer's
per_device_train_batch_size, not the library's batch_size)."""

import contextlib
import re

# The library's words for the Trainer's TrainingArguments (and the job's world size).
TRAINER = (
    ("per_device_batch_size (the library's batch_size): batch_size",
     "TrainingArguments.per_device_train_batch_size"),
    ("per_device_batch_size", "per_device_train_batch_size"),
    ("grad_accum", "gradient_accumulation_steps"),
    ("batch_size", "per_device_train_batch_size"),
    ("dp_size", "the world size"),
    ("drop_last", "dataloader_drop_last"),
)

# accelerate's: the user builds the sampler (its keywords are theirs); the job around it is the
# Accelerator's, whose gradient_accumulation_steps prepare_dataloader holds equal to grad_accum.
ACCELERATE = (
    ("raise grad_accum", "raise grad_accum and Accelerator's gradient_accumulation_steps"),
    ("dp_size", "processes"),
    ("lower batch_size", "lower per_device_batch_size"),
)

# Lightning's: the Trainer's accumulate_grad_batches, which RebalanceCallback has checked equal
# to the sampler's grad_accum, and its devices x num_nodes data-parallel ranks.
LIGHTNING = (
    ("grad_accum", "accumulate_grad_batches"),
    ("dp_size", "devices x num_nodes"),
    ("lower batch_size", "lower per_device_batch_size"),
)

_SHORT = 300  # characters: past this, a message loses its asides in parentheses
_LONGEST = 400  # characters: a message is a sentence or two, never the data


def rename(message, names):
    """``message`` with each library name replaced by the framework's (whole words only)."""
    for ours, theirs in names:
        pattern = re.escape(ours) if not ours.isidentifier() else rf"(?<![\w.]){ours}\b"
        message = re.sub(pattern, theirs, message)
    return message


def _short(message):
    """Past _SHORT characters, the status's general words at the end go first (the sentence
    before them says what to change), then asides in parentheses from the last; past
    _LONGEST, the tail."""
    aside = r" \([^()]*(\([^()]*\)[^()]*)*\)"
    if len(message) > _SHORT:
        message = re.sub(aside + "$", "", message)
    while len(message) > _SHORT:
        asides = list(re.finditer(aside, message))
        if not asides:
            break
        message = message[:asides[-1].start()] + message[asides[-1].end():]
    return message if len(message) <= _LONGEST else message[:_LONGEST - 3] + "..."


@contextlib.contextmanager
def in_terms_of(names, who):
    """Re-raises a ValueError or TypeError of the block in the framework's names, prefixed by
    ``who`` ("BatchRebalanceTrainer")."""
    try:
        yield
    except (ValueError, TypeError) as exc:
        raise type(exc)(_short(f"{who}: {rename(str(exc), names)}")) from None
