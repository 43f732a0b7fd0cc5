/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JSON output of decode and core, through json-c.  The documents follow
 * tools/itrace/itrace.schema.json (a JSON Schema); every document carries
 * "format" (which document) and "version" (ITRACE_JSON_VERSION: bumped when
 * a field changes meaning or goes away; new fields may come without it).
 */
#ifndef ITRACE_JSON_H
#define ITRACE_JSON_H

#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>

#define ITRACE_JSON_VERSION	1

struct symtab;

/* A string as JSON: bytes that are not UTF-8 become U+FFFD. */
struct json_object *jstr(const char *s);
struct json_object *jstrn(const char *s, size_t len);
/* An address as a "0x..." string (64-bit values do not fit a double). */
struct json_object *jaddr(uint64_t ip);
/* A new document {"format": format, "version": ITRACE_JSON_VERSION}. */
struct json_object *jdoc(const char *format);
/*
 * A code location: {"ip", "symbol", "offset", "module", "file", "line"};
 * symbol, offset, file and line only where known.  exe: the program's
 * module name, so that the "module" field is given for every location.
 */
struct json_object *jloc(struct symtab *st, uint64_t ip);
/* Print obj and a newline (pretty: indented); 0, or -1 on a write error. */
int jprint(FILE *f, struct json_object *obj, int pretty);

#endif
