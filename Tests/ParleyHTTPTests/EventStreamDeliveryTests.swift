@testable import ParleyHTTP
import XCTest

/// The delivery phases alone: each move leaves only from the phases that allow it.
final class EventStreamDeliveryTests: XCTestCase {
    typealias Delivery = EventStreamWriter.Delivery

    func testAStreamsLifeFromHandOffToTheLastChunk() {
        var delivery = Delivery.awaitingHandOff(.open)
        XCTAssertTrue(delivery.acceptsWrites)
        XCTAssertTrue(delivery.handOff(socket: 7))
        XCTAssertEqual(delivery, .writing(socket: 7, .open))
        XCTAssertTrue(delivery.socketFull())
        XCTAssertEqual(delivery, .awaitingWritable(socket: 7, .open))
        XCTAssertTrue(delivery.finish())
        XCTAssertFalse(delivery.acceptsWrites)
        XCTAssertNil(delivery.drained(), "not while the socket is full")
        XCTAssertTrue(delivery.socketWritable(7))
        XCTAssertEqual(delivery.drained(), 7, "the socket the loop must forget")
        XCTAssertEqual(delivery, .ending(.drained))
        XCTAssertEqual(delivery.ended(), .drained)
        XCTAssertEqual(delivery, .finished)
    }

    func testMovesFromPhasesThatDoNotAllowThemChangeNothing() {
        var delivery = Delivery.awaitingHandOff(.open)
        XCTAssertFalse(delivery.socketFull(), "no socket before the hand-off")
        XCTAssertNil(delivery.drained())
        XCTAssertNil(delivery.ended(), "libmicrohttpd cannot end a stream still waiting for its socket")
        XCTAssertEqual(delivery, .awaitingHandOff(.open))

        XCTAssertTrue(delivery.handOff(socket: 7))
        XCTAssertFalse(delivery.handOff(socket: 8), "the socket is taken once")
        XCTAssertFalse(delivery.socketWritable(7), "the socket is not full")
        XCTAssertNil(delivery.drained(), "an open stream keeps its connection")
        XCTAssertTrue(delivery.socketFull())
        XCTAssertFalse(delivery.socketWritable(8), "a stale report for another connection's socket")
        XCTAssertTrue(delivery.finish())
        XCTAssertFalse(delivery.finish(), "finishing twice")
        XCTAssertEqual(delivery, .awaitingWritable(socket: 7, .finishing))
    }

    func testADroppedStreamEndsWithAnErrorAndCannotBeDroppedAgain() {
        var delivery = Delivery.writing(socket: 7, .open)
        XCTAssertEqual(delivery.drop(), .writing(socket: 7, .open), "the phase left: its socket is forgotten")
        XCTAssertEqual(delivery, .ending(.dropped))
        XCTAssertFalse(delivery.acceptsWrites)
        XCTAssertNil(delivery.drop())
        XCTAssertFalse(delivery.finish())
        XCTAssertEqual(delivery.ended(), .dropped)
        XCTAssertNil(delivery.drop())
        XCTAssertEqual(delivery.connectionGone(), .finished)

        var drained = Delivery.ending(.drained)
        XCTAssertNil(drained.drop(), "a drained stream is not cut at the last chunk")
        XCTAssertEqual(drained, .ending(.drained))
    }

    func testTheConnectionGoingAwayEndsEveryPhase() {
        for phase: Delivery in [.awaitingHandOff(.open), .writing(socket: 3, .finishing),
                                .awaitingWritable(socket: 3, .open), .ending(.drained), .finished] {
            var delivery = phase
            XCTAssertEqual(delivery.connectionGone(), phase)
            XCTAssertEqual(delivery, .finished)
        }
    }
}
