/* Comma-separated fnmatch(3) patterns, as --only takes them everywhere. */
#ifndef GV_BASE_GLOBS_H
#define GV_BASE_GLOBS_H

/* 1 when s matches one of the comma-separated globs in patterns (NULL or "": all). */
int gv_globs_match(const char *patterns, const char *s);

#endif
