/* The main() of a fuzz target built without libFuzzer: it feeds each file
 * named on the command line to LLVMFuzzerTestOneInput, as libFuzzer would,
 * and prints how many it replayed (make check replays the corpora so). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
    int files = 0;
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            fprintf(stderr, "%s: cannot open\n", argv[i]);
            return 1;
        }
        char *buf = NULL;
        size_t len = 0, cap = 0, got;
        char chunk[4096];
        while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
            if (len + got > cap) {
                cap = (len + got) * 2;
                char *nb = realloc(buf, cap);
                if (!nb) {
                    free(buf);
                    fclose(f);
                    return 1;
                }
                buf = nb;
            }
            memcpy(buf + len, chunk, got);
            len += got;
        }
        fclose(f);
        LLVMFuzzerTestOneInput((const uint8_t *)buf, len);
        free(buf);
        files++;
    }
    const char *name = strrchr(argv[0], '/');
    printf("%s: replayed %d inputs\n", name ? name + 1 : argv[0], files);
    return 0;
}
