/* Fuzz target for the parser, the printers and evaluation: any bytes must
 * give a status, never a crash, a leak or an abort; whatever parses must
 * print in the battery syntax and parse back to the same node.
 *
 * With -fsanitize=fuzzer this is a libFuzzer target; otherwise the main()
 * of replay_main.c replays the files named on the command line (make check
 * replays the corpus in tests/fuzz/corpus). */
#include <stdio.h>
#include <stdlib.h>

#include "shapeguard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sg_ctx *ctx;
    if (sg_ctx_new(&ctx) != SG_OK)
        return 0;
    const sg_expr *e, *back, *v;
    if (sg_parse_n(ctx, &e, (const char *)data, size, NULL) == SG_OK) {
        char *text;
        if (sg_print(ctx, &text, e, SG_FMT_SG) == SG_OK) {
            if (sg_parse(ctx, &back, text, NULL) != SG_OK || back != e) {
                fprintf(stderr, "round trip failed: %s\n", text);
                abort();
            }
            sg_free(text);
        }
        for (int f = SG_FMT_PYTHON; f <= SG_FMT_C; f++)
            if (sg_print(ctx, &text, e, (sg_format)f) == SG_OK)
                sg_free(text);
        const sg_expr **syms;
        size_t n;
        if (sg_expr_free_symbols(ctx, &syms, &n, e) == SG_OK) {
            const sg_expr **vals = malloc((n ? n : 1) * sizeof *vals);
            for (size_t i = 0; vals && i < n; i++)
                if (sg_expr_int(ctx, &vals[i], (int64_t)(i * 7 % 11) - 5) != SG_OK)
                    n = i;
            if (vals && sg_expr_eval(ctx, &v, e, n, syms, vals) != SG_OK)
                sg_ctx_reset_error(ctx); /* an evaluation error is a fine answer */
            free(vals);
            sg_free(syms);
        }
    }
    sg_ctx_free(ctx);
    return 0;
}
