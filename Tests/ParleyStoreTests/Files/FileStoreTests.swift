import Foundation
@testable import ParleyStore
import XCTest

/// `FileStore` on SQLite: bytes in and out, deduplication, ownership, the owner's list and total.
final class FileStoreTests: FileTestCase {
    func testAFewMegabytesComeBackByteForByteWholeAndInRanges() throws {
        let store = try makeStore()
        let bytes = pattern(3 * 1024 * 1024 + 123)
        let thumbnail = pattern(2000, seed: 7)
        let text = "héllo, 世界\n"
        let file = try store.saveFile(
            metadata(thumbnailMediaType: "image/webp"), content: localFile(bytes), thumbnail: thumbnail,
            text: localFile(Array(text.utf8)))
        XCTAssertEqual(file.bytes, Int64(bytes.count), "the size is measured from the stored bytes")
        XCTAssertTrue(file.hasThumbnail)
        XCTAssertEqual(file.uploadSHA256, "upload-1")
        XCTAssertEqual(try store.file(id: file.id, ownedBy: "alice"), file)

        let whole = try drain(store.fileContent(id: file.id, ownedBy: "alice"))
        XCTAssertEqual(whole.bytes, bytes)
        XCTAssertEqual(whole.chunks.max(), FileContentReader.defaultChunkSize, "read in chunks, never whole")
        for range: Range<Int64> in [0..<1, 1000..<300_000, 262_143..<262_145, Int64(bytes.count - 10)..<Int64(bytes.count)] {
            let part = try drain(store.fileContent(id: file.id, ownedBy: "alice", range: range, chunkSize: 4096))
            XCTAssertEqual(part.bytes, Array(bytes[Int(range.lowerBound)..<Int(range.upperBound)]), "\(range)")
            XCTAssertLessThanOrEqual(part.chunks.max() ?? 0, 4096)
        }
        let clamped = try store.fileContent(id: file.id, ownedBy: "alice", range: Int64(bytes.count - 5)..<Int64.max)
        XCTAssertEqual(clamped.remaining, 5, "a range past the end is cut to the content")

        let stored = try XCTUnwrap(try store.fileThumbnail(id: file.id, ownedBy: "alice"))
        XCTAssertEqual(stored.bytes, thumbnail)
        XCTAssertEqual(stored.mediaType, "image/webp")
        XCTAssertEqual(try store.fileText(id: file.id, ownedBy: "alice"), text)
    }

    func testAFileWithoutThumbnailOrTextHasNeither() throws {
        let store = try makeStore()
        let file = try save(store)
        XCTAssertFalse(file.hasThumbnail)
        XCTAssertNil(try store.fileThumbnail(id: file.id, ownedBy: "alice"))
        XCTAssertNil(try store.fileText(id: file.id, ownedBy: "alice"))
    }

    func testTheSameUploadTwiceIsOneFileAndAnotherOwnerGetsTheirOwn() throws {
        let store = try makeStore()
        let first = try save(store, upload: "same")
        XCTAssertEqual(try store.fileForUpload(ownedBy: "alice", uploadSHA256: "same"), first)
        XCTAssertNil(try store.fileForUpload(ownedBy: "alice", uploadSHA256: "other"))
        XCTAssertNil(try store.fileForUpload(ownedBy: "bob", uploadSHA256: "same"))

        let again = try save(store, upload: "same", seed: 9)
        XCTAssertEqual(again, first, "the existing file, not a second one")
        XCTAssertEqual(try drain(store.fileContent(id: first.id, ownedBy: "alice")).bytes, pattern(1000))
        XCTAssertEqual(try store.fileBlobs.ids().count, 1, "the second blob was removed")

        let bobs = try save(store, owner: "bob", upload: "same")
        XCTAssertNotEqual(bobs.id, first.id)
        XCTAssertEqual(bobs.ownerID, "bob")
        XCTAssertEqual(try store.fileBlobs.ids().count, 2)
        XCTAssertEqual(try store.listFiles(ownedBy: "alice", limit: 10, cursor: nil).items, [first])
    }

    func testAnotherOwnersFileIsNotFoundExactlyLikeAnUnknownID() throws {
        let store = try makeStore()
        let file = try save(store, owner: "alice")
        let message = try userMessage(store, owner: "bob")
        for id in [file.id, "no-such-file"] {
            assertFileNotFound(id, try store.file(id: id, ownedBy: "bob"))
            assertFileNotFound(id, try store.liveFiles(ids: [id], ownedBy: "bob"))
            assertFileNotFound(id, try store.fileContent(id: id, ownedBy: "bob"))
            assertFileNotFound(id, try store.fileThumbnail(id: id, ownedBy: "bob"))
            assertFileNotFound(id, try store.fileText(id: id, ownedBy: "bob"))
            assertFileNotFound(id, try store.deleteFile(id: id, ownedBy: "bob"))
            assertFileNotFound(id, try store.attachFiles([id], toMessage: message.messageID, ownedBy: "bob"))
        }
        XCTAssertEqual(try store.messageFiles(messageID: message.messageID), [], "nothing was attached")
        XCTAssertEqual(try store.listFiles(ownedBy: "bob", limit: 10, cursor: nil).items, [])
        XCTAssertEqual(try store.file(id: file.id, ownedBy: "alice"), file, "the owner still has it")
        // Nor can a file go onto another owner's message.
        XCTAssertThrowsError(try store.attachFiles([file.id], toMessage: message.messageID, ownedBy: "alice")) { error in
            XCTAssertEqual(error as? StoreError, .notFound(.message(id: message.messageID)))
        }
    }

    func testTheListIsNewestFirstInPagesThatNeitherOverlapNorSkip() throws {
        let clock = ManualClock()
        let store = try makeStore(now: clock.now)
        var saved: [StoredFile] = []
        for index in 0..<7 {
            saved.append(try save(store, upload: "u\(index)"))
            if index != 3 { clock.advance(milliseconds: 10) }  // two files share a time: the id breaks the tie
        }
        try save(store, owner: "bob", upload: "bobs")
        var seen: [StoredFile] = []
        var cursor: String?
        repeat {
            let page = try store.listFiles(ownedBy: "alice", limit: 3, cursor: cursor)
            XCTAssertLessThanOrEqual(page.items.count, 3)
            seen += page.items
            cursor = page.nextCursor
        } while cursor != nil
        XCTAssertEqual(seen.map(\.id), saved.sorted {
            ($0.createdAt, $0.id) > ($1.createdAt, $1.id)
        }.map(\.id))
        XCTAssertEqual(Set(seen.map(\.id)).count, 7)
        XCTAssertThrowsError(try store.listFiles(ownedBy: "alice", limit: 3, cursor: "junk")) { error in
            XCTAssertEqual(error as? StoreError, .invalidCursor)
        }
    }

    func testLocalModesFilesMoveWithItsConversationsToTheFirstAdmin() throws {
        let store = try makeStore()
        let file = try save(store, owner: User.localID)
        let message = try userMessage(store, owner: User.localID)
        try store.attachFiles([file.id], toMessage: message.messageID, ownedBy: User.localID)
        XCTAssertEqual(try store.assignLocalConversations(to: "admin"), 1)
        XCTAssertEqual(try store.file(id: file.id, ownedBy: "admin").ownerID, "admin")
        assertFileNotFound(file.id, try store.file(id: file.id, ownedBy: User.localID))
        XCTAssertEqual(try store.messageFiles(messageID: message.messageID).map(\.id), [file.id])
    }

    func testTheOwnersTotalCountsEveryStoredByteOfTheirsOnly() throws {
        let store = try makeStore()
        XCTAssertEqual(try store.fileBytes(ownedBy: "alice"), 0)
        try save(store, upload: "a", count: 1000)
        let kept = try save(store, upload: "b", count: 2500)
        try save(store, owner: "bob", upload: "c", count: 40)
        XCTAssertEqual(try store.fileBytes(ownedBy: "alice"), 3500)
        XCTAssertEqual(try store.fileBytes(ownedBy: "bob"), 40)

        let message = try userMessage(store)
        try store.attachFiles([kept.id], toMessage: message.messageID, ownedBy: "alice")
        XCTAssertEqual(try store.deleteFile(id: kept.id, ownedBy: "alice"), .kept(messages: 1))
        XCTAssertEqual(try store.fileBytes(ownedBy: "alice"), 3500, "a kept file still takes its room")
        try store.deleteConversation(id: message.conversationID, ownedBy: "alice")
        XCTAssertEqual(try store.fileBytes(ownedBy: "alice"), 1000)
    }
}
