/* `hogtrain topo`: the machine summary and a binding plan. */
#ifndef HOG_CLI_TOPO_H
#define HOG_CLI_TOPO_H

/* argv[0] is the subcommand's name ("topo"). Returns the exit status:
 * 0 success, 1 runtime error, 2 usage error. */
int hog_cli_topo(int argc, char **argv);

#endif
