/* libpq subset (libpq.so.5), opened at run time by history_pg.c: the history
 * store runs with SQLite on a machine without PostgreSQL's client library.
 * Types and values from PostgreSQL's libpq-fe.h and postgres_ext.h
 * (postgresql.org/docs/current/libpq.html): ConnStatusType CONNECTION_OK = 0;
 * ExecStatusType PGRES_COMMAND_OK = 1, PGRES_TUPLES_OK = 2; PG_DIAG_SQLSTATE
 * = 'C'; Oid is unsigned int; type OIDs from pg_type.dat (bool 16, bytea 17,
 * int8 20, int2 21, int4 23, float4 700, float8 701, numeric 1700). Every
 * symbol below exists in libpq.so.5 since PostgreSQL 9.0. */
#ifndef GV_STORE_SYMS_LIBPQ_H
#define GV_STORE_SYMS_LIBPQ_H

#include <stddef.h>

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;
typedef unsigned int Oid;
typedef void (*PQnoticeProcessor)(void *arg, const char *message);

enum {
    GV_PG_CONNECTION_OK = 0,
    GV_PG_PGRES_COMMAND_OK = 1,
    GV_PG_PGRES_TUPLES_OK = 2,
    GV_PG_DIAG_SQLSTATE = 'C',
};

enum {
    GV_PG_OID_BOOL = 16,
    GV_PG_OID_BYTEA = 17,
    GV_PG_OID_INT8 = 20,
    GV_PG_OID_INT2 = 21,
    GV_PG_OID_INT4 = 23,
    GV_PG_OID_FLOAT4 = 700,
    GV_PG_OID_FLOAT8 = 701,
    GV_PG_OID_NUMERIC = 1700,
};

/* X(REQ|OPT, field, return type, (parameters), "exported name") */
#define GV_SYMS_LIBPQ(X)                                                                      \
    X(REQ, PQconnectdbParams, PGconn *, (const char *const *, const char *const *, int),     \
      "PQconnectdbParams")                                                                    \
    X(REQ, PQstatus, int, (const PGconn *), "PQstatus")                                      \
    X(REQ, PQerrorMessage, char *, (const PGconn *), "PQerrorMessage")                       \
    X(REQ, PQfinish, void, (PGconn *), "PQfinish")                                           \
    X(REQ, PQsetNoticeProcessor, PQnoticeProcessor, (PGconn *, PQnoticeProcessor, void *),   \
      "PQsetNoticeProcessor")                                                                 \
    X(REQ, PQexec, PGresult *, (PGconn *, const char *), "PQexec")                           \
    X(REQ, PQexecParams, PGresult *,                                                          \
      (PGconn *, const char *, int, const Oid *, const char *const *, const int *,            \
       const int *, int),                                                                     \
      "PQexecParams")                                                                         \
    X(REQ, PQresultStatus, int, (const PGresult *), "PQresultStatus")                        \
    X(REQ, PQresultErrorMessage, char *, (const PGresult *), "PQresultErrorMessage")         \
    X(REQ, PQresultErrorField, char *, (const PGresult *, int), "PQresultErrorField")        \
    X(REQ, PQntuples, int, (const PGresult *), "PQntuples")                                  \
    X(REQ, PQnfields, int, (const PGresult *), "PQnfields")                                  \
    X(REQ, PQftype, Oid, (const PGresult *, int), "PQftype")                                 \
    X(REQ, PQgetvalue, char *, (const PGresult *, int, int), "PQgetvalue")                   \
    X(REQ, PQgetisnull, int, (const PGresult *, int, int), "PQgetisnull")                    \
    X(REQ, PQclear, void, (PGresult *), "PQclear")                                           \
    X(REQ, PQunescapeBytea, unsigned char *, (const unsigned char *, size_t *),              \
      "PQunescapeBytea")                                                                      \
    X(REQ, PQfreemem, void, (void *), "PQfreemem")                                           \
    X(OPT, PQlibVersion, int, (void), "PQlibVersion")

#endif
