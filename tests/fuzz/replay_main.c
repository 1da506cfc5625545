/* Runs a libFuzzer-style target without libFuzzer: every file of a corpus
 * directory, then N deterministic mutations of them (bit flips, truncations,
 * byte insertions, splices). Used by CTest so that every parser is fuzzed in
 * every test run; `-DGPUVET_FUZZ=ON` with clang builds the coverage-guided
 * version of the same target. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct input {
    uint8_t *data;
    size_t size;
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int load_corpus(const char *dir, struct input **out, size_t *n)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "fuzz replay: cannot open corpus %s\n", dir);
        return -1;
    }
    struct dirent *e;
    size_t cap = 16;
    *out = calloc(cap, sizeof **out);
    *n = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        fseek(f, 0, SEEK_END);
        long sz = ftell(f);
        fseek(f, 0, SEEK_SET);
        if (sz < 0 || sz > (16 << 20)) {
            fclose(f);
            continue;
        }
        uint8_t *buf = malloc((size_t)sz + 1);
        if (fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
            free(buf);
            fclose(f);
            continue;
        }
        fclose(f);
        if (*n == cap) {
            cap *= 2;
            *out = realloc(*out, cap * sizeof **out);
        }
        (*out)[*n].data = buf;
        (*out)[*n].size = (size_t)sz;
        (*n)++;
    }
    closedir(d);
    return 0;
}

static void run_copy(const uint8_t *data, size_t size)
{
    /* An exact-size heap copy lets ASan catch reads past the end. */
    uint8_t *copy = malloc(size ? size : 1);
    if (size)
        memcpy(copy, data, size);
    LLVMFuzzerTestOneInput(copy, size);
    free(copy);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR [MUTATIONS]\n", argv[0]);
        return 2;
    }
    long mutations = argc > 2 ? atol(argv[2]) : 10000;
    struct input *in;
    size_t n;
    if (load_corpus(argv[1], &in, &n) != 0 || n == 0) {
        fprintf(stderr, "fuzz replay: corpus %s is empty\n", argv[1]);
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        run_copy(in[i].data, in[i].size);
    run_copy((const uint8_t *)"", 0);
    size_t maxlen = 0;
    for (size_t i = 0; i < n; i++)
        if (in[i].size > maxlen)
            maxlen = in[i].size;
    uint8_t *buf = malloc(maxlen * 2 + 64);
    for (long m = 0; m < mutations; m++) {
        const struct input *src = &in[next_rand() % n];
        size_t len = src->size;
        memcpy(buf, src->data, len);
        int rounds = 1 + (int)(next_rand() % 4);
        for (int r = 0; r < rounds; r++) {
            uint64_t op = next_rand() % 6;
            if (len == 0)
                op = 2;
            size_t pos = len ? next_rand() % len : 0;
            switch (op) {
            case 0: buf[pos] ^= (uint8_t)(1u << (next_rand() % 8)); break;
            case 1: buf[pos] = (uint8_t)next_rand(); break;
            case 2:
                if (len < maxlen * 2 + 32) {
                    memmove(buf + pos + 1, buf + pos, len - pos);
                    buf[pos] = (uint8_t)next_rand();
                    len++;
                }
                break;
            case 3: len = pos; break;
            case 4: { /* interesting integers */
                static const uint32_t vals[] = {0, 1, 0x7f, 0x80, 0xff, 0x7fffffff, 0xffffffff};
                uint32_t v = vals[next_rand() % 7];
                if (pos + 4 <= len)
                    memcpy(buf + pos, &v, 4);
                break;
            }
            default: { /* splice from another input */
                const struct input *o = &in[next_rand() % n];
                if (o->size && len) {
                    size_t from = next_rand() % o->size;
                    size_t cnt = o->size - from < len - pos ? o->size - from : len - pos;
                    memcpy(buf + pos, o->data + from, cnt);
                }
            }
            }
        }
        run_copy(buf, len);
    }
    printf("fuzz replay: %zu corpus inputs, %ld mutations, no crash\n", n, mutations);
    free(buf);
    for (size_t i = 0; i < n; i++)
        free(in[i].data);
    free(in);
    return 0;
}
