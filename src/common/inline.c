/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Emit every inline helper of the public headers as an exported symbol, for
 * language bindings and debuggers: including the headers with UXDP_INLINE
 * defined as a plain exported definition turns each `static inline` helper
 * into an ordinary function in this one translation unit. C callers keep
 * using the inline versions.
 */
#define UXDP_INLINE UXDP_EXPORT
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#include "../internal.h"

#include <uxdp/uxdp.h>
