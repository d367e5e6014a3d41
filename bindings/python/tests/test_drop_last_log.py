"""drop_last=True (the library's default) says once, on the "brs" logger, how many samples each
epoch drops; drop_last=False and a dataset of whole steps say nothing."""

import logging

from brs import BatchRebalanceSampler

LENGTHS = [10 + i % 37 for i in range(250)]  # 250 = 20 steps of 12, and 10 left


def sampler(**options):
    return BatchRebalanceSampler(LENGTHS, **{"per_device_batch_size": 3, "grad_accum": 2,
                                             "dp_size": 2, "rank": 0, **options})


def warnings_of(caplog):
    return [record for record in caplog.records
            if record.name == "brs" and record.levelno == logging.WARNING]


def test_dropped_samples_are_logged_once_with_their_count(caplog):
    dropping = sampler()
    assert dropping.drop_last  # the library's default
    with caplog.at_level(logging.WARNING, logger="brs"):
        list(dropping)
        dropping.set_epoch(1)
        list(dropping)
    logged = warnings_of(caplog)
    assert len(logged) == 1
    assert "drops 10 of 250 samples each epoch" in logged[0].getMessage()
    assert "drop_last=False" in logged[0].getMessage()


def test_nothing_dropped_nothing_logged(caplog):
    with caplog.at_level(logging.WARNING, logger="brs"):
        list(sampler(drop_last=False))
        list(BatchRebalanceSampler(LENGTHS[:240], per_device_batch_size=3, grad_accum=2,
                                   dp_size=2, rank=0))
        list(sampler(rank=1))  # one rank says it for the job
    assert warnings_of(caplog) == []
