/* front: the walker (being written). */
#include "front/front_private.h"
