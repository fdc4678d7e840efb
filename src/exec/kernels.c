/* exec: kernels (being written). */
#include "exec/exec.h"
