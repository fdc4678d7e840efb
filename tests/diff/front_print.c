/* Reads a program on stdin and prints it as the parser sees it (the
 * canonical text of src/front/pyprint.c), or "error KIND: MESSAGE"
 * (for tests/diff/front.test). Programs are separated by lines "#---". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/front_private.h"
#include "shapeguard.h"

static void one(sg_ctx *ctx, const char *src, size_t n)
{
    sg__ast *a;
    char *text = NULL;
    sg_status s = sg__py_parse(ctx, &a, src, n);
    if (!s) {
        s = sg__py_print(ctx, &text, sg__ast_module(a));
        sg__ast_free(a);
    }
    if (s)
        printf("error %s: %s\n", sg_status_kind(s), sg_ctx_last_error_msg(ctx));
    else
        printf("%s", text);
    sg_free(text);
    printf("#---\n");
}

int main(void)
{
    sg_ctx *ctx;
    if (sg_ctx_new(&ctx))
        return 2;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    char line[65536];
    while (buf && fgets(line, sizeof line, stdin)) {
        if (!strcmp(line, "#---\n")) {
            one(ctx, buf, n);
            n = 0;
            continue;
        }
        size_t k = strlen(line);
        if (n + k + 1 > cap && !(buf = realloc(buf, cap = 2 * (n + k + 1))))
            return 2;
        memcpy(buf + n, line, k);
        n += k;
    }
    if (buf && n)
        one(ctx, buf, n);
    free(buf);
    sg_ctx_free(ctx);
    return 0;
}
