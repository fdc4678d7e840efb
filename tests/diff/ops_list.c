/* Prints the schema of every operator in the registry, one a line (for
 * tests/diff/schemas.test, which compares them with PyTorch's). */
#include <stdio.h>

#include "graph/schema.h"
#include "shapeguard.h"

int main(void)
{
    sg_ctx *ctx;
    sg__opreg *reg;
    if (sg_ctx_new(&ctx) != SG_OK)
        return 2;
    if (sg__opreg_new(ctx, &reg) != SG_OK) {
        fprintf(stderr, "ops_list: %s\n", sg_ctx_last_error_msg(ctx));
        sg_ctx_free(ctx);
        return 2;
    }
    for (size_t i = 0; i < sg__opreg_count(reg); i++) {
        char text[1024];
        sg__schema_print(sg__opreg_at(reg, i), text, sizeof text);
        printf("%s\n", text);
    }
    sg__opreg_free(reg);
    sg_ctx_free(ctx);
    return 0;
}
