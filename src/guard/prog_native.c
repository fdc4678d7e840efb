/* The native first pass of a guard program (guard_private.h): the batched
 * guards (p->fast) written out as x86-64 machine code, with each guard's slot
 * offsets and constants in its instructions, as a C compiler would write
 * them. No compiler is involved: the bytes are emitted here, into pages that
 * are writable while they are written and then only executable (W^X).
 *
 * The code is a function int pass(const sg_guard_prog *p, const int64_t *v)
 * under the System V AMD64 ABI (v in rsi; only rax, rcx and rdx are used, all
 * caller-saved; no stack). It returns 0 as soon as a batched guard does not
 * hold or its int64 value overflows, else 1 when the batched guards are the
 * whole program and 2 when register instructions follow: exactly what the
 * interpreted first pass returns (prog_check.c), which stays the fallback
 * for everything this file does not build:
 *   - other machines, other ABIs (Windows), and builds configured with
 *     --disable-native-guards;
 *   - a system that refuses executable pages (mmap or mprotect fails: an
 *     SELinux or PaX policy, say): the program is then interpreted, silently;
 *   - programs with no batched guard, 2**28 slots or more, or 2**24 batched
 *     guards or more (displacements and jumps are 32-bit);
 *   - a program compiled with SG_GUARD_INTERPRET.
 *
 * Each guard is the instructions of its kind's f (guard_private.h), in rax,
 * then its set test, specialized to the set's shape: f == c (jne), f != c
 * (je), f >= c (jl), f <= c (jg), any other interval (sub, cmp, ja); a bound
 * or equality of a slot compares the slot in memory with an immediate. An
 * overflow is a jo. Every failing jump goes to one stub at the end. */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "guard/guard_private.h"

/* Where the backend exists: x86-64 under the System V ABI, with mmap. */
#if defined(__x86_64__) && (defined(__linux__) || defined(__FreeBSD__) || defined(__NetBSD__)) &&                     \
    !defined(SG_NO_NATIVE_GUARDS)
#define SG__GP_NATIVE 1
#else
#define SG__GP_NATIVE 0
#endif

#if SG__GP_NATIVE
#include <sys/mman.h>
#include <unistd.h>

/* The code being written. Room is made before each element for the longest
 * one (GP_NATIVE_ELT_MAX bytes: a MOD_Z with a set test of two 64-bit
 * constants takes 86) with its jumps (at most 4, a MUL_Z's), and for the
 * entry and the exits. */
#define GP_NATIVE_ELT_MAX 128
#define GP_NATIVE_ELT_JUMPS 4

typedef struct nbuf {
    sg_ctx *ctx; /* whose allocator */
    uint8_t *c;
    size_t n, cap;
    uint32_t *fix; /* offsets of the rel32 fields that jump to the fail stub */
    size_t nfix, fixcap;
} nbuf;

static bool room(nbuf *B)
{
    return sg__grow(B->ctx, (void **)&B->c, &B->cap, B->n + GP_NATIVE_ELT_MAX, 1) &&
           sg__grow(B->ctx, (void **)&B->fix, &B->fixcap, B->nfix + GP_NATIVE_ELT_JUMPS, sizeof *B->fix);
}

enum { RAX = 0, RCX = 1, RDX = 2, RSI = 6 };
/* condition codes (the low nibble of jcc and cmovcc) */
enum { CC_O = 0x0, CC_E = 0x4, CC_NE = 0x5, CC_A = 0x7, CC_NS = 0x9, CC_L = 0xc, CC_G = 0xf };
#define REX_W 0x48

static void b1(nbuf *B, uint8_t x)
{
    B->c[B->n++] = x;
}

static void b4(nbuf *B, uint32_t x)
{
    for (int i = 0; i < 4; i++)
        b1(B, (uint8_t)(x >> (8 * i)));
}

static void b8(nbuf *B, uint64_t x)
{
    b4(B, (uint32_t)x);
    b4(B, (uint32_t)(x >> 32));
}

static bool fits8(int64_t k)
{
    return k >= INT8_MIN && k <= INT8_MAX;
}

static bool fits32(int64_t k)
{
    return k >= INT32_MIN && k <= INT32_MAX;
}

/* An instruction with an immediate k (fitting a sign-extended int32) has an
 * imm8 form, opcode op8, when k fits a sign-extended byte, else an imm32 one,
 * op32: imm_op picks the opcode, imm writes k after the ModRM bytes. */
static uint8_t imm_op(int64_t k, uint8_t op8, uint8_t op32)
{
    return fits8(k) ? op8 : op32;
}

static void imm(nbuf *B, int64_t k)
{
    if (fits8(k))
        b1(B, (uint8_t)k);
    else
        b4(B, (uint32_t)k);
}

/* The ModRM byte (and displacement) of the operand v[slot], [rsi + 8*slot],
 * with reg in the reg field (a register or an opcode extension). */
static void mem(nbuf *B, unsigned reg, uint32_t slot)
{
    uint32_t disp = 8 * slot; /* slot < 2**28 (sg__gp_native_build) */
    if (disp <= INT8_MAX) {
        b1(B, (uint8_t)(0x40 | reg << 3 | RSI));
        b1(B, (uint8_t)disp);
    } else {
        b1(B, (uint8_t)(0x80 | reg << 3 | RSI));
        b4(B, disp);
    }
}

/* A ModRM byte of two registers (mod 11): reg in its reg field (a register
 * or an opcode extension), rm in its r/m field; which is the destination
 * depends on the opcode. */
static void rr(nbuf *B, unsigned reg, unsigned rm)
{
    b1(B, (uint8_t)(0xc0 | reg << 3 | rm));
}

/* mov reg, v[slot] */
static void load(nbuf *B, unsigned reg, uint32_t slot)
{
    b1(B, REX_W);
    b1(B, 0x8b);
    mem(B, reg, slot);
}

/* jcc to the fail stub (rel32, patched at the end) */
static void jfail(nbuf *B, unsigned cc)
{
    b1(B, 0x0f);
    b1(B, (uint8_t)(0x80 | cc));
    B->fix[B->nfix++] = (uint32_t)B->n;
    b4(B, 0);
}

/* rcx = k (movabs when k does not fit a sign-extended imm32) */
static void mov_rcx(nbuf *B, int64_t k)
{
    b1(B, REX_W);
    if (fits32(k)) {
        b1(B, 0xc7);
        rr(B, 0, RCX);
        b4(B, (uint32_t)k);
    } else {
        b1(B, 0xb9);
        b8(B, (uint64_t)k);
    }
}

/* An ALU operation of rax with the constant k: ext is the opcode extension of
 * the 0x81/0x83 group (5 sub, 7 cmp), op_rr the opcode of "op rax, rcx" for a
 * constant that needs rcx. */
static void alu_rax(nbuf *B, unsigned ext, uint8_t op_rr, int64_t k)
{
    if (fits32(k)) {
        b1(B, REX_W);
        b1(B, imm_op(k, 0x83, 0x81));
        rr(B, ext, RAX);
        imm(B, k);
        return;
    }
    mov_rcx(B, k);
    b1(B, REX_W);
    b1(B, op_rr);
    rr(B, RCX, RAX);
}

/* cmp rax, k (test rax, rax for 0) */
static void cmp_rax(nbuf *B, int64_t k)
{
    if (k == 0) {
        b1(B, REX_W);
        b1(B, 0x85);
        rr(B, RAX, RAX);
        return;
    }
    alu_rax(B, 7, 0x39, k);
}

/* cmp qword v[slot], k (k fits imm32) */
static void cmp_mem(nbuf *B, uint32_t slot, int64_t k)
{
    b1(B, REX_W);
    b1(B, imm_op(k, 0x83, 0x81));
    mem(B, 7, slot);
    imm(B, k);
}

/* The test of f in the set of e: f is in rax, or in v[slot] when slot is not
 * UINT32_MAX (then it is loaded only if the test needs it in a register). */
static void set_test(nbuf *B, const gp_elt *e, uint32_t slot)
{
    uint64_t lo = e->lo, span = e->span, hi = lo + span;
    int64_t k;
    unsigned cc;
    if (span == UINT64_MAX)
        return; /* every value */
    if (span == 0)
        k = (int64_t)lo, cc = CC_NE;
    else if (span == UINT64_MAX - 1)
        k = (int64_t)(hi + 1), cc = CC_E; /* every value but hi + 1 */
    else if ((int64_t)lo <= (int64_t)hi && (int64_t)hi == INT64_MAX)
        k = (int64_t)lo, cc = CC_L;
    else if ((int64_t)lo <= (int64_t)hi && (int64_t)lo == INT64_MIN)
        k = (int64_t)hi, cc = CC_G;
    else {
        /* (uint64_t)(f - lo) > span */
        if (slot != UINT32_MAX)
            load(B, RAX, slot);
        alu_rax(B, 5, 0x29, (int64_t)lo);
        cmp_rax(B, (int64_t)span);
        jfail(B, CC_A);
        return;
    }
    if (slot != UINT32_MAX && fits32(k)) {
        cmp_mem(B, slot, k);
    } else {
        if (slot != UINT32_MAX)
            load(B, RAX, slot);
        cmp_rax(B, k);
    }
    jfail(B, cc);
}

/* rax = x / m, rdx = x % m (C's), x = v[a], m = the positive constant in rcx */
static void idiv_m(nbuf *B, uint32_t a, uint32_t m)
{
    load(B, RAX, a);
    b1(B, REX_W); /* cqo */
    b1(B, 0x99);
    b1(B, 0xb9); /* mov ecx, m (zero-extended) */
    b4(B, m);
    b1(B, REX_W); /* idiv rcx */
    b1(B, 0xf7);
    rr(B, 7, RCX);
}

/* rax = the atom of kind k (GP_RUN_SLOT .. GP_RUN_MUL) of element e */
static void atom(nbuf *B, gp_op k, const gp_elt *e)
{
    switch (k) {
    case GP_RUN_SLOT:
        load(B, RAX, e->a);
        break;
    case GP_RUN_MODP2: /* and rax, 2**s - 1 */
        load(B, RAX, e->a);
        if (e->b <= INT32_MAX) {
            b1(B, REX_W);
            b1(B, 0x81);
            rr(B, 4, RAX);
            b4(B, e->b);
        } else {
            mov_rcx(B, e->b);
            b1(B, REX_W);
            b1(B, 0x21);
            rr(B, RCX, RAX);
        }
        break;
    case GP_RUN_MOD: /* r + m when r < 0: lea rax, [rdx + rcx]; test rdx, rdx; cmovns rax, rdx */
        idiv_m(B, e->a, e->b);
        b1(B, REX_W);
        b1(B, 0x8d);
        b1(B, 0x04);
        b1(B, 0x0a);
        b1(B, REX_W);
        b1(B, 0x85);
        rr(B, RDX, RDX);
        b1(B, REX_W);
        b1(B, 0x0f);
        b1(B, 0x40 | CC_NS);
        rr(B, RAX, RDX);
        break;
    case GP_RUN_DIVP2: /* sar rax, s */
        load(B, RAX, e->a);
        if (e->b) {
            b1(B, REX_W);
            b1(B, 0xc1);
            rr(B, 7, RAX);
            b1(B, (uint8_t)e->b);
        }
        break;
    case GP_RUN_DIV: /* q - (r < 0): shr rdx, 63; sub rax, rdx */
        idiv_m(B, e->a, e->b);
        b1(B, REX_W);
        b1(B, 0xc1);
        rr(B, 5, RDX);
        b1(B, 63);
        b1(B, REX_W);
        b1(B, 0x29);
        rr(B, RDX, RAX);
        break;
    case GP_RUN_MAX:
    case GP_RUN_MIN: /* cmp rax, rcx; cmovl (Max) or cmovg (Min) rax, rcx */
        load(B, RAX, e->a);
        load(B, RCX, e->b);
        b1(B, REX_W);
        b1(B, 0x39);
        rr(B, RCX, RAX);
        b1(B, REX_W);
        b1(B, 0x0f);
        b1(B, (uint8_t)(0x40 | (k == GP_RUN_MAX ? CC_L : CC_G)));
        rr(B, RAX, RCX);
        break;
    case GP_RUN_MUL: /* imul rax, v[b]; jo */
        load(B, RAX, e->a);
        b1(B, REX_W);
        b1(B, 0x0f);
        b1(B, 0xaf);
        mem(B, RAX, e->b);
        jfail(B, CC_O);
        break;
    default:
        break;
    }
}

/* One element of kind k. */
static void element(nbuf *B, gp_op k, const gp_elt *e)
{
    switch (k) {
    case GP_RUN_SLOT:
        set_test(B, e, e->a);
        return;
    case GP_RUN_SAME:
    case GP_RUN_NSAME: /* cmp rax, v[z]; jne (SAME) or je (NSAME) */
    case GP_RUN_DIFF:  /* sub rax, v[z]; jo */
        load(B, RAX, e->a);
        b1(B, REX_W);
        b1(B, k == GP_RUN_DIFF ? 0x2b : 0x3b);
        mem(B, RAX, e->z);
        if (k != GP_RUN_DIFF) {
            jfail(B, k == GP_RUN_SAME ? CC_NE : CC_E);
            return;
        }
        jfail(B, CC_O);
        break;
    case GP_RUN_MODP2: case GP_RUN_MOD: case GP_RUN_DIVP2: case GP_RUN_DIV:
    case GP_RUN_MAX: case GP_RUN_MIN: case GP_RUN_MUL:
        atom(B, k, e);
        break;
    default: /* the kinds with a z term: rax = atom; then add or sub rax, v[z] (k = +-1) or
              * imul rcx, v[z], k; add rax, rcx; each with a jo */
        atom(B, k == GP_RUN_LIN ? GP_RUN_SLOT : (gp_op)(k - GP_RUN_Z), e);
        if (e->k == 1 || e->k == -1) {
            b1(B, REX_W);
            b1(B, e->k == 1 ? 0x03 : 0x2b);
            mem(B, RAX, e->z);
            jfail(B, CC_O);
            break;
        }
        b1(B, REX_W);
        b1(B, imm_op(e->k, 0x6b, 0x69));
        mem(B, RCX, e->z);
        imm(B, e->k);
        jfail(B, CC_O);
        b1(B, REX_W);
        b1(B, 0x01);
        rr(B, RCX, RAX);
        jfail(B, CC_O);
        break;
    }
    set_test(B, e, UINT32_MAX);
}

/* The whole pass into B; false when memory runs out. */
static bool emit(nbuf *B, const sg_guard_prog *p)
{
    static const uint8_t endbr64[] = {0xf3, 0x0f, 0x1e, 0xfa}; /* a nop without CET */
    if (!room(B))
        return false;
    for (size_t i = 0; i < sizeof endbr64; i++)
        b1(B, endbr64[i]);
    const gp_elt *e = p->fast;
    for (size_t s = 0; s < p->nsegs; s++)
        for (; e != p->segs[s].end; e++) {
            if (!room(B))
                return false;
            element(B, (gp_op)p->segs[s].entry, e);
        }
    if (!room(B))
        return false;
    b1(B, 0xb8); /* mov eax, 1 or 2; ret */
    b4(B, p->nreg_insns ? 2u : 1u);
    b1(B, 0xc3);
    uint32_t fail = (uint32_t)B->n;
    b1(B, 0x31); /* xor eax, eax; ret */
    b1(B, 0xc0);
    b1(B, 0xc3);
    for (size_t i = 0; i < B->nfix; i++) {
        uint32_t at = B->fix[i], rel = fail - (at + 4);
        memcpy(B->c + at, &rel, 4); /* little-endian, as the machine */
    }
    return true;
}

bool sg__gp_native_build(sg_guard_prog *p, bool want)
{
    size_t n = (size_t)(p->segs[p->nsegs].end - p->fast);
    /* the slots' displacements and the jumps are 32-bit */
    if (!want || !n || p->nslots >= (size_t)1 << 28 || n >= (INT32_MAX - 64) / GP_NATIVE_ELT_MAX)
        return true; /* interpreted */
    nbuf B = {.ctx = p->ctx};
    if (!emit(&B, p)) {
        sg_free(B.c);
        sg_free(B.fix);
        return false;
    }
    long page = sysconf(_SC_PAGESIZE);
    size_t len = page > 0 ? (B.n + (size_t)page - 1) / (size_t)page * (size_t)page : B.n;
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED) {
        memcpy(m, B.c, B.n);
        if (mprotect(m, len, PROT_READ | PROT_EXEC) == 0) {
            gp_pass_fn fn;
            memcpy(&fn, &m, sizeof fn); /* an object pointer to a function pointer, as POSIX allows */
            p->native = fn;
            p->native_mem = m;
            p->native_len = len;
            p->native_size = B.n;
        } else {
            munmap(m, len);
        }
    }
    sg_free(B.c);
    sg_free(B.fix);
    return true;
}

bool sg__gp_native_supported(void)
{
    return true;
}

void sg__gp_native_free(sg_guard_prog *p)
{
    if (p->native_mem)
        munmap(p->native_mem, p->native_len);
}

#else /* no native backend here */

bool sg__gp_native_supported(void)
{
    return false;
}

bool sg__gp_native_build(sg_guard_prog *p, bool want)
{
    (void)p;
    (void)want;
    return true;
}

void sg__gp_native_free(sg_guard_prog *p)
{
    (void)p;
}

#endif
