/* ampshim-gen: the build-time policy generator. Reads policy/data: the op
 * lists named in lists.txt, the binding tables, the library families and
 * the counters; writes the single hook list (an X-macro every wrapper, slot,
 * name and counter expands from) with one sub-list per family and per kind,
 * the family, counter and list-file X-macros, the default policy table and
 * which list file each op's category comes from, and the policy section of
 * ampshim(7). Everything a routine, data file or counter is called anywhere
 * else comes from here.
 *
 * usage: ampshim-gen DATA_DIR OUT_HEADER OUT_TABLES_C MAN_TEMPLATE OUT_MAN DEPFILE
 * Any inconsistency in the data (unknown kind, op in no list, op in two
 * categories of one device, duplicate routine) fails the build. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>


#include "policy/gen/gen.h"

int main(int argc, char **argv)
{
    if (argc != 7)
        die("usage: ampshim-gen DATA_DIR OUT_HEADER OUT_TABLES_C MAN_TEMPLATE OUT_MAN DEPFILE");
    read_lists(argv[1]);
    read_families(argv[1]);
    /* The source tree: the folder above the template's (man/). */
    char root[4096];
    snprintf(root, sizeof root, "%s", argv[4]);
    char *slash = strrchr(root, '/');
    if (slash)
        snprintf(slash, sizeof root - (size_t)(slash - root), "/..");
    else
        snprintf(root, sizeof root, "..");
    read_kinds(argv[1], root);
    read_counters(argv[1]);
    read_globs(argv[1], &library_table);
    read_globs(argv[1], &onednn_caller_table);
    read_globs(argv[1], &blas_wrapper_table);
    read_globs(argv[1], &embedded_blas_table);
    read_globs(argv[1], &framework_table);
    read_globs(argv[1], &op_frame_table);
    read_manglings(argv[1]);
    for (int i = 0; i < n_list_files; i++)
        read_op_list(argv[1], &list_files[i]);
    /* The op of entry points that decide by what they are given (op "-" in
     * a binding table): passthrough everywhere, in no list. */
    if (find_op("dispatch") >= 0 || n_ops == MAX_OPS)
        die("an op list names 'dispatch', the op of dispatching entry points");
    strcpy(ops[n_ops++], "dispatch");
    check_op_frames();
    read_bindings(argv[1], "bindings.txt", 0, 0);
    read_bindings(argv[1], "bindings_cuda.txt", 1, 1);
    read_bindings(argv[1], "bindings_onednn.txt", 1, 0);
    build_hooks();
    write_header(argv[2]);
    write_tables(argv[3]);
    write_man(argv[4], argv[5]);
    write_depfile(argv[6], argv[2]);
    return 0;
}
