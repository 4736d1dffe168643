/* `bsrmv bridge`: the suspension-bridge structural analysis (bridge.c). */
#ifndef BSRMV_TOOLS_BRIDGE_H
#define BSRMV_TOOLS_BRIDGE_H

/* argv holds the arguments after "bridge"; returns the exit status. */
int bridge_main(int argc, char **argv);

#endif
