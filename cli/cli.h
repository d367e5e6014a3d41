/*
 * cli.h - the headers of the readers of input files (input.c, json.c) and
 * of the option parser, together: what those files and the fuzz harnesses
 * of tests/fuzz/cli, which link them, include. The other files of the
 * command include the header of each unit they use.
 */
#ifndef BRS_CLI_H
#define BRS_CLI_H

#include "args.h"
#include "input.h"
#include "json.h"
#include "output.h"

#endif
