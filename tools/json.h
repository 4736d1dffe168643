/* JSON-lines output: one flat object per line, written field by field. */
#ifndef BSRMV_TOOLS_JSON_H
#define BSRMV_TOOLS_JSON_H

#include <stdint.h>
#include <stdio.h>

struct json_line {
    FILE *f;
    int fields; /* written so far, to place the commas */
};

void json_begin(struct json_line *j, FILE *f);
/* val is escaped; bytes that are not valid UTF-8 become U+FFFD, so the
 * line stays valid JSON whatever a file name holds. */
void json_str(struct json_line *j, const char *key, const char *val);
void json_int(struct json_line *j, const char *key, int64_t val);
/* NaN and infinities have no JSON spelling: written as null. */
void json_num(struct json_line *j, const char *key, double val);
/* Closes the object and ends the line. */
void json_end(struct json_line *j);

#endif
