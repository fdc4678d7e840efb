/* exec: memory follows the live values (issue 19, item 6). A long
 * straight-line program of 64x64 float32 tensors, run eagerly and traced
 * then run as a graph: the most tensor bytes live at once (exec's counter,
 * sg__xmem) must not grow with the program's length (1,000 against 8,000
 * ops) and must stay within a few tensors of what one step needs, while the
 * results stay those of a run that keeps everything: the same elements in
 * both modes, the input written in place with its version bumped, an output
 * that is a view of the input sharing its storage.
 *
 * The program (8 ops a block, names reused as in bench_eager):
 *
 *     t = t.add(y); t.mul_(0.5); v = t.reshape(-1); v.add_(1.0)
 *     u = v.view(64, 64); u = u.transpose(0, 1); t = u.sin(); t = t.mul(y)
 *
 * What one step holds (by hand): the inputs x (64*64*4 = 16,384 bytes of
 * elements) and y (256), counted before the run, and in a graph run at
 * most two 16 KB storages of the program's (an op's operand and its
 * result: t and the new t, or the transposed t and the copy reshape
 * makes); eagerly, the names v and u also keep the storage of the t they
 * viewed until they are bound again, as in Python: three. */
#include "cmocka_all.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "front/walk_private.h"
#include "shapeguard.h"

#define R 64
#define BLOCK 8
#define STORAGE (R * R * 4) /* one 64x64 float32 storage's elements */

static sg_ctx *C;

static int setup(void **state)
{
    (void)state;
    return sg_ctx_new(&C) == SG_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    sg_ctx_free(C);
    return 0;
}

static const char *const lines[BLOCK] = {
    "    t = t.add(y)\n",     "    t.mul_(0.5)\n",           "    v = t.reshape(-1)\n", "    v.add_(1.0)\n",
    "    u = v.view(64, 64)\n", "    u = u.transpose(0, 1)\n", "    t = u.sin()\n",       "    t = t.mul(y)\n",
};

/* The program of ops ops; tail: what it returns. */
static char *source(long ops, const char *tail)
{
    size_t cap = 128 + (size_t)ops * 32 + strlen(tail), n = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    n += (size_t)sprintf(s + n, "def f(x, y):\n    x.mul_(2.0)\n    t = x\n");
    for (long i = 0; i < ops; i++)
        n += (size_t)sprintf(s + n, "%s", lines[i % BLOCK]);
    sprintf(s + n, "%s", tail);
    return s;
}

static void inputs(sg_tensor **x, sg_tensor **y)
{
    int64_t xs[2] = {R, R}, ys[1] = {R};
    assert_int_equal(sg_tensor_new(C, x, SG_FLOAT32, 2, xs), SG_OK);
    assert_int_equal(sg_tensor_new(C, y, SG_FLOAT32, 1, ys), SG_OK);
    for (int i = 0; i < R * R; i++)
        sg_tensor_set_f(*x, i, (double)(i % 97) / 97.0 - 0.5);
    for (int j = 0; j < R; j++)
        sg_tensor_set_f(*y, j, 0.01 * j - 0.3);
}

/* The same arithmetic in doubles, for the result's first elements. */
static void by_hand(long ops, double *t /* R*R, row-major */)
{
    static double x[R * R], tmp[R * R];
    for (int i = 0; i < R * R; i++)
        x[i] = 2.0 * (float)((double)(i % 97) / 97.0 - 0.5);
    memcpy(t, x, sizeof x);
    for (long k = 0; k < ops; k++) {
        int op = (int)(k % BLOCK);
        if (op == 0 || op == 7)
            for (int i = 0; i < R * R; i++)
                t[i] = op ? t[i] * (float)(0.01 * (i % R) - 0.3) : t[i] + (float)(0.01 * (i % R) - 0.3);
        else if (op == 1)
            for (int i = 0; i < R * R; i++)
                t[i] *= 0.5;
        else if (op == 3)
            for (int i = 0; i < R * R; i++)
                t[i] += 1.0;
        else if (op == 5) { /* the transpose */
            for (int i = 0; i < R; i++)
                for (int j = 0; j < R; j++)
                    tmp[j * R + i] = t[i * R + j];
            memcpy(t, tmp, sizeof tmp);
        } else if (op == 6)
            for (int i = 0; i < R * R; i++)
                t[i] = sin(t[i]);
    }
}

typedef struct outcome {
    size_t peak;      /* tensor bytes at most, beyond those live before */
    double first[4];  /* t[0][0..3] */
    uint64_t xver;    /* x's version after */
    bool out1_is_x;   /* the second output shares x's storage */
} outcome;

/* Run the program of ops ops eagerly (gc_every: a collection at every
 * statement) or traced and run as a graph. */
static void run(long ops, bool eager, bool gc_every, outcome *o)
{
    char *src = source(ops, "    return t, x[0]\n");
    sg_program *p;
    assert_int_equal(sg_program_new(C, &p, src, strlen(src), 1), SG_OK);
    free(src);
    sg_tensor *x, *y;
    inputs(&x, &y);
    size_t base;
    sg__xmem(C, &base, NULL);
    sg_walk *w;
    sg_env *env = NULL;
    sg_tracer *t = NULL;
    sg_run *r = NULL;
    const sg_tensor *res, *out1;
    if (eager) {
        assert_int_equal(sg_walk_eager(p, &w), SG_OK);
        if (gc_every)
            sg__xeager_gc_threshold(w->ex, 0);
        assert_int_equal(sg_walk_input_tensor(w, "x", x, 0), SG_OK);
        assert_int_equal(sg_walk_input_tensor(w, "y", y, 0), SG_OK);
        sg__xmem_reset_peak(C);
        assert_int_equal(sg_walk_run(w), SG_OK);
        res = sg_run_tensor(sg_walk_eager_run(w), sg_walk_output_value(w, 0));
        out1 = sg_run_tensor(sg_walk_eager_run(w), sg_walk_output_value(w, 1));
    } else {
        assert_int_equal(sg_env_new(C, NULL, &env), SG_OK);
        assert_int_equal(sg_tracer_new(env, &t), SG_OK);
        const sg_expr *one, *c64, *c4096;
        assert_int_equal(sg_parse(C, &one, "1", NULL), SG_OK);
        assert_int_equal(sg_parse(C, &c64, "64", NULL), SG_OK);
        assert_int_equal(sg_parse(C, &c4096, "0", NULL), SG_OK);
        const sg_expr *xsz[2] = {c64, c64}, *xst[2] = {c64, one}, *ysz[1] = {c64}, *yst[1] = {one};
        sg_fake fx = {.ndim = 2, .sizes = xsz, .strides = xst, .offset = c4096};
        sg_fake fy = {.ndim = 1, .sizes = ysz, .strides = yst, .offset = c4096};
        sg_value xv, yv;
        assert_int_equal(sg_tracer_input_tensor(t, &xv, "x", &fx, SG_FLOAT32, 0), SG_OK);
        assert_int_equal(sg_tracer_input_tensor(t, &yv, "y", &fy, SG_FLOAT32, 0), SG_OK);
        assert_int_equal(sg_walk_trace(p, t, &w), SG_OK);
        assert_int_equal(sg_walk_input_value(w, "x", xv), SG_OK);
        assert_int_equal(sg_walk_input_value(w, "y", yv), SG_OK);
        assert_int_equal(sg_walk_run(w), SG_OK);
        assert_int_equal(sg_walk_finish(w), SG_OK);
        assert_int_equal(sg_run_new(t, NULL, &r), SG_OK);
        assert_int_equal(sg_run_set_named(r, "x", x), SG_OK);
        assert_int_equal(sg_run_set_named(r, "y", y), SG_OK);
        sg__xmem_reset_peak(C);
        assert_int_equal(sg_run_execute(r), SG_OK);
        res = sg_run_tensor(r, sg_run_output(r, 0));
        out1 = sg_run_tensor(r, sg_run_output(r, 1));
        /* what the caller reads of the input it wrote: x's value now */
        assert_non_null(sg_run_tensor(r, sg_walk_param_value(w, "x")));
    }
    size_t peak;
    sg__xmem(C, NULL, &peak);
    o->peak = peak - base;
    assert_non_null(res);
    assert_non_null(out1);
    for (int i = 0; i < 4; i++)
        o->first[i] = sg_tensor_get_f(res, i);
    o->xver = sg_tensor_version(x);
    o->out1_is_x = sg_tensor_same_storage(out1, x);
    sg_run_free(r);
    sg_walk_free(w);
    sg_tracer_free(t);
    sg_env_free(env);
    sg_program_free(p);
    sg_tensor_unref(x);
    sg_tensor_unref(y);
    size_t after;
    sg__xmem(C, &after, NULL);
    assert_int_equal(after, 0); /* everything given back */
}

static void check_values(long ops, const outcome *o)
{
    static double t[R * R];
    by_hand(ops, t);
    for (int i = 0; i < 4; i++)
        if (fabs(o->first[i] - t[i]) > 1e-4 * (1 + fabs(t[i])))
            fail_msg("%ld ops: element %d is %.9g, by hand %.9g", ops, i, o->first[i], t[i]);
    assert_int_equal(o->xver, 1); /* x.mul_(2.0): once */
    assert_true(o->out1_is_x);
}

/* A compiled run holds what one step needs: the program's storages of
 * that step (two) and their headers, whatever the length. */
static void test_graph_peak(void **state)
{
    (void)state;
    outcome a, b;
    run(1000, false, false, &a);
    run(8000, false, false, &b);
    check_values(1000, &a);
    check_values(8000, &b);
    printf("graph run peak: %zu bytes at 1000 ops, %zu at 8000\n", a.peak, b.peak);
    assert_true(a.peak <= 3 * (STORAGE + 4096));
    assert_int_equal(b.peak, a.peak); /* the same steps, the same live set */
}

/* Eagerly, dead values go at the next collection: at most about twice the
 * live bytes plus the 64 KB threshold, whatever the length; collecting at
 * every statement leaves one step's live set, and the same results. */
static void test_eager_peak(void **state)
{
    (void)state;
    outcome a, b, c, d;
    run(1000, true, false, &a);
    run(8000, true, false, &b);
    run(1000, true, true, &c);
    run(8000, true, true, &d);
    check_values(1000, &a);
    check_values(8000, &b);
    check_values(1000, &c);
    check_values(8000, &d);
    for (int i = 0; i < 4; i++) {
        assert_true(a.first[i] == c.first[i]);
        assert_true(b.first[i] == d.first[i]);
    }
    printf("eager peak: %zu bytes at 1000 ops, %zu at 8000; collecting at every statement: %zu, %zu\n", a.peak,
           b.peak, c.peak, d.peak);
    /* the names hold three storages at most (v and u the old t's, t, the new t) */
    assert_true(c.peak <= 3 * (STORAGE + 4096));
    assert_true(d.peak == c.peak);
    /* a collection when the bytes grew by half what the last left (and 16 KB): twice that at most, and a step */
    assert_true(a.peak <= 2 * c.peak + 32 * 1024 + STORAGE + 4096);
    assert_true(b.peak <= a.peak + STORAGE + 4096);
}

/* Eager and compiled give the same elements. */
static void test_same_results(void **state)
{
    (void)state;
    outcome a, b;
    run(2000, true, false, &a);
    run(2000, false, false, &b);
    for (int i = 0; i < 4; i++)
        assert_true(a.first[i] == b.first[i]);
}

/* A collection at every statement keeps what the program still refers to
 * without a name: a temporary of the caller's expression under way while a
 * function runs (x.neg() while g runs), a tensor only a closure's frame
 * holds (x.mul(3.0) in mk's frame), one only a tuple holds. Values by
 * hand, x = [0.5, -1.5], y = [2.0, 0.25]. */
static void test_eager_referents(void **state)
{
    (void)state;
    const char *src = "def g(a):\n"
                      "    b = a.mul(2.0)\n"
                      "    c = b.add(1.0)\n"
                      "    return c\n"
                      "def mk(t):\n"
                      "    def inner(z):\n"
                      "        w = z.neg()\n"
                      "        return t.sub(w)\n"
                      "    return inner\n"
                      "def f(x, y):\n"
                      "    h = mk(x.mul(3.0))\n"
                      "    w = y.neg()\n"
                      "    r = h(y)\n"
                      "    s = x.neg() + g(y)\n"
                      "    pair = (x.exp(), y)\n"
                      "    z = y.sin()\n"
                      "    u = g(pair[0]).add(0.0)\n"
                      "    return r, s, u\n";
    sg_program *p;
    assert_int_equal(sg_program_new(C, &p, src, strlen(src), 1), SG_OK);
    int64_t two[1] = {2};
    sg_tensor *x, *y;
    assert_int_equal(sg_tensor_new(C, &x, SG_FLOAT64, 1, two), SG_OK);
    assert_int_equal(sg_tensor_new(C, &y, SG_FLOAT64, 1, two), SG_OK);
    const double xs[2] = {0.5, -1.5}, ys[2] = {2.0, 0.25};
    for (int i = 0; i < 2; i++) {
        sg_tensor_set_f(x, i, xs[i]);
        sg_tensor_set_f(y, i, ys[i]);
    }
    sg_walk *w;
    assert_int_equal(sg_walk_eager(p, &w), SG_OK);
    sg__xeager_gc_threshold(w->ex, 0);
    assert_int_equal(sg_walk_input_tensor(w, "x", x, 0), SG_OK);
    assert_int_equal(sg_walk_input_tensor(w, "y", y, 0), SG_OK);
    if (sg_walk_run(w))
        fail_msg("the run fails: %s", sg_ctx_last_error_msg(C));
    assert_int_equal(sg_walk_noutputs(w), 3);
    const sg_tensor *r = sg_run_tensor(sg_walk_eager_run(w), sg_walk_output_value(w, 0));
    const sg_tensor *s = sg_run_tensor(sg_walk_eager_run(w), sg_walk_output_value(w, 1));
    const sg_tensor *u = sg_run_tensor(sg_walk_eager_run(w), sg_walk_output_value(w, 2));
    assert_non_null(r);
    assert_non_null(s);
    assert_non_null(u);
    for (int i = 0; i < 2; i++) {
        assert_float_equal(sg_tensor_get_f(r, i), 3 * xs[i] + ys[i], 1e-12);     /* 3x - (-y) */
        assert_float_equal(sg_tensor_get_f(s, i), -xs[i] + 2 * ys[i] + 1, 1e-12); /* -x + (2y + 1) */
        assert_float_equal(sg_tensor_get_f(u, i), 2 * exp(xs[i]) + 1, 1e-12);     /* g(exp(x)) */
    }
    sg_walk_free(w);
    sg_program_free(p);
    sg_tensor_unref(x);
    sg_tensor_unref(y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_peak),
        cmocka_unit_test(test_eager_peak),
        cmocka_unit_test(test_same_results),
        cmocka_unit_test(test_eager_referents),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
