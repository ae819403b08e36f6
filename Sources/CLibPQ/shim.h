/* libpq, PostgreSQL's client library (Debian's libpq-dev): ParleyStore's PostgreSQL connection. */
#include <libpq-fe.h>
/* PG_DIAG_* are character-literal macros: Swift reads a failed result's fields through these. */
static inline const char *parley_pq_sqlstate(const PGresult *r) { return PQresultErrorField(r, PG_DIAG_SQLSTATE); }
static inline const char *parley_pq_primary_message(const PGresult *r) { return PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY); }
static inline const char *parley_pq_detail(const PGresult *r) { return PQresultErrorField(r, PG_DIAG_MESSAGE_DETAIL); }
