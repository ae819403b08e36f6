extension StoreMigration {
    /// What a migration copies, read from both catalogs before anything is written.
    struct Plan {
        /// Tables copied row by row, in an order the target's foreign keys accept.
        var tables: [TablePlan]
        /// Derived tables (SQLite's virtual ones) rebuilt on the target (`StoreMigration.rebuilds`).
        var rebuilt: [String]
        /// Where file bytes go; nil when the target keeps none (then the source must have none).
        var blobLayout: BlobLayout?

        /// The target tables that receive file bytes.
        var blobTables: [String] {
            switch blobLayout {
            case .chunks: ["blob_files", "blob_chunks"]
            case .whole: ["file_blobs"]
            case nil: []
            }
        }
    }

    /// A column of a target table.
    private struct TargetColumn {
        let name: String
        /// A stored generated column: computed by PostgreSQL, never written.
        let generated: Bool
        /// A `GENERATED ALWAYS AS IDENTITY` column (written with `OVERRIDING SYSTEM VALUE`).
        let identityAlways: Bool
    }

    /// Reads both schemas and decides what goes where. Refuses (`noPlaceInTarget`) when source data has
    /// no place in the target.
    func makePlan() throws(StoreError) -> Plan {
        let sourceTables = try source.query(
            "SELECT name, coalesce(sql, '') FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite!_%' ESCAPE '!' ORDER BY name"
        ) { row in (name: row.text(0), sql: row.text(1)) }
        let virtual = sourceTables.filter { $0.sql.uppercased().hasPrefix("CREATE VIRTUAL TABLE") }.map(\.name)
        let columns = try targetColumns()
        var tables: [TablePlan] = []
        for table in sourceTables where !virtual.contains(where: { table.name == $0 || table.name.hasPrefix($0 + "_") }) {
            guard let targetColumns = columns[table.name] else {
                try refuseRows(of: table.name, "this build's PostgreSQL schema has no table \(table.name)")
                continue
            }
            let hasRowID = !table.sql.uppercased().contains("WITHOUT ROWID")
            tables.append(try tablePlan(table.name, hasRowID: hasRowID, targetColumns))
        }
        var rebuilt: [String] = []
        for name in virtual where columns[name] != nil {
            guard Self.rebuilds[name] != nil else {
                throw refuse(.noPlaceInTarget("\(name) is derived (a virtual table in SQLite) and this build cannot rebuild it"))
            }
            rebuilt.append(name)
        }
        let layout: BlobLayout? = if columns["blob_files"] != nil, columns["blob_chunks"] != nil {
            .chunks
        } else if columns["file_blobs"] != nil {
            .whole
        } else {
            nil
        }
        if layout == nil, let files, try files.queryFirst("SELECT count(*) FROM blobs", { row in row.int64(0) }) ?? 0 > 0 {
            throw refuse(.noPlaceInTarget("the files database holds files and this build's PostgreSQL schema has no table for their bytes"))
        }
        return Plan(tables: try ordered(tables), rebuilt: rebuilt, blobLayout: layout)
    }

    /// The columns both sides have (the target's order), SQLite's implicit `rowid` where the target
    /// keeps it as a column (`users.rowid`), and the table's reference to itself.
    private func tablePlan(_ name: String, hasRowID: Bool, _ targetColumns: [TargetColumn]) throws(StoreError)
        -> TablePlan {
        let sourceColumns = try source.query("SELECT name FROM pragma_table_info(?) ORDER BY cid", [.text(name)]) {
            row in row.text(0)
        }
        let writable = targetColumns.filter { !$0.generated }
        var pairs = writable.map(\.name).filter(sourceColumns.contains)
        if hasRowID, !sourceColumns.contains("rowid"), writable.contains(where: { $0.name == "rowid" }) {
            pairs.append("rowid")
        }
        for column in sourceColumns where !pairs.contains(column) {
            let sql = "SELECT count(*) FROM \(Self.quoted(name)) WHERE \(Self.quoted(column)) IS NOT NULL"
            if let values = try source.queryFirst(sql, { row in row.int64(0) }), values > 0 {
                throw refuse(.noPlaceInTarget(
                    "\(name).\(column) holds \(values) values and this build's PostgreSQL table \(name) has no such column"))
            }
        }
        let overriding = targetColumns.contains { $0.identityAlways && pairs.contains($0.name) }
        return TablePlan(name: name, sourceColumns: pairs, targetColumns: pairs, overridingIdentity: overriding,
                         parent: nil)
    }

    private func refuseRows(of table: String, _ why: String) throws(StoreError) {
        let rows = try source.queryFirst("SELECT count(*) FROM \(Self.quoted(table))") { row in row.int64(0) } ?? 0
        if rows > 0 { throw refuse(.noPlaceInTarget("\(table) holds \(rows) rows and \(why)")) }
    }

    private func targetColumns() throws(StoreError) -> [String: [TargetColumn]] {
        let rows = try target.query("""
            SELECT table_name, column_name, is_generated, coalesce(identity_generation, '')
            FROM information_schema.columns WHERE table_schema = current_schema()
            ORDER BY table_name, ordinal_position
            """) { row in
            (table: row.text(0), column: TargetColumn(name: row.text(1), generated: row.text(2) == "ALWAYS",
                                                      identityAlways: row.text(3) == "ALWAYS"))
        }
        let tables = Set(try Self.tableNames(target))
        return Dictionary(grouping: rows.filter { tables.contains($0.table) }, by: \.table).mapValues { $0.map(\.column) }
    }

    /// `tables` in an order the target's foreign keys accept (a referenced table before the tables
    /// referring to it, otherwise by name), each given its reference to itself.
    private func ordered(_ tables: [TablePlan]) throws(StoreError) -> [TablePlan] {
        let keys = try target.query("""
            SELECT c.conrelid::regclass::text, c.confrelid::regclass::text, a.attname::text, r.attname::text
            FROM pg_constraint c
            JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
            JOIN pg_attribute r ON r.attrelid = c.confrelid AND r.attnum = c.confkey[1]
            WHERE c.contype = 'f' AND c.connamespace = to_regnamespace(current_schema())
            ORDER BY 1, 2, 3
            """) { row in (table: row.text(0), referenced: row.text(1), column: row.text(2), key: row.text(3)) }
        var pending = tables.map { table in
            let own = keys.first { $0.table == table.name && $0.referenced == table.name }
            return TablePlan(name: table.name, sourceColumns: table.sourceColumns, targetColumns: table.targetColumns,
                             overridingIdentity: table.overridingIdentity,
                             parent: own.map { (key: $0.key, reference: $0.column) })
        }
        let names = Set(tables.map(\.name))
        var placed: Set<String> = []
        var result: [TablePlan] = []
        while !pending.isEmpty {
            guard let next = pending.firstIndex(where: { table in
                keys.allSatisfy { key in
                    key.table != table.name || key.referenced == table.name || !names.contains(key.referenced)
                        || placed.contains(key.referenced)
                }
            }) else {
                throw refuse(.noPlaceInTarget(
                    "the foreign keys of \(pending.map(\.name).joined(separator: ", ")) form a cycle this copy cannot order"))
            }
            let table = pending.remove(at: next)
            placed.insert(table.name)
            result.append(table)
        }
        return result
    }
}
