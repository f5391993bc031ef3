/* ampctl check (ampctl(1), CHECK; tools/ampctl/check.c): a whole program
 * run as made and lowered on the user's own input, its outputs compared,
 * and the call sites that change them found and written as a policy. */
#ifndef AMPCTL_CHECK_H
#define AMPCTL_CHECK_H

/* argv: check's options, then the command (after "--", or at the first
 * word that is not an option); shim: the library's preloadable path.
 * Returns ampctl's exit status: 0 the lowered run's outputs match the run
 * as made, 1 they do not (the policy that makes them match written when
 * one was found), 2 a usage error. */
int ampctl_check(int argc, char **argv, int json, const char *shim);

/* Whether word is one of check's options that takes a value (main's
 * argument scan needs it to find the command). */
int ampctl_check_option_takes_value(const char *word);

#endif
