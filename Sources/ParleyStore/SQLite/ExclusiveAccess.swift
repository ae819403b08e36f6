import Foundation

/// Holds a non-thread-safe value (a SQLite connection and what goes with it) so that exactly one
/// thread uses it at a time.
///
/// `@unchecked Sendable` is sound because `value` is reachable only through `withLock` /
/// `withLockIfAvailable`, which hold `lock` for the whole use. (`Synchronization.Mutex` cannot
/// express this: handing its non-Sendable value to a caller's closure is rejected by region
/// checking.) Bodies must not let the value escape.
final class ExclusiveAccess<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private let value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Waits for the value, then runs `body` with it.
    func withLock<T>(_ body: (Value) throws(StoreError) -> T) throws(StoreError) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(value)
    }

    /// Runs `body` only if nobody else holds the value; nil otherwise.
    func withLockIfAvailable<T>(_ body: (Value) throws(StoreError) -> T) throws(StoreError) -> T? {
        guard lock.try() else { return nil }
        defer { lock.unlock() }
        return try body(value)
    }
}
