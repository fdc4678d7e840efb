/* exec: xtensor (being written). */
#include "exec/exec.h"
