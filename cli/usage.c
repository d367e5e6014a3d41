/* usage.c - help texts; the flags and defaults are those of issue 2. */
#include "usage.h"

#include <brs.h>

#include "demo_dataset.h"
#include "text_wrap.h"

static const char plan_synopsis[] =
    "--lengths FILE [--batch-size P] [--grad-accum G] [--dp-size R]\n"
    "          [--seed S] [--epoch E] [--no-shuffle] [--no-drop-last] [--alpha A]\n"
    "          [--intercept C] [--max-tokens T] [--packed] [--step T] [--rank R]\n";

static const char dataset_options[] =
    "Options:\n"
    "  --lengths FILE    one token count >= 1 per line (line i is sample i-1);\n"
    "                    '-' reads standard input (required)\n"
    "  --batch-size P    average samples per micro-batch (default 8)\n"
    "  --grad-accum G    micro-batches per rank per optimizer step (default 1)\n"
    "  --dp-size R       data-parallel ranks (default 1)\n"
    "  --seed S          shuffle seed (default 0)\n"
    "  --epoch E         the epoch to plan (default 0)\n"
    "  --no-shuffle      take the samples in file order instead of a seeded shuffle\n"
    "  --no-drop-last    keep the incomplete last step (topped up to R*G samples\n"
    "                    from the start of the epoch if shorter)\n"
    "  --alpha A         quadratic (attention) term of the cost (default 0.001)\n"
    "  --intercept C     fixed cost of one micro-batch (default 0)\n"
    "  --max-tokens T    hard cap on the padded tokens (bs*L) of a micro-batch;\n"
    "                    tokens when packed (default: no cap)\n"
    "  --packed          packed mode: no padding; cost = C + sum(L) + A*sum(L^2)\n"
    "  --step T          only step T of the epoch (default: every step)\n"
    "  --rank R          only rank R (default: every rank)\n"
    "  -h, --help        show this help\n"
    "\n"
    "Cost of a micro-batch of bs samples padded to the longest, L tokens:\n"
    "  C + bs*L + A*bs*L^2; it holds bs*L padded tokens.\n";

static const char exit_status[] =
    "\nExit status: 0 on success; 2 on bad input (one line on standard error that\n"
    "says what to change, nothing on standard output); 1 if the system failed.\n";

void usage_main(FILE *out)
{
    fprintf(out,
            "brs %s - balanced micro-batches for distributed training (libbrs)\n"
            "\n"
            "Usage:\n"
            "  brs plan --lengths FILE [options]     the plan, one JSON line per micro-batch\n"
            "  brs compare --lengths FILE [options]  brs against random and length-grouped\n"
            "                                        batches over one epoch\n"
            "  brs demo                              the comparison on an embedded real dataset\n"
            "  brs <command> --help                  the options of a command\n"
            "  brs --version                         the version of libbrs in use\n",
            brs_version_string());
    fputs(exit_status, out);
}

void usage_plan(FILE *out)
{
    fprintf(out, "Usage: brs plan %s\n", plan_synopsis);
    fputs("Plan one epoch: every step is a seeded random draw of B = P*G*R samples,\n"
          "split into G*R micro-batches of balanced cost (exact min-max) and dealt to\n"
          "(rank, micro-step). Prints one JSON object per micro-batch, in the order\n"
          "step, rank, micro-step:\n"
          "  {\"epoch\":0,\"step\":0,\"rank\":0,\"micro\":0,\"indices\":[...],"
          "\"padded_tokens\":N,\"cost\":X}\n"
          "indices are 0-based line numbers of FILE, longest sample first.\n\n",
          out);
    fputs(dataset_options, out);
    fputs(exit_status, out);
}

void usage_compare(FILE *out)
{
    fprintf(out, "Usage: brs compare %s\n", plan_synopsis);
    fputs("Compare, over one epoch, fixed-size random micro-batches, length-grouped ones\n"
          "(megabatches of 50 x P*G samples sorted longest first, as transformers'\n"
          "LengthGroupedSampler) and brs: peak padded tokens per micro-batch, padding\n"
          "efficiency, total step time when ranks sync every micro-step and when they\n"
          "sync once per step (each also against the proven lower bound), micro-batches\n"
          "over --max-tokens, and the time brs takes to plan a step. --step compares one\n"
          "step only; --rank is checked but every rank is compared.\n\n",
          out);
    fputs(dataset_options, out);
    fputs(exit_status, out);
}

void usage_demo(FILE *out)
{
    fprintf(out,
            "Usage: brs demo\n"
            "Run `brs compare` on a real dataset embedded in brs, at dp 8 x grad-accum 2 x\n"
            "batch 8 with the default cost model, and say in plain words what brs saved.\n"
            "\n"
            "Dataset: %s (%zu samples).\n",
            demo_dataset_name, demo_dataset_count);
    text_wrap_print(out, demo_dataset_note, 80);
    fputs(exit_status, out);
}
