/* The headers cmocka needs, in the order it needs them. */
#ifndef SG_CMOCKA_ALL_H
#define SG_CMOCKA_ALL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#endif /* SG_CMOCKA_ALL_H */
