#include "mlkit_icu.h"
#include <unicode/ubrk.h>
#include <unicode/utext.h>
#include <unicode/uversion.h>
#include <unicode/utypes.h>
#include <stdio.h>

int32_t mlkit_icu_word_segments(const char *utf8, int32_t length, const char *locale,
                                int32_t *triples, int32_t capacity,
                                const char **error_name) {
    UErrorCode status = U_ZERO_ERROR;
    UText *text = utext_openUTF8(NULL, utf8, length, &status);
    if (U_FAILURE(status)) { if (error_name) *error_name = u_errorName(status); return -1; }
    UBreakIterator *bi = ubrk_open(UBRK_WORD, locale, NULL, 0, &status);
    if (U_FAILURE(status)) {
        utext_close(text);
        if (error_name) *error_name = u_errorName(status);
        return -1;
    }
    ubrk_setUText(bi, text, &status);
    if (U_FAILURE(status)) {
        ubrk_close(bi); utext_close(text);
        if (error_name) *error_name = u_errorName(status);
        return -1;
    }
    int32_t count = 0;
    int32_t start = ubrk_first(bi);
    for (int32_t end = ubrk_next(bi); end != UBRK_DONE; start = end, end = ubrk_next(bi)) {
        // UText over UTF-8 reports native (byte) indexes.
        if (count < capacity) {
            triples[3 * count] = start;
            triples[3 * count + 1] = end;
            triples[3 * count + 2] = ubrk_getRuleStatus(bi);
        }
        count++;
    }
    ubrk_close(bi);
    utext_close(text);
    return count;
}

const char *mlkit_icu_version(void) {
    static char buffer[U_MAX_VERSION_STRING_LENGTH];
    UVersionInfo info;
    u_getVersion(info);
    u_versionToString(info, buffer);
    return buffer;
}
