/* plan_command.h - `brs plan`: the plan as JSON lines, one per micro-batch. */
#ifndef BRS_CLI_PLAN_COMMAND_H
#define BRS_CLI_PLAN_COMMAND_H

/* args: the arguments after "plan". Returns the exit status. */
int plan_command(int count, char **args);

#endif
