#ifndef MLKIT_ICU_H
#define MLKIT_ICU_H
#include <stdint.h>

/// Finds dictionary word boundaries in UTF-8 text with ICU's word break iterator
/// (`ubrk_open` + `utext_openUTF8`).
///
/// Writes one triple per segment into `triples`: start byte offset, end byte offset, and
/// ICU's rule status (0 for spaces, punctuation and symbols; 100 and above for numbers,
/// letters, kana and ideographs). Returns the number of segments, which may exceed
/// `capacity` (only the first `capacity` triples are written), or -1 when ICU reports an
/// error, with the ICU error name in `error_name` when it is not NULL.
int32_t mlkit_icu_word_segments(const char *utf8, int32_t length, const char *locale,
                                int32_t *triples, int32_t capacity,
                                const char **error_name);

/// The ICU version string, for diagnostics.
const char *mlkit_icu_version(void);
#endif
