/*
 * demo_dataset.h - the real dataset embedded in `brs`, generated at build
 * time by embed_lengths.py from a file of data/ (see cli/meson.build).
 */
#ifndef BRS_CLI_DEMO_DATASET_H
#define BRS_CLI_DEMO_DATASET_H

#include <stddef.h>
#include <stdint.h>

extern const char demo_dataset_name[]; /* the file it came from, e.g. "jargon.lengths" */
extern const char demo_dataset_note[]; /* where the lengths come from, and their licence */
extern const size_t demo_dataset_count;
extern const uint32_t demo_dataset_lengths[];

#endif
