/* shapeguard: a symbolic shape and guard engine. The umbrella header.
 * <shapeguard/flint.h> (FLINT access) is not included here: include it
 * yourself when you need it. */
#ifndef SHAPEGUARD_H
#define SHAPEGUARD_H

#include <shapeguard/common.h>
#include <shapeguard/expr.h>
#include <shapeguard/parse.h>
#include <shapeguard/print.h>
#include <shapeguard/range.h>
#include <shapeguard/reason.h>
#include <shapeguard/env.h>
#include <shapeguard/source.h>
#include <shapeguard/guard.h>
#include <shapeguard/graph.h>
#include <shapeguard/hop.h>
#include <shapeguard/exec.h>
#include <shapeguard/aot.h>
#include <shapeguard/front.h>

#endif /* SHAPEGUARD_H */
