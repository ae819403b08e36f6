import Foundation
@testable import ParleyStore
import XCTest

/// Base for file store tests: writes the local files a save reads (as the media step leaves them) and
/// makes metadata with made-up digests (the store records digests, it never computes them).
class FileTestCase: StoreTestCase {
    /// `count` bytes that differ from offset to offset (a misplaced chunk cannot compare equal).
    func pattern(_ count: Int, seed: UInt8 = 0) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 31) ^ ($0 >> 8) ^ ($0 >> 16)) &+ seed }
    }

    /// Writes `bytes` to a new file in the test directory.
    func localFile(_ bytes: [UInt8], name: String = UUID().uuidString) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url
    }

    func metadata(
        owner: String = "alice", upload: String = "upload-1", kind: StoredFile.Kind = .image,
        filename: String = "photo.png", thumbnailMediaType: String? = nil
    ) -> FileMetadata {
        FileMetadata(
            ownerID: owner, filename: filename, mediaType: kind == .image ? "image/png" : "text/plain", kind: kind,
            sha256: "stored-\(upload)", uploadSHA256: upload, width: kind == .image ? 640 : nil,
            height: kind == .image ? 480 : nil, textCharacters: kind == .document ? 5 : nil,
            thumbnailMediaType: thumbnailMediaType)
    }

    /// Saves a file of `count` pattern bytes for `owner` from upload `upload`.
    @discardableResult
    func save(
        _ store: Store, owner: String = "alice", upload: String = "upload-1", count: Int = 1000, seed: UInt8 = 0
    ) throws -> StoredFile {
        try store.saveFile(metadata(owner: owner, upload: upload), content: localFile(pattern(count, seed: seed)),
                           thumbnail: nil, text: nil)
    }

    /// Every byte the reader yields, with the size of each chunk.
    func drain(_ reader: FileContentReader) throws -> (bytes: [UInt8], chunks: [Int]) {
        var reader = reader
        var bytes: [UInt8] = []
        var chunks: [Int] = []
        while let chunk = try reader.next() {
            bytes += chunk
            chunks.append(chunk.count)
        }
        return (bytes, chunks)
    }

    /// A user message in a new conversation of `owner`, to attach files to.
    func userMessage(_ store: Store, owner: String = "alice") throws -> (conversationID: String, messageID: String) {
        let conversation = try store.createConversation(ownedBy: owner)
        let turn = try store.appendTurn(conversationID: conversation.id, parentID: nil, userContent: "see", model: nil)
        return (conversation.id, turn.user.id)
    }

    /// Asserts that `body` throws `notFound(.file(id:))`.
    func assertFileNotFound<T>(_ id: String, _ body: @autoclosure () throws -> T, line: UInt = #line) {
        XCTAssertThrowsError(try body(), line: line) { error in
            XCTAssertEqual(error as? StoreError, .notFound(.file(id: id)), line: line)
        }
    }
}
