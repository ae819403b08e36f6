import Foundation
import ParleyRedis
import ParleyStore

/// `PARLEY_DATABASE_URL` and `PARLEY_DB`: which engine holds the conversations, and opening it.
extension ParleyConfiguration {
    /// PARLEY_DATABASE_URL: unset or empty, the SQLite file `PARLEY_DB`; otherwise a `postgres://` URL.
    /// An error never repeats the URL's password.
    static func databaseLocation(read: SettingReader) throws(ConfigurationError) -> PostgresLocation? {
        guard let raw = read.values["PARLEY_DATABASE_URL"], !raw.trimmingCharacters(in: .whitespaces).isEmpty else {
            return nil
        }
        guard let location = PostgresLocation(url: raw) else {
            let shown = PostgresLocation(url: "postgres://" + raw)?.description.dropFirst("postgres://".count)
            throw .invalidValue(name: "PARLEY_DATABASE_URL", value: shown.map(String.init) ?? "(hidden)",
                                expected: "a postgres:// or postgresql:// URL")
        }
        return location
    }

    /// PARLEY_REDIS_URL: unset or empty, one node; otherwise a `redis://` URL, which needs a PostgreSQL
    /// store (nodes must share one; a SQLite file belongs to one machine). An error never shows the URL.
    static func redisLocation(read: SettingReader, database: PostgresLocation?) throws(ConfigurationError) -> RedisURL? {
        guard let raw = read.values["PARLEY_REDIS_URL"], !raw.trimmingCharacters(in: .whitespaces).isEmpty else {
            return nil
        }
        let url: RedisURL
        do {
            url = try RedisURL(parsing: raw.trimmingCharacters(in: .whitespaces))
        } catch {
            throw .invalidValue(name: "PARLEY_REDIS_URL", value: "(not shown)", expected: "a redis:// URL (\(error))")
        }
        guard database != nil else {
            throw .combination("PARLEY_REDIS_URL needs PARLEY_DATABASE_URL: nodes share one PostgreSQL store, "
                               + "and a SQLite file (PARLEY_DB) belongs to one machine")
        }
        return url
    }

    /// PARLEY_LEASE_SECONDS (2...300, default 5) and PARLEY_FAILOVER (`continue`, the default, or `off`).
    static func failoverSettings(read: SettingReader) throws(ConfigurationError) -> FailoverSettings {
        var settings = FailoverSettings()
        settings.lease = .seconds(try read.integer("PARLEY_LEASE_SECONDS", default: 5, range: 2...300))
        switch read.values["PARLEY_FAILOVER"]?.lowercased() {
        case nil, "", "continue": settings.continuing = true
        case "off": settings.continuing = false
        case let other?: throw .invalidValue(name: "PARLEY_FAILOVER", value: other, expected: "continue or off")
        }
        return settings
    }

    /// Opens the configured store (PostgreSQL when `database` is set, else the SQLite file) and says
    /// which in the start-up log.
    public func openStore() throws -> Store {
        let store: Store
        if let database {
            store = try Store(postgres: database)
        } else {
            store = try Store(path: databasePath)
        }
        return store
    }
}

/// What happens to the replies of a node that died (several nodes): its leases last `lease` unless
/// renewed; a surviving node then continues each reply (`continuing`) or ends it `interrupted`.
public struct FailoverSettings: Sendable, Equatable {
    public var lease: Duration
    public var continuing: Bool

    public init(lease: Duration = .seconds(5), continuing: Bool = true) {
        self.lease = lease
        self.continuing = continuing
    }
}
