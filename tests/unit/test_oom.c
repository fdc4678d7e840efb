/* Allocation failures (SQLite's faultsim): the library's own calls of
 * malloc, calloc and realloc go through wrappers of this test (linked with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc, which reaches the
 * objects of libsgcore but not FLINT, GMP or libc), and the N-th call
 * fails, for N = 0, 1, 2, ... until a workload runs through. Each workload
 * is a list of steps over one state; at the step where the allocation
 * fails, the step must return SG_ENOMEM with a message and leave the state
 * as it was (a snapshot, printed with allocation allowed, compares equal);
 * the same step must then succeed, and the whole run must end in the state
 * of a run without failures. Leaks are LeakSanitizer's to find: the ASan
 * build of scripts/check-all.sh runs this test with detect_leaks=1, and
 * every run frees what it made.
 *
 * Each workload runs twice: once so, and once with its contexts made by
 * sg_ctx_new_with_allocator with this test's allocator, where the N-th
 * call of the allocator fails instead; then no allocation of the library
 * may reach malloc, calloc or realloc on its own (the wrappers count them),
 * and every block the allocator gave must be back when the state is freed.
 *
 * Workloads: parse, simplify, print; a shape environment that records
 * guards, runtime asserts and unbacked symbols, then produces its guards;
 * tensor inputs with their guard set, its program compiled and checked and
 * a failure explained; a tracer recording a small graph. */
#include "cmocka_all.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shapeguard.h"

/* ---- the wrappers (test state: counting calls is this test's business) ---- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t k);
void *__real_realloc(void *p, size_t n);

static long countdown = -1; /* calls left before the failing one; -1: none fails */
static volatile long trap;  /* a place for a debugger's breakpoint: set when an allocation fails */
static long failures;       /* allocations failed so far */

static int fail_now(void)
{
    if (countdown < 0)
        return 0;
    if (countdown-- == 0) {
        failures++;
        trap++;
        return 1;
    }
    return 0;
}

/* With the hook, the wrappers only count what bypasses it during a step. */
static int hooked;  /* contexts are made with the test allocator */
static long strays; /* the library's own calls of malloc, calloc, realloc while hooked and armed */

static int wrapped_fails(void)
{
    if (hooked) {
        if (countdown >= 0)
            strays++;
        return 0;
    }
    return fail_now();
}

void *__wrap_malloc(size_t n)
{
    return wrapped_fails() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t k)
{
    return wrapped_fails() ? NULL : __real_calloc(n, k);
}

void *__wrap_realloc(void *p, size_t n)
{
    return wrapped_fails() ? NULL : __real_realloc(p, n);
}

/* The test allocator: counts its blocks (user points at the count). */
static long live_blocks;

static void *hook_malloc(void *user, size_t n)
{
    if (fail_now())
        return NULL;
    void *p = __real_malloc(n);
    if (p)
        ++*(long *)user;
    return p;
}

static void *hook_realloc(void *user, void *p, size_t n)
{
    (void)user;
    return fail_now() ? NULL : __real_realloc(p, n);
}

static void hook_free(void *user, void *p)
{
    if (p)
        --*(long *)user;
    free(p);
}

/* A context for a workload, with the test allocator when hooked. */
static sg_status new_ctx(sg_ctx **out)
{
    if (!hooked)
        return sg_ctx_new(out);
    sg_allocator a = {hook_malloc, hook_realloc, hook_free, &live_blocks};
    return sg_ctx_new_with_allocator(out, &a);
}

static void arm(long n)
{
    countdown = n;
}

static void disarm(void)
{
    countdown = -1;
}

/* ---- a workload: steps over a state, with a snapshot ---- */

typedef struct workload workload;
struct workload {
    const char *name;
    size_t nsteps;
    /* step i on the state: SG_OK or an error status */
    sg_status (*step)(void *state, size_t i);
    /* the state printed (allocation allowed), freed with free */
    char *(*snapshot)(void *state);
    void *(*state_new)(void);
    void (*state_free)(void *state);
    sg_ctx *(*ctx_of)(void *state);
};

static char *run_clean(const workload *w)
{
    void *st = w->state_new();
    for (size_t i = 0; i < w->nsteps; i++) {
        sg_status s = w->step(st, i);
        if (s)
            fail_msg("%s: step %zu fails without a failed allocation: %s", w->name, i,
                     sg_ctx_last_error_msg(w->ctx_of(st)));
    }
    char *snap = w->snapshot(st);
    w->state_free(st);
    return snap;
}

/* Fail allocation n of the run (counted from its first step); returns
 * whether an allocation failed, i.e. whether to go on with n + 1. */
static int run_failing(const workload *w, long n, const char *want)
{
    const long n0 = n;
    void *st = w->state_new();
    long before = failures;
    for (size_t i = 0; i < w->nsteps; i++) {
        char *pre = w->snapshot(st);
        arm(n);
        sg_status s = w->step(st, i);
        long left = countdown;
        disarm();
        n = left < 0 ? -1 : left; /* the allocations this step made count down the rest */
        if (failures > before && s == SG_OK) {
            /* the failure was absorbed (an optional cache): the step must still be right */
            before = failures;
            if (getenv("SG_OOM_TRACE"))
                print_message("%s: allocation %ld failed in step %zu and was absorbed\n", w->name, n0, i);
        } else if (failures > before) {
            before = failures;
            sg_ctx *ctx = w->ctx_of(st);
            if (s != SG_ENOMEM)
                fail_msg("%s: step %zu: allocation failed but the status is %s (%s)", w->name, i,
                         sg_status_kind(s), ctx ? sg_ctx_last_error_msg(ctx) : "");
            if (ctx && !sg_ctx_last_error_msg(ctx)[0])
                fail_msg("%s: step %zu: SG_ENOMEM without a message", w->name, i);
            char *post = w->snapshot(st);
            if (strcmp(pre, post))
                fail_msg("%s: step %zu changed the state although it failed:\n  before: %s\n  after:  %s", w->name,
                         i, pre, post);
            free(post);
            if (ctx)
                sg_ctx_reset_error(ctx);
            s = w->step(st, i); /* usable: the same step now succeeds */
            if (s)
                fail_msg("%s: step %zu fails when retried: %s", w->name, i, sg_ctx_last_error_msg(w->ctx_of(st)));
            n = -1;
        } else if (s) {
            fail_msg("%s (allocation %ld): step %zu fails with no allocation failed: %s", w->name, n0, i,
                     sg_ctx_last_error_msg(w->ctx_of(st)));
        }
        free(pre);
    }
    char *end = w->snapshot(st);
    if (strcmp(end, want))
        fail_msg("%s: the run with allocation %ld failed ends elsewhere:\n  want: %s\n  got:  %s", w->name, n0, want,
                 end);
    free(end);
    w->state_free(st);
    return 1;
}

/* Every allocation of the workload fails once, in turn. */
static void exercise_once(const workload *w)
{
    char *want = run_clean(w);
    long n = 0;
    const char *only = getenv("SG_OOM_ONLY"); /* for debugging: fail only that allocation */
    if (only) {
        run_failing(w, atol(only), want);
        free(want);
        return;
    }
    for (;; n++) {
        long before = failures;
        run_failing(w, n, want);
        if (failures == before)
            break; /* allocation n was never reached: every one has failed once */
    }
    print_message("%s%s: %ld allocations failed in turn\n", w->name, hooked ? " (allocator hook)" : "", n);
    assert_true(n > 0);
    free(want);
}

/* The workload without, then with the allocator hook. */
static void exercise(const workload *w)
{
    hooked = 0;
    exercise_once(w);
    hooked = 1;
    strays = 0;
    live_blocks = 0;
    exercise_once(w);
    hooked = 0;
    if (strays)
        fail_msg("%s: %ld allocations of the library bypassed the context's allocator", w->name, strays);
    if (live_blocks)
        fail_msg("%s: %ld blocks of the context's allocator were never given back", w->name, live_blocks);
}

/* ---- snapshot helpers ---- */

typedef struct {
    char *p;
    size_t n, cap;
} text;

static void add(text *t, const char *s)
{
    size_t k = strlen(s);
    if (t->n + k + 1 > t->cap) {
        t->cap = 2 * (t->n + k + 1);
        t->p = realloc(t->p, t->cap);
        assert_non_null(t->p);
    }
    memcpy(t->p + t->n, s, k + 1);
    t->n += k;
}

static void add_expr(text *t, sg_ctx *ctx, const sg_expr *e)
{
    char *s = NULL;
    if (!e) {
        add(t, "NULL");
        return;
    }
    assert_int_equal(sg_print(ctx, &s, e, SG_FMT_SG), SG_OK);
    add(t, s);
    sg_free(s);
}

static const sg_expr *P(sg_ctx *ctx, const char *s, sg_status *st)
{
    const sg_expr *e = NULL;
    *st = sg_parse(ctx, &e, s, NULL);
    return e;
}

/* ---- workload 1: parse, simplify, print ---- */

typedef struct {
    sg_ctx *ctx;
    const sg_expr *e[4];
    char *printed;
} w1;

static void *w1_new(void)
{
    w1 *s = calloc(1, sizeof *s);
    assert_non_null(s);
    return s;
}

static void w1_free(void *p)
{
    w1 *s = p;
    sg_free(s->printed);
    sg_ctx_free(s->ctx);
    free(s);
}

static sg_ctx *w1_ctx(void *p)
{
    return ((w1 *)p)->ctx;
}

static sg_status w1_step(void *p, size_t i)
{
    w1 *s = p;
    sg_status st;
    switch (i) {
    case 0:
        return new_ctx(&s->ctx);
    case 1:
        s->e[0] = P(s->ctx, "(2*x + 1) // 2 + (x + y)**3 - Max(x, y, 3) % 7", &st);
        return st;
    case 2:
        s->e[1] = P(s->ctx, "(a*b - b) * (a + 2*b)**2 // (4*a) + CeilDiv(a*a, 3)", &st);
        return st;
    case 3:
        st = sg_print(s->ctx, &s->printed, s->e[0], SG_FMT_PYTHON);
        return st;
    case 4: {
        char *c = NULL;
        st = sg_print(s->ctx, &c, s->e[1], SG_FMT_C);
        sg_free(c);
        return st;
    }
    default: {
        const sg_expr *syms[2], *vals[2];
        if ((st = sg_expr_sym(s->ctx, &syms[0], "x")) || (st = sg_expr_sym(s->ctx, &syms[1], "y")) ||
            (st = sg_expr_int(s->ctx, &vals[0], 12345678901LL)) || (st = sg_expr_int(s->ctx, &vals[1], -3)))
            return st;
        return sg_expr_eval(s->ctx, &s->e[2], s->e[0], 2, syms, vals);
    }
    }
}

static char *w1_snap(void *p)
{
    w1 *s = p;
    text t = {0};
    add(&t, s->ctx ? "ctx" : "no ctx");
    for (int k = 0; k < 3; k++) {
        add(&t, "; ");
        if (s->ctx)
            add_expr(&t, s->ctx, s->e[k]);
    }
    add(&t, "; ");
    add(&t, s->printed ? s->printed : "-");
    return t.p;
}

static void test_oom_parse_print(void **state)
{
    (void)state;
    workload w = {"parse/print", 6, w1_step, w1_snap, w1_new, w1_free, w1_ctx};
    exercise(&w);
}

/* ---- workload 2: a shape environment ---- */

typedef struct {
    sg_ctx *ctx;
    sg_env *env;
    const sg_expr *x, *y, *z, *u;
} w2;

static void *w2_new(void)
{
    w2 *s = calloc(1, sizeof *s);
    assert_non_null(s);
    assert_int_equal(new_ctx(&s->ctx), SG_OK);
    return s;
}

static void w2_free(void *p)
{
    w2 *s = p;
    sg_env_free(s->env);
    sg_ctx_free(s->ctx);
    free(s);
}

static sg_ctx *w2_ctx(void *p)
{
    return ((w2 *)p)->ctx;
}

static sg_status w2_step(void *p, size_t i)
{
    w2 *s = p;
    sg_status st;
    const sg_expr *c, *h;
    int r;
    switch (i) {
    case 0:
        return sg_env_new(s->ctx, NULL, &s->env);
    case 1:
        if ((st = sg_expr_int(s->ctx, &h, 5)))
            return st;
        return sg_env_create_backed(s->env, &s->x, "L['x'].size()[0]", h, SG_DIM_DUCK, SG_INPUT_SIZE, NULL);
    case 2:
        if ((st = sg_expr_int(s->ctx, &h, 5)))
            return st;
        return sg_env_create_backed(s->env, &s->y, "L['y'].size()[0]", h, SG_DIM_DYNAMIC, SG_INPUT_SIZE, NULL);
    case 3:
        if ((st = sg_expr_int(s->ctx, &h, 12)))
            return st;
        return sg_env_create_backed(s->env, &s->z, "L['z'].size()[0]", h, SG_DIM_DYNAMIC, SG_INPUT_SIZE, NULL);
    case 4:
        c = P(s->ctx, "s0*s2 > 10", &st);
        return st ? st : sg_env_evaluate(s->env, &r, c, "line 4");
    case 5:
        c = P(s->ctx, "s0 == s1", &st);
        return st ? st : sg_env_evaluate(s->env, &r, c, "line 5");
    case 6:
        c = P(s->ctx, "s2 % 4 == 0", &st);
        return st ? st : sg_env_evaluate(s->env, &r, c, "line 6");
    case 7:
        return sg_env_create_unbacked(s->env, &s->u, NULL, 1, NULL);
    case 8:
        c = P(s->ctx, "u0 <= s0 + s2", &st);
        return st ? st : sg_env_check(s->env, c, "u0 fits");
    case 9:
        c = P(s->ctx, "u0 // 4 > 2", &st);
        return st ? st : sg_env_check(s->env, c, NULL);
    case 10:
        c = P(s->ctx, "u0 == 3", &st);
        return st ? st : sg_env_guard_or(s->env, &r, c, 0, "line 10");
    case 11:
        return sg_env_bind_unbacked(s->env, s->u, ".size()[0]");
    case 12:
        c = P(s->ctx, "s2 // (s2 // 4) == 4", &st);
        return st ? st : sg_env_evaluate(s->env, &r, c, "line 12");
    default: {
        const sg_expr **g = NULL;
        size_t n = 0;
        st = sg_env_produce_guards(s->env, &g, &n);
        sg_free(g);
        return st;
    }
    }
}

static char *w2_snap(void *p)
{
    w2 *s = p;
    text t = {0};
    char num[64];
    if (!s->env) {
        add(&t, "no env");
        return t.p;
    }
    snprintf(num, sizeof num, "%zu guards, %zu asserts, %zu pending, %zu facts:", sg_env_nguards(s->env),
             sg_env_nasserts(s->env), sg_env_npending(s->env), sg_facts_count(sg_env_facts(s->env)));
    add(&t, num);
    for (size_t i = 0; i < sg_env_nguards(s->env); i++) {
        add(&t, " ");
        add_expr(&t, s->ctx, sg_env_guard(s->env, i, NULL));
    }
    add(&t, " |");
    for (size_t i = 0; i < sg_env_nasserts(s->env); i++) {
        add(&t, " ");
        add_expr(&t, s->ctx, sg_env_assert(s->env, i, NULL));
    }
    add(&t, " | ");
    const sg_expr *q[3] = {s->x, s->z, s->u};
    for (int k = 0; k < 3; k++) {
        const sg_expr *r = NULL;
        if (q[k] && sg_env_replace(s->env, &r, q[k]) == SG_OK)
            add_expr(&t, s->ctx, r);
        add(&t, ", ");
    }
    return t.p;
}

static void test_oom_env(void **state)
{
    (void)state;
    workload w = {"env", 14, w2_step, w2_snap, w2_new, w2_free, w2_ctx};
    exercise(&w);
}

/* ---- workload 3: tensor inputs, guard set, program ---- */

typedef struct {
    sg_ctx *ctx;
    sg_env *env;
    sg_symcache *cache;
    sg_inputs *in;
    sg_guard_set *gs;
    char *why;
    int verdict;
} w3;

static void *w3_new(void)
{
    w3 *s = calloc(1, sizeof *s);
    assert_non_null(s);
    assert_int_equal(new_ctx(&s->ctx), SG_OK);
    return s;
}

static void w3_free(void *p)
{
    w3 *s = p;
    sg_free(s->why);
    sg_guard_set_free(s->gs);
    sg_inputs_free(s->in);
    sg_symcache_free(s->cache);
    sg_env_free(s->env);
    sg_ctx_free(s->ctx);
    free(s);
}

static sg_ctx *w3_ctx(void *p)
{
    return ((w3 *)p)->ctx;
}

static const int64_t xs[2] = {4, 6}, ys[2] = {6, 4};
static const int64_t bad[2] = {4, 7};

static sg_status w3_step(void *p, size_t i)
{
    w3 *s = p;
    const sg_source *src;
    const sg_fake *fake;
    sg_status st;
    switch (i) {
    case 0:
        return sg_env_new(s->ctx, NULL, &s->env);
    case 1:
        return sg_symcache_new(s->ctx, &s->cache);
    case 2:
        return sg_inputs_new(s->env, s->cache, &s->in);
    case 3: {
        sg_tensor_value v = {.ndim = 2, .sizes = xs};
        if ((st = sg_source_local(s->ctx, &src, "x")))
            return st;
        return sg_inputs_tensor(s->in, src, &v, NULL, &fake);
    }
    case 4: {
        sg_tensor_value v = {.ndim = 2, .sizes = ys};
        if ((st = sg_source_local(s->ctx, &src, "y")))
            return st;
        return sg_inputs_tensor(s->in, src, &v, NULL, &fake);
    }
    case 5: {
        int r;
        const sg_expr *c = P(s->ctx, "s0*s1 > 20", &st);
        return st ? st : sg_env_evaluate(s->env, &r, c, "size check");
    }
    case 6:
        return sg_guard_set_build(s->in, 0, &s->gs);
    case 7: {
        sg_tensor_value a = {.ndim = 2, .sizes = xs}, b = {.ndim = 2, .sizes = bad};
        sg_input_value v[2] = {{.tensor = &a}, {.tensor = &b}};
        s->verdict = sg_guard_set_check(s->gs, v, 2);
        return s->verdict < 0 ? (sg_status)s->verdict : SG_OK;
    }
    default: {
        sg_tensor_value a = {.ndim = 2, .sizes = xs}, b = {.ndim = 2, .sizes = bad};
        sg_input_value v[2] = {{.tensor = &a}, {.tensor = &b}};
        sg_free(s->why);
        s->why = NULL;
        return sg_guard_set_explain(s->gs, v, 2, &s->why);
    }
    }
}

static char *w3_snap(void *p)
{
    w3 *s = p;
    text t = {0};
    char num[96];
    snprintf(num, sizeof num, "env %d, inputs %zu, guards %zu, set %d, verdict %d, why: ", s->env != NULL,
             s->in ? sg_inputs_count(s->in) : 0, s->env ? sg_env_nguards(s->env) : 0, s->gs != NULL, s->verdict);
    add(&t, num);
    add(&t, s->why ? s->why : "-");
    return t.p;
}

static void test_oom_guards(void **state)
{
    (void)state;
    workload w = {"inputs/guards", 9, w3_step, w3_snap, w3_new, w3_free, w3_ctx};
    exercise(&w);
}

/* ---- workload 4: a tracer ---- */

typedef struct {
    sg_ctx *ctx;
    sg_env *env;
    sg_inputs *in;
    sg_tracer *t;
    const sg_fake *fake;
    sg_value x, y, z;
    char *graph;
} w4;

static void *w4_new(void)
{
    w4 *s = calloc(1, sizeof *s);
    assert_non_null(s);
    assert_int_equal(new_ctx(&s->ctx), SG_OK);
    assert_int_equal(sg_env_new(s->ctx, NULL, &s->env), SG_OK);
    assert_int_equal(sg_inputs_new(s->env, NULL, &s->in), SG_OK);
    s->x = s->y = s->z = UINT32_MAX;
    return s;
}

static void w4_free(void *p)
{
    w4 *s = p;
    sg_free(s->graph);
    sg_tracer_free(s->t);
    sg_inputs_free(s->in);
    sg_env_free(s->env);
    sg_ctx_free(s->ctx);
    free(s);
}

static sg_ctx *w4_ctx(void *p)
{
    return ((w4 *)p)->ctx;
}

static sg_status w4_step(void *p, size_t i)
{
    w4 *s = p;
    sg_status st;
    switch (i) {
    case 0:
        return sg_tracer_new(s->env, &s->t);
    case 1: {
        const sg_source *src;
        sg_tensor_value v = {.ndim = 2, .sizes = xs};
        if ((st = sg_source_local(s->ctx, &src, "x")))
            return st;
        return sg_inputs_tensor(s->in, src, &v, NULL, &s->fake);
    }
    case 2:
        return sg_tracer_input_tensor(s->t, &s->x, "x", s->fake, SG_FLOAT64, 0);
    case 3: {
        const sg_expr *two;
        if ((st = sg_expr_int(s->ctx, &two, 2)))
            return st;
        sg_arg a[2] = {{.kind = SG_ARG_VALUE, .u.v = s->x}, {.kind = SG_ARG_INT, .u.e = two}};
        return sg_tracer_call(s->t, &s->y, "mul.Tensor", a, 2, 1);
    }
    case 4: {
        const sg_expr *m1;
        if ((st = sg_expr_int(s->ctx, &m1, -1)))
            return st;
        sg_arg a[2] = {{.kind = SG_ARG_VALUE, .u.v = s->y}, {.kind = SG_ARG_INTS, .u.ints = {1, &m1}}};
        return sg_tracer_call(s->t, &s->z, "reshape", a, 2, 2);
    }
    case 5:
        return sg_tracer_output(s->t, &s->z, 1);
    default:
        return sg_tracer_print(s->t, &s->graph);
    }
}

static char *w4_snap(void *p)
{
    w4 *s = p;
    text t = {0};
    char *ops = NULL;
    add(&t, s->t ? "tracer: " : "no tracer");
    if (s->t) {
        disarm();
        assert_int_equal(sg_tracer_ops(s->t, &ops), SG_OK);
        add(&t, ops);
        sg_free(ops);
    }
    add(&t, " | ");
    add(&t, s->graph ? s->graph : "-");
    return t.p;
}

static void test_oom_tracer(void **state)
{
    (void)state;
    workload w = {"tracer", 7, w4_step, w4_snap, w4_new, w4_free, w4_ctx};
    exercise(&w);
}

/* The hook's contract: bad arguments are refused, the user pointer reaches
 * every call, and a string handed out outlives its context. */
static void test_allocator_hook(void **state)
{
    (void)state;
    sg_ctx *ctx = (sg_ctx *)1;
    sg_allocator a = {hook_malloc, hook_realloc, hook_free, &live_blocks};
    assert_int_equal(sg_ctx_new_with_allocator(NULL, &a), SG_EINVAL);
    assert_int_equal(sg_ctx_new_with_allocator(&ctx, NULL), SG_EINVAL);
    assert_null(ctx);
    sg_allocator no_free = {hook_malloc, hook_realloc, NULL, &live_blocks};
    assert_int_equal(sg_ctx_new_with_allocator(&ctx, &no_free), SG_EINVAL);
    live_blocks = 0;
    assert_int_equal(sg_ctx_new_with_allocator(&ctx, &a), SG_OK);
    assert_true(live_blocks > 0);
    const sg_expr *e = NULL;
    assert_int_equal(sg_parse(ctx, &e, "2*x + 3*x", NULL), SG_OK);
    char *text = NULL;
    assert_int_equal(sg_print(ctx, &text, e, SG_FMT_SG), SG_OK);
    sg_ctx_free(ctx);
    assert_int_equal(live_blocks, 1); /* the string */
    assert_string_equal(text, "5*x");
    sg_free(text);
    assert_int_equal(live_blocks, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oom_parse_print),
        cmocka_unit_test(test_oom_env),
        cmocka_unit_test(test_oom_guards),
        cmocka_unit_test(test_oom_tracer),
        cmocka_unit_test(test_allocator_hook),
    };
    return cmocka_run_group_tests_name("oom", tests, NULL, NULL);
}
