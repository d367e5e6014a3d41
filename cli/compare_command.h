/* compare_command.h - `brs compare`: brs against random and length-grouped
 * batches over one epoch, as a table. */
#ifndef BRS_CLI_COMPARE_COMMAND_H
#define BRS_CLI_COMPARE_COMMAND_H

/* args: the arguments after "compare". Returns the exit status. */
int compare_command(int count, char **args);

#endif
