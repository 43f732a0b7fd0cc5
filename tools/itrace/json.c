// SPDX-License-Identifier: GPL-2.0
/* JSON helpers over json-c; see json.h. */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "sym.h"

/* Length of the valid UTF-8 sequence at s (1-4), 0 if it is not one. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond Unicode */
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
	    (len == 4 && cp < 0x10000) || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

struct json_object *jstrn(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	struct json_object *o;
	size_t i, k, bad = 0;
	char *buf, *p;

	for (i = 0; i < n; i += k) {
		k = utf8_len(s + i, n - i);
		if (!k) {
			bad++;
			k = 1;
		}
	}
	if (!bad)
		return json_object_new_string_len(str, n);
	/* each bad byte becomes U+FFFD, 3 bytes */
	buf = malloc(n + 2 * bad + 1);
	if (!buf)
		return NULL;
	for (i = 0, p = buf; i < n; i += k) {
		k = utf8_len(s + i, n - i);
		if (k) {
			memcpy(p, s + i, k);
			p += k;
		} else {
			memcpy(p, "\xef\xbf\xbd", 3);
			p += 3;
			k = 1;
		}
	}
	o = json_object_new_string_len(buf, p - buf);
	free(buf);
	return o;
}

struct json_object *jstr(const char *s)
{
	return s ? jstrn(s, strlen(s)) : NULL;
}

struct json_object *jaddr(uint64_t ip)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)ip);
	return json_object_new_string(buf);
}

struct json_object *jdoc(const char *format)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "format", json_object_new_string(format));
	json_object_object_add(o, "version", json_object_new_int(ITRACE_JSON_VERSION));
	return o;
}

struct json_object *jloc(struct symtab *st, uint64_t ip)
{
	struct json_object *o = json_object_new_object();
	struct sym_info si;
	const char *file;
	int line;

	json_object_object_add(o, "ip", jaddr(ip));
	sym_lookup(st, ip, &si);
	if (si.name) {
		json_object_object_add(o, "symbol", jstrn(si.name, sym_name_len(si.name)));
		json_object_object_add(o, "offset", json_object_new_uint64(ip - si.start));
	}
	json_object_object_add(o, "module", si.module && strcmp(si.module, "?") ?
			       jstr(si.module) : NULL);
	if (!sym_srcline(st, ip, &file, &line)) {
		json_object_object_add(o, "file", jstr(file));
		json_object_object_add(o, "line", json_object_new_int(line));
	}
	return o;
}

int jprint(FILE *f, struct json_object *obj, int pretty)
{
	int flags = JSON_C_TO_STRING_NOSLASHESCAPE |
		    (pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED :
			      JSON_C_TO_STRING_PLAIN);

	if (fputs(json_object_to_json_string_ext(obj, flags), f) == EOF || fputc('\n', f) == EOF)
		return -1;
	return 0;
}
