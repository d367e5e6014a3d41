/* commands.h - the commands of `brs`, which main.c dispatches to: each
 * takes the arguments after its name and returns the exit status. */
#ifndef BRS_CLI_COMMANDS_H
#define BRS_CLI_COMMANDS_H

/* cmd_plan.c: `brs plan`: the plan as JSON lines, one per micro-batch. */
int plan_command(int count, char **args);

/* cmd_compare.c: `brs compare`: brs against random and length-grouped
 * batches over one epoch, as a table. */
int compare_command(int count, char **args);

/* cmd_demo.c: `brs demo`: compare on an embedded real dataset and say in
 * plain words what brs saved (takes only --help). */
int demo_command(int count, char **args);

#endif
