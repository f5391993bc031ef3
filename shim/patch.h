/* Entry patches: a function the loader cannot interpose (a local symbol of
 * another library, such as the oneDNN inside pip's libtorch_cpu.so) made to
 * jump to a hook, with a trampoline that runs the function as it was.
 *
 * How it is made safe (shim/patch_x86_64.c):
 * - Instruction boundaries: the first instructions are decoded by a short
 *   list of prologue forms (endbr64, push, register moves, sub rsp, mov
 *   imm32, xor and pxor of registers), none of which reads memory or the
 *   instruction pointer, so the trampoline runs copies of them unchanged.
 *   Anything else refuses the patch, with why: no general decoder is
 *   needed to move position-independent instructions, and a refusal leaves
 *   the function as it was.
 * - W^X: no page is ever writable and executable. The patched page is
 *   copied into a fresh writable mapping, changed there, made read-execute
 *   and moved over the original with one mremap: another thread executing
 *   the page sees the old or the new page, never a half-written one or a
 *   non-executable one.
 * - Other threads: a function is patched before any thread can have run
 *   it (its object has just been loaded, or the process has one thread);
 *   the caller (shim/onednn/v3_inside.c) sees to that. A patch is never
 *   undone: the object's text keeps the jump while it is loaded.
 * - The jump from the entry reaches a pad within 2 GiB of it (a page mapped
 *   near the object), and the pad jumps anywhere. */
#ifndef AMPSHIM_PATCH_H
#define AMPSHIM_PATCH_H

#include <stddef.h>

/* Makes fn jump to hook. Returns the trampoline that runs fn as it was
 * (call it with fn's arguments), or NULL with why (one clause) when fn is
 * left unchanged. */
void *amp_patch_entry(void *fn, void *hook, char *why, size_t whylen);

#endif
