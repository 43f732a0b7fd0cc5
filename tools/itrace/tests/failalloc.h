/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tests/failalloc.c: the functions -Wl,--wrap=FN links the tool's calls
 * of FN to (__wrap_FN), and the C library's FN (__real_FN) they call.
 */
#ifndef ITRACE_FAILALLOC_H
#define ITRACE_FAILALLOC_H

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t nmemb, size_t size);
void *__real_realloc(void *ptr, size_t size);
void *__real_reallocarray(void *ptr, size_t nmemb, size_t size);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
int __real_vasprintf(char **strp, const char *fmt, va_list ap);
FILE *__real_open_memstream(char **ptr, size_t *sizeloc);
int __real_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			  void *arg);

void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t nmemb, size_t size);
void *__wrap_realloc(void *ptr, size_t size);
void *__wrap_reallocarray(void *ptr, size_t nmemb, size_t size);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
int __wrap_asprintf(char **strp, const char *fmt, ...);
int __wrap_vasprintf(char **strp, const char *fmt, va_list ap);
FILE *__wrap_open_memstream(char **ptr, size_t *sizeloc);
int __wrap_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			  void *arg);

/* the executable's first byte (the linker's): sites as addr2line offsets */
extern const char __executable_start[];

#endif
