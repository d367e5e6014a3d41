/* main.c - `brs`: dispatch to the command named by the first argument. */
#include "commands.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <brs.h>

#include "output.h"
#include "usage.h"

/* `brs`: dispatch to the command named by the first argument. */

typedef struct command {
    const char *name;
    int (*run)(int count, char **args);
} command;

static const command commands[] = {
    {"plan", plan_command},
    {"compare", compare_command},
    {"demo", demo_command},
};

/* Commands of the Python package that a user may look for here, since
 * `python -m brs` passes plan, compare and demo on to this program: the
 * PYTHON_COMMANDS of bindings/python/brs/_cli.py (tests/cli/test_cli.py
 * holds the two lists together). */
static const struct {
    const char *name;
    const char *what;
} python_commands[] = {
    {"report", "brs compare's table and a figure"},
    {"calibrate", "time a torch model and write its cost model"},
    {"trial", "will brs pay on my setup? an A/B on your own model and lengths"},
};
#define PYTHON_COMMAND_COUNT (sizeof python_commands / sizeof python_commands[0])

/* Help and version text go to standard output too: a write error there
 * (a full disk, a closed pipe) must not end in exit status 0. */
static int finish(int status)
{
    if (fflush(stdout) != 0 || ferror(stdout))
        cli_failure("could not write to standard output: %s", strerror(errno));
    return status;
}

int main(int argc, char **argv)
{
    if (argc < 2) cli_bad_input("missing command: plan, compare or demo (see brs --help)");
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        usage_main(stdout);
        return finish(CLI_EXIT_OK);
    }
    if (strcmp(name, "--version") == 0) {
        printf("brs %s\n", brs_version_string());
        return finish(CLI_EXIT_OK);
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i].name) == 0) {
            cli_set_command(commands[i].name);
            return finish(commands[i].run(argc - 2, argv + 2));
        }
    for (size_t i = 0; i < PYTHON_COMMAND_COUNT; i++)
        if (strcmp(name, python_commands[i].name) == 0)
            cli_bad_input("'%s' is a command of the Python package brs, not of this program: "
                          "run python -m brs %s (%s)",
                          name, name, python_commands[i].what);
    cli_bad_input("unknown command '%s': use plan, compare or demo, or python -m brs for "
                  "its own commands (see brs --help)",
                  name);
}
