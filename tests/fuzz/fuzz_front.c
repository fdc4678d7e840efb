/* Fuzz target for the program language's parser and printer: any bytes must
 * give a status, never a crash, a leak or an abort; whatever parses must
 * print, and the printed text must parse and print to the same text.
 *
 * With -fsanitize=fuzzer this is a libFuzzer target; otherwise the main()
 * of replay_main.c replays the files named on the command line (make check
 * replays the corpus in tests/fuzz/corpus_front). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/front_private.h"
#include "shapeguard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sg_ctx *ctx;
    sg__ast *a, *b;
    if (sg_ctx_new(&ctx) != SG_OK)
        return 0;
    if (sg__py_parse(ctx, &a, (const char *)data, size) == SG_OK) {
        char *text = NULL, *again = NULL;
        if (sg__py_print(ctx, &text, sg__ast_module(a)) == SG_OK) {
            sg_status st = sg__py_parse(ctx, &b, text, strlen(text));
            /* The printer parenthesizes as ast.unparse does (-a ** -b prints
             * as -a ** (-b)), and each parenthesis is a level of the parser's
             * nesting: a program near SG_PY_MAX_DEPTH may print past it. That
             * refusal, and only it, is allowed. */
            if (st == SG_ELIMIT && strstr(sg_ctx_last_error_msg(ctx), "nested too deeply")) {
                b = NULL;
            } else if (st != SG_OK) {
                fprintf(stderr, "the printed program does not parse: %s\n%s", sg_ctx_last_error_msg(ctx), text);
                abort();
            }
            if (b && sg__py_print(ctx, &again, sg__ast_module(b)) == SG_OK && strcmp(text, again)) {
                fprintf(stderr, "printing is not stable:\n%s---\n%s", text, again);
                abort();
            }
            sg_free(again);
            sg__ast_free(b);
        }
        sg_free(text);
        sg__ast_free(a);
    } else if (!sg_ctx_last_error_msg(ctx)[0]) {
        fprintf(stderr, "an error without a message\n");
        abort();
    }
    sg_ctx_free(ctx);
    return 0;
}
