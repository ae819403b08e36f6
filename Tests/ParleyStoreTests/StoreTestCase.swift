import Foundation
import ParleyStore
import Synchronization
import XCTest

/// Base for store tests: a fresh temporary directory per test, real SQLite files in it.
class StoreTestCase: XCTestCase {
    private(set) var directory: URL!

    var databasePath: String { directory.appendingPathComponent("parley.sqlite").path }

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("parley-store-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    func makeStore(
        configuration: StoreConfiguration = StoreConfiguration(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws -> Store {
        try Store(path: databasePath, configuration: configuration, now: now)
    }
}

/// A clock tests set by hand, to make timestamps equal or ordered on purpose.
final class ManualClock: Sendable {
    private let current: Mutex<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        current = Mutex(start)
    }

    func now() -> Date { current.withLock { $0 } }

    func advance(milliseconds: Int) {
        current.withLock { $0 += Double(milliseconds) / 1000 }
    }
}
