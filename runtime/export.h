/* How a symbol leaves a library of this project: everything is built with
 * -fvisibility=hidden, and this marks the few that are not. libampshim.so
 * exports the names it interposes (the generated hook list,
 * pthread_setname_np and dlopen) and its public API, all named ampshim_*;
 * libampscaler exports amp_scaler_*; libampshim-audit.so the la_* rtld-audit
 * interface. Every other function is internal, named amp_* (never
 * amp_scaler_* or ampshim_*), and hidden; tests/unit/test_exports.c checks
 * the built libraries against this rule. */
#ifndef AMPSHIM_EXPORT_H
#define AMPSHIM_EXPORT_H

#define AMP_EXPORT __attribute__((visibility("default")))

#endif
