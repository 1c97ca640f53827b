/* vt_number.h - the one strict parser for numbers given as text (options,
 * params, environment variables). */
#ifndef VT_NUMBER_H
#define VT_NUMBER_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Parse all of s as an unsigned number: decimal digits, or 0x and hex
 * digits. No leading space, no sign, nothing after the digits, no
 * overflow: false (and *out untouched) otherwise. */
bool vt_parse_u64(const char *s, uint64_t *out);

/* Parse all of s as a signed number: an optional '-' then what
 * vt_parse_u64 takes, within [min, max]. False otherwise. */
bool vt_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);

#ifdef __cplusplus
}
#endif

#endif /* VT_NUMBER_H */
