/*
 * shape_tally.h - shape_tally.c: how many distinct tensor shapes each rank
 * runs (each new one can cost a compilation, a cuDNN plan or a CUDA graph
 * capture). A micro-batch's shape is its (batch size, padded tokens): padded tokens are
 * batch size x padded length (the one packed row's padded total when
 * packed), so these pairs are the library's shapes (brs_sampler_shapes).
 */
#ifndef BRS_CLI_SHAPE_TALLY_H
#define BRS_CLI_SHAPE_TALLY_H

#include <stddef.h>
#include <stdint.h>

#include <brs.h>

typedef struct shape_tally {
    uint64_t *entries; /* (rank, size, padded) triples */
    size_t count, capacity;
} shape_tally;

/* Add every micro-batch of a computed plan. */
void shape_tally_add_plan(shape_tally *tally, const brs_plan *plan);

/* The largest number of distinct shapes of one rank; frees the entries. */
uint64_t shape_tally_finish(shape_tally *tally);

#endif
