/* Random operator sequences traced with symbolic sizes: prints each
 * sequence as a script that tests/diff/meta_torch.py replays in PyTorch,
 * calling the same aten overloads eagerly on tensors of the hinted sizes,
 * and checks that every result's sizes, strides, storage offset and dtype,
 * evaluated at the hints, are those of the real result (and that an
 * operator refused here raises there).
 *
 *   meta_gen SEED COUNT
 *
 * Script lines:
 *   input NAME DTYPE [SIZES] [STRIDES]
 *   call NAME OP ARG ... -> DTYPE [SIZES] [STRIDES] OFFSET | -> error KIND
 *   end
 * ARG: a value name, an int, a float (with a '.'), True/False, a list
 * [a, b] of ints or of names, or KEY=ARG. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shapeguard.h"

static uint64_t rng;

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

typedef struct {
    sg_ctx *ctx;
    sg_env *env;
    sg_inputs *in;
    sg_tracer *t;
    sg_value v[64];
    int obj[64]; /* which tensor object each name is (in-place ops return self) */
    int nv;
    FILE *out;
} gen;

static const char *dt_name(sg_dtype d)
{
    static const char *const n[] = {"f64", "f32", "i64", "b8"};
    return n[d];
}

/* An expression's value at the hints, printed. */
static void put_hint(gen *G, const sg_expr *e)
{
    const sg_expr *h;
    char *text = NULL;
    if (sg_env_hint(G->env, &h, e) || sg_print(G->ctx, &text, h, SG_FMT_SG)) {
        fprintf(G->out, "?");
        return;
    }
    fprintf(G->out, "%s", text);
    sg_free(text);
}

static void put_meta(gen *G, sg_value v)
{
    size_t n = sg_tracer_ndim(G->t, v);
    fprintf(G->out, "%s [", dt_name(sg_tracer_dtype(G->t, v)));
    for (size_t d = 0; d < n; d++) {
        fprintf(G->out, d ? ", " : "");
        put_hint(G, sg_tracer_size(G->t, v, d));
    }
    fprintf(G->out, "] [");
    for (size_t d = 0; d < n; d++) {
        fprintf(G->out, d ? ", " : "");
        put_hint(G, sg_tracer_stride(G->t, v, d));
    }
    fprintf(G->out, "] ");
    put_hint(G, sg_tracer_offset(G->t, v));
}

static void make_input(gen *G, int k)
{
    int64_t sizes[3], strides[3];
    size_t n = rnd(4);
    for (size_t d = 0; d < n; d++)
        sizes[d] = 1 + rnd(4);
    int64_t acc = 1; /* contiguous, or a permutation of it */
    size_t perm[3] = {0, 1, 2};
    for (size_t i = n; i > 1; i--) {
        size_t j = rnd((unsigned)i), x = perm[i - 1];
        if (rnd(2)) {
            perm[i - 1] = perm[j];
            perm[j] = x;
        }
    }
    for (size_t i = n; i-- > 0;) {
        strides[perm[i]] = acc;
        acc *= sizes[perm[i]];
    }
    sg_dtype dt = rnd(4) ? SG_FLOAT64 : (sg_dtype)rnd(4);
    char name[8];
    snprintf(name, sizeof name, "v%d", G->nv);
    const sg_source *src;
    const sg_fake *fake;
    sg_tensor_value tv = {.ndim = n, .sizes = sizes, .strides = strides};
    if (sg_source_local(G->ctx, &src, name) || sg_inputs_tensor(G->in, src, &tv, NULL, &fake) ||
        sg_tracer_input_tensor(G->t, &G->v[G->nv], name, fake, dt, 0)) {
        fprintf(stderr, "meta_gen: input: %s\n", sg_ctx_last_error_msg(G->ctx));
        exit(2);
    }
    fprintf(G->out, "input %s %s [", name, dt_name(dt));
    for (size_t d = 0; d < n; d++)
        fprintf(G->out, "%s%" PRId64, d ? ", " : "", sizes[d]);
    fprintf(G->out, "] [");
    for (size_t d = 0; d < n; d++)
        fprintf(G->out, "%s%" PRId64, d ? ", " : "", strides[d]);
    fprintf(G->out, "]\n");
    G->obj[G->nv] = G->nv;
    G->nv++;
    (void)k;
}

/* ---- arguments ---- */

typedef struct {
    sg_arg a[6];
    const sg_expr *ints[6][8];
    sg_value vals[2];
    size_t n;
    char text[256];
    size_t len;
} args;

static void addf(args *A, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(A->text + A->len, sizeof A->text - A->len, fmt, ap);
    va_end(ap);
    if (k > 0 && A->len + (size_t)k < sizeof A->text)
        A->len += (size_t)k;
}

static const sg_expr *num(gen *G, long x)
{
    const sg_expr *e;
    return sg_expr_int(G->ctx, &e, x) == SG_OK ? e : NULL;
}

static void arg_value(gen *G, args *A, int k)
{
    A->a[A->n++] = (sg_arg){.kind = SG_ARG_VALUE, .u.v = G->v[k]};
    addf(A, " v%d", k);
}

static void arg_int(gen *G, args *A, long x)
{
    A->a[A->n++] = (sg_arg){.kind = SG_ARG_INT, .u.e = num(G, x)};
    addf(A, " %ld", x);
}

static void arg_float(args *A, double x)
{
    A->a[A->n++] = (sg_arg){.kind = SG_ARG_FLOAT, .u.f = x};
    addf(A, " %.1f", x);
}

static void arg_bool(args *A, int b, const char *key)
{
    A->a[A->n++] = (sg_arg){.kind = SG_ARG_BOOL, .name = key, .u.b = b};
    addf(A, " %s=%s", key, b ? "True" : "False");
}

static void arg_ints(gen *G, args *A, const long *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        A->ints[A->n][i] = num(G, x[i]);
    A->a[A->n] = (sg_arg){.kind = SG_ARG_INTS, .u.ints = {n, A->ints[A->n]}};
    A->n++;
    addf(A, " [");
    for (size_t i = 0; i < n; i++)
        addf(A, "%s%ld", i ? "," : "", x[i]);
    addf(A, "]");
}

static void arg_values(gen *G, args *A, int k0, int k1)
{
    A->vals[0] = G->v[k0];
    A->vals[1] = G->v[k1];
    A->a[A->n++] = (sg_arg){.kind = SG_ARG_VALUES, .u.values = {2, A->vals}};
    addf(A, " [v%d,v%d]", k0, k1);
}

/* ---- one random call ---- */

static int pick(gen *G)
{
    return (int)rnd((unsigned)G->nv);
}

static long dim_of(gen *G, int k, int extra)
{
    long n = (long)sg_tracer_ndim(G->t, G->v[k]) + extra;
    if (n <= 0)
        return rnd(2) ? 0 : -1;
    return (long)rnd((unsigned)(2 * n)) - n; /* [-n, n) */
}

static const char *const unary[] = {"neg", "abs", "exp", "sin", "relu", "sigmoid", "tanh", "t", "detach", "alias",
                                    "squeeze", "sum", "clone", "zeros_like", "contiguous", "sin_", "t_", "zero_",
                                    "detach_"};
static const char *const binary[] = {"add.Tensor", "sub.Tensor", "mul.Tensor", "div.Tensor", "eq.Tensor",
                                     "lt.Tensor", "pow.Tensor_Tensor", "add_.Tensor", "mul_.Tensor",
                                     "matmul", "mm", "bmm", "copy_", "set_.source_Tensor"};

static void one_call(gen *G)
{
    args A = {0};
    const char *op;
    int k = pick(G);
    unsigned kind = rnd(8);
    if (kind == 0) {
        op = unary[rnd(sizeof unary / sizeof *unary)];
        arg_value(G, &A, k);
    } else if (kind == 1) {
        op = binary[rnd(sizeof binary / sizeof *binary)];
        arg_value(G, &A, k);
        arg_value(G, &A, pick(G));
    } else if (kind == 2) {
        static const char *const sc[] = {"add.Tensor", "mul.Tensor", "div.Tensor", "pow.Tensor_Scalar", "mul_.Scalar",
                                         "gt.Scalar", "fill_.Scalar"};
        op = sc[rnd(7)];
        arg_value(G, &A, k);
        if (rnd(2))
            arg_int(G, &A, (long)rnd(3));
        else
            arg_float(&A, 1.5);
    } else if (kind == 3) {
        static const char *const dims[] = {"unsqueeze", "squeeze.dim", "unsqueeze_"};
        op = dims[rnd(3)];
        arg_value(G, &A, k);
        arg_int(G, &A, dim_of(G, k, op[0] == 'u'));
    } else if (kind == 4) {
        size_t n = sg_tracer_ndim(G->t, G->v[k]);
        static const char *const ix[] = {"select.int", "slice.Tensor", "narrow", "transpose.int"};
        op = ix[rnd(4)];
        arg_value(G, &A, k);
        arg_int(G, &A, dim_of(G, k, 0));
        long a = (long)rnd(7) - 3, b = (long)rnd(7) - 2;
        if (!strcmp(op, "select.int") || !strcmp(op, "transpose.int")) {
            arg_int(G, &A, !strcmp(op, "transpose.int") ? dim_of(G, k, 0) : a);
        } else if (!strcmp(op, "narrow")) {
            arg_int(G, &A, a < 0 ? 0 : a);
            arg_int(G, &A, (long)rnd(3));
        } else {
            arg_int(G, &A, a);
            arg_int(G, &A, b + (long)n);
            arg_int(G, &A, 1 + (long)rnd(2));
        }
    } else if (kind == 5) {
        static const char *const red[] = {"sum.dim_IntList", "mean.dim", "amax", "amin"};
        op = red[rnd(4)];
        arg_value(G, &A, k);
        long d = dim_of(G, k, 0);
        arg_ints(G, &A, &d, 1);
        arg_bool(&A, (int)rnd(2), "keepdim");
    } else if (kind == 6) {
        static const char *const sh[] = {"view", "expand", "permute", "reshape", "flatten.using_ints", "diagonal",
                                         "unbind.int"};
        op = sh[rnd(7)];
        arg_value(G, &A, k);
        size_t n = sg_tracer_ndim(G->t, G->v[k]);
        long x[8];
        const sg_expr *h;
        if (!strcmp(op, "flatten.using_ints") || !strcmp(op, "unbind.int")) {
            arg_int(G, &A, dim_of(G, k, 0));
            if (op[0] == 'f')
                arg_int(G, &A, dim_of(G, k, 0));
        } else if (!strcmp(op, "diagonal")) {
            arg_int(G, &A, (long)rnd(5) - 2);
            arg_int(G, &A, dim_of(G, k, 0));
            arg_int(G, &A, dim_of(G, k, 0));
        } else if (!strcmp(op, "permute")) {
            for (size_t i = 0; i < n; i++)
                x[i] = (long)(n - 1 - i);
            arg_ints(G, &A, x, n);
        } else if (!strcmp(op, "view") || !strcmp(op, "reshape")) {
            x[0] = -1;
            x[1] = 1 + rnd(3);
            arg_ints(G, &A, x, 1 + rnd(2));
        } else {
            x[0] = 1 + rnd(3);
            for (size_t i = 0; i < n && i < 2; i++)
                x[i + 1] = sg_env_hint(G->env, &h, sg_tracer_size(G->t, G->v[k], n - 1 - i)) || rnd(4) == 0 ? -1 : 2;
            arg_ints(G, &A, x, 1 + (n < 2 ? n : 2));
        }
    } else {
        static const char *const j[] = {"cat", "stack", "where.self"};
        op = j[rnd(3)];
        if (op[0] == 'w') {
            arg_value(G, &A, k);
            arg_value(G, &A, pick(G));
            arg_value(G, &A, pick(G));
        } else {
            arg_values(G, &A, k, pick(G));
            arg_int(G, &A, dim_of(G, k, op[0] == 's'));
        }
    }
    sg_value r;
    sg_ctx_reset_error(G->ctx);
    sg_status s = sg_tracer_call(G->t, &r, op, A.a, A.n, 1);
    fprintf(G->out, "call v%d %s%s -> ", G->nv, op, A.text);
    if (s) {
        fprintf(G->out, "error %s\n", sg_status_kind(s));
        return;
    }
    if (sg_tracer_kind(G->t, r) != SG_VALUE_TENSOR) {
        fprintf(G->out, "other\n");
        return;
    }
    put_meta(G, r);
    fprintf(G->out, "\n");
    size_t len = strlen(op); /* in-place: the result is self, the same object in PyTorch */
    bool inplace = op[len - 1] == '_' || strstr(op, "_.");
    for (int j = 0; j < G->nv && !inplace; j++) /* an argument given back (contiguous): that object */
        if (G->v[j] == r) {
            inplace = true;
            k = j;
        }
    for (int j = 0; inplace && j < G->nv; j++)
        if (G->obj[j] == G->obj[k])
            G->v[j] = r;
    if (G->nv < 63) {
        G->obj[G->nv] = inplace ? G->obj[k] : G->nv;
        G->v[G->nv++] = r;
    }
}

static void one_sequence(sg_ctx *ctx, FILE *out)
{
    gen G = {.ctx = ctx, .out = out};
    if (sg_env_new(ctx, NULL, &G.env) || sg_inputs_new(G.env, NULL, &G.in) || sg_tracer_new(G.env, &G.t)) {
        fprintf(stderr, "meta_gen: %s\n", sg_ctx_last_error_msg(ctx));
        exit(2);
    }
    int ninputs = 1 + (int)rnd(3);
    for (int k = 0; k < ninputs; k++)
        make_input(&G, k);
    int ncalls = 1 + (int)rnd(8);
    for (int i = 0; i < ncalls; i++)
        one_call(&G);
    fprintf(out, "end\n");
    sg_tracer_free(G.t);
    sg_inputs_free(G.in);
    sg_env_free(G.env);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: meta_gen SEED COUNT\n");
        return 2;
    }
    rng = 0x9e3779b97f4a7c15ULL ^ strtoull(argv[1], NULL, 10);
    long count = strtol(argv[2], NULL, 10);
    for (long i = 0; i < count; i++) {
        sg_ctx *ctx;
        if (sg_ctx_new(&ctx))
            return 2;
        one_sequence(ctx, stdout);
        sg_ctx_free(ctx);
    }
    return 0;
}
