/* demo_command.h - `brs demo`: compare on an embedded real dataset and say
 * in plain words what brs saved. */
#ifndef BRS_CLI_DEMO_COMMAND_H
#define BRS_CLI_DEMO_COMMAND_H

/* args: the arguments after "demo" (only --help). Returns the exit status. */
int demo_command(int count, char **args);

#endif
