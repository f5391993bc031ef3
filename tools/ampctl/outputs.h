/* What `ampctl check` compares of a program's runs (tools/ampctl/check.c):
 * its standard output and the files it writes, read as numbers where they
 * hold numbers. Text (standard output, a text file) is a stream of number
 * tokens and the words between them; numpy's .npy (and the .npy members of
 * an uncompressed .npz) is an array of its dtype; another binary file whose
 * size is a multiple of 4 is float32 values; anything else is bytes. An
 * integer token, an integer or boolean array's element, or a word that
 * differs is a changed decision (an argmax, an iteration count, a
 * "converged"); floats differ by their relative Frobenius difference, an
 * array's whole, a text's line by line (its largest element's shown too). */
#ifndef AMPCTL_OUTPUTS_H
#define AMPCTL_OUTPUTS_H

#include <stddef.h>

/* One output's comparison with the same output of the run as made. */
struct ampctl_diff {
    int readable;     /* 0: bytes only (a compressed .npz, a binary of odd size) */
    int reproducible; /* 0: two runs as made differ in its shape: nothing compared */
    int identical;    /* byte for byte */
    size_t numbers;   /* values compared */
    size_t noisy;     /* values two runs as made gave differently: left out */
    double max_rel;   /* largest relative difference of a float (array: Frobenius) */
    double elem_max;  /* an array's largest elementwise relative difference */
    size_t max_at;    /* which value (0-based) */
    size_t decisions; /* integers, booleans or words that changed */
    char first[256];  /* the first changed decision, in words */
};

/* An output's content as read from a file or a run's standard output. */
struct ampctl_blob {
    char *data;
    size_t size;
    char name[512]; /* decides its kind: .npy, .npz, a text or binary file */
};

/* Reads path whole into b (name: how it is shown); 0 or -1 with errno. */
int ampctl_blob_read(struct ampctl_blob *b, const char *path, const char *name);
void ampctl_blob_free(struct ampctl_blob *b);

/* Compares `low` (a lowered run's output) with `made` (the run as made),
 * leaving out the values in which `again` (the run as made, once more)
 * differs from `made`. */
void ampctl_compare(const struct ampctl_blob *made, const struct ampctl_blob *again,
                    const struct ampctl_blob *low, struct ampctl_diff *d);

/* Whether d is within tolerance: no decision changed, no float further
 * than tol, and readable or identical. */
int ampctl_diff_matches(const struct ampctl_diff *d, double tol);

#endif
