import CLibPQ

/// One libpq result (`PGresult`), cleared when released; its rows are read through `PostgresRow`.
///
/// Why a class: a `PGresult` is malloc'd by libpq and must be freed exactly once (`PQclear`).
final class PostgresResult {
    let handle: OpaquePointer

    private init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        PQclear(handle)
    }

    /// What libpq returned for one command on `connection`: the result when the command succeeded,
    /// else its error (the SQLSTATE and primary message, the detail appended, scrubbed by `info`).
    static func checked(
        _ result: OpaquePointer?, connection: OpaquePointer, info: PostgresConnectionInfo
    ) -> Result<PostgresResult, StoreError> {
        guard let result else {
            // No result at all: out of memory, or the connection is gone.
            return .failure(.postgres(sqlstate: "", message: info.scrub(String(cString: PQerrorMessage(connection)))))
        }
        let owned = PostgresResult(handle: result)
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return .success(owned)
        default:
            let sqlstate = parley_pq_sqlstate(result).map { String(cString: $0) } ?? ""
            var message = parley_pq_primary_message(result).map { String(cString: $0) }
                ?? String(cString: PQerrorMessage(connection))
            if let detail = parley_pq_detail(result) {
                message += " (\(String(cString: detail)))"
            }
            return .failure(.postgres(sqlstate: sqlstate, message: info.scrub(message)))
        }
    }

    /// How many rows the result holds.
    var rowCount: Int32 { PQntuples(handle) }

    /// The rows the command changed (`PQcmdTuples`): 0 for a command that does not say.
    var changedRows: Int {
        guard let text = PQcmdTuples(handle) else { return 0 }
        return Int(String(cString: text)) ?? 0
    }

    /// The command's status tag (`COMMIT`, `ROLLBACK`, `INSERT 0 1`, …).
    var commandStatus: String {
        PQcmdStatus(handle).map { String(cString: $0) } ?? ""
    }

    func row(_ index: Int32) -> PostgresRow {
        PostgresRow(result: handle, row: index)
    }
}
