import ParleyMarkdown
@testable import ParleyGeneration
import XCTest

/// The reply's text on its own: frames gather pieces, the byte budget cuts on a character boundary,
/// the answer is rebuilt from the Markdown state exactly, and progress tracks what is stored.
final class ReplyTextTests: XCTestCase {
    private func text(content: String = "", reasoning: String = "", room: Int = 1 << 20) -> ReplyText {
        ReplyText(content: content, reasoning: reasoning, renderer: MarkdownRenderer(), room: room)
    }

    func testAFrameCarriesEverythingGatheredSinceTheLastOne() {
        var reply = text()
        XCTAssertNil(reply.takeFrame())
        XCTAssertTrue(reply.receive("Hello ", as: .answer))
        XCTAssertTrue(reply.receive("think", as: .reasoning))
        XCTAssertTrue(reply.receive("world.\n\nNext", as: .answer))
        let frame = reply.takeFrame()
        XCTAssertEqual(frame?.reasoning, "think")
        XCTAssertEqual(frame?.answer, "Hello world.\n\nNext")
        XCTAssertEqual(frame?.blocks.map(\.html), ["<p>Hello world.</p>\n"])
        XCTAssertEqual(frame?.tail, .replaced("\nNext"), "the blank line before the open block is part of the tail")
        XCTAssertNil(reply.takeFrame(), "nothing gathered since")
        XCTAssertEqual(reply.answer, "Hello world.\n\nNext")
        XCTAssertEqual(reply.reasoning, "think")
    }

    func testAnUnchangedTailIsNotSentAgain() {
        var reply = text()
        _ = reply.receive("a", as: .answer)
        XCTAssertEqual(reply.takeFrame()?.tail, .appended("a"))
        _ = reply.receive("a", as: .reasoning)
        XCTAssertEqual(reply.takeFrame()?.tail, .unchanged, "no answer text: the tail did not change")
        _ = reply.receive("\n\nb", as: .answer)
        XCTAssertEqual(reply.takeFrame()?.tail, .replaced("\nb"), "a block was committed: the tail's start moved")
        _ = reply.receive("think", as: .reasoning)
        let frame = reply.takeFrame()
        XCTAssertEqual(frame?.tail, .unchanged)
        XCTAssertNil(frame?.answer)
    }

    func testTheBudgetCutsOnACharacterBoundaryAndSaysSo() {
        var reply = text(room: 5)
        XCTAssertTrue(reply.receive("ab", as: .answer))
        XCTAssertFalse(reply.receive("cé😀", as: .answer), "c (1) + é (2) fit, 😀 (4) does not")
        XCTAssertEqual(reply.takeFrame()?.answer, "abcé")
        XCTAssertEqual(reply.receivedBytes, 5)
        XCTAssertFalse(reply.receive("x", as: .reasoning), "reasoning shares the budget")
    }

    func testAContinuedReplyStartsFromItsStoredTextAndCountsOnlyNewBytesAsUnstored() {
        var reply = text(content: "# Title\n\nBody", reasoning: "r")
        XCTAssertEqual(reply.answer, "# Title\n\nBody")
        XCTAssertEqual(reply.markdown.blocks, ["<h1>Title</h1>\n"])
        XCTAssertNil(reply.unstoredProgress(), "what it started from is stored")
        _ = reply.receive(" more", as: .answer)
        let progress = reply.unstoredProgress()
        XCTAssertEqual(progress?.content, "# Title\n\nBody more", "gathered text is stored too")
        XCTAssertEqual(progress?.reasoning, "r")
        reply.confirmStored(progress?.bytes ?? 0)
        XCTAssertNil(reply.unstoredProgress())
        _ = reply.takeFrame()
        XCTAssertNil(reply.unstoredProgress(), "sending a frame stores nothing new")
    }

    func testTheAnswerIsExactForSplitsInsideCharacters() {
        var reply = text()
        let pieces = ["é", "t", "é ", "\u{FEFF}", "漢字", "\n", "`x`"]
        for piece in pieces {
            _ = reply.receive(piece, as: .answer)
            _ = reply.takeFrame()
        }
        XCTAssertEqual(reply.answer, pieces.joined())
        let final = reply.finish()
        XCTAssertEqual(reply.markdown.blocks.joined(), MarkdownRenderer().render(pieces.joined()))
        XCTAssertTrue(final.patch.isEmpty)
    }
}

/// Frame timing on its own, with instants instead of sleeps.
final class FrameClockTests: XCTestCase {
    func testFirstPieceGoesAtOnceThenOneTimerPerInterval() {
        var clock = FrameClock(interval: .milliseconds(25))
        let start = ContinuousClock.now
        XCTAssertEqual(clock.pieceArrived(at: start), .emitNow)
        clock.emitted(at: start)
        XCTAssertEqual(clock.pieceArrived(at: start + .milliseconds(5)), .schedule(start + .milliseconds(25)))
        XCTAssertTrue(clock.isScheduled)
        XCTAssertEqual(clock.pieceArrived(at: start + .milliseconds(10)), .wait, "rides on the armed timer")
        clock.timerFired()
        clock.emitted(at: start + .milliseconds(25))
        XCTAssertEqual(clock.pieceArrived(at: start + .milliseconds(60)), .emitNow, "a quiet interval passed")
    }

    func testIntervalZeroSendsEveryPiece() {
        var clock = FrameClock(interval: .zero)
        let now = ContinuousClock.now
        for _ in 0..<3 {
            XCTAssertEqual(clock.pieceArrived(at: now), .emitNow)
            clock.emitted(at: now)
        }
    }
}

/// Fan-out on its own: every subscriber gets each batch; one that has gone is dropped at once.
final class SubscribersTests: XCTestCase {
    func testDeliversToAllAndDropsTheGone() {
        final class Inbox: @unchecked Sendable { var batches: [[Int64]] = [] }
        let kept = Inbox()
        let gone = Inbox()
        var subscribers = Subscribers()
        _ = subscribers.add { events in kept.batches.append(events.map(\.id)); return true }
        _ = subscribers.add { events in gone.batches.append(events.map(\.id)); return false }
        let removed = subscribers.add { _ in XCTFail("removed"); return true }
        subscribers.remove(removed)
        subscribers.deliver([GenerationEvent(id: 1, payload: .delta("a"))])
        subscribers.deliver([])
        subscribers.deliver([GenerationEvent(id: 2, payload: .delta("b")), GenerationEvent(id: 3, payload: .delta("c"))])
        XCTAssertEqual(kept.batches, [[1], [2, 3]])
        XCTAssertEqual(gone.batches, [[1]])
        XCTAssertEqual(subscribers.count, 1)
    }
}
