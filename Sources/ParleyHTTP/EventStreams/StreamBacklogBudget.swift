import Synchronization

/// One budget for the unsent bytes of all event streams together
/// (`HTTPServerConfiguration.streamBacklogTotalLimit`).
///
/// The per-stream limit alone bounds nothing useful: 4,096 connections with 4 MiB each is 16 GiB.
/// Each member reports its unsent byte count; when the total passes the limit the members with the
/// largest backlogs are dropped from the budget, largest first, until the total fits again, and
/// returned to the caller, who must close them. A closed event stream costs its client nothing:
/// EventSource reconnects with Last-Event-ID and gets the missed events or a snapshot.
///
/// Bytes a member shares with others (one snapshot written to many streams) are counted for each of
/// them, so the total is an upper bound on the memory really held.
///
/// Concurrency contract: thread-safe, every method may be called from any thread. Its lock is a
/// leaf: it is held only for the bookkeeping and never while calling out, so callers may call it
/// while holding their own lock (`EventStreamWriter` does, under its mutex; the order is always the
/// writer's lock, then this one). Members returned by `update` must be closed by the caller after it
/// has released its own lock, never under it (closing takes the member's lock and may resume its
/// connection).
final class StreamBacklogBudget<Member: AnyObject & Sendable>: Sendable {
    private struct Account {
        let member: Member
        var unsent: Int
    }

    private struct State {
        var accounts: [ObjectIdentifier: Account] = [:]
        var total = 0
    }

    /// Unsent bytes allowed across all members.
    let limit: Int
    private let state = Mutex(State())

    init(limit: Int) {
        self.limit = limit
    }

    /// Sum of the unsent bytes of all members; never above `limit` once `update` has returned.
    var total: Int { state.withLock { $0.total } }

    /// Members counted (open streams).
    var memberCount: Int { state.withLock { $0.accounts.count } }

    /// Starts counting `member`, with nothing unsent.
    func admit(_ member: Member) {
        state.withLock { state in
            let key = ObjectIdentifier(member)
            guard state.accounts[key] == nil else { return }
            state.accounts[key] = Account(member: member, unsent: 0)
        }
    }

    /// Records that `member` now holds `unsent` bytes. Returns the members to close, largest backlog
    /// first, when the total passed the limit; `member` itself is among them when it was one of the
    /// largest, or when it is no longer counted (evicted before, or never admitted).
    func update(_ member: Member, unsent: Int) -> [Member] {
        state.withLock { state -> [Member] in
            let key = ObjectIdentifier(member)
            guard var account = state.accounts[key] else { return [member] }
            state.total += unsent - account.unsent
            account.unsent = unsent
            state.accounts[key] = account
            guard state.total > limit else { return [] }
            var evicted: [Member] = []
            let largestFirst = state.accounts.sorted { $0.value.unsent > $1.value.unsent }
            for (victimKey, victim) in largestFirst {
                guard state.total > limit else { break }
                state.accounts[victimKey] = nil
                state.total -= victim.unsent
                evicted.append(victim.member)
            }
            return evicted
        }
    }

    /// Stops counting `member` (its stream ended); its bytes leave the total.
    func remove(_ member: Member) {
        state.withLock { state in
            guard let account = state.accounts.removeValue(forKey: ObjectIdentifier(member)) else { return }
            state.total -= account.unsent
        }
    }

    /// The bytes `member` is counted for; nil when it is not counted.
    func unsent(of member: Member) -> Int? {
        state.withLock { $0.accounts[ObjectIdentifier(member)]?.unsent }
    }
}
