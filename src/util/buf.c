/* A growable string buffer. Allocation failures are sticky: the buffer
 * records them and sg__buf_take returns NULL. */
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util_private.h"

static bool buf_reserve(sg__buf *b, size_t extra)
{
    if (b->oom)
        return false;
    if (b->n + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->n + extra + 1)
        cap *= 2;
    char *p = sg__realloc(b->ctx, b->p, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void sg__buf_put(sg__buf *b, const char *s, size_t n)
{
    if (!buf_reserve(b, n))
        return;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

void sg__buf_puts(sg__buf *b, const char *s)
{
    sg__buf_put(b, s, strlen(s));
}

void sg__buf_printf(sg__buf *b, const char *fmt, ...)
{
    va_list ap;
    char small[256];
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        sg__buf_put(b, small, (size_t)n);
        return;
    }
    if (!buf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

void sg__buf_fmpz(sg__buf *b, const fmpz_t v)
{
    if (!COEFF_IS_MPZ(*v)) {
        sg__buf_printf(b, "%ld", (long)*v);
        return;
    }
    size_t n = fmpz_sizeinbase(v, 10) + 2;
    if (!buf_reserve(b, n))
        return;
    fmpz_get_str(b->p + b->n, 10, v);
    b->n += strlen(b->p + b->n);
}

char *sg__buf_take(sg__buf *b)
{
    if (b->oom || !buf_reserve(b, 0)) {
        sg__buf_free(b);
        return NULL;
    }
    b->p[b->n] = '\0'; /* a buffer nothing was put in is "" */
    char *p = b->p;
    b->p = NULL;
    b->n = b->cap = 0;
    return p;
}

void sg__buf_free(sg__buf *b)
{
    sg_free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
    b->oom = false;
}

bool sg__grow(sg_ctx *ctx, void **a, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    if (c > SIZE_MAX / elem)
        return false;
    void *q = sg__realloc(ctx, *a, c * elem);
    if (!q)
        return false;
    *a = q;
    *cap = c;
    return true;
}

char *sg__strdup(sg_ctx *ctx, const char *s)
{
    if (!s)
        s = "";
    size_t n = strlen(s) + 1;
    char *d = sg__malloc(ctx, n);
    return d ? memcpy(d, s, n) : NULL;
}

void sg__buf_pyfloat(sg__buf *b, double v)
{
    if (isnan(v)) {
        sg__buf_puts(b, "nan");
        return;
    }
    if (isinf(v)) {
        sg__buf_puts(b, v < 0 ? "-inf" : "inf");
        return;
    }
    char e[40];
    for (int prec = 0; prec <= 17; prec++) { /* %.{prec}e: prec + 1 significant digits */
        snprintf(e, sizeof e, "%.*e", prec, v);
        if (strtod(e, NULL) == v)
            break;
    }
    const char *p = e; /* [-]d[.ddd]e[+-]XX */
    bool neg = *p == '-';
    if (neg)
        p++;
    char digits[24];
    size_t nd = 0;
    for (; *p && *p != 'e'; p++)
        if (*p != '.' && nd < sizeof digits - 1)
            digits[nd++] = *p;
    int x = atoi(p + 1);
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = '\0';
    if (neg)
        sg__buf_puts(b, "-");
    int decpt = x + 1; /* v = 0.DIGITS * 10**decpt */
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            sg__buf_puts(b, "0.");
            for (int i = 0; i < -decpt; i++)
                sg__buf_puts(b, "0");
            sg__buf_puts(b, digits);
        } else if ((size_t)decpt < nd) {
            sg__buf_put(b, digits, (size_t)decpt);
            sg__buf_puts(b, ".");
            sg__buf_puts(b, digits + decpt);
        } else {
            sg__buf_puts(b, digits);
            for (size_t i = nd; i < (size_t)decpt; i++)
                sg__buf_puts(b, "0");
            sg__buf_puts(b, ".0");
        }
        return;
    }
    sg__buf_put(b, digits, 1);
    if (nd > 1) {
        sg__buf_puts(b, ".");
        sg__buf_puts(b, digits + 1);
    }
    sg__buf_printf(b, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
}
