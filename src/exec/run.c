/* exec: run (being written). */
#include "exec/exec.h"
