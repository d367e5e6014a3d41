/*
 * cli.h - the headers of the input files' reading (input.c, over libbrs's
 * readers) and of the option parser, together: what those files and the
 * fuzz harness of tests/fuzz/cli, which links them, include. The other
 * files of the command include the header of each unit they use.
 */
#ifndef BRS_CLI_H
#define BRS_CLI_H

#include "args.h"
#include "input.h"
#include "output.h"

#endif
