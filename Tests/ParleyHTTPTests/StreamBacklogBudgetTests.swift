@testable import ParleyHTTP
import XCTest

/// The budget alone, with stand-in members: who is evicted, in which order, and what stays counted.
final class StreamBacklogBudgetTests: XCTestCase {
    private final class Member: Sendable, CustomStringConvertible {
        let name: String
        init(_ name: String) { self.name = name }
        var description: String { name }
    }

    private func names(_ members: [Member]) -> [String] { members.map(\.name) }

    func testUpdatesWithinTheLimitEvictNothing() {
        let budget = StreamBacklogBudget<Member>(limit: 100)
        let a = Member("a"), b = Member("b")
        budget.admit(a)
        budget.admit(b)
        XCTAssertEqual(names(budget.update(a, unsent: 60)), [])
        XCTAssertEqual(names(budget.update(b, unsent: 40)), [])
        XCTAssertEqual(budget.total, 100, "exactly the limit is allowed")
        XCTAssertEqual(budget.memberCount, 2)
    }

    func testPassingTheLimitEvictsTheLargestFirstUntilTheTotalFits() {
        let budget = StreamBacklogBudget<Member>(limit: 100)
        let small = Member("small"), medium = Member("medium"), large = Member("large"), writer = Member("writer")
        for member in [small, medium, large, writer] { budget.admit(member) }
        _ = budget.update(small, unsent: 10)
        _ = budget.update(medium, unsent: 30)
        _ = budget.update(large, unsent: 50)
        // The writer's own update passes the limit by 15: the largest other stream goes, not the writer.
        XCTAssertEqual(names(budget.update(writer, unsent: 25)), ["large"])
        XCTAssertEqual(budget.total, 65)
        XCTAssertNil(budget.unsent(of: large), "an evicted member is no longer counted")
        // Now the writer is the largest: it goes, alone, when it passes the limit again.
        XCTAssertEqual(names(budget.update(writer, unsent: 70)), ["writer"])
        XCTAssertEqual(budget.total, 40)
        XCTAssertEqual(names(budget.update(small, unsent: 75)), ["small"], "75 + 30 > 100: the largest, itself")
        XCTAssertEqual(budget.total, 30)
    }

    /// Each update that passes the limit is undone by closing the largest: the excess is at most what
    /// the updated member added, so the largest backlog always covers it.
    func testTheTotalNeverStaysAboveTheLimit() {
        let budget = StreamBacklogBudget<Member>(limit: 100)
        let members = (1...5).map { Member("m\($0)") }
        for member in members { budget.admit(member) }
        for (index, member) in members.enumerated() { _ = budget.update(member, unsent: (index + 1) * 5) }
        XCTAssertEqual(budget.total, 75)
        let burst = Member("burst")
        budget.admit(burst)
        // 75 + 60 = 135: burst (60) alone brings it to 75.
        XCTAssertEqual(names(budget.update(burst, unsent: 60)), ["burst"])
        // 75 - 5 + 70 = 140 with m1 at 70: m1 goes (70), total 70.
        XCTAssertEqual(names(budget.update(members[0], unsent: 70)), ["m1"])
        XCTAssertEqual(budget.total, 70)
        // Raise m2 from 10 to 45: total 105; the largest is m2 (45) -> 60.
        XCTAssertEqual(names(budget.update(members[1], unsent: 45)), ["m2"])
        XCTAssertEqual(budget.total, 60)
        XCTAssertLessThanOrEqual(budget.total, budget.limit)
    }

    func testReadsAndClosesLowerTheTotal() {
        let budget = StreamBacklogBudget<Member>(limit: 100)
        let a = Member("a"), b = Member("b")
        budget.admit(a)
        budget.admit(b)
        _ = budget.update(a, unsent: 80)
        _ = budget.update(b, unsent: 20)
        // The client of `a` read 50 bytes: room for `b` to grow without anyone being closed.
        XCTAssertEqual(names(budget.update(a, unsent: 30)), [])
        XCTAssertEqual(names(budget.update(b, unsent: 70)), [])
        XCTAssertEqual(budget.total, 100)
        budget.remove(a)
        XCTAssertEqual(budget.total, 70)
        XCTAssertEqual(budget.memberCount, 1)
        budget.remove(a)
        XCTAssertEqual(budget.total, 70, "removing twice changes nothing")
        budget.remove(b)
        XCTAssertEqual(budget.total, 0)
        XCTAssertEqual(budget.memberCount, 0)
    }

    func testAMemberNoLongerCountedIsToldToClose() {
        let budget = StreamBacklogBudget<Member>(limit: 100)
        let evicted = Member("evicted"), stranger = Member("stranger")
        budget.admit(evicted)
        _ = budget.update(evicted, unsent: 150)
        XCTAssertNil(budget.unsent(of: evicted))
        // Its next update (a write that raced with the eviction) is answered with itself, and not re-counted.
        XCTAssertEqual(names(budget.update(evicted, unsent: 10)), ["evicted"])
        XCTAssertEqual(names(budget.update(stranger, unsent: 10)), ["stranger"])
        XCTAssertEqual(budget.total, 0)
    }

    func testConcurrentUpdatesKeepTheTotalExact() {
        let budget = StreamBacklogBudget<Member>(limit: 1 << 40)
        let members = (0..<8).map { Member("m\($0)") }
        for member in members { budget.admit(member) }
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            for step in 1...10_000 { _ = budget.update(members[index], unsent: step % 100) }
        }
        // Each member ends at 10_000 % 100 = 0.
        XCTAssertEqual(budget.total, 0)
        for member in members { XCTAssertEqual(budget.unsent(of: member), 0) }
    }
}

